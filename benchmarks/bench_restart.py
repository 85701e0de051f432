"""Restart benchmark: time and memory of a daemon start against the size of its history.

Builds SQLite databases holding ``--pending`` waiting jobs and ``--finished`` finished
ones (default 10,000 and 1,000,000; the finished rows are written straight into the
table, as a year of history would be), then, in a fresh process for each, times what a
(re)start does — load the store, restore the engine (replan every waiting job) — and
reads that process's peak memory. Compared: the same live state with no history.

    .venv/bin/python benchmarks/bench_restart.py
    .venv/bin/python benchmarks/bench_restart.py --finished 100000 --pending 1000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from berth.store.migrate import upgrade
from berth.store.tables import JOBS, create_db_engine

CHUNK = 50_000


def job_row(job_id: int, state: str, submit: int) -> dict[str, object]:
    finished = state == "COMPLETED"
    return {
        "id": job_id, "name": f"j{job_id}", "user": f"user{job_id % 50}",
        "resources": {"cpus": 1 + job_id % 16}, "time_limit": 3600, "submit_time": submit,
        "state": state, "state_reason": "exited" if finished else "queued",
        "start_time": submit + 10 if finished else None,
        "end_time": submit + 600 if finished else None,
        "allocation": {}, "requeue": False, "requeued": 0, "suspended_for": 0,
    }  # fmt: skip


def build(path: Path, finished: int, pending: int) -> str:
    url = f"sqlite:///{path}"
    upgrade(url)
    database = create_db_engine(url, "NORMAL")
    with database.begin() as conn:
        for start in range(1, finished + 1, CHUNK):
            rows = [
                job_row(i, "COMPLETED", i) for i in range(start, min(start + CHUNK, finished + 1))
            ]
            conn.execute(JOBS.insert(), rows)
        now = finished + 1
        conn.execute(JOBS.insert(), [job_row(now + i, "PENDING", now + i) for i in range(pending)])
    database.dispose()
    return url


def measure(url: str) -> dict[str, float]:
    """Load and restore in a fresh process; its seconds and peak memory."""
    code = f"""
import json, resource, time
from berth.dispatch.emulated import EmulatedNodes
from berth.runtime.settings import Settings
from berth.service.engine import Engine
from berth.service.restore import restore_engine
from berth.store.sql import SqlStore
from berth.store.tables import create_db_engine
settings = Settings()
began = time.perf_counter()
snapshot = SqlStore(create_db_engine({url!r})).load()
loaded = time.perf_counter() - began
engine = restore_engine(snapshot, EmulatedNodes(), 10**9, settings.default_nodes(),
                        "conservative", {{}})
total = time.perf_counter() - began
print(json.dumps({{"load": loaded, "total": total, "jobs_held": len(engine.jobs),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--finished", type=int, default=1_000_000)
    parser.add_argument("--pending", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        began = time.perf_counter()
        big = build(Path(root) / "history.db", args.finished, args.pending)
        small = build(Path(root) / "fresh.db", 0, args.pending)
        print(f"built the databases in {time.perf_counter() - began:.0f} s", flush=True)
        for name, url in (("no history", small), (f"{args.finished:,} finished", big)):
            runs = [measure(url) for _ in range(3)]
            runs.sort(key=lambda r: r["total"])
            median = runs[1]
            print(
                f"{name:>20} + {args.pending:,} pending: restart {median['total']:.2f} s "
                f"(load {median['load']:.2f} s), {median['jobs_held']:,.0f} jobs held, "
                f"peak {median['peak_mb']:.0f} MB (median of 3)"
            )


if __name__ == "__main__":
    main()
