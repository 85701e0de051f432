"""Partitions through the REST API on a real SQLite file: an operator makes a gang
partition, jobs name it, the matrix and the start answer show the rotation, and what
the API refuses is a 4xx naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.api.harness import Api, error_of, make_api
from tests.integration.conftest import OPERATOR

START = 1_000_000


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    yield from make_api(tmp_path)


def make_gang(api: Api, **options: object) -> dict[str, object]:
    body = {
        "name": "g",
        "nodes": ["node001", "node002"],
        "options": {"slot_seconds": 10, **options},
    }
    response = api.call("POST", "/v1/admin/partitions", OPERATOR, json=body)
    assert response.status_code == 201, response.text
    created: dict[str, object] = response.json()
    return created


def test_an_operator_makes_a_gang_partition_and_two_jobs_take_turns(api: Api) -> None:
    created = make_gang(api, scheme="bc")
    assert created["processors"] == 16
    assert created["options"] == {"scheme": "bc", "slot_seconds": 10, "max_rows": None}
    listed = api.call("GET", "/v1/partitions").json()["partitions"]
    assert [p["name"] for p in listed] == ["default", "g"]
    assert listed[0]["nodes"] == ["node003", "node004"]
    first = api.submit(resources={"cpus": 16}, time_limit=100, partition="g").json()["job"]
    second = api.submit(resources={"cpus": 16}, time_limit=100, partition="g").json()["job"]
    assert first["partition"] == "g"
    api.clock.advance(10)  # the boundary at START + 10 takes both
    api.call("GET", "/healthz")
    api.submit(resources={"cpus": 1}, time_limit=1)  # any command advances the engine
    matrix = api.call("GET", "/v1/partitions/g/matrix").json()
    assert len(matrix["rows"]) == 2
    assert {matrix["rows"][0][0], matrix["rows"][1][0]} == {first["job_id"], second["job_id"]}
    assert [p["node"] for p in matrix["processors"]] == ["node001"] * 8 + ["node002"] * 8
    assert matrix["next_boundary"] == START + 20
    # The first job ran alone from START; at START + 10 the second's row runs.
    first_now = api.call("GET", f"/v1/jobs/{first['job_id']}").json()
    assert first_now["job_state"] == "RUNNING"
    assert first_now["suspended"] is True
    assert api.call("GET", f"/v1/jobs/{second['job_id']}").json()["suspended"] is False
    start = api.call("GET", f"/v1/jobs/{first['job_id']}/start").json()
    assert start["start_time"] == START
    assert start["guaranteed_start"] is None
    gang = start["gang"]
    assert gang["row_count"] == 2
    assert gang["running_now"] is False
    assert gang["next_slot"] == START + 20
    assert gang["completion_forecast"] == START + 20 + 180  # 90 s left, 1 slot in 2
    assert "forecast" in gang["completion_basis"]
    api.clock.advance(10)
    api.submit(resources={"cpus": 1}, time_limit=1)
    assert api.call("GET", f"/v1/jobs/{first['job_id']}").json()["suspended"] is False
    back = api.call("GET", f"/v1/jobs/{second['job_id']}").json()
    assert back["suspended"] is True
    assert back["suspended_seconds"] == 0  # counted when it resumes


def test_partition_mistakes_are_4xx_naming_the_field(api: Api) -> None:
    odd = api.call(
        "POST", "/v1/admin/partitions", OPERATOR, json={"name": "g", "nodes": ["node001", "nodeX"]}
    )
    assert odd.status_code == 422
    assert error_of(odd)["field"] == "nodes"
    bad_scheme = api.call(
        "POST",
        "/v1/admin/partitions",
        OPERATOR,
        json={"name": "g", "nodes": ["node001"], "options": {"scheme": "fifo"}},
    )
    assert bad_scheme.status_code == 422
    assert "scheme" in error_of(bad_scheme)["field"]
    user = api.call("POST", "/v1/admin/partitions", json={"name": "g", "nodes": ["node001"]})
    assert user.status_code == 403
    make_gang(api)
    too_big = api.submit(resources={"cpus": 32}, time_limit=10, partition="g")
    assert too_big.status_code == 422
    assert error_of(too_big)["field"] == "resources.cpus"
    unknown = api.submit(resources={"cpus": 1}, time_limit=10, partition="nope")
    assert unknown.status_code == 404
    drained = api.call("POST", "/v1/admin/partitions/g/drain", OPERATOR)
    assert drained.json()["drained"] is True
    refused = api.submit(resources={"cpus": 1}, time_limit=10, partition="g")
    assert refused.status_code == 409
    assert error_of(refused)["field"] == "partition"
    api.call("POST", "/v1/admin/partitions/g/resume", OPERATOR)
    job = api.submit(resources={"cpus": 1}, time_limit=10, partition="g").json()["job"]
    busy = api.call("DELETE", "/v1/admin/partitions/g", OPERATOR)
    assert busy.status_code == 409
    assert api.call("DELETE", f"/v1/jobs/{job['job_id']}").json()["job_state"] == "CANCELLED"
    changed = api.call("PATCH", "/v1/admin/partitions/g", OPERATOR, json={"scheme": "br"})
    assert changed.json()["options"]["scheme"] == "br"
    assert api.call("DELETE", "/v1/admin/partitions/g", OPERATOR).status_code == 204
    assert api.call("GET", "/v1/partitions/g/matrix").status_code == 404


def test_a_backfilling_partition_runs_its_own_policy(api: Api) -> None:
    body = {"name": "short", "nodes": ["node003", "node004"], "policy": "easy"}
    made = api.call("POST", "/v1/admin/partitions", OPERATOR, json=body)
    assert made.status_code == 201, made.text
    assert made.json()["policy"] == "easy"
    listed = {p["name"]: p for p in api.call("GET", "/v1/partitions").json()["partitions"]}
    assert listed["default"]["nodes"] == ["node001", "node002"]
    assert listed["short"]["nodes"] == ["node003", "node004"]
    job = api.submit(resources={"cpus": 16}, time_limit=100, partition="short").json()["job"]
    assert sorted(job["nodes"]) == ["node003", "node004"]
    assert job["partition"] == "short"
    bad = api.call(
        "PATCH", "/v1/admin/partitions/short", OPERATOR, json={"policy": "conservative",
                                                               "options": {"selection": "xx"}}
    )  # fmt: skip
    assert bad.status_code == 422, bad.text
    assert error_of(bad)["field"] == "options"
    changed = api.call(
        "PATCH", "/v1/admin/partitions/short", OPERATOR, json={"policy": "conservative"}
    )
    assert changed.json()["policy"] == "conservative"
    assert changed.json()["running"] == 1
    gang_option = api.call("PATCH", "/v1/admin/partitions/short", OPERATOR, json={"scheme": "br"})
    assert gang_option.status_code == 422
    bad_gang = api.call(
        "POST",
        "/v1/admin/partitions",
        OPERATOR,
        json={"name": "g", "nodes": ["node001"], "options": {"slot_seconds": 0}},
    )
    assert bad_gang.status_code == 422
    assert error_of(bad_gang)["field"] == "options.slot_seconds"
