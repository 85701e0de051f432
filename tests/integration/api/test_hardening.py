"""The API under bad input: body and rate limits, headers on the dashboard, no CORS,
and idempotency keys honoured under concurrent retries."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from berth.runtime.bootstrap import build
from berth.runtime.settings import Settings
from tests.integration.api.harness import Api
from tests.integration.conftest import ALICE, BOB, OPERATOR, TOKENS, DaemonProcess
from tests.support.live import ManualClock


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    settings = Settings(data_dir=tmp_path, tokens=TOKENS, nodes="4x cpus=8,mem_gb=32",
                        submit_rate=1.0, submit_burst=3, max_body_bytes=4096)  # fmt: skip
    with TestClient(build(settings, clock=ManualClock(1_000_000)).app) as client:
        yield Api(client, ManualClock())


def test_a_body_over_the_limit_is_refused_before_it_is_read(api: Api) -> None:
    huge = {"resources": {"cpus": 1}, "time_limit": 10, "command": "x" * 5000}
    refused = api.call("POST", "/v1/jobs", json=huge)
    assert refused.status_code == 413
    assert refused.json()["error"] == {
        "code": "too_large",
        "message": "the request body is over 4096 bytes",
        "field": "body",
    }

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"resources": {"cpus": 1}, "time_limit": 10, "name": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}'

    chunked = api.call("POST", "/v1/jobs", content=chunks(),
                       headers={"Content-Type": "application/json"})  # fmt: skip
    assert chunked.status_code == 413

    def small() -> Iterator[bytes]:
        yield b'{"resources": {"cpus": 1}, '
        yield b'"time_limit": 10}'

    fine = api.call(
        "POST", "/v1/jobs", content=small(), headers={"Content-Type": "application/json"}
    )
    assert fine.status_code == 201, fine.text


def test_submits_over_the_rate_get_429_with_retry_after(api: Api) -> None:
    for _ in range(3):  # the burst
        assert api.submit(resources={"cpus": 1}).status_code == 201
    refused = api.submit(resources={"cpus": 1})
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    error = refused.json()["error"]
    assert error["field"] == "Authorization"
    assert "1 submits a second" in error["message"]
    # Per token: bob has his own bucket; operators are not limited.
    assert api.submit(BOB, resources={"cpus": 1}).status_code == 201
    for _ in range(5):
        assert api.submit(OPERATOR, resources={"cpus": 1}).status_code == 201


def test_the_dashboard_is_served_with_security_headers_and_no_cors(api: Api) -> None:
    page = api.call("GET", "/ui", None)
    assert page.status_code == 200
    assert "<title>Berth</title>" in page.text
    policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert page.headers["X-Frame-Options"] == "DENY"
    assert page.headers["Referrer-Policy"] == "no-referrer"
    script = api.call("GET", "/ui/app.js", None)
    assert script.headers["Content-Type"].startswith("text/javascript")
    assert api.call("GET", "/ui/../pyproject.toml", None).status_code == 404
    assert api.call("GET", "/ui/views/nothing.js", None).status_code == 404
    preflight = api.call("OPTIONS", "/v1/jobs", None, headers={
        "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"})  # fmt: skip
    assert "access-control-allow-origin" not in preflight.headers
    answer = api.call("GET", "/v1/jobs", headers={"Origin": "https://elsewhere.example"})
    assert "access-control-allow-origin" not in answer.headers


def test_concurrent_retries_with_one_idempotency_key_make_one_job(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        answers: list[tuple[int, int]] = []
        start = threading.Barrier(8)

        def retry(key: str) -> None:
            with httpx.Client(base_url=daemon.url, timeout=30) as client:
                start.wait()
                for _ in range(5):
                    response = client.post(
                        "/v1/jobs",
                        json={"resources": {"cpus": 1}, "time_limit": 60},
                        headers={"Authorization": f"Bearer {ALICE}", "Idempotency-Key": key},
                    )
                    answers.append((response.status_code, response.json()["job"]["job_id"]))

        threads = [threading.Thread(target=retry, args=(f"key-{i % 2}",)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert len(answers) == 40
        ids = {job for _, job in answers}
        assert len(ids) == 2, "one job per key, however many clients retry at once"
        assert sorted(status for status, _ in answers).count(201) == 2
        listed: Any = httpx.get(
            f"{daemon.url}/v1/jobs", headers={"Authorization": f"Bearer {ALICE}"}
        )
        assert listed.json()["total"] == 2
    finally:
        daemon.stop()


def test_no_token_reaches_the_log(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path, "--log-level", "debug", "--access-log")
    try:
        headers = {"Authorization": f"Bearer {ALICE}"}
        httpx.post(f"{daemon.url}/v1/jobs", headers=headers, timeout=10,
                   json={"resources": {"cpus": 1}, "time_limit": 60})  # fmt: skip
        httpx.get(f"{daemon.url}/v1/jobs", headers={"Authorization": "Bearer wrong-secret-xyz"})
        httpx.get(f"{daemon.url}/v1/jobs", headers=headers, params={"user": "alice"})
    finally:
        daemon.stop()
    log = daemon.log.read_text()
    assert "GET /v1/jobs" in log, "the requests were logged"
    for token in (ALICE, "wrong-secret-xyz", OPERATOR):
        assert token not in log


def test_numbers_past_the_stores_range_are_refused_not_fatal(api: Api) -> None:
    # A deadline past a 64-bit integer once took the store (and so the daemon) down.
    huge = api.submit(resources={"cpus": 1}, time_limit=10, deadline=10**30)
    assert huge.status_code == 422
    assert huge.json()["error"]["field"] == "deadline"
    assert api.call("GET", f"/v1/jobs/{10**30}").status_code == 422
    assert api.call("GET", "/v1/jobs/history", params={"before": 10**30}).status_code == 422
    assert api.call("GET", "/healthz", None).json()["status"] == "ok"
    assert api.submit(resources={"cpus": 1}, time_limit=10).status_code == 201


def test_every_list_is_paged(api: Api) -> None:
    cluster = api.call("GET", "/v1/cluster", params={"limit": 2, "offset": 1}).json()
    assert [n["name"] for n in cluster["nodes"]] == ["node002", "node003"]
    assert (cluster["node_total"], cluster["limit"], cluster["offset"]) == (4, 2, 1)
    for cpus in (32, 8, 8):
        api.call("POST", "/v1/jobs", OPERATOR, json={"resources": {"cpus": cpus}, "time_limit": 60})
    plan = api.call("GET", "/v1/schedule", params={"limit": 1, "offset": 1}).json()
    assert plan["planned_total"] == 2
    assert len(plan["planned"]) == 1
    partitions = api.call("GET", "/v1/partitions", params={"limit": 1}).json()
    assert partitions["total"] == 1
    assert len(partitions["partitions"]) == 1
    usage = api.call("GET", "/v1/usage", OPERATOR, params={"since": 0, "limit": 1}).json()
    assert len(usage["users"]) <= 1
    assert usage["limit"] == 1
    too_many = api.call("GET", "/v1/cluster", params={"limit": 10_001})
    assert too_many.status_code == 422
    assert too_many.json()["error"]["field"] == "limit"
