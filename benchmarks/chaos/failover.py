"""Chaos run: three ``berth serve --ha`` daemons on one PostgreSQL and node agents
running real processes, under a submit burst, while the leader is killed, paused and the
database itself restarted.

A supervisor here restarts any daemon that exits (as systemd would). ``--agents`` agents
(default 3, each ``cpus=8``; they know every daemon) run each job's command, a
one-second job that first appends its id to a shared file, so a job whose process ran
twice shows. Client threads submit jobs (``--rate`` a second each), each with its own
idempotency key, retrying through the list of daemons until the submit is acknowledged.
A monitor polls every daemon's health every 100 ms. The faults, one after another:
``kill -9`` of the leader, ``SIGSTOP`` of the leader for twice its lease then
``SIGCONT``, a fast restart of PostgreSQL, and ``kill -9`` again. Then the submitting
stops and every job is let end. Reported from the database and the shared file:

* acknowledged jobs lost (an acknowledged id missing, or not the job submitted), and
  acknowledged jobs that did not complete (with their states);
* jobs started twice: more than one ``job.started`` event for a job, and (agents) a
  job's command run more than once;
* guarantees broken: jobs started after their guaranteed start (no node fails here),
  with the largest lateness;
* time without a leader, per fault and in all.

    .venv/bin/python benchmarks/chaos/failover.py                # about 2 minutes
    .venv/bin/python benchmarks/chaos/failover.py --agents 0     # emulated nodes, no pacing
    .venv/bin/python benchmarks/chaos/failover.py --clients 8 --lease 3
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from berth_client import BerthClient, BerthError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.postgres import start_postgresql, stop_postgresql

TOKEN = "chaos-operator"
#: Daemon settings with agents: a node is down after 10 s of silence, a new leader
#: gives agents 20 s to report, an agent cut off for 60 s fences its jobs.
AGENT_FLAGS = ("--agents", "--agent-timeout", "10", "--agent-grace", "20", "--fence", "60",
               "--kill-grace", "1", "--sync-wait", "2")  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Supervised:
    """One daemon, restarted whenever it exits (until told to stop)."""

    def __init__(self, root: Path, database: str, lease: float, agents: bool) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.root = root / str(self.port)
        self.root.mkdir()
        self.command = [sys.executable, "-m", "berth.runtime.main", "serve", "--ha",
                        "--database-url", database, "--lease-seconds", str(lease),
                        "--port", str(self.port), "--data-dir", str(self.root),
                        "--tokens", f"{TOKEN}:chaos:operator", "--log-level", "warning",
                        *(AGENT_FLAGS if agents else ("--nodes", "8x cpus=8,mem_gb=32"))]  # fmt: skip
        self.process = self._start()
        self.stopping = False
        self.restarts = 0
        threading.Thread(target=self._watch, daemon=True).start()

    def _start(self) -> subprocess.Popen[bytes]:
        with (self.root / "daemon.log").open("a") as log:
            return subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT)

    def _watch(self) -> None:
        while not self.stopping:
            if self.process.poll() is not None and not self.stopping:
                time.sleep(0.5)
                self.restarts += 1
                self.process = self._start()
            time.sleep(0.1)

    def role(self) -> str | None:
        try:
            status = httpx.get(f"{self.url}/healthz", timeout=0.5).json().get("status")
        except (httpx.HTTPError, ValueError):
            return None
        return {"ok": "leader", "standby": "standby"}.get(status)

    def stop(self) -> None:
        self.stopping = True
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            self.process.terminate()
            self.process.wait(timeout=15)


class Agents:
    """``berth agent`` processes on this host, each with its own work dir."""

    def __init__(self, root: Path, urls: str, count: int) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []
        with BerthClient(urls, TOKEN) as client:
            tokens = [client.node_token(f"a{i}")["token"] for i in range(count)]
        for index, token in enumerate(tokens):
            command = [sys.executable, "-m", "berth.runtime.main", "agent", "--url", urls,
                       f"--token={token}", "--name", f"a{index}", "--resources",
                       "cpus=8,mem_gb=32", "--workdir", str(root / f"a{index}")]  # fmt: skip
            if os.geteuid() == 0:  # jobs never run as root
                command += ["--run-as", "nobody"]
            with (root / f"agent-a{index}.log").open("a") as log:
                self.processes.append(subprocess.Popen(command, stdout=log, stderr=log))

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(timeout=30)


def leader_of(daemons: list[Supervised], wait: float = 30.0) -> Supervised:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for daemon in daemons:
            if daemon.role() == "leader":
                return daemon
        time.sleep(0.1)
    raise RuntimeError("no leader")


def client_loop(urls: str, index: int, stop: threading.Event, acked: list[tuple[int, str, Any]],
                errors: list[str], job: dict[str, Any], pause: float) -> None:  # fmt: skip
    number = 0
    while not stop.is_set():
        key = f"c{index}-{number}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with BerthClient(urls, TOKEN, timeout=10) as client:
                    answer = client.submit(name=key, idempotency_key=key, **job)
                acked.append((answer["job"]["job_id"], key, answer["job"]["guaranteed_start"]))
                break
            except (BerthError, OSError) as error:
                errors.append(type(error).__name__)
                time.sleep(0.2)
        number += 1
        stop.wait(pause)


def monitor(
    daemons: list[Supervised], stop: threading.Event, gaps: list[tuple[float, float]]
) -> None:
    without = None
    while not stop.is_set():
        led = any(d.role() == "leader" for d in daemons)
        now = time.monotonic()
        if not led and without is None:
            without = now
        elif led and without is not None:
            gaps.append((without, now))
            without = None
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=12.0, help="seconds between faults")
    parser.add_argument("--agents", type=int, default=3, help="node agents (0: emulated nodes)")
    parser.add_argument(
        "--rate", type=float, default=3.0, help="with agents: submissions a second per client"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="berth-chaos-"))
    root.chmod(0o755)  # the jobs (nobody) reach their directory through it
    database, pg = start_postgresql(root, "chaos")
    daemons = [Supervised(root, database, args.lease, args.agents > 0) for _ in range(3)]
    urls = ",".join(d.url for d in daemons)
    jobs_dir = root / "jobs"
    jobs_dir.mkdir(mode=0o777)
    jobs_dir.chmod(0o777)
    starts = jobs_dir / "starts"  # each run of a job's command appends its id
    agents = None
    if args.agents:
        leader_of(daemons)
        agents = Agents(root, urls, args.agents)
        job: dict[str, Any] = {"resources": {"cpus": 1}, "time_limit": 30,
                               "command": f'echo "$BERTH_JOB_ID" >> {starts}; sleep 1',
                               "chdir": str(jobs_dir), "output": "/dev/null",
                               "error": "/dev/null"}  # fmt: skip
        pause = 1 / args.rate
    else:
        job, pause = {"resources": {"cpus": 2}, "time_limit": 30, "emulated_runtime": 20}, 0.0
    stop, watch_stop = threading.Event(), threading.Event()
    acked: list[tuple[int, str, Any]] = []
    errors: list[str] = []
    gaps: list[tuple[float, float]] = []
    faults: list[tuple[str, float]] = []
    leader_of(daemons)
    threading.Thread(target=monitor, args=(daemons, watch_stop, gaps), daemon=True).start()
    clients = [threading.Thread(target=client_loop, daemon=True,
                                args=(urls, i, stop, acked, errors, job, pause))
               for i in range(args.clients)]  # fmt: skip
    for thread in clients:
        thread.start()
    time.sleep(args.settle)
    print("fault 1: kill -9 the leader", flush=True)
    faults.append(("kill -9 the leader", time.monotonic()))
    leader_of(daemons).process.kill()
    time.sleep(args.settle)
    print("fault 2: SIGSTOP the leader, SIGCONT after two leases", flush=True)
    paused = leader_of(daemons)
    faults.append(("SIGSTOP the leader for two leases", time.monotonic()))
    os.kill(paused.process.pid, signal.SIGSTOP)
    time.sleep(2 * args.lease)
    os.kill(paused.process.pid, signal.SIGCONT)
    time.sleep(args.settle)
    print("fault 3: restart PostgreSQL", flush=True)
    faults.append(("restart PostgreSQL (fast)", time.monotonic()))
    import pgserver

    pgserver.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=pg.pgdata, user=pg.system_user)  # type: ignore[attr-defined]
    time.sleep(args.settle)
    print("fault 4: kill -9 the leader", flush=True)
    faults.append(("kill -9 the leader", time.monotonic()))
    leader_of(daemons).process.kill()
    time.sleep(args.settle)
    stop.set()
    for thread in clients:
        thread.join(90)
    leader_of(daemons)
    watch_stop.set()
    if agents is not None:
        print("waiting for every job to end", flush=True)
        wait_for_the_end(database, 180)
    time.sleep(0.3)
    report(database, acked, errors, gaps, faults, daemons, starts if agents else None)
    if agents is not None:
        agents.stop()
    for daemon in daemons:
        daemon.stop()
    stop_postgresql(pg)


def wait_for_the_end(database: str, seconds: float) -> None:
    """Until no job waits or runs (or ``seconds`` pass)."""
    engine = sa.create_engine(database.replace("postgresql://", "postgresql+psycopg://"))
    deadline = time.monotonic() + seconds
    query = sa.text("SELECT count(*) FROM jobs WHERE state IN ('PENDING', 'HELD', 'RUNNING')")
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            if not conn.execute(query).scalar():
                break
        time.sleep(1)
    engine.dispose()


def report(database: str, acked: list[tuple[int, str, Any]], errors: list[str],
           gaps: list[tuple[float, float]], faults: list[tuple[str, float]],
           daemons: list[Supervised], runs_file: Path | None) -> None:  # fmt: skip
    engine = sa.create_engine(database.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        jobs = {r.id: r for r in conn.execute(sa.text(
            "SELECT id, name, start_time, guaranteed_start, state FROM jobs"))}  # fmt: skip
        started: dict[int, int] = dict(conn.execute(sa.text(
            "SELECT job_id, count(*) FROM events WHERE kind = 'job.started' GROUP BY job_id")).all())  # fmt: skip
    engine.dispose()
    lost = [i for i, key, _ in acked if i not in jobs or jobs[i].name != key]
    twice = [i for i, n in started.items() if n > 1]
    late = [(jobs[i].start_time - g) for i, _, g in acked
            if i in jobs and g is not None and jobs[i].start_time is not None
            and jobs[i].start_time > g]  # fmt: skip
    print(f"\n{len(acked)} jobs acknowledged by {len(daemons)} daemons "
          f"({sum(d.restarts for d in daemons)} restarts by the supervisor); "
          f"{len(errors)} client retries")  # fmt: skip
    print(f"acknowledged jobs lost: {len(lost)}")
    print(f"jobs started twice (job.started events): {len(twice)}")
    if runs_file is not None:
        text = runs_file.read_text() if runs_file.exists() else ""
        runs = Counter(int(line) for line in text.split())
        states = Counter(jobs[i].state for i, _, _ in acked if i in jobs)
        print(f"acknowledged jobs by final state: {dict(states)}")
        print(f"jobs whose command ran twice or more: {sum(1 for n in runs.values() if n > 1)}")
        completed = [i for i, _, _ in acked if i in jobs and jobs[i].state == "COMPLETED"]
        never = [i for i in completed if not runs[i]]
        print(f"completed jobs whose command never ran: {len(never)}")
    print(f"guarantees broken (started after the guaranteed start): {len(late)}"
          + (f", at most {max(late)} s late" if late else ""))  # fmt: skip
    total = 0.0
    for name, at in faults:
        window = [(a, b) for a, b in gaps if a >= at - 0.5 and a < at + 10]
        seconds = sum(b - a for a, b in window)
        total += seconds
        print(f"  {name}: {seconds:.1f} s without a leader")
    print(f"time without a leader in all: {sum(b - a for a, b in gaps):.1f} s")


if __name__ == "__main__":
    main()
