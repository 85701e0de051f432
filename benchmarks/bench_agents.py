"""Node agents under load: real processes on real agents over loopback.

Starts ``berth serve --agents`` (conservative, SQLite ``synchronous=FULL``) and
``--agents`` agents on this host (``cpus=--cpus,mem_gb=64`` each, own work dirs), then
submits ``--jobs`` one-second jobs (``sleep 1``, one cpu each) from 8 connections, as
fast as they are answered or at ``--rate`` a second, and waits until every one has
ended. Reported:

* launch delay: from the commit that starts a job to its process running (the shepherd's
  clock reading after ``fork``/``exec``; same host, same clock), p50 and p99 over every
  job, as the daemon measures it (``GET /v1/agents``);
* sustained throughput: jobs completed per second, from the first submission to the
  last end;
* CPU seconds the daemon process used per job, and the agents' (with their shepherds)
  per job, from ``/proc``.

Goals (issue 12): p99 launch delay < 200 ms, >= 100 jobs/s. Everything shares this
machine's cores: the jobs' processes, 8 agents, the daemon and the client.

    .venv/bin/python benchmarks/bench_agents.py
    .venv/bin/python benchmarks/bench_agents.py --agents 8 --jobs 2000 --cpus 32
    .venv/bin/python benchmarks/bench_agents.py --agents 8 --jobs 2000 --cpus 32 --rate 100
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_api import RawHttp
from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import OPERATOR, RUNNER
from tests.support.waiting import wait_until

TICKS = os.sysconf("SC_CLK_TCK")
#: Concurrent submitting clients.
CLIENTS = 8


def cpu_split(pid: int) -> tuple[float, float]:
    """User + system CPU of ``pid`` itself, and of its waited-for children (for an
    agent: its shepherds and the jobs' processes), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / TICKS, (cutime + cstime) / TICKS


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its waited-for children, in seconds."""
    return sum(cpu_split(pid))


def children(pid: int) -> list[int]:
    """The live children of ``pid`` (an agent's: its launcher)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def agent_cpu(pid: int) -> tuple[float, float]:
    """An agent's own CPU, and its shepherds' and their jobs' (reaped by the agent or
    by its launcher, whose own CPU counts here too), in seconds."""
    own, reaped = cpu_split(pid)
    return own, reaped + sum(cpu_seconds(child) for child in children(pid))


async def submit_all(url: str, body: dict[str, object], jobs: int, rate: float) -> None:
    """``jobs`` submissions from ``CLIENTS`` connections at once (so they share commits),
    as fast as they are answered or, with ``rate``, at that many a second in all. The
    minimal client of ``bench_api``: httpx would burn ~2 ms of CPU per request on the
    cores the daemon, the agents and the jobs share."""
    counter = iter(range(jobs))
    began = time.perf_counter()

    async def client() -> None:
        http = RawHttp(url, RUNNER)
        try:
            for number in counter:
                if rate:
                    await asyncio.sleep(max(0.0, began + number / rate - time.perf_counter()))
                status, text = await http.request("POST", "/v1/jobs", body)
                assert status == 201, text
        finally:
            http.close()

    await asyncio.gather(*(client() for _ in range(CLIENTS)))


def run(
    agents: int, jobs: int, cpus: int, rate: float = 0.0, cgroups: bool = True
) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="bench-agents-"))
    cluster = Cluster(root, "--sync-wait", "10")
    flags = () if cgroups else ("--no-cgroups",)
    try:
        for number in range(agents):
            cluster.add_agent(f"b{number + 1:02d}", f"cpus={cpus},mem_gb=64", *flags)
        daemon_pid = cluster.daemon.process.pid
        agent_pids = [a.process.pid for a in cluster.agents.values() if a.process]
        daemon_before = cpu_seconds(daemon_pid)
        agents_before = sum(sum(agent_cpu(p)) for p in agent_pids)
        agents_own_before = sum(agent_cpu(p)[0] for p in agent_pids)
        began = time.perf_counter()
        body = {"resources": {"cpus": 1, "mem_gb": 0}, "time_limit": 60, "command": "sleep 1",
                "chdir": str(cluster.jobs_dir), "output": "/dev/null", "error": "/dev/null"}  # fmt: skip
        headers = {"Authorization": f"Bearer {RUNNER}"}
        asyncio.run(submit_all(cluster.daemon.url, body, jobs, rate))
        submitted = time.perf_counter() - began
        with httpx.Client(base_url=cluster.daemon.url, timeout=30.0, headers=headers) as http:

            def all_ended() -> bool:
                # Every job is submitted by now: it has ended once none waits or runs
                # (the daemon holds only the latest finished jobs, so do not count those).
                return all(
                    http.get("/v1/jobs", params={"state": state, "limit": 1}).json()["total"] == 0
                    for state in ("PENDING", "RUNNING")
                )

            wait_until(all_ended, seconds=jobs, what=f"{jobs} jobs completed")
            elapsed = time.perf_counter() - began
            status = http.get("/v1/agents", headers={"Authorization": f"Bearer {OPERATOR}"})
            delays = status.json()["launch_delay_seconds"]
        daemon_cpu = cpu_seconds(daemon_pid) - daemon_before
        agents_cpu = sum(sum(agent_cpu(p)) for p in agent_pids) - agents_before
        agents_own_cpu = sum(agent_cpu(p)[0] for p in agent_pids) - agents_own_before
    except BaseException:
        cluster.close()
        print(f"failed; logs kept in {root}", file=sys.stderr)
        raise
    cluster.close()
    shutil.rmtree(root, ignore_errors=True)
    return {
        "submit_seconds": submitted,
        "elapsed_seconds": elapsed,
        "jobs_per_second": jobs / elapsed,
        "launch_p50_ms": delays["p50"] * 1000,
        "launch_p99_ms": delays["p99"] * 1000,
        "launch_max_ms": delays["max"] * 1000,
        "launches_measured": delays["count"],
        "daemon_cpu_ms_per_job": daemon_cpu / jobs * 1000,
        "agents_cpu_ms_per_job": agents_cpu / jobs * 1000,
        "agents_own_cpu_ms_per_job": agents_own_cpu / jobs * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=32, help="cpus each agent offers")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="submissions a second (default: as fast as answered)",
    )
    parser.add_argument(
        "--no-cgroups",
        action="store_true",
        help="agents run jobs unconfined (default: in cgroups where the agents can)",
    )
    args = parser.parse_args()
    result = run(args.agents, args.jobs, args.cpus, args.rate, cgroups=not args.no_cgroups)
    confined = "unconfined" if args.no_cgroups else "in cgroups where possible"
    print(
        f"{args.agents} agents x {args.cpus} cpus, {args.jobs} one-second jobs {confined} "
        f"(submitted in {result['submit_seconds']:.1f} s, all ended after "
        f"{result['elapsed_seconds']:.1f} s)"
    )
    print(
        f"  launch delay (commit -> process running), {result['launches_measured']:.0f} "
        f"starts: p50 {result['launch_p50_ms']:.0f} ms, p99 {result['launch_p99_ms']:.0f} ms, "
        f"max {result['launch_max_ms']:.0f} ms   (goal p99 < 200 ms)"
    )
    print(f"  throughput: {result['jobs_per_second']:.0f} jobs/s   (goal >= 100/s)")
    print(
        f"  CPU per job: daemon {result['daemon_cpu_ms_per_job']:.1f} ms, agents and "
        f"shepherds {result['agents_cpu_ms_per_job']:.1f} ms (the agents themselves "
        f"{result['agents_own_cpu_ms_per_job']:.1f} ms; the rest is shepherds and the "
        f"jobs' own processes)"
    )


if __name__ == "__main__":
    main()
