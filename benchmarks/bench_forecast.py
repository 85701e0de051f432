"""EASY's forecast at depth: the start query's prediction on a deep queue, in-process.

``--jobs`` of ``bench_scale.py``'s jobs (sizes log-uniform 1-4,096 cpus, limits 10 min-1
day, runtimes 5-100 % of the limit) are submitted at time 0 to EASY on ``--nodes`` nodes
of ``cpus=64,mem_gb=256``; then the ``--ends`` earliest ends are applied, with a pass
after each (the running phase of a daemon, without its clock); then the forecast the
start query runs (``ForecastRun`` to ``--horizon`` predicted starts) is timed
``--samples`` times on that state. Prints the state, the median and each time, and a
digest of the predictions (to check two versions predict the same).

    .venv/bin/python benchmarks/bench_forecast.py                  # 1,024 x 20,000, 300 ends
    .venv/bin/python benchmarks/bench_forecast.py --ends 0
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_scale import emulated_nodes, job_draws

from berth.core.decisions import Start
from berth.core.forecast import ForecastRun
from berth.core.model import Job
from berth.core.policies.node_registry import make_node_policy


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--ends", type=int, default=300)
    parser.add_argument("--horizon", type=int, default=500)
    parser.add_argument("--samples", type=int, default=3)
    args = parser.parse_args()
    policy = make_node_policy("easy", emulated_nodes(args.nodes))
    runtimes: dict[int, int] = {}
    for number, (resources, limit, runtime) in enumerate(job_draws(args.jobs, 4096), 1):
        policy.submit(Job(number, 0, limit, resources), 0)
        runtimes[number] = min(runtime, limit)
    ends: list[tuple[int, int]] = []

    def started(starts: list[Start], now: int) -> None:
        for start in starts:
            heapq.heappush(ends, (now + runtimes[start.job_id], start.job_id))

    now = 0
    started(policy.schedule(now), now)
    for _ in range(args.ends):  # (instants at which some job ends)
        if not ends:
            break
        now, job_id = heapq.heappop(ends)
        batch = [job_id]
        while ends and ends[0][0] == now:
            batch.append(heapq.heappop(ends)[1])
        policy.complete(batch, now)
        started(policy.schedule(now), now)
    print(f"EASY on {args.nodes:,} nodes at t={now}: {len(policy.waiting):,} waiting, "
          f"{len(policy.running):,} running")  # fmt: skip
    seconds = []
    predicted: dict[int, int] = {}
    for _ in range(args.samples):
        began = time.perf_counter()
        run = ForecastRun(policy, now, args.horizon)
        run.advance()
        seconds.append(time.perf_counter() - began)
        predicted = run.predicted
    digest = hashlib.md5(repr(sorted(predicted.items())).encode()).hexdigest()[:8]
    print(f"forecast to {args.horizon} starts: median {statistics.median(seconds):.2f} s "
          f"({', '.join(f'{s:.2f}' for s in seconds)}); {len(predicted)} predicted, "
          f"digest {digest}")  # fmt: skip


if __name__ == "__main__":
    main()
