"""What the REST API reports of past work, on a real SQLite file: usage per user and per
account over a period, a job's page of events, and who a token says its holder is."""

from __future__ import annotations

from tests.integration.api.harness import Api, error_of, fill_and_queue
from tests.integration.conftest import BOB, OPERATOR


def test_usage_per_user_over_a_period(api: Api) -> None:
    api.submit(resources={"cpus": 8, "mem_gb": 4}, time_limit=100)  # alice, 100 s
    api.submit(BOB, resources={"cpus": 2}, time_limit=50)  # bob, 50 s
    api.clock.advance(200)
    api.submit(resources={"cpus": 1}, time_limit=1000)  # advances; still running after
    start = 1_000_000
    every = api.call("GET", "/v1/usage", OPERATOR, params={"since": start}).json()
    assert every["users"] == [
        {"user": "alice", "jobs": 1, "cpus_seconds": 800, "mem_gb_seconds": 400},
        {"user": "bob", "jobs": 1, "cpus_seconds": 100},
    ]
    mine = api.call("GET", "/v1/usage", BOB, params={"since": start}).json()
    assert [u["user"] for u in mine["users"]] == ["bob"]
    later = api.call("GET", "/v1/usage", OPERATOR, params={"since": start + 101}).json()
    assert later["users"] == []  # both ended before
    wrong = api.call("GET", "/v1/usage", params={"since": start, "until": start})
    assert wrong.status_code == 422
    assert error_of(wrong)["field"] == "until"


def test_usage_per_account_and_jobs_charged_to_an_account(api: Api) -> None:
    first = api.submit(resources={"cpus": 4}, time_limit=100, account="physics").json()["job"]
    assert first["account"] == "physics"
    api.submit(BOB, resources={"cpus": 2}, time_limit=50, account="physics")
    mine = api.submit(BOB, resources={"cpus": 1}, time_limit=10).json()["job"]
    assert mine["account"] == "bob"  # no account named: the user's own
    api.clock.advance(200)
    api.submit(resources={"cpus": 1}, time_limit=1000)  # advances; still running after
    start = 1_000_000
    query = {"since": start, "by": "account"}
    every = api.call("GET", "/v1/usage", OPERATOR, params=query).json()
    assert every["by"] == "account"
    assert every["accounts"] == [
        {"account": "bob", "jobs": 1, "cpus_seconds": 10},
        {"account": "physics", "jobs": 2, "cpus_seconds": 500},
    ]
    assert every["account_total"] == 2
    # A user sees only their own jobs' part of an account.
    bobs = api.call("GET", "/v1/usage", BOB, params=query).json()["accounts"]
    assert bobs == [
        {"account": "bob", "jobs": 1, "cpus_seconds": 10},
        {"account": "physics", "jobs": 1, "cpus_seconds": 100},
    ]
    one = api.call("GET", "/v1/usage", OPERATOR, params={**query, "account": "physics"})
    assert [row["account"] for row in one.json()["accounts"]] == ["physics"]
    by_user = api.call("GET", "/v1/usage", OPERATOR, params={"since": start, "account": "physics"})
    assert [(u["user"], u["jobs"]) for u in by_user.json()["users"]] == [("alice", 1), ("bob", 1)]
    # Listed and paged by account, from memory and from the store.
    live = api.call("GET", "/v1/jobs", OPERATOR, params={"account": "physics"}).json()
    assert [j["job_id"] for j in live["jobs"]] == [1, 2]
    stored = api.call("GET", "/v1/jobs/history", OPERATOR, params={"account": "physics"}).json()
    assert [j["job_id"] for j in stored["jobs"]] == [2, 1]
    # Bad names are refused, naming the field.
    for body in ({"account": "no spaces"}, {"account": "x" * 101}, {"account": ""}):
        refused = api.submit(**body)
        assert refused.status_code == 422
        assert error_of(refused)["field"] == "account"
    wrong = api.call("GET", "/v1/usage", params={"since": start, "by": "partition"})
    assert wrong.status_code == 422
    assert error_of(wrong)["field"] == "by"


def test_a_job_page_reads_its_history_and_tokens_say_who_they_are(api: Api) -> None:
    fill_and_queue(api)
    api.call("DELETE", "/v1/jobs/2")
    history = api.call("GET", "/v1/jobs/2/events").json()
    assert history["job_id"] == 2
    kinds = [e["kind"] for e in history["events"]]
    assert kinds[0] == "job.accepted"
    assert kinds[-1] == "job.cancelled"
    assert all(e["job_id"] == 2 for e in history["events"])
    ids = [e["id"] for e in history["events"]]
    assert ids == sorted(ids)
    page = api.call("GET", "/v1/jobs/2/events?limit=1").json()
    assert len(page["events"]) == 1
    assert page["next_after"] == ids[0]
    rest = api.call("GET", f"/v1/jobs/2/events?after={ids[0]}").json()
    assert [e["id"] for e in rest["events"]] == ids[1:]
    # Another user's job's history is as hidden as the job.
    assert api.call("GET", "/v1/jobs/2/events", BOB).status_code == 404
    static = {"account": None, "expires_at": None}  # a configured token: no account, no expiry
    assert api.call("GET", "/v1/whoami").json() == {"user": "alice", "role": "user", **static}
    assert api.call("GET", "/v1/whoami", OPERATOR).json() == {
        "user": "admin",
        "role": "operator",
        **static,
    }
    assert api.call("GET", "/v1/whoami", None).status_code == 401
