"""The operators' routes through the REST API on a real SQLite file: nodes drained and
resumed, holds, priorities and policy changes that keep every promise, and dry runs of
the live state that touch nothing."""

from __future__ import annotations

from tests.integration.api.harness import Api, error_of, fill_and_queue
from tests.integration.conftest import BOB, OPERATOR


def test_operators_manage_nodes_without_breaking_promises(api: Api) -> None:
    fill_and_queue(api)
    refused = api.call("POST", "/v1/admin/nodes/node001/drain", OPERATOR, json={"reason": "disk"})
    assert refused.status_code == 409
    assert (
        "job 2 (guaranteed start t=1000100) would lose its guarantee"
        in error_of(refused)["message"]
    )
    added = api.call(
        "POST", "/v1/admin/nodes", OPERATOR, json={"name": "extra", "resources": {"cpus": 8}}
    )
    assert added.status_code == 201
    drained = api.call("POST", "/v1/admin/nodes/node001/drain", OPERATOR, json={"reason": "disk"})
    assert drained.status_code == 200
    assert drained.json()["state"] == "drained"
    assert api.call("GET", "/v1/jobs/2").json()["guaranteed_start"] == 1_000_100
    resumed = api.call("POST", "/v1/admin/nodes/node001/resume", OPERATOR)
    assert resumed.json()["state"] == "up"
    down = api.call("POST", "/v1/admin/nodes/node002/down", OPERATOR, json={"reason": "psu"})
    assert down.json()["state"] == "down"
    assert api.call("GET", "/v1/jobs/1").json()["job_state"] == "NODE_FAIL"
    unknown = api.call("POST", "/v1/admin/nodes/nope/drain", OPERATOR, json={})
    assert unknown.status_code == 404
    assert error_of(unknown)["field"] == "name"


def test_hold_release_and_priority(api: Api) -> None:
    api.submit(resources={"cpus": 32}, time_limit=100)
    job = api.submit(resources={"cpus": 32}, time_limit=100).json()["job"]["job_id"]
    held = api.call("POST", f"/v1/admin/jobs/{job}/hold", OPERATOR, json={"reason": "ask"}).json()
    assert held["job_state"] == "HELD"
    assert held["guaranteed_start"] is None
    released = api.call("POST", f"/v1/admin/jobs/{job}/release", OPERATOR).json()
    assert released["job_state"] == "PENDING"
    assert released["guaranteed_start"] == 1_000_100
    priority = api.call("PUT", f"/v1/admin/jobs/{job}/priority", OPERATOR, json={"political": 0.9})
    assert priority.json()["political_priority"] == 0.9
    assert (
        api.call(
            "PUT", f"/v1/admin/jobs/{job}/priority", OPERATOR, json={"political": 3}
        ).status_code
        == 422
    )


def test_users_hold_and_release_their_own_jobs_but_not_an_operators_hold(api: Api) -> None:
    """scontrol hold / release by a job's user, sbatch --hold, and an operator's hold,
    which only operators (and the account's coordinator) release."""
    api.submit(resources={"cpus": 32}, time_limit=100)
    job = api.submit(resources={"cpus": 32}, time_limit=100).json()["job"]["job_id"]
    held = api.call("POST", f"/v1/jobs/{job}/hold").json()
    assert (held["job_state"], held["hold"], held["state_reason"]) == (
        "HELD",
        "user",
        "held by alice",
    )
    assert api.call("POST", f"/v1/jobs/{job}/hold", BOB).status_code == 404  # (not bob's)
    assert api.call("POST", f"/v1/jobs/{job}/release", BOB).status_code == 404
    released = api.call("POST", f"/v1/jobs/{job}/release").json()
    assert (released["job_state"], released["hold"]) == ("PENDING", None)
    assert released["guaranteed_start"] == 1_000_100
    api.call("POST", f"/v1/jobs/{job}/hold", OPERATOR, json={"reason": "maintenance"})
    refused = api.call("POST", f"/v1/jobs/{job}/release")
    assert refused.status_code == 403
    assert error_of(refused)["field"] == "job_id"
    assert (
        "is held (maintenance): only an operator or its account's coordinator"
        in (error_of(refused)["message"])
    )
    assert api.call("GET", f"/v1/jobs/{job}").json()["hold"] == "admin"
    assert api.call("POST", f"/v1/jobs/{job}/release", OPERATOR).json()["job_state"] == "PENDING"
    submitted = api.submit(resources={"cpus": 8}, time_limit=100, hold=True).json()["job"]
    assert (submitted["job_state"], submitted["hold"]) == ("HELD", "user")
    assert submitted["guaranteed_start"] is None
    again = api.call("POST", f"/v1/jobs/{submitted['job_id']}/release").json()
    assert again["job_state"] == "PENDING"
    assert again["guaranteed_start"] is not None


def test_policy_change_refuses_to_break_guarantees(api: Api) -> None:
    fill_and_queue(api)
    refused = api.call("PUT", "/v1/admin/policy", OPERATOR, json={"policy": "easy"})
    assert refused.status_code == 409
    assert "job 2" in error_of(refused)["message"]
    unknown = api.call("PUT", "/v1/admin/policy", OPERATOR, json={"policy": "magic"})
    assert unknown.status_code == 422
    assert error_of(unknown)["field"] == "policy"
    kept = api.call(
        "PUT",
        "/v1/admin/policy",
        OPERATOR,
        json={"policy": "conservative", "options": {"selection": "bb"}},
    )
    assert kept.json()["options"] == {"selection": "bb"}
    forced = api.call("PUT", "/v1/admin/policy", OPERATOR, json={"policy": "easy", "force": True})
    assert forced.json()["policy"] == "easy"


def test_dry_run_replays_live_state_without_touching_it(api: Api) -> None:
    api.submit(resources={"cpus": 32}, time_limit=100, emulated_runtime=50)
    api.submit(resources={"cpus": 16}, time_limit=100)
    api.submit(resources={"cpus": 16}, time_limit=10)
    before = api.call("GET", "/v1/schedule").json()
    report = api.call("POST", "/v1/admin/dry-run", OPERATOR, json={"policy": "easy"}).json()
    assert report["policy"] == "easy"
    assert {j["job_id"]: j["predicted_start"] for j in report["jobs"]} == {
        2: 1_000_050,
        3: 1_000_050,
    }
    assert report["metrics"]["jobs"] == 2
    assert api.call("GET", "/v1/schedule").json() == before
    bad = api.call(
        "POST", "/v1/admin/dry-run", OPERATOR, json={"policy": "easy", "options": {"k_factor": 3}}
    )
    assert bad.status_code == 422
    assert error_of(bad)["field"] == "options.k_factor"


def test_dry_run_keeps_what_waiting_jobs_wait_for(api: Api) -> None:
    """A job waiting for a running one (which really ends at 50 of its 100 s) and one
    waiting for a waiting one: the dry run starts each only after its predecessor."""
    api.submit(resources={"cpus": 32}, time_limit=100, emulated_runtime=50)
    api.submit(resources={"cpus": 8}, time_limit=100, emulated_runtime=20, dependency="afterok:1")
    api.submit(resources={"cpus": 8}, time_limit=10, dependency="afterany:2")
    report = api.call("POST", "/v1/admin/dry-run", OPERATOR, json={"policy": "easy"}).json()
    starts = {j["job_id"]: j["predicted_start"] for j in report["jobs"]}
    assert starts == {2: 1_000_050, 3: 1_000_070}


def test_several_nodes_change_in_one_request(api: Api) -> None:
    """``POST /v1/admin/nodes/{drain,resume,down}`` with ``names``: one replan for all
    of them, refused as a whole (nothing changed) with every offending node named."""
    fill_and_queue(api)

    def states() -> dict[str, tuple[str, str]]:
        nodes = api.call("GET", "/v1/cluster").json()["nodes"]
        return {n["name"]: (n["state"], n["reason"]) for n in nodes}

    pair = {"names": ["node001", "node002"], "reason": "rack 7"}
    refused = api.call("POST", "/v1/admin/nodes/drain", OPERATOR, json=pair)
    assert refused.status_code == 409
    error = error_of(refused)
    assert error["field"] == "names"
    assert error["message"].startswith(
        "taking 2 nodes (node001, node002) out would break 1 guarantee(s): job 2 "
    )
    assert set(states().values()) == {("up", "")}  # (as it was)
    for asked, status, field in (
        ({"names": ["node003", "nope"]}, 404, "name"),
        ({"names": []}, 422, "names"),
        ({"names": ["node001"], "colour": "red"}, 422, "colour"),
    ):
        answer = api.call("POST", "/v1/admin/nodes/drain", OPERATOR, json=asked)
        assert (answer.status_code, error_of(answer)["field"]) == (status, field)
    assert states()["node003"] == ("up", "")

    forced = api.call("POST", "/v1/admin/nodes/drain", OPERATOR, json={**pair, "force": True})
    assert forced.status_code == 200
    assert [(n["name"], n["state"], n["reason"]) for n in forced.json()["nodes"]] == [
        ("node001", "drained", "rack 7"),
        ("node002", "drained", "rack 7"),
    ]
    again = api.call("POST", "/v1/admin/nodes/drain", OPERATOR, json=pair)
    assert error_of(again)["message"] == (
        "node 'node001' is drained, not up; node 'node002' is drained, not up"
    )
    resumed = api.call("POST", "/v1/admin/nodes/resume", OPERATOR, json={"names": pair["names"]})
    assert [n["state"] for n in resumed.json()["nodes"]] == ["up", "up"]
    down = api.call(
        "POST", "/v1/admin/nodes/down", OPERATOR, json={"names": ["node003", "node004"]}
    )
    assert [n["reason"] for n in down.json()["nodes"]] == ["marked down by an operator"] * 2
    failed = api.call("GET", "/v1/jobs/1").json()
    assert (failed["job_state"], failed["state_reason"]) == (
        "NODE_FAIL",
        "node node003 went down: marked down by an operator",
    )
    other = api.call("POST", "/v1/admin/nodes/reboot", OPERATOR, json={"names": ["node001"]})
    assert (other.status_code, error_of(other)["field"]) == (422, "action")
