"""A client of the REST API through the ASGI app (FastAPI's TestClient) on a real SQLite
file, for the API's integration tests: :class:`Api` calls the routes with a user's token
on a manual clock, and the helpers below fill the cluster and read error bodies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from berth.runtime.bootstrap import build
from berth.runtime.settings import Settings
from tests.integration.conftest import ALICE, TOKENS
from tests.support.live import ManualClock


class Api:
    def __init__(self, client: TestClient, clock: ManualClock) -> None:
        self.client = client
        self.clock = clock

    def call(self, method: str, path: str, token: str | None = ALICE, **kwargs: Any) -> Any:
        headers = kwargs.pop("headers", {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.request(method, path, headers=headers, **kwargs)

    def submit(self, token: str = ALICE, **body: Any) -> Any:
        if "slots" not in body:
            body.setdefault("resources", {"cpus": 8})
        body.setdefault("time_limit", 100)
        return self.call("POST", "/v1/jobs", token, json=body)


def make_api(tmp_path: Path, database_url: str | None = None) -> Iterator[Api]:
    settings = Settings(data_dir=tmp_path, database_url=database_url, tokens=TOKENS,
                        nodes="4x cpus=8,mem_gb=32")  # fmt: skip
    clock = ManualClock(1_000_000)
    built = build(settings, clock=clock)
    with TestClient(built.app) as client:
        yield Api(client, clock)


def fill_and_queue(api: Api) -> None:
    """Job 1 takes the whole cluster for 100 s; job 2 waits with a guarantee at +100 s."""
    api.submit(resources={"cpus": 32}, time_limit=100)
    api.submit(resources={"cpus": 32}, time_limit=100)


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "field"}
    error: dict[str, Any] = body["error"]
    return error
