"""The planner alone at scale: bench_scale's workload replayed in the emulator.

``--jobs`` jobs arriving every ``--gap`` seconds (sizes log-uniform from 1 cpu to
``--max-cpus`` with 4 GB per cpu, time limits log-uniform 10 min-1 day, runtimes 5-100 %
of the limit, the seeded draw of ``bench_scale.job_bodies``) on ``--nodes`` nodes of
``cpus=64,mem_gb=256`` (``--nodes 0``: the same capacity as one pool), in this process:
the wall seconds of the replay, the CPU seconds, and the mean wait and bounded slowdown
(10-s threshold) of the schedule, to weigh a faster replay against what it gives up.
``--compression-budget N`` compresses the node plan in slices of N questions per
instant, as the daemon's slices do (:func:`berth.emulate.replay.replay`).

    .venv/bin/python benchmarks/bench_scale_replay.py --policy easy --nodes 1024 --jobs 3000
    .venv/bin/python benchmarks/bench_scale_replay.py --policy conservative --nodes 0
    .venv/bin/python benchmarks/bench_scale_replay.py --policy easy --jobs 1500 --out a.txt
    .venv/bin/python benchmarks/bench_scale_replay.py --compression-budget 64
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_scale import emulated_nodes, job_draws

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.base import Policy
from berth.core.policies.node_registry import make_node_policy
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--policy", default="conservative", choices=("conservative", "easy", "fcfs")
    )
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--gap", type=int, default=20, help="seconds between arrivals")
    parser.add_argument("--max-cpus", type=int, default=4096)
    parser.add_argument(
        "--compression-budget", type=int, help="questions per instant (default: whole)"
    )
    parser.add_argument(
        "--out", help="write each job's start, end and nodes here (to compare two versions)"
    )
    args = parser.parse_args()
    jobs = [
        TraceJob(Job(number, number * args.gap, limit, resources), runtime)
        for number, (resources, limit, runtime) in enumerate(job_draws(args.jobs, args.max_cpus), 1)
    ]
    policy: Policy
    if args.nodes:
        policy = make_node_policy(args.policy, emulated_nodes(args.nodes))
        where = f"{args.nodes:,} nodes of cpus=64,mem_gb=256"
    else:
        policy = make_policy(args.policy, ResourceSpace({"cpus": 64 * 1024, "mem_gb": 256 * 1024}))
        where = "one pool of 65,536 cpus"
    wall, cpu = time.perf_counter(), time.process_time()
    records = replay(jobs, policy, compression_budget=args.compression_budget)
    if args.out:
        with open(args.out, "w") as out:
            for r in records:
                out.write(f"{r.id} {r.status} {r.start} {r.end} {sorted(r.nodes or {})}\n")
    elapsed, used = time.perf_counter() - wall, time.process_time() - cpu
    budget = args.compression_budget
    how = "" if budget is None or not args.nodes else f", compression {budget} questions an instant"
    ran = [r for r in records if r.start is not None and r.end is not None]
    waits = [r.start - r.submit for r in ran if r.start is not None]
    slowdowns = [max(1.0, (r.end - r.submit) / max(r.end - r.start, 10)) for r in ran
                 if r.start is not None and r.end is not None]  # fmt: skip
    print(f"{args.policy} on {where}{how}, {args.jobs:,} jobs every {args.gap} s: "
          f"{elapsed:.2f} s wall, {used:.2f} s CPU; mean wait {sum(waits) / len(waits):,.0f} s, "
          f"mean bounded slowdown {sum(slowdowns) / len(slowdowns):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
