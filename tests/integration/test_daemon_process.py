"""The daemon as a real process over real HTTP: events, and kill -9 loses nothing."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.conftest import ALICE, BOB, OPERATOR, DaemonProcess


def _headers(token: str = ALICE) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def daemon(tmp_path: Path) -> Any:
    process = DaemonProcess(tmp_path)
    yield process
    process.stop()


def test_event_stream_delivers_job_events(daemon: DaemonProcess) -> None:
    seen: list[dict[str, Any]] = []
    ready = threading.Event()

    def listen() -> None:
        with httpx.stream("GET", f"{daemon.url}/v1/events", headers=_headers(OPERATOR),
                          timeout=20.0) as stream:  # fmt: skip
            kind = None
            for line in stream.iter_lines():
                if line.startswith(": connected"):
                    ready.set()
                elif line.startswith("event: "):
                    kind = line[len("event: ") :]
                elif line.startswith("data: "):
                    seen.append({"kind": kind, **json.loads(line[len("data: ") :])})
                    if kind == "job.cancelled":
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert ready.wait(10)
    job = httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(),
                     json={"resources": {"cpus": 8}, "time_limit": 600}).json()["job"]["job_id"]  # fmt: skip
    httpx.delete(f"{daemon.url}/v1/jobs/{job}", headers=_headers())
    listener.join(15)
    kinds = [(e["kind"], e.get("job_id")) for e in seen]
    assert kinds == [("job.accepted", job), ("job.started", job), ("job.cancelled", job)]
    assert seen[1]["nodes"] == ["node001"]


def test_unauthenticated_requests_are_refused_over_http(daemon: DaemonProcess) -> None:
    response = httpx.get(f"{daemon.url}/v1/jobs")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_metrics_report_how_late_the_event_loop_turns(tmp_path: Path) -> None:
    """The daemon watches its own loop: the late turns and the worst lateness are in
    /metrics, and with --stall-report-ms a held loop is logged with where it was."""
    daemon = DaemonProcess(tmp_path, "--stall-report-ms", "1")
    try:
        for _ in range(20):  # a few requests: some turn of the loop is over 1 ms late
            httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(),
                       json={"resources": {"cpus": 1}, "time_limit": 60})  # fmt: skip
        lines = httpx.get(f"{daemon.url}/metrics").text.splitlines()
        values = dict(line.rsplit(" ", 1) for line in lines if line.startswith("berth_event_loop"))
        assert set(values) == {
            "berth_event_loop_late_turns_total",
            "berth_event_loop_lag_seconds_max",
        }
    finally:
        daemon.stop()
    assert "event loop held " in daemon.log.read_text()


@pytest.mark.parametrize("access_log", [False, True])
def test_requests_are_logged_one_by_one_only_with_access_log(
    tmp_path: Path, access_log: bool
) -> None:
    extra = ("--log-level", "info", *(("--access-log",) if access_log else ()))
    daemon = DaemonProcess(tmp_path, *extra)
    try:
        for _ in range(3):
            assert httpx.get(f"{daemon.url}/v1/jobs", headers=_headers()).status_code == 200
    finally:
        daemon.stop()
    logged = daemon.log.read_text()
    assert ('"GET /v1/jobs HTTP/1.1" 200' in logged) is access_log
    # The web server's start-up chatter is not logged either way.
    assert "Application startup complete" not in logged


def _run_one_job(daemon: DaemonProcess) -> int:
    """Submit a job that runs a second of cluster time at once; its number, once ended."""
    answer = httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(), json={
        "resources": {"cpus": 2}, "time_limit": 60, "emulated_runtime": 1})  # fmt: skip
    job_id = int(answer.json()["job"]["job_id"])
    for _ in range(100):
        job = httpx.get(f"{daemon.url}/v1/jobs/{job_id}", headers=_headers()).json()
        if job["job_state"] == "COMPLETED":
            return job_id
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not end: {job}")


def test_the_log_has_one_readable_line_per_meaningful_event(tmp_path: Path) -> None:
    """A job's start and end are logged, one line each, and a drain; its admission and
    the daemon's routine work (requests, the job scheduler, migrations) are not."""
    daemon = DaemonProcess(tmp_path, "--log-level", "info")
    operator = {"Authorization": f"Bearer {OPERATOR}"}
    try:
        job_id = _run_one_job(daemon)
        drained = httpx.post(f"{daemon.url}/v1/admin/nodes/node004/drain", headers=operator,
                             json={"reason": "disk check"})  # fmt: skip
        assert drained.status_code == 200, drained.text
    finally:
        daemon.stop()
    lines = [line for line in daemon.log.read_text().splitlines() if " INFO " in line]
    started = [line for line in lines if f"job {job_id} started on node" in line]
    ended = [line for line in lines if f"job {job_id} completed" in line]
    assert len(started) == 1, lines
    assert len(ended) == 1, lines
    assert any(line.endswith("node node004 drained: disk check (by admin)") for line in lines), (
        lines
    )
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO job", started[0]), started
    # Nothing else at info: no admission, no scheduler jobs, no migrations.
    assert not [line for line in lines if line not in (*started, *ended) and "drained" not in line]


def test_json_log_lines_carry_the_event(tmp_path: Path) -> None:
    """With --log-format json every line on stderr is a JSON object; an event's line
    carries its kind, job and the cluster time beside the wall time."""
    daemon = DaemonProcess(tmp_path, "--log-level", "info", "--log-format", "json")
    try:
        job_id = _run_one_job(daemon)
    finally:
        daemon.stop()
    text = daemon.log.read_text()
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    by_kind = {record.get("kind"): record for record in records}
    started = by_kind["job.started"]
    assert started["job_id"] == job_id
    assert started["level"] == "info"
    assert started["logger"] == "berth.events"
    assert started["message"].startswith(f"job {job_id}")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", started["time"])
    assert isinstance(started["cluster_time"], int)
    assert started["nodes"]
    assert by_kind["job.completed"]["job_id"] == job_id
    # Every log record is JSON (stdout's banner and tokens are the only other lines).
    assert not [line for line in text.splitlines() if " INFO " in line or " WARNING " in line]


def test_kill_9_during_a_burst_loses_no_acknowledged_job(tmp_path: Path) -> None:
    """Eight clients submit with idempotency keys; the daemon is SIGKILLed mid-burst.
    After a restart every acknowledged job is there with the same guarantee, running
    jobs kept their start, and retrying the unanswered requests creates no duplicate."""
    daemon = DaemonProcess(tmp_path)
    acknowledged: dict[str, dict[str, Any]] = {}
    unanswered: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()
    enough = threading.Event()

    def client(number: int) -> None:
        with httpx.Client(base_url=daemon.url, headers=_headers(), timeout=5.0) as http:
            for i in range(400):
                key = f"c{number}-{i}"
                body = {"resources": {"cpus": 1 + (i * 7 + number) % 8}, "time_limit": 3600 + i}
                try:
                    answer = http.post("/v1/jobs", json=body, headers={"Idempotency-Key": key})
                except httpx.HTTPError:
                    with lock:
                        unanswered.append((key, body))
                    return
                with lock:
                    acknowledged[key] = answer.json()["job"]
                    if len(acknowledged) >= 300:
                        enough.set()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    assert enough.wait(60), daemon.log.read_text()
    daemon.kill()
    for thread in threads:
        thread.join(30)
    assert len(acknowledged) >= 300

    restarted = DaemonProcess(tmp_path)
    try:
        with httpx.Client(base_url=restarted.url, headers=_headers(OPERATOR), timeout=10.0) as http:
            jobs: dict[int, dict[str, Any]] = {}
            offset = 0
            while True:
                page = http.get("/v1/jobs", params={"limit": 1000, "offset": offset}).json()
                jobs.update({j["job_id"]: j for j in page["jobs"]})
                offset += len(page["jobs"])
                if offset >= page["total"]:
                    break
            for key, before in acknowledged.items():
                after = jobs[before["job_id"]]
                assert after["guaranteed_start"] == before["guaranteed_start"], key
                if before["job_state"] == "RUNNING":
                    assert after["start_time"] == before["start_time"], key
            retried = {}
            for key, body in unanswered:
                answer = http.post("/v1/jobs", json=body,
                                   headers={"Idempotency-Key": key, **_headers()})  # fmt: skip
                retried[key] = answer.json()["job"]["job_id"]
            total = http.get("/v1/jobs", params={"limit": 1}).json()["total"]
        # one job per key, exactly: a request cut off by the kill and retried with its key
        # returns the job if it was committed, and creates it once if it was not
        ids = [j["job_id"] for j in acknowledged.values()] + list(retried.values())
        assert len(set(ids)) == len(ids) == len(acknowledged) + len(unanswered) == total
    finally:
        restarted.stop()


def test_the_clock_wakes_the_engine_without_any_request(tmp_path: Path) -> None:
    """With cluster time 100x faster, a job with a 200 s emulated runtime ends ~2 s later
    and the waiting job starts, with no request in between (APScheduler's wake-up; the
    reconcile tick is 30 s away)."""
    daemon = DaemonProcess(tmp_path, "--time-scale", "100")
    try:
        with httpx.Client(base_url=daemon.url, headers=_headers(), timeout=5.0) as http:
            first = http.post("/v1/jobs", json={"resources": {"cpus": 32}, "time_limit": 400,
                                                "emulated_runtime": 200}).json()["job"]  # fmt: skip
            second = http.post("/v1/jobs", json={"resources": {"cpus": 32},
                                                 "time_limit": 100}).json()["job"]  # fmt: skip
            assert second["job_state"] == "PENDING"
            with httpx.stream("GET", f"{daemon.url}/v1/events", headers=_headers(),
                              timeout=20.0) as stream:  # fmt: skip
                for line in stream.iter_lines():
                    if line == "event: job.started":
                        break
            done = http.get(f"/v1/jobs/{first['job_id']}").json()
            started = http.get(f"/v1/jobs/{second['job_id']}").json()
        assert done["job_state"] == "COMPLETED"
        assert done["end_time"] == first["start_time"] + 200
        assert started["job_state"] == "RUNNING"
        assert started["start_time"] == done["end_time"]
    finally:
        daemon.stop()


def _read_events(
    url: str,
    token: str,
    until: int,
    last_id: int | None = None,
    halfway: tuple[int, threading.Event] | None = None,
) -> list[dict[str, Any]]:
    """Events from the stream (resuming after ``last_id``) until ``until`` have come;
    ``halfway`` is set once its count has come."""
    headers = _headers(token)
    if last_id is not None:
        headers["Last-Event-ID"] = str(last_id)
    seen: list[dict[str, Any]] = []
    with httpx.stream("GET", f"{url}/v1/events", headers=headers, timeout=20.0) as stream:
        event_id = None
        for line in stream.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[len("id: ") :])
            elif line.startswith("data: "):
                seen.append({"id": event_id, **json.loads(line[len("data: ") :])})
                if halfway is not None and len(seen) == halfway[0]:
                    halfway[1].set()
                if len(seen) == until:
                    return seen
    return seen


def test_a_stream_resumes_from_last_event_id_across_a_restart(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        first = httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(),
                           json={"resources": {"cpus": 8}, "time_limit": 600}).json()["job"]  # fmt: skip
        seen = _read_events(daemon.url, ALICE, until=2, last_id=0)
        assert [e["kind"] for e in seen] == ["job.accepted", "job.started"]
        last = seen[-1]["id"]
        # While nobody listens: bob's job, alice's second job, alice's first cancelled.
        httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(BOB),
                   json={"resources": {"cpus": 8}, "time_limit": 600})  # fmt: skip
        second = httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(),
                            json={"resources": {"cpus": 8}, "time_limit": 600}).json()["job"]  # fmt: skip
        httpx.delete(f"{daemon.url}/v1/jobs/{first['job_id']}", headers=_headers())
        daemon.stop()
        daemon = DaemonProcess(tmp_path)  # the same database
        missed = _read_events(daemon.url, ALICE, until=3, last_id=last)
        assert [(e["kind"], e["job_id"]) for e in missed] == [
            ("job.accepted", second["job_id"]),
            ("job.started", second["job_id"]),
            ("job.cancelled", first["job_id"]),
        ]  # bob's job is not alice's to see
        # The operator sees everything missed, then what happens live, in one run of ids.
        backlog_read, everything = threading.Event(), []
        reader = threading.Thread(
            target=lambda: everything.extend(
                _read_events(daemon.url, OPERATOR, 7, last, (5, backlog_read))
            ),
            daemon=True,
        )
        reader.start()
        assert backlog_read.wait(15)
        httpx.post(f"{daemon.url}/v1/jobs", headers=_headers(BOB),
                   json={"resources": {"cpus": 8}, "time_limit": 600})  # fmt: skip
        reader.join(15)
        assert [e["id"] for e in everything] == list(range(last + 1, last + 8))
        assert [e["kind"] for e in everything[5:]] == ["job.accepted", "job.started"]
    finally:
        daemon.stop()


def test_an_open_event_stream_ends_when_the_daemon_stops(tmp_path: Path) -> None:
    """A dashboard left open holds ``GET /v1/events`` for good: at shutdown the stream is
    ended (the client reads its end) instead of being waited for through uvicorn's whole
    grace and then cancelled with an error in the log."""
    daemon = DaemonProcess(tmp_path)
    ended = threading.Event()
    lines: list[str] = []

    def listen() -> None:
        with httpx.stream(
            "GET", f"{daemon.url}/v1/events", headers=_headers(), timeout=30
        ) as answer:
            lines.extend(answer.iter_lines())  # (grows line by line as they come)
        ended.set()  # (the stream's end, read without an error)

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    try:
        for _ in range(100):  # (until the stream's first line arrived)
            if lines:
                break
            time.sleep(0.05)
        assert lines[:1] == [": connected"]
    finally:
        daemon.stop()
    assert daemon.process.returncode is not None
    assert ended.wait(10)
    log = daemon.log.read_text()
    assert "graceful shutdown exceeded" not in log, log
