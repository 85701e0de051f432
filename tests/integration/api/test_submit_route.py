"""The submit route reads its request by hand (``berth.api.lean``); it must answer as
FastAPI's own handling does.

``POST /v1/jobs/what-if`` takes the same body and the same caller through FastAPI's
dependencies, so every bad request below must get the same status, code, field and
message from both routes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.api.harness import Api, error_of, make_api
from tests.integration.conftest import ALICE, OPERATOR

GOOD = {"resources": {"cpus": 2}, "time_limit": 60}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    yield from make_api(tmp_path)


def _both(api: Api, token: str | None, **request: Any) -> tuple[Any, Any]:
    submitted = api.call("POST", "/v1/jobs", token, **request)
    asked = api.call("POST", "/v1/jobs/what-if", token, **request)
    return submitted, asked


BAD_BODIES: dict[str, dict[str, Any]] = {
    "not JSON": {"content": b"{cpus", "headers": {"Content-Type": "application/json"}},
    "no body": {},
    "not a JSON type": {"content": b'{"time_limit": 5}', "headers": {"Content-Type": "text/plain"}},
    "a list": {"json": [1, 2]},
    "time_limit missing": {"json": {"resources": {"cpus": 1}}},
    "time_limit over the limit": {"json": {**GOOD, "time_limit": 10**12}},
    "a negative amount": {"json": {**GOOD, "resources": {"cpus": -1}}},
    "an unknown field": {"json": {**GOOD, "colour": "blue"}},
    "a nested slot error": {
        "json": {"slots": {"count": 0, "per_slot": {"cpus": 1}}, "time_limit": 6}
    },
    "resources and slots": {"json": {**GOOD, "slots": {"count": 1, "per_slot": {"cpus": 1}}}},
}


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_a_bad_body_gets_the_answer_fastapi_gives(api: Api, case: str) -> None:
    submitted, asked = _both(api, ALICE, **BAD_BODIES[case])
    assert submitted.status_code == asked.status_code == 422, (submitted.json(), asked.json())
    assert error_of(submitted) == error_of(asked)
    assert error_of(submitted)["field"]  # names what to fix


def test_a_bad_caller_gets_the_answer_fastapi_gives(api: Api) -> None:
    node_token = api.call("POST", "/v1/admin/node-tokens", OPERATOR, json={"name": "node001"})
    callers: dict[str, tuple[str | None, dict[str, str]]] = {
        "no token": (None, {}),
        "an unknown token": ("not-a-token", {}),
        "another scheme": (None, {"Authorization": f"Basic {ALICE}"}),
        "a node's token": (node_token.json()["token"], {}),
    }
    statuses = {}
    for case, (token, headers) in callers.items():
        submitted, asked = _both(api, token, json=GOOD, headers=dict(headers))
        assert submitted.status_code == asked.status_code, case
        assert error_of(submitted) == error_of(asked), case
        statuses[case] = submitted.status_code
    assert statuses == {"no token": 401, "an unknown token": 401, "another scheme": 401,
                        "a node's token": 403}  # fmt: skip
    assert api.call("GET", "/v1/jobs", ALICE).json()["total"] == 0  # nothing was submitted


def test_a_long_idempotency_key_is_refused_naming_the_header(api: Api) -> None:
    answer = api.call("POST", "/v1/jobs", json=GOOD, headers={"Idempotency-Key": "k" * 201})
    assert answer.status_code == 422
    assert error_of(answer)["field"] == "idempotency-key"
    fits = api.call("POST", "/v1/jobs", json=GOOD, headers={"Idempotency-Key": "k" * 200})
    assert fits.status_code == 201


def test_a_json_content_type_with_parameters_or_a_suffix_is_json(api: Api) -> None:
    for kind in ("application/json; charset=utf-8", "application/vnd.berth+json"):
        answer = api.call("POST", "/v1/jobs", content=b'{"resources": {"cpus": 1}, '
                          b'"time_limit": 9}', headers={"Content-Type": kind})  # fmt: skip
        assert answer.status_code == 201, (kind, answer.json())


def test_the_answer_is_the_documented_model(api: Api) -> None:
    answer = api.call("POST", "/v1/jobs", json=GOOD)
    assert answer.status_code == 201
    assert answer.headers["content-type"] == "application/json"
    job = answer.json()["job"]
    assert job == api.call("GET", f"/v1/jobs/{job['job_id']}").json()
    operation = api.client.get("/openapi.json").json()["paths"]["/v1/jobs"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/JobSubmit"
    )
    assert {"200", "201", "422"} <= set(operation["responses"])
    created = operation["responses"]["201"]["content"]["application/json"]["schema"]
    assert created["$ref"].endswith("/SubmitOut")
    parameters = {p["name"] for p in operation["parameters"]}
    assert parameters == {"idempotency-key"}


def test_a_bug_in_the_submit_route_is_a_500_with_the_envelope(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The submit route skips the router (``LeanPaths``); its exceptions are still
    answered by the application's handlers, a bug by the 500 one."""
    from berth.api.routes import jobs

    async def broken(*_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(jobs, "submit", broken)
    answer = api.call("POST", "/v1/jobs", json=GOOD)
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error["code"] == "internal"
    assert error["correlation_id"] in error["message"]  # the log has the detail under it
    assert "a bug" not in error["message"]  # the detail itself stays in the log
    assert api.call("POST", "/v1/jobs/what-if", json=GOOD).status_code == 200  # unharmed
