"""The REST API through the ASGI app (FastAPI's TestClient), on a real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from fastapi import FastAPI

from tests.integration.api.harness import Api, error_of
from tests.integration.conftest import ALICE, BOB, OPERATOR


def test_submit_answers_with_the_decision_and_guarantee(api: Api) -> None:
    first = api.submit(resources={"cpus": 32}, time_limit=100, name="all")
    assert first.status_code == 201
    body = first.json()
    assert body["accepted"] is True
    assert body["job"]["job_state"] == "RUNNING"
    second = api.submit(resources={"cpus": 16, "mem_gb": 8}, time_limit=50).json()
    assert second["job"]["job_state"] == "PENDING"
    assert second["job"]["guaranteed_start"] == 1_000_100
    job_id = second["job"]["job_id"]
    shown = api.call("GET", f"/v1/jobs/{job_id}").json()
    assert shown["user"] == "alice"
    assert shown["resources"] == {"cpus": 16, "mem_gb": 8}
    start = api.call("GET", f"/v1/jobs/{job_id}/start").json()
    assert start["predicted_start"] == 1_000_100
    assert start["guaranteed_start"] == 1_000_100
    assert start["blocked_by"]["resources"] == {"cpus": {"requested": 16, "free_now": 0}}
    assert start["blocked_by"]["running_jobs_to_end"] == [first.json()["job"]["job_id"]]
    assert "reservation" in start["based_on"]
    assert start["computed_at"] == 1_000_000


def test_jobs_run_on_the_clock_and_are_listed_by_state(api: Api) -> None:
    api.submit(resources={"cpus": 32}, time_limit=100, emulated_runtime=40)
    waiting = api.submit(resources={"cpus": 32}, time_limit=100).json()["job"]["job_id"]
    api.clock.advance(40)
    assert api.call("GET", f"/v1/jobs/{waiting}").json()["job_state"] == "PENDING"
    api.call("GET", "/healthz")
    api.submit(resources={"cpus": 1}, time_limit=1)  # any command advances the engine
    listing = api.call("GET", "/v1/jobs", params={"state": "COMPLETED"}).json()
    assert [j["job_id"] for j in listing["jobs"]] == [1]
    assert listing["total"] == 1
    assert listing["jobs"][0]["end_time"] == 1_000_040
    running = api.call("GET", "/v1/jobs", params={"state": "RUNNING"}).json()["jobs"]
    assert {j["job_id"] for j in running} >= {waiting}
    page = api.call("GET", "/v1/jobs", params={"limit": 1, "offset": 1}).json()
    assert page["total"] == 3
    assert len(page["jobs"]) == 1
    assert page["jobs"][0]["job_id"] == 2


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ({"resources": {"cpus": 33}}, "resources.cpus", "the cluster has only 32"),
        ({"resources": {"gpus": 1}}, "resources.gpus", "unknown resource 'gpus'"),
        ({"resources": {"cpus": -1}}, "resources.cpus", "greater than or equal to 0"),
        ({"time_limit": 0}, "time_limit", "greater than or equal to 1"),
        ({"deadline": 5}, "deadline", "in the past"),
        ({"deadline": 1_000_050}, "deadline", "sooner than now"),
        ({"priority": 2}, "priority", "less than or equal to 1"),
        ({"colour": "red"}, "colour", "Extra inputs"),
    ],
)
def test_requests_that_can_never_run_get_a_422_naming_the_field(
    api: Api, body: dict[str, Any], field: str, fragment: str
) -> None:
    response = api.submit(**body)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "invalid"
    assert error["field"] == field
    assert fragment in error["message"]


def test_admission_rejection_is_an_answer_not_an_error(api: Api) -> None:
    api.submit(resources={"cpus": 32}, time_limit=1000)
    late = api.submit(resources={"cpus": 32}, time_limit=100, deadline=1_000_500)
    assert late.status_code == 201
    assert late.json()["accepted"] is False
    assert "cannot be guaranteed" in late.json()["reason"]


def test_idempotency_key_makes_a_retried_submit_safe(api: Api) -> None:
    headers = {"Idempotency-Key": "retry-1"}
    first = api.call(
        "POST", "/v1/jobs", json={"resources": {"cpus": 1}, "time_limit": 5}, headers=dict(headers)
    )
    again = api.call(
        "POST", "/v1/jobs", json={"resources": {"cpus": 1}, "time_limit": 5}, headers=dict(headers)
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["job"]["job_id"] == again.json()["job"]["job_id"]
    assert api.call("GET", "/v1/jobs").json()["total"] == 1


def test_a_retried_array_submit_is_the_same_array_and_commits(api: Api) -> None:
    """Only the array's first task carries the key (the store holds one job per key):
    the retry answers the same tasks, and the daemon goes on committing."""
    body = {"resources": {"cpus": 1}, "time_limit": 5, "array": "0-4"}
    first = api.call("POST", "/v1/jobs", json=body, headers={"Idempotency-Key": "sweep"})
    again = api.call("POST", "/v1/jobs", json=body, headers={"Idempotency-Key": "sweep"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["array_tasks"] == again.json()["array_tasks"]
    assert len(first.json()["array_tasks"]) == 5
    assert api.call("GET", "/healthz").status_code == 200
    assert api.call("GET", "/v1/jobs/history").json()["jobs"]  # committed to the store


def test_authentication_and_roles(api: Api) -> None:
    missing = api.call("GET", "/v1/jobs", token=None)
    assert missing.status_code == 401
    assert error_of(missing)["code"] == "unauthorized"
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    assert api.call("GET", "/v1/jobs", token="wrong").status_code == 401
    job = api.submit(token=ALICE).json()["job"]["job_id"]
    assert api.call("GET", f"/v1/jobs/{job}", token=BOB).status_code == 404
    assert api.call("DELETE", f"/v1/jobs/{job}", token=BOB).status_code == 404
    assert api.call("GET", "/v1/jobs", token=BOB).json()["total"] == 0
    assert api.call("GET", "/v1/jobs", token=BOB, params={"user": "alice"}).status_code == 403
    assert api.call("GET", f"/v1/jobs/{job}", token=OPERATOR).status_code == 200
    forbidden = api.call("GET", "/v1/admin/policy", token=ALICE)
    assert forbidden.status_code == 403
    assert error_of(forbidden)["code"] == "forbidden"
    assert api.call("GET", "/v1/admin/policy", token=OPERATOR).status_code == 200


def test_cancel_kills_a_running_job_once(api: Api) -> None:
    job = api.submit(resources={"cpus": 8}).json()["job"]["job_id"]
    cancelled = api.call("DELETE", f"/v1/jobs/{job}")
    assert cancelled.status_code == 200
    assert cancelled.json()["job_state"] == "CANCELLED"
    again = api.call("DELETE", f"/v1/jobs/{job}")
    assert again.status_code == 409
    assert "already ended" in error_of(again)["message"]
    assert api.call("GET", "/v1/cluster").json()["used"] == {"cpus": 0, "mem_gb": 0}


def test_cancel_by_filter_reaches_only_the_caller_s_jobs_and_needs_a_filter(api: Api) -> None:
    """``DELETE /v1/jobs?...``: a user's filter only ever selects their own jobs; an
    operator's selects anyone's; no filter at all is refused (422), naming the field."""
    mine = [api.submit(token=ALICE).json()["job"]["job_id"] for _ in range(2)]
    theirs = api.submit(token=BOB).json()["job"]["job_id"]
    unfiltered = api.call("DELETE", "/v1/jobs")
    assert unfiltered.status_code == 422
    assert error_of(unfiltered)["field"] == "user"
    assert (
        "at least one of state, user, account, name and partition"
        in error_of(unfiltered)["message"]
    )
    assert api.call("DELETE", "/v1/jobs", token=ALICE, params={"user": "bob"}).status_code == 403
    by_alice = api.call("DELETE", "/v1/jobs", token=ALICE, params={"state": ["PENDING", "RUNNING"]})
    assert sorted(job["job_id"] for job in by_alice.json()) == mine
    assert api.call("GET", f"/v1/jobs/{theirs}", OPERATOR).json()["job_state"] != "CANCELLED"
    by_operator = api.call("DELETE", "/v1/jobs", token=OPERATOR, params={"user": "bob"})
    assert [job["job_id"] for job in by_operator.json()] == [theirs]


def test_what_if_submits_nothing(api: Api) -> None:
    api.submit(resources={"cpus": 32}, time_limit=100)
    answer = api.call(
        "POST", "/v1/jobs/what-if", json={"resources": {"cpus": 8}, "time_limit": 10}
    ).json()
    assert answer["accepted"]
    assert answer["predicted_start"] == 1_000_100
    assert answer["guaranteed_start"] == 1_000_100
    assert api.call("GET", "/v1/jobs").json()["total"] == 1


def test_what_if_under_easy_answers_its_forecast_through_the_route(api: Api) -> None:
    """Under EASY the route drives the what-if's forecast in slices to the job's start."""
    changed = api.call("PUT", "/v1/admin/policy", OPERATOR, json={"policy": "easy"})
    assert changed.status_code == 200, changed.text
    api.submit(resources={"cpus": 32}, time_limit=100)
    api.submit(resources={"cpus": 32}, time_limit=50)
    answer = api.call(
        "POST", "/v1/jobs/what-if", json={"resources": {"cpus": 8}, "time_limit": 10}
    ).json()
    assert answer == {"accepted": True, "reason": "queued", "predicted_start": 1_000_150,
                      "guaranteed_start": None, "guaranteed_end": None}  # fmt: skip
    wide = api.call(
        "POST", "/v1/jobs/what-if", json={"resources": {"cpus": 32}, "time_limit": 10}
    ).json()
    assert wide["predicted_start"] == 1_000_150  # behind the second job
    assert api.call("GET", "/v1/jobs").json()["total"] == 2


def test_a_what_if_whose_forecast_takes_too_long_answers_no_start_and_says_why(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from berth.api.routes import jobs as job_routes
    from berth.service.queries import answers

    monkeypatch.setattr(job_routes, "FORECAST_SLICE", 0.0)  # one question a slice
    monkeypatch.setattr(answers, "WHAT_IF_SECONDS", 0.0)
    assert api.call("PUT", "/v1/admin/policy", OPERATOR, json={"policy": "easy"}).is_success
    api.submit(resources={"cpus": 32}, time_limit=100)
    api.submit(resources={"cpus": 32}, time_limit=50)
    answer = api.call(
        "POST", "/v1/jobs/what-if", json={"resources": {"cpus": 8}, "time_limit": 10}
    ).json()
    assert answer["accepted"] is True
    assert answer["predicted_start"] is None
    assert answer["reason"] == (
        "queued; no predicted start: the forecast did not reach the job within 0 s "
        "(the queue is deep)"
    )


def test_schedule_and_cluster_show_the_plan(api: Api) -> None:
    api.submit(resources={"cpus": 24}, time_limit=100)
    api.submit(resources={"cpus": 16}, time_limit=100)
    plan = api.call("GET", "/v1/schedule").json()
    assert [w["job_id"] for w in plan["running"]] == [1]
    (planned,) = plan["planned"]
    reserved_on = planned.pop("nodes")
    assert planned == {"job_id": 2, "name": "job", "user": "alice", "job_state": "PENDING",
                       "start": 1_000_100, "end": 1_000_200, "guaranteed_start": 1_000_100,
                       "deadline": None, "resources": {"cpus": 16}, "partition": "default"}  # fmt: skip
    # The reservation is held on two whole nodes (the plan knows where, not just when).
    assert sorted(reserved_on.values(), key=str) == [{"cpus": 8}, {"cpus": 8}]
    running_on = plan["running"][0]["nodes"]
    assert sum(r["cpus"] for r in running_on.values()) == 24
    assert plan["planned_total"] == 1
    assert api.call("GET", "/v1/schedule?limit=1&offset=1").json()["planned"] == []
    cluster = api.call("GET", "/v1/cluster").json()
    assert cluster["capacity"] == {"cpus": 32, "mem_gb": 128}
    assert cluster["used"] == {
        "cpus": 24,
        "mem_gb": 0,
    }
    assert len(cluster["nodes"]) == 4
    assert cluster["pending"] == 1
    assert cluster["running"] == 1


def test_health_metrics_and_openapi(api: Api) -> None:
    api.submit()
    assert api.call("GET", "/healthz", token=None).json()["status"] == "ok"
    metrics = api.call("GET", "/metrics", token=None).text
    for name in ("berth_queue_length 0", "berth_running_jobs 1", 'berth_resource_used{resource="cpus"} 8',
                 "berth_admissions_total 1", "berth_rejections_total 0", "berth_scheduling_pass_seconds "):  # fmt: skip
        assert name in metrics
    counters = dict(
        line.rsplit(" ", 1) for line in metrics.splitlines() if line.startswith("berth_c")
    )
    # The start-up commit and the submit's own: one store transaction each.
    assert float(counters["berth_commits_total"]) == 2
    assert float(counters["berth_commands_total"]) == 1
    paths = api.call("GET", "/openapi.json", token=None).json()["paths"]
    for path in ("/v1/jobs", "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/start", "/v1/jobs/what-if",
                 "/v1/schedule", "/v1/cluster", "/v1/events", "/v1/admin/dry-run", "/v1/admin/policy"):  # fmt: skip
        assert path in paths


def test_the_list_takes_several_states_and_says_where_waiting_jobs_stand(api: Api) -> None:
    running = api.submit(resources={"cpus": 32}, time_limit=100).json()["job"]["job_id"]
    first = api.submit(resources={"cpus": 32}, time_limit=50).json()["job"]["job_id"]
    second = api.submit(resources={"cpus": 32}, time_limit=50).json()["job"]["job_id"]
    listing = api.call(
        "GET", "/v1/jobs", params=[("state", "PENDING"), ("state", "RUNNING")]
    ).json()
    assert listing["total"] == 3
    jobs = {j["job_id"]: j for j in listing["jobs"]}
    assert jobs[first]["predicted_start"] == 1_000_100
    assert jobs[first]["queued_before"] == 0
    assert jobs[second]["predicted_start"] == 1_000_150
    assert jobs[second]["queued_before"] == 1
    assert jobs[running]["predicted_start"] is None
    only_waiting = api.call("GET", "/v1/jobs", params={"state": "PENDING"}).json()
    assert [j["job_id"] for j in only_waiting["jobs"]] == [first, second]
    nowhere = api.call("GET", "/v1/jobs", params={"partition": "nope"})
    assert nowhere.status_code == 404
    assert error_of(nowhere)["field"] == "partition"  # (the query's name for it)


def test_metrics_show_how_late_jobs_start_after_their_plan(api: Api) -> None:
    """A reservation reached while nothing wakes the daemon starts at the next command,
    5 s late: the start-lag histogram counts it in its 5-s bucket, beside the first job,
    which started on time (at submission); no guarantee broke."""
    api.submit(resources={"cpus": 32}, time_limit=100)
    api.submit(resources={"cpus": 32}, time_limit=100)  # reserved at 1_000_100
    api.clock.advance(105)
    api.submit(resources={"cpus": 1}, time_limit=1)  # the command that catches up
    metrics = api.call("GET", "/metrics", token=None).text
    values = dict(line.rsplit(" ", 1) for line in metrics.splitlines() if line.startswith("berth_"))
    assert values['berth_start_lag_seconds_bucket{le="0"}'] == "1"
    assert values['berth_start_lag_seconds_bucket{le="2"}'] == "1"
    assert values['berth_start_lag_seconds_bucket{le="5"}'] == "2"
    assert values["berth_start_lag_seconds_count"] == "2"
    assert values["berth_start_lag_seconds_sum"] == "5"
    assert values["berth_start_lag_seconds_max"] == "5"
    assert values["berth_guarantees_broken_total"] == "0"


def test_slack_policy_pushes_a_job_within_its_bound_and_reports_both(api: Api) -> None:
    changed = api.call(
        "PUT",
        "/v1/admin/policy",
        OPERATOR,
        json={"policy": "slack", "options": {"awt": 600, "heuristic": "dp"}},
    )
    assert changed.status_code == 200
    assert changed.json()["options"] == {"awt": 600, "heuristic": "dp"}
    api.submit(resources={"cpus": 32}, time_limit=100)
    big = api.submit(resources={"cpus": 24}, time_limit=1000).json()["job"]
    assert big["guaranteed_start"] > 1_000_100  # the bound: reservation plus slack
    small = api.submit(resources={"cpus": 16}, time_limit=50, priority=1.0).json()["job"]
    # Conservative would start the small job at +1,100; slack starts it at +100 and
    # pushes the big job back by 50 s, within its bound.
    assert (
        api.call("GET", f"/v1/jobs/{small['job_id']}/start").json()["predicted_start"] == 1_000_100
    )
    start = api.call("GET", f"/v1/jobs/{big['job_id']}/start").json()
    assert start["predicted_start"] == 1_000_150
    assert start["guaranteed_start"] == big["guaranteed_start"]
    bad = api.call(
        "PUT", "/v1/admin/policy", OPERATOR, json={"policy": "slack", "options": {"alpha_u": 3}}
    )
    assert bad.status_code == 422
    assert "alpha_u must be in [0.0, 1.0]" in error_of(bad)["message"]


def test_slot_requests_get_whole_slots_on_the_nodes_they_ask_for(api: Api) -> None:
    body: dict[str, Any] = {
        "slots": {"count": 4, "per_slot": {"cpus": 4, "mem_gb": 8}},
        "nodes": {"count": 2},
    }
    answer = api.submit(time_limit=100, **body)
    assert answer.status_code == 201, answer.json()
    job = answer.json()["job"]
    assert job["job_state"] == "RUNNING"
    assert job["resources"] == {"cpus": 16, "mem_gb": 32}  # the totals of the slots
    assert job["slots"] == {"count": 4, "per_slot": {"cpus": 4, "mem_gb": 8}, "nodes": 2,
                            "exclusive": False}  # fmt: skip
    assert sorted(job["nodes"].values(), key=str) == [{"cpus": 8, "mem_gb": 16}] * 2
    exclusive = api.submit(
        time_limit=100, slots={"count": 1, "per_slot": {"cpus": 1}}, nodes={"exclusive": True}
    ).json()["job"]
    assert list(exclusive["nodes"].values()) == [{"cpus": 8, "mem_gb": 32}]  # the whole node


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"resources": {"cpus": 1}, "slots": {"count": 1, "per_slot": {"cpus": 1}}}, "slots",
         "not both"),
        ({"resources": {"cpus": 1}, "nodes": {"count": 1}}, "nodes", "goes with slots"),
        ({"resources": None}, "resources", "resources (totals) or slots"),
        ({"slots": {"count": 1, "per_slot": {"cpus": 9}}}, "slots.per_slot", "no node can hold"),
        ({"slots": {"count": 5, "per_slot": {"cpus": 1}}, "nodes": {"count": 5}}, "nodes.count",
         "only 4 can hold"),
        ({"slots": {"count": 5, "per_slot": {"cpus": 8}}}, "slots.count", "at most 4"),
    ],
)  # fmt: skip
def test_slot_requests_no_node_set_can_hold_are_refused_naming_the_field(
    api: Api, body: dict[str, Any], field: str, words: str
) -> None:
    answer = api.submit(time_limit=100, **body)
    assert answer.status_code == 422, answer.json()
    assert error_of(answer)["field"] == field
    assert words in error_of(answer)["message"]


def test_the_plan_of_a_page_of_nodes_holds_only_their_jobs_and_shares(api: Api) -> None:
    """``/v1/schedule?node_offset=&node_limit=``: a page of a large cluster's Gantt chart
    asks for the jobs on the nodes of a page of /v1/cluster only, each window with only
    those nodes' shares."""
    api.submit(resources={"cpus": 24}, time_limit=100)  # running on three nodes
    api.submit(resources={"cpus": 16}, time_limit=100)  # planned on two
    api.submit(resources={"cpus": 8}, time_limit=50)  # running on the fourth
    whole = api.call("GET", "/v1/schedule").json()
    counted = []  # (how many windows each page got: some must leave jobs out)
    for offset, limit in ((0, 1), (1, 2), (3, 1), (0, 4), (0, 10_000), (4, 1)):
        cluster = api.call("GET", "/v1/cluster", params={"offset": offset, "limit": limit})
        asked = [n["name"] for n in cluster.json()["nodes"]]
        params = {"node_offset": offset, "node_limit": limit}
        part = api.call("GET", "/v1/schedule", params=params).json()
        counted.append(len(part["running"]) + len(part["planned"]))
        for kind in ("running", "planned"):
            expected = [
                {**w, "nodes": {n: a for n, a in w["nodes"].items() if n in asked}}
                for w in whole[kind]
                if set(w["nodes"]) & set(asked)
            ]
            assert part[kind] == expected, (offset, limit, kind)
        assert part["planned_total"] == len(part["planned"])
    assert counted[3:] == [3, 3, 0]  # (all four nodes, more than all, none)
    assert min(counted[:3]) < 3
    paged = api.call("GET", "/v1/schedule", params={"node_limit": 4, "limit": 1})
    assert paged.json()["planned"] == whole["planned"][:1]
    assert paged.json()["planned_total"] == whole["planned_total"] == 1
    bad = api.call("GET", "/v1/schedule", params={"node_limit": 0})
    assert (bad.status_code, error_of(bad)["field"]) == (422, "node_limit")


def test_deadline_admission_places_slots_on_named_nodes(api: Api) -> None:
    """Under QoPS a slot job is admitted with a deadline promise and a plan that names
    the nodes holding its whole slots (no policy plans a pool in the daemon)."""
    changed = api.call("PUT", "/v1/admin/policy", OPERATOR, json={"policy": "qops"})
    assert changed.status_code == 200
    api.submit(resources={"cpus": 32}, time_limit=1000)  # fills the 4 nodes
    now = api.call("GET", "/healthz").json()["now"]
    answer = api.submit(
        time_limit=100,
        slots={"count": 3, "per_slot": {"cpus": 4}},
        nodes={"count": 2},
        deadline=now + 5000,
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["accepted"] is True
    job = answer.json()["job"]
    assert job["guaranteed_start"] == now + 5000 - 100  # completion by the deadline
    planned = {w["job_id"]: w for w in api.call("GET", "/v1/schedule").json()["planned"]}
    nodes = planned[job["job_id"]]["nodes"]
    assert len(nodes) == 2
    assert sorted(held["cpus"] for held in nodes.values()) == [4, 8]


def test_finished_jobs_are_let_go_but_stay_queryable_and_idempotent(api: Api) -> None:
    engine = cast(FastAPI, api.client.app).state.daemon.engine
    engine.memory.keep = 2
    made = []
    for index in range(5):
        answer = api.call("POST", "/v1/jobs", json={"resources": {"cpus": 8}, "time_limit": 10,
                          "name": f"j{index}"}, headers={"Idempotency-Key": f"k{index}"})  # fmt: skip
        made.append(answer.json()["job"]["job_id"])
    for _ in range(2):  # four run at once, the fifth after them
        api.clock.advance(10)
        api.submit(resources={"cpus": 1}, time_limit=1)  # advances the engine
    assert len([j for j in engine.jobs.values() if j.final]) <= 2  # the rest were let go
    old = api.call("GET", f"/v1/jobs/{made[0]}").json()
    assert (old["name"], old["job_state"]) == ("j0", "COMPLETED")  # read from the store
    assert api.call("GET", f"/v1/jobs/{made[0]}", BOB).status_code == 404
    start = api.call("GET", f"/v1/jobs/{made[0]}/start").json()
    assert (start["job_state"], start["based_on"]) == ("COMPLETED", "the job is COMPLETED")
    assert api.call("GET", f"/v1/jobs/{made[0]}/start", BOB).status_code == 404
    again = api.call("POST", "/v1/jobs", json={"resources": {"cpus": 8}, "time_limit": 10},
                     headers={"Idempotency-Key": "k0"})  # fmt: skip
    assert again.status_code == 200  # the same job, not a second one
    assert again.json()["job"]["job_id"] == made[0]
    pages, before = [], None
    while True:
        query = {"state": "COMPLETED", "limit": 2, "before": before or made[-1] + 1}
        page = api.call("GET", "/v1/jobs/history", params=query).json()
        pages.append([j["job_id"] for j in page["jobs"]])
        before = page["next_before"]
        if before is None:
            break
    assert [job for page in pages for job in page] == sorted(made, reverse=True)
    assert all(len(p) <= 2 for p in pages)
    mine = api.call("GET", "/v1/jobs/history", BOB).json()
    assert mine["jobs"] == []  # bob sees only his own


def test_a_store_failure_answers_with_a_correlation_id_never_the_sql(
    api: Api, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import sqlite3

    api.submit(name="before", resources={"cpus": 8}, time_limit=100)
    with sqlite3.connect(tmp_path / "berth.db") as db:  # the store breaks under the daemon
        db.execute("DROP TABLE jobs")
    with caplog.at_level("ERROR", logger="berth.api"):
        failed = api.submit(name="secret-name-42", resources={"cpus": 8}, time_limit=100)
        health = api.call("GET", "/healthz", None)
    assert failed.status_code == 503
    error = failed.json()["error"]
    assert error["code"] == "unavailable"
    text = failed.text.lower()
    for leak in ("insert", "select", "sqlite", "secret-name-42", "traceback", "jobs"):
        assert leak not in text, f"{leak!r} leaked into {failed.text}"
    correlation = error["correlation_id"]
    assert correlation in error["message"]
    logged = [r.getMessage() for r in caplog.records if correlation in r.getMessage()]
    assert logged, "the detail is in the log under the id the client got"
    assert "no such table" in logged[0].lower()
    assert health.status_code == 503
    assert "sql" not in health.text.lower()
    assert health.json()["correlation_id"] in caplog.text
