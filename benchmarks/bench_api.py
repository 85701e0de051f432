"""The daemon under load over real HTTP: submissions per second and latencies.

Starts ``berth serve`` (conservative backfilling, SQLite with ``synchronous=FULL``,
16 emulated nodes of ``cpus=32,mem_gb=128``) in a subprocess on loopback, then from
this process (asyncio + httpx, ``--clients`` concurrent connections):

1. submits ``--jobs`` jobs with one-day time limits, so they queue up behind each other
   (every one gets a reservation and a guarantee): throughput and submit latency;
2. with that queue in place, times ``--queries`` start-time queries
   (``GET /v1/jobs/{id}/start``) for random pending jobs, one at a time;
3. reads the daemon's ``/metrics`` to show where the time went (scheduling passes,
   commits, batch size).

The client shares the machine's two cores with the daemon, so the figures are a lower
bound on what the daemon alone can do. Each run uses a fresh database.

    .venv/bin/python benchmarks/bench_api.py
    .venv/bin/python benchmarks/bench_api.py --jobs 10000 --clients 8 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.conftest import ALICE, DaemonProcess
from tests.support.postgres import start_postgresql, stop_postgresql


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class RawHttp:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams.

    httpx costs about 2 ms of client CPU per request here, as much as the daemon
    itself, and the client shares the machine's two cores with the daemon; this one
    costs a few tens of microseconds, so the figures measure the daemon.
    """

    def __init__(self, url: str, token: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.host, self.port = host, int(port)
        self.auth = f"Authorization: Bearer {token}\r\n"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: dict[str, object] | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        payload = json.dumps(body).encode() if body is not None else b""
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.auth}"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n")  # fmt: skip
        self.writer.write(head.encode() + payload)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        return int(status_line.split()[1]), await self.reader.readexactly(length)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def submit_bodies(url: str, bodies: list[dict[str, object]], clients: int) -> list[float]:
    """Submit ``bodies`` in order from ``clients`` concurrent connections; the latencies."""
    latencies: list[float] = []
    todo = iter(bodies)

    async def worker() -> None:
        http = RawHttp(url, ALICE)
        try:
            for body in todo:
                began = time.perf_counter()
                status, text = await http.request("POST", "/v1/jobs", body)
                latencies.append(time.perf_counter() - began)
                assert status == 201, text
        finally:
            http.close()

    await asyncio.gather(*(worker() for _ in range(clients)))
    return latencies


async def _submit_all(url: str, jobs: int, clients: int) -> tuple[float, list[float]]:
    rng = random.Random()
    bodies: list[dict[str, object]] = [
        {"resources": {"cpus": rng.choice((1, 2, 4, 8, 16, 32)), "mem_gb": rng.choice((4, 16, 64))},
         "time_limit": 86_400}
        for _ in range(jobs)
    ]  # fmt: skip
    began = time.perf_counter()
    latencies = await submit_bodies(url, bodies, clients)
    return time.perf_counter() - began, latencies


async def _start_queries(url: str, ids: list[int], queries: int) -> list[float]:
    http = RawHttp(url, ALICE)
    latencies: list[float] = []
    rng = random.Random(1)
    try:
        await http.request("GET", f"/v1/jobs/{ids[0]}/start")  # warm the prediction cache
        for _ in range(queries):
            job = rng.choice(ids)
            began = time.perf_counter()
            status, text = await http.request("GET", f"/v1/jobs/{job}/start")
            latencies.append(time.perf_counter() - began)
            assert status == 200, text
            assert json.loads(text)["guaranteed_start"] is not None
    finally:
        http.close()
    return latencies


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _metrics(url: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line and not line.startswith("#") and "{" not in line:
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def _wait_leading(url: str, timeout: float = 30.0) -> None:
    """Until the daemon answers and leads (a standby until it takes the lease)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/healthz").json().get("status") == "ok":
                return
        except httpx.TransportError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise RuntimeError(f"the daemon at {url} did not lead within {timeout} s")
        time.sleep(0.1)


def run_once(jobs: int, clients: int, queries: int, nodes: str, database: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        extra: tuple[str, ...] = ()
        server = None
        if database == "postgresql-ha":
            url, server = start_postgresql(Path(folder), "bench")
            extra = ("--ha", "--database-url", url)
        try:
            daemon = DaemonProcess(Path(folder), "--nodes", nodes, "--submit-rate", "0", *extra)
        except BaseException:
            if server is not None:
                stop_postgresql(server)
            raise
        try:
            _wait_leading(daemon.url)
            cpu_before = _cpu_seconds(daemon.process.pid)
            elapsed, submit = asyncio.run(_submit_all(daemon.url, jobs, clients))
            daemon_cpu = _cpu_seconds(daemon.process.pid) - cpu_before
            listing = httpx.get(f"{daemon.url}/v1/jobs", params={"state": "PENDING", "limit": 1000},
                                headers={"Authorization": f"Bearer {ALICE}"}).json()  # fmt: skip
            pending = [j["job_id"] for j in listing["jobs"]]
            starts = asyncio.run(_start_queries(daemon.url, pending, queries))
            metrics = _metrics(daemon.url)
        finally:
            daemon.stop()
            if server is not None:
                stop_postgresql(server)
    commands = metrics["berth_commands_total"]
    return {
        "jobs_per_s": jobs / elapsed,
        "submit_p50_ms": 1000 * _percentile(submit, 0.50),
        "submit_p99_ms": 1000 * _percentile(submit, 0.99),
        "start_p50_ms": 1000 * _percentile(starts, 0.50),
        "start_p99_ms": 1000 * _percentile(starts, 0.99),
        "queued": float(listing["total"]),
        "pass_ms_per_command": 1000 * metrics["berth_scheduling_pass_seconds_total"] / commands,
        "commit_ms_per_command": 1000 * metrics["berth_commit_seconds_total"] / commands,
        "commands_per_batch": commands / metrics["berth_batches_total"],
        "commands_per_commit": commands / max(metrics.get("berth_commits_total", 0), 1),
        "wall_ms_per_job": 1000 * elapsed / jobs,
        "daemon_cpu_ms_per_job": 1000 * daemon_cpu / jobs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", default="16x cpus=32,mem_gb=128")
    parser.add_argument(
        "--database",
        choices=("sqlite", "postgresql-ha"),
        default="sqlite",
        help="SQLite (synchronous=FULL), or PostgreSQL with the HA leader's fencing",
    )
    args = parser.parse_args()
    runs = [run_once(args.jobs, args.clients, args.queries, args.nodes, args.database)
            for _ in range(args.repeat)]  # fmt: skip
    store = "SQLite (synchronous=FULL)" if args.database == "sqlite" else "PostgreSQL, --ha"
    print(f"API load: {args.jobs:,} submissions from {args.clients} concurrent clients, then "
          f"{args.queries:,} start-time queries; conservative, {store}; "
          f"median of {args.repeat} runs (each run: fresh daemon and database)")  # fmt: skip
    for key in runs[0]:
        values = [run[key] for run in runs]
        print(
            f"  {key:22} {statistics.median(values):10.2f}   (runs: "
            + ", ".join(f"{v:.2f}" for v in values)
            + ")"
        )
    goal = 2000 if args.database == "sqlite" else 1000
    print(f"  targets (issue 14): >= {goal:,} jobs/s, submit p99 < 20 ms; start-time p99 < 5 ms "
          "(10,000 queued)")  # fmt: skip


if __name__ == "__main__":
    main()
