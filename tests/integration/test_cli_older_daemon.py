"""What ``berth queue`` and ``berth usage`` ask a daemon for the cluster's time and each
waiting job's predicted start: a job list's pages carry both, so they ask nothing else;
a daemon from before those fields has them only in its plan, which they then ask, as they
used to (a rolling upgrade updates login nodes and the daemon at different times). And
``berth cancel -u ...`` against a daemon from before cancelling by filter says so. The
daemon here is a loopback HTTP server answering as one of either age does."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from berth.runtime.main import main

NOW = 1_800_000_000
RUNNING = {"job_id": 1, "name": "first", "user": "alice", "job_state": "RUNNING",
           "resources": {"cpus": 32}, "start_time": NOW - 60, "guaranteed_start": NOW - 60}  # fmt: skip
WAITING = {"job_id": 2, "name": "second", "user": "alice", "job_state": "PENDING",
           "resources": {"cpus": 16}, "start_time": None, "guaranteed_start": NOW + 540}  # fmt: skip


class OlderDaemon(BaseHTTPRequestHandler):
    """``/v1/jobs`` without ``now`` or ``predicted_start``; ``/v1/schedule`` with both;
    ``/v1/usage`` answering the window asked. Records the paths and queries asked."""

    asked: ClassVar[list[tuple[str, dict[str, list[str]]]]] = []
    #: Answer as today's daemon does instead: ``now`` and ``predicted_start`` on the page.
    current: ClassVar[bool] = False

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        self.asked.append((url.path, query))
        body: dict[str, Any]
        if url.path == "/v1/jobs":
            jobs = [RUNNING, WAITING][: int(query["limit"][0])]
            body = {"jobs": jobs, "total": 2, "limit": int(query["limit"][0]), "offset": 0}
            if self.current:
                body["now"] = NOW
                body["jobs"] = [{**job, "predicted_start": NOW + 420} for job in jobs]
        elif url.path == "/v1/schedule":
            planned = [{"job_id": 2, "start": NOW + 480}]
            body = {"now": NOW, "running": [], "planned": planned, "planned_total": 1}
        elif url.path == "/v1/usage":
            since = int(query["since"][0])
            body = {"since": since, "until": NOW, "users": []}
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_DELETE(self) -> None:
        """As a daemon from before cancelling by filter answers ``DELETE /v1/jobs``."""
        self.asked.append((urlsplit(self.path).path, {}))
        data = json.dumps({"error": {"code": "method_not_allowed",
                                     "message": "Method Not Allowed", "field": "method"}})  # fmt: skip
        self.send_response(405)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, *args: object) -> None:
        pass  # (quiet)


@pytest.fixture
def older_daemon() -> Iterator[str]:
    OlderDaemon.asked = []
    OlderDaemon.current = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), OlderDaemon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_queue_takes_the_time_and_predictions_from_an_older_daemons_plan(
    older_daemon: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["queue", "--url", older_daemon, "--token", "t", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["now"] == NOW
    assert listed["predicted"] == {"2": NOW + 480}
    assert [path for path, _ in OlderDaemon.asked] == ["/v1/jobs", "/v1/schedule"]


def test_usage_takes_the_time_from_an_older_daemons_plan(
    older_daemon: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["usage", "--url", older_daemon, "--token", "t", "--days", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["since"] == NOW - 86_400
    assert [path for path, _ in OlderDaemon.asked] == ["/v1/jobs", "/v1/schedule", "/v1/usage"]
    assert OlderDaemon.asked[1][1]["limit"] == ["1"]  # (its first page only: the time)


def test_queue_asks_todays_daemon_for_its_job_list_only(
    older_daemon: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """(the plan was megabytes with a deep queue on many nodes, for a time and a start
    per job: 1.27 s of ``berth queue``'s 4,433 jobs on 4,096 nodes, against 0.52 s)"""
    OlderDaemon.current = True
    assert main(["queue", "--url", older_daemon, "--token", "t", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert (listed["now"], listed["predicted"]) == (NOW, {"2": NOW + 420})
    assert [path for path, _ in OlderDaemon.asked] == ["/v1/jobs"]


def test_cancel_by_filter_says_an_older_daemon_cancels_by_id_only(
    older_daemon: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cancel", "--url", older_daemon, "--token", "t", "-u", "alice"]) == 1
    assert capsys.readouterr().err == (
        f"berth cancel: the daemon at {older_daemon} is older than this client and cancels "
        "by id only\n"
    )
    assert [path for path, _ in OlderDaemon.asked] == ["/v1/jobs"]
