"""The node planner's cost of one conservative submission as the queue deepens.

The jobs of ``bench_scale.py`` (sizes log-uniform 1-4,096 cpus, limits 10 min-1 day)
are submitted one by one at time 0 to the conservative node planner on N nodes of
``cpus=64,mem_gb=256``, with no job ending, so every submission goes deeper; each
``submit`` + ``schedule`` is timed, and every ``--every`` jobs the median, p99 and
maximum of the last ``--every`` are printed. The planner alone, in-process: no HTTP, no
database, no other client (what ``bench_scale.py`` adds to it is waiting). At the end, a
digest of every job's planned start and nodes (untimed), to check that two versions plan alike.

    .venv/bin/python benchmarks/bench_deep_submit.py --jobs 10000
    .venv/bin/python benchmarks/bench_deep_submit.py --nodes 4096 --jobs 6000 --every 1000
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scale import emulated_nodes, job_draws

from berth.core.model import Job
from berth.core.policies.node_registry import make_node_policy


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=2000)
    args = parser.parse_args()
    policy = make_node_policy("conservative", emulated_nodes(args.nodes))
    began, times = time.perf_counter(), []
    for number, (resources, limit, _) in enumerate(job_draws(args.jobs, 4096), 1):
        started = time.perf_counter()
        policy.submit(Job(number, 0, limit, resources), 0)
        policy.schedule(0)
        times.append(time.perf_counter() - started)
        if number % args.every == 0:
            last = sorted(times[-args.every :])
            print(f"{number:>7,} queued: median {1000 * last[len(last) // 2]:.1f} ms, "
                  f"p99 {1000 * last[int(len(last) * 0.99)]:.1f} ms, max {1000 * last[-1]:.1f} ms "
                  f"({time.perf_counter() - began:.0f} s so far)", flush=True)  # fmt: skip
    digest = hashlib.md5()
    for number in range(1, args.jobs + 1):  # (untimed; no job ends, so none moved)
        digest.update(repr((policy.planned_start(number), policy.planned_nodes(number))).encode())
    print(f"plans digest {digest.hexdigest()[:12]}")


if __name__ == "__main__":
    main()
