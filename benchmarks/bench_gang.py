"""Gang benchmark (``make bench``): the paper's whole second experiment, timed.

Zhou, Brent & Walsh's Table 2 is 4 schemes x 4 loads x 5 sets of 20,000 jobs (80
replays) on 128 processors. This times every replay (generation excluded) and reports
the CPU time per scheme and load, the total, and the wall time on ``--workers``
processes. ``--jobs`` and ``--sets`` shrink it for a quick look; ``--repeat`` times each
replay several times and keeps the median (the machines are shared and noisy).

    .venv/bin/python benchmarks/bench_gang.py                    # the whole experiment
    .venv/bin/python benchmarks/bench_gang.py --jobs 2000 --sets 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from berth.emulate.gang import replay_gang
from berth.emulate.zhou import PROCESSORS, SLOT_SECONDS, generate_zhou

SCHEMES = ("bc", "br", "brms", "brmms")
LOADS = (0.2, 0.5, 0.7, 0.9)


def time_one(task: tuple[str, float, int, int, int]) -> tuple[str, float, float, int]:
    scheme, load, index, jobs, repeat = task
    workload = generate_zhou(load, jobs, seed=index)
    seconds = []
    slots = 0
    for _ in range(repeat):
        started = time.process_time()
        report = replay_gang(workload.jobs, PROCESSORS, scheme, SLOT_SECONDS).report
        seconds.append(time.process_time() - started)
        slots = int(str(report["slots"]))
    return scheme, load, statistics.median(seconds), slots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--sets", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    tasks = [
        (scheme, load, index, args.jobs, args.repeat)
        for load in LOADS
        for scheme in SCHEMES
        for index in range(args.sets)
    ]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(time_one, tasks))
    wall = time.perf_counter() - started
    print(
        f"Zhou et al. experiment 2: {len(tasks)} replays of {args.jobs:,} jobs "
        f"({args.sets} sets x 4 loads x 4 schemes), CPU seconds per replay (median of sets)"
    )
    print(f"{'rho':>5}" + "".join(f"{s:>10}" for s in SCHEMES) + f"{'slots':>10}")
    for load in LOADS:
        row = [
            statistics.median(r[2] for r in results if r[0] == scheme and r[1] == load)
            for scheme in SCHEMES
        ]
        slots = statistics.median(r[3] for r in results if r[1] == load)
        print(f"{load:>5}" + "".join(f"{value:>10.2f}" for value in row) + f"{slots:>10,.0f}")
    cpu = sum(r[2] for r in results)
    print(f"total CPU {cpu / 60:,.1f} min; wall {wall / 60:,.1f} min on {args.workers} workers")


if __name__ == "__main__":
    main()
