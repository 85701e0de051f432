"""A large array goes in a part a batch: a daemon killed (SIGKILL) between parts admits
the rest when it starts again, with the task numbers it set aside, and a retry of the
request with its idempotency key answers the whole array."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

import httpx

from tests.integration.conftest import ALICE, DaemonProcess

TASKS = 10_000
BODY = {"resources": {"cpus": 1}, "time_limit": 3600, "array": f"0-{2 * (TASKS - 1)}:2"}
HEADERS = {"Authorization": f"Bearer {ALICE}", "Idempotency-Key": "sweep"}


def _stored_tasks(data_dir: Path) -> int:
    with sqlite3.connect(data_dir / "berth.db") as db:
        (count,) = db.execute("SELECT count(*) FROM jobs").fetchone()
    return int(count)


def test_a_daemon_killed_while_an_array_goes_in_admits_the_rest_at_restart(
    tmp_path: Path,
) -> None:
    daemon = DaemonProcess(tmp_path)
    answered: list[httpx.Response] = []

    def submit() -> None:
        with contextlib.suppress(httpx.HTTPError):  # (cut off by the kill)
            answered.append(httpx.post(f"{daemon.url}/v1/jobs", json=BODY, headers=HEADERS,
                                       timeout=60.0))  # fmt: skip

    sender = threading.Thread(target=submit)
    sender.start()
    with httpx.Client(base_url=daemon.url, headers=HEADERS, timeout=5.0) as http:
        for _ in range(1000):  # reads are answered between parts: kill after the first
            if http.get("/v1/jobs", params={"limit": 1}).json()["total"] > 0:
                break
            time.sleep(0.01)
    daemon.kill()
    sender.join(30)
    stored = _stored_tasks(tmp_path)
    assert not answered
    assert 0 < stored < TASKS  # killed between parts: some of the array, not all of it

    restarted = DaemonProcess(tmp_path)
    try:
        with httpx.Client(base_url=restarted.url, headers=HEADERS, timeout=30.0) as http:
            jobs: list[dict[str, int]] = []
            while len(jobs) < TASKS:
                page = http.get("/v1/jobs", params={"limit": 1000, "offset": len(jobs)}).json()
                assert page["jobs"], "fewer tasks than the array asked for"
                jobs += page["jobs"]
            retried = http.post("/v1/jobs", json=BODY)
    finally:
        restarted.stop()
    assert sorted((j["job_id"], j["array_task_id"]) for j in jobs) == [
        (1 + i, 2 * i) for i in range(TASKS)
    ]
    assert {j["array_job_id"] for j in jobs} == {1}
    assert retried.status_code == 200  # the same array, not a second one
    assert retried.json()["array_tasks"] == list(range(1, TASKS + 1))
