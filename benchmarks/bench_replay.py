"""Replay benchmarks (``make bench``): the full KTH trace and a synthetic scaling curve.

Each measured replay runs in a fresh subprocess so that its peak resident memory is its
own; the figure reported is the median over ``--repeat`` runs (the machines are shared
and noisy, so compare ratios from one run, not absolute times across runs). Times
cover the replay only, after the trace is read; reading KTH is reported separately.

    .venv/bin/python benchmarks/bench_replay.py               # everything
    .venv/bin/python benchmarks/bench_replay.py --only kth    # just the KTH table
    .venv/bin/python benchmarks/bench_replay.py --only slack  # slack: KTH, cost per insertion
    .venv/bin/python benchmarks/bench_replay.py --only scaling --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import resource
import statistics
import subprocess
import sys
import time
from bisect import bisect_right

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.conservative import Conservative
from berth.core.resources import ResourceSpace
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.traces import read_workload
from berth.emulate.workload import TraceJob
from berth.runtime.paths import find_shared_trace

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
SYNTHETIC_CPUS = 128


def synthetic_jobs(count: int, load: float, seed: int = 1) -> list[TraceJob]:
    """A steady synthetic workload on 128 cpus at offered ``load``.

    Sizes are log-uniform in 1..64 cpus, runtimes exponential (mean 1 h, at least 1 s),
    estimates the runtime times a uniform factor in [1, 5]; Poisson arrivals whose rate
    gives the requested offered load.
    """
    rng = random.Random(seed)
    mean_runtime = 3600.0
    mean_cpus = 63 / math.log(64)  # E[2**U] for U uniform in [0, 6]
    rate = load * SYNTHETIC_CPUS / (mean_cpus * mean_runtime)
    now = 0.0
    jobs = []
    for job_id in range(1, count + 1):
        now += rng.expovariate(rate)
        runtime = max(1, round(rng.expovariate(1 / mean_runtime)))
        cpus = max(1, min(64, round(2 ** rng.uniform(0, 6))))
        estimate = max(runtime, round(runtime * rng.uniform(1, 5)))
        jobs.append(TraceJob(Job(job_id, int(now), estimate, {"cpus": cpus}), runtime))
    return jobs


def mean_queue_length(records: list[JobRecord]) -> float:
    """The average number of waiting jobs seen by each arriving job."""
    submits = sorted(r.submit for r in records)
    started = sorted(r.start for r in records if r.start is not None)
    seen = [bisect_right(submits, r.submit) - bisect_right(started, r.submit) - 1 for r in records]
    return sum(seen) / len(seen)


def _measure_one(spec: dict[str, object]) -> dict[str, object]:
    """Run in the child: one replay, its time and the process's peak RSS."""
    if spec["workload"] == "kth":
        trace = find_shared_trace(KTH)
        assert trace is not None, f"{KTH} not found next to the checkout"
        workload = read_workload(trace)
        jobs, capacity = workload.jobs, workload.capacity
    else:
        jobs = synthetic_jobs(int(str(spec["size"])), float(str(spec["load"])))
        capacity = {"cpus": SYNTHETIC_CPUS}
    options = {"selection": spec["selection"]} if spec.get("selection") else {}
    policy = make_policy(str(spec["policy"]), ResourceSpace(capacity), **options)
    started = time.perf_counter()
    records = replay(jobs, policy)
    elapsed = time.perf_counter() - started
    moved = policy.moved_up if isinstance(policy, Conservative) else 0
    return {
        "moves_per_job": moved / len(jobs),
        "seconds": elapsed,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "jobs": len(jobs),
        "queue": mean_queue_length(records),
    }


def measure(spec: dict[str, object], repeat: int) -> dict[str, float]:
    """Median seconds and max peak RSS over ``repeat`` fresh child processes."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs.append(json.loads(out))
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "min_seconds": min(r["seconds"] for r in runs),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "jobs": runs[0]["jobs"],
        "queue": runs[0]["queue"],
        "moves_per_job": runs[0]["moves_per_job"],
    }


def bench_kth(repeat: int) -> None:
    trace = find_shared_trace(KTH)
    if trace is None:
        print(f"skipping KTH: {KTH} not found in ../shared/traces")
        return
    started = time.perf_counter()
    read_workload(trace)
    print(f"KTH full trace ({KTH}), 100 cpus, user estimates; median of {repeat} runs")
    print(f"  reading the trace: {time.perf_counter() - started:.2f} s (not in the figures below)")
    print(f"  {'policy':<13} {'replay s':>9} {'min s':>7} {'peak RSS MB':>12} {'jobs':>7}  target")
    targets = {"fcfs": "-", "easy": "< 1 s", "conservative": "< 3 s"}
    for policy in ("fcfs", "easy", "conservative"):
        result = measure({"workload": "kth", "policy": policy}, repeat)
        print(
            f"  {policy:<13} {result['seconds']:>9.2f} {result['min_seconds']:>7.2f} "
            f"{result['peak_rss_mb']:>12.0f} {result['jobs']:>7.0f}  {targets[policy]}"
        )


def bench_selection(repeat: int) -> None:
    if find_shared_trace(KTH) is None:
        return
    print(f"\nBackfill selection on KTH (Leinberger et al.): median of {repeat} runs")
    print(f"  {'policy':<13} {'ff s':>6} {'bl s':>6} {'bb s':>6} {'bl/ff':>6} {'bb/ff':>6}  target")
    for policy in ("easy", "conservative"):
        seconds = {
            rule: measure({"workload": "kth", "policy": policy, "selection": rule}, repeat)[
                "seconds"
            ]
            for rule in ("ff", "bl", "bb")
        }
        print(
            f"  {policy:<13} {seconds['ff']:>6.2f} {seconds['bl']:>6.2f} {seconds['bb']:>6.2f} "
            f"{seconds['bl'] / seconds['ff']:>6.2f} {seconds['bb'] / seconds['ff']:>6.2f}  "
            + ("<= 2x" if policy == "easy" else "-")
        )


def insertion_costs(queue: int, inserts: int = 15) -> tuple[float, float, float]:
    """Median ms per insertion under slack (AST) and conservative with ``queue`` jobs
    waiting behind a full machine, and the schedules slack priced per insertion."""
    jobs = synthetic_jobs(queue + inserts, 0.9, seed=7)
    space = ResourceSpace({"cpus": SYNTHETIC_CPUS})
    timings: dict[str, list[float]] = {}
    priced = 0.0
    for name in ("slack", "conservative"):
        policy = make_policy(name, space)
        policy.submit(Job(0, 0, 10**6, {"cpus": SYNTHETIC_CPUS}), 0)
        policy.schedule(0)
        for trace_job in jobs[:queue]:
            policy.submit(dataclasses.replace(trace_job.job, submit=1), 1)
        before = getattr(policy, "schedules_priced", 0)
        samples = []
        for trace_job in jobs[queue:]:
            started = time.perf_counter()
            policy.submit(dataclasses.replace(trace_job.job, submit=2), 2)
            samples.append((time.perf_counter() - started) * 1000)
        timings[name] = samples
        if name == "slack":
            priced = (getattr(policy, "schedules_priced", 0) - before) / inserts
    return statistics.median(timings["slack"]), statistics.median(timings["conservative"]), priced


def bench_slack(repeat: int, queues: list[int]) -> None:
    print(f"\nSlack-based backfilling (Talby & Feitelson), AST, defaults; median of {repeat} runs")
    if find_shared_trace(KTH) is not None:
        slack = measure({"workload": "kth", "policy": "slack"}, repeat)
        cons = measure({"workload": "kth", "policy": "conservative"}, repeat)
        print(
            f"  KTH full trace: slack {slack['seconds']:.2f} s (min {slack['min_seconds']:.2f}, "
            f"peak RSS {slack['peak_rss_mb']:.0f} MB), conservative {cons['seconds']:.2f} s, "
            f"ratio {slack['seconds'] / cons['seconds']:.1f}x  target < 30 s"
        )
    print(
        "  cost per insertion against queue length (128 cpus, a full machine, synthetic "
        "jobs;\n  median of 15 insertions; slots = candidate schedules priced per insertion)"
    )
    print(f"  {'queue':>6} {'slack ms':>9} {'cons ms':>8} {'ratio':>7} {'slots':>6}")
    for queue in queues:
        slack_ms, cons_ms, priced = insertion_costs(queue)
        print(
            f"  {queue:>6} {slack_ms:>9.2f} {cons_ms:>8.3f} {slack_ms / cons_ms:>7.0f} {priced:>6.1f}"
        )


def bench_scaling(sizes: list[int], load: float, repeat: int) -> None:
    print(
        f"\nSynthetic scaling: 128 cpus, offered load {load}, median of {repeat} runs; "
        "events = 2 per job (arrival, end);\n  moves/job = reservations moved up by "
        "compression per job (the work no exact implementation can skip)"
    )
    print(
        f"  {'policy':<13} {'jobs':>8} {'replay s':>9} {'us/event':>9} {'mean queue':>11}"
        f" {'moves/job':>10}"
    )
    for policy in ("easy", "conservative"):
        for size in sizes:
            result = measure(
                {"workload": "synthetic", "policy": policy, "size": size, "load": load}, repeat
            )
            per_event = result["seconds"] / (2 * size) * 1e6
            print(
                f"  {policy:<13} {size:>8,} {result['seconds']:>9.2f} {per_event:>9.1f} "
                f"{result['queue']:>11.1f} {result['moves_per_job']:>10.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=["kth", "selection", "slack", "scaling"])
    parser.add_argument("--queues", default="10,25,50,100,200,400", help="slack insertion")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="1000,10000,100000", help="steady-load sizes")
    parser.add_argument("--load", type=float, default=0.9, help="steady offered load")
    parser.add_argument("--overload", type=float, default=1.2, help="offered load > 1")
    parser.add_argument("--overload-sizes", default="1000,3000,10000")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure_one(json.loads(args.child))))
        return
    if args.only in (None, "kth"):
        bench_kth(args.repeat)
    if args.only in (None, "selection"):
        bench_selection(args.repeat)
    if args.only in (None, "slack"):
        bench_slack(args.repeat, [int(q) for q in args.queues.split(",")])
    if args.only in (None, "scaling"):
        sizes = [int(s) for s in args.sizes.split(",")]
        bench_scaling(sizes, args.load, max(1, args.repeat // 2))
        # Above saturation the queue grows with the trace, so this curve shows the cost
        # per event against queue length rather than against trace length.
        sizes = [int(s) for s in args.overload_sizes.split(",")]
        bench_scaling(sizes, args.overload, 1)


if __name__ == "__main__":
    main()
