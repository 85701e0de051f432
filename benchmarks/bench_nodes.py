"""Speed of the node planner against the pool planner on the same jobs.

* KTH as 100 one-cpu nodes, conservative: node planner time / pool planner time
  (goal: within 2x);
* a synthetic 64-node heterogeneous cluster (56 x cpus=32,mem_gb=128 and 8 x
  cpus=32,mem_gb=256,gpus=4) with N jobs, conservative: node planner / pool planner on
  the same jobs given as totals (goal: within 10x).

Each figure is the median CPU time (``time.process_time``) of ``--repeat`` whole replays in
this process: CPU time, not wall time, so that other work on a shared machine moves the
figures less. The two planners run in turn (pool, nodes, pool, nodes, ...) and the ratio
is the median of the pairs' ratios, so a machine that slows down or speeds up during the
run moves both sides of a pair alike.

    .venv/bin/python benchmarks/bench_nodes.py [--jobs 20000] [--kth-jobs N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.node_registry import make_node_policy
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.traces import read_workload
from berth.emulate.workload import TraceJob
from berth.runtime.paths import find_shared_trace


def _cpu(run: Callable[[], object]) -> float:
    began = time.process_time()
    run()
    return time.process_time() - began


def paired(
    pool: Callable[[], object], nodes: Callable[[], object], repeat: int
) -> tuple[float, float, float]:
    """Median CPU seconds of each, run in turn, and the median of the pairs' ratios."""
    pairs = [(_cpu(pool), _cpu(nodes)) for _ in range(repeat)]
    return (
        statistics.median(p for p, _ in pairs),
        statistics.median(n for _, n in pairs),
        statistics.median(n / p for p, n in pairs),
    )


def synthetic(count: int, seed: int = 1) -> list[TraceJob]:
    """Jobs of 1-64 cpus (4 GB each), a tenth with GPUs, Poisson arrivals near saturation."""
    rng = random.Random(seed)
    jobs, now = [], 0
    for job_id in range(1, count + 1):
        now += int(rng.expovariate(1 / 40))
        cpus = rng.choice([1, 2, 4, 8, 16, 32, 64])
        resources = {"cpus": cpus, "mem_gb": 4 * cpus}
        if rng.random() < 0.1:
            resources["gpus"] = rng.choice([1, 2, 4])
        estimate = rng.choice([600, 1800, 3600, 7200, 14400])
        runtime = max(1, int(estimate * rng.uniform(0.1, 1.0)))
        jobs.append(TraceJob(Job(job_id, now, estimate, resources), runtime))
    return jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--kth-jobs", type=int, help="only the first N KTH jobs")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    trace = find_shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    if trace is not None:
        jobs = read_workload(trace).jobs[: args.kth_jobs]
        ones = {f"n{i:03d}": {"cpus": 1} for i in range(100)}
        pool, nodes, ratio = paired(
            lambda: replay(jobs, make_policy("conservative", ResourceSpace({"cpus": 100}))),
            lambda: replay(jobs, make_node_policy("conservative", ones)),
            args.repeat,
        )
        print(f"KTH ({len(jobs):,} jobs), conservative: pool {pool:.2f} s, 100 one-cpu nodes "
              f"{nodes:.2f} s, ratio {ratio:.2f}x (goal <= 2x)")  # fmt: skip
    cluster = {f"n{i:03d}": {"cpus": 32, "mem_gb": 128} for i in range(56)}
    cluster |= {f"g{i:03d}": {"cpus": 32, "mem_gb": 256, "gpus": 4} for i in range(8)}
    totals = {"cpus": 32 * 64, "mem_gb": 128 * 56 + 256 * 8, "gpus": 32}
    jobs = synthetic(args.jobs)
    pool, nodes, ratio = paired(
        lambda: replay(jobs, make_policy("conservative", ResourceSpace(totals))),
        lambda: replay(jobs, make_node_policy("conservative", cluster)),
        args.repeat,
    )
    print(f"64 heterogeneous nodes ({len(jobs):,} jobs), conservative: pool {pool:.2f} s, "
          f"nodes {nodes:.2f} s, ratio {ratio:.2f}x (goal <= 10x)")  # fmt: skip


if __name__ == "__main__":
    main()
