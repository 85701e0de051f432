"""A job array of many tasks submitted in one request, over real HTTP.

Starts ``berth serve`` (conservative, SQLite with ``synchronous=FULL``, ``--nodes``
emulated nodes of ``cpus=32,mem_gb=128``) in a subprocess on loopback, then submits
one array of ``--tasks`` one-cpu, one-hour tasks per run (a fresh daemon each run, so
every array meets the same empty cluster) and times the request: from sending it to
the answer, which comes once every task is admitted with its guarantee and committed;
then cancelling the whole array (``DELETE /v1/jobs/{id}/array``) the same way.
Reported: the median and the spread of ``--repeat`` runs. Goal (issue 33): 10,000
tasks submitted in under a second.

    .venv/bin/python benchmarks/bench_arrays.py
    .venv/bin/python benchmarks/bench_arrays.py --tasks 10000 --nodes 16 --repeat 5

``--reads`` also times a small read every 0.1 s during each submission and each cancel:
a large array goes in a part a batch (:mod:`berth.service.jobs.array_fill`), and is
cancelled 64 tasks a batch (:class:`berth.service.commands.InParts`), reads answered
between:

    .venv/bin/python benchmarks/bench_arrays.py --tasks 10000 --nodes 4096 --repeat 3 --reads
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.conftest import ALICE, DaemonProcess


def _read_every(url: str, period: float, done: threading.Event, waits: list[float]) -> None:
    """Time a small read (``GET /v1/jobs?limit=1``) every ``period`` seconds until
    ``done``: how long reads wait while the array goes in."""
    headers = {"Authorization": f"Bearer {ALICE}"}
    with httpx.Client(base_url=url, headers=headers, timeout=300) as http:
        while not done.is_set():
            began = time.perf_counter()
            http.get("/v1/jobs", params={"limit": 1})
            waits.append(time.perf_counter() - began)
            done.wait(period)


@contextmanager
def _reading(url: str, waits: list[float] | None) -> Iterator[None]:
    """A small read every 0.1 s meanwhile, each timed into ``waits`` (``None``: none)."""
    if waits is None:
        yield
        return
    done = threading.Event()
    reader = threading.Thread(target=_read_every, args=(url, 0.1, done, waits))
    reader.start()
    try:
        yield
    finally:
        done.set()
        reader.join()


def one_run(
    tasks: int, nodes: int, limit: int | None = None, reads: dict[str, list[float]] | None = None
) -> tuple[float, float]:
    """Seconds one array submission takes, on a fresh daemon, and its cancel; with
    ``reads``, the reads made every 0.1 s during each (``submitted``, ``cancelled``),
    timed there."""
    with tempfile.TemporaryDirectory(prefix="bench-arrays-") as root:
        daemon = DaemonProcess(Path(root), "--nodes", f"{nodes}x cpus=32,mem_gb=128")
        try:
            spec = f"0-{tasks - 1}" + ("" if limit is None else f"%{limit}")
            body = {"resources": {"cpus": 1}, "time_limit": 3600, "array": spec}
            headers = {"Authorization": f"Bearer {ALICE}"}
            with httpx.Client(base_url=daemon.url, headers=headers, timeout=300) as http:
                with _reading(daemon.url, None if reads is None else reads["submitted"]):
                    began = time.perf_counter()
                    answer = http.post("/v1/jobs", json=body)
                    took = time.perf_counter() - began
                assert answer.status_code == 201, answer.text
                assert len(answer.json()["array_tasks"]) == tasks
                array = answer.json()["job"]["job_id"]
                with _reading(daemon.url, None if reads is None else reads["cancelled"]):
                    began = time.perf_counter()
                    cancelled = http.delete(f"/v1/jobs/{array}/array")
                    cancel_took = time.perf_counter() - began
                assert cancelled.status_code == 200, cancelled.text
                assert len(cancelled.json()) == tasks
            return took, cancel_took
        finally:
            daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, help="at most this many tasks running (%%N)")
    parser.add_argument(
        "--reads",
        action="store_true",
        help="time a read every 0.1 s during each submission and each cancel",
    )
    args = parser.parse_args()
    reads: dict[str, list[float]] | None = (
        {"submitted": [], "cancelled": []} if args.reads else None
    )
    runs = [one_run(args.tasks, args.nodes, args.limit, reads) for _ in range(args.repeat)]
    for label, times in (("submitted", [r[0] for r in runs]), ("cancelled", [r[1] for r in runs])):
        print(
            f"an array of {args.tasks} tasks{'' if args.limit is None else f' %{args.limit}'} "
            f"on {args.nodes} nodes {label}, {args.repeat} "
            f"runs: median {statistics.median(times):.2f} s (min {min(times):.2f}, "
            f"max {max(times):.2f})" + ("   (goal < 1 s)" if label == "submitted" else "")
        )
    for label, waits in (reads or {}).items():
        if waits:
            during = "submissions" if label == "submitted" else "cancels"
            print(
                f"reads during the {during}: {len(waits)}, median "
                f"{statistics.median(waits):.3f} s, longest {max(waits):.3f} s"
            )


if __name__ == "__main__":
    main()
