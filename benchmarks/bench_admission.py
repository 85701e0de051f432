"""Admission latency of the deadline policies against queues of waiting jobs.

For each queue length, a schedule is built by submitting that many jobs (a synthetic
mix on 128 cpus, deadlines with random slack, 64 jobs running), then the decision for
one more job is timed ``--samples`` times, each on a fresh copy of the same schedule
(copying is not timed; the copy is frozen for the collector, as the daemon freezes its
state). Reports the median and 90th percentile per policy, and how long a bare Python
loop of 10 million additions takes on this machine (the machines these figures come
from differ by twice as much from one day to the next).

    .venv/bin/python benchmarks/bench_admission.py                 # qops, 100..3000
    .venv/bin/python benchmarks/bench_admission.py --policies qops,msb,mrt --sizes 100,300
    .venv/bin/python benchmarks/bench_admission.py --nodes 256 --sizes 1000 --repeat 0

With ``--nodes N`` the policies plan on N named nodes of ``cpus=32,mem_gb=128`` (the node
planner, as the daemon runs them on agents) and jobs ask for slots: 1-256 slots of 1-32
cpus and 2 GB a cpu, so every decision is a set of placements on named nodes. The
schedule is the one the last of those submissions left, so QoPS knows its last rebuild
(:class:`~berth.core.policies.admission.Rebuilt`), as a decision right after another at
the same instant does; ``--afresh`` times the decision after a change (a job's end or
start), which rebuilds from nothing:

    .venv/bin/python benchmarks/bench_admission.py --nodes 256 --sizes 1000 --repeat 0 --afresh

Each decision is timed with the cyclic collector paused, as the daemon's writer applies
its batches (:mod:`berth.service.collector`); ``--collector both`` times each decision
with it paused and running, alternating which goes first, and gives the median ratio:

    .venv/bin/python benchmarks/bench_admission.py --nodes 256 --sizes 1000 --repeat 0 \
        --collector both

Then the full replay the issue sets a target for: the first 5,000 CTC jobs at load 1.6
(duplication), exact estimates, deadlines from EASY with S = 0.2, under QoPS (median of
``--repeat`` runs; the time includes the EASY replay that derives the deadlines).
"""

from __future__ import annotations

import argparse
import copy
import gc
import random
import statistics
import time

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.deadline import DeadlinePolicy
from berth.core.policies.node_deadline import NodeDeadline
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape
from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.runtime.paths import find_shared_trace

CPUS = 128


def _job(rng: random.Random, job_id: int, now: int, slack_factor: float) -> Job:
    estimate = max(60, round(rng.expovariate(1 / 3600)))
    cpus = max(1, min(64, round(2 ** rng.uniform(0, 6))))
    slack = round(rng.uniform(0, slack_factor) * estimate) + 86400
    return Job(job_id, now, estimate, {"cpus": cpus}, deadline=now + estimate + slack)


def _slots_job(rng: random.Random, job_id: int, now: int, slack_factor: float) -> Job:
    """A job asking for slots on 32-cpu nodes (2 GB a cpu), sizes log-uniform."""
    job = _job(rng, job_id, now, slack_factor)
    per_cpu = rng.choice([1, 2, 4, 8, 16, 32])
    count = max(1, round(2 ** rng.uniform(0, 8)))
    shape = Shape(count, {"cpus": per_cpu, "mem_gb": 2 * per_cpu})
    return Job(job.id, now, job.estimate, {}, deadline=job.deadline, shape=shape)


def build(
    policy_name: str, waiting: int, seed: int, nodes: int = 0
) -> DeadlinePolicy | NodeDeadline:
    rng = random.Random(seed)
    policy: DeadlinePolicy | NodeDeadline
    make_job = _job
    if nodes:
        named = {f"n{i:04d}": {"cpus": 32, "mem_gb": 128} for i in range(nodes)}
        policy = NodeDeadline(policy_name, named)
        make_job = _slots_job
    else:
        built = make_policy(policy_name, ResourceSpace({"cpus": CPUS}))
        assert isinstance(built, DeadlinePolicy)
        policy = built
    job_id = 0
    while len(policy.waiting) < waiting:
        job_id += 1
        # Generous deadlines so the queue fills: the slack grows with the queue.
        policy.submit(make_job(rng, job_id, 0, slack_factor=len(policy.waiting) / 4 + 2), 0)
        policy.schedule(0)
    return policy


def measure(
    policy_name: str,
    waiting: int,
    samples: int,
    nodes: int = 0,
    afresh: bool = False,
    collector: tuple[str, ...] = ("paused",),
) -> dict[str, list[float]]:
    """Decision times against copies of one schedule; ``afresh``: on nodes, each copy
    forgets what the last decision knew of its rebuild, as after a job's end or start
    (by default a decision follows the last one at the same instant, as in a burst).
    ``collector``: each decision is timed with the cyclic collector paused (as the
    daemon's writer applies a batch), running, or both, alternating which goes first."""
    base = build(policy_name, waiting, seed=waiting, nodes=nodes)
    if afresh and isinstance(base, NodeDeadline):
        base.forget_rebuild()
    rng = random.Random(7)
    make_job = _slots_job if nodes else _job
    times: dict[str, list[float]] = {how: [] for how in collector}
    for sample in range(samples):
        job = make_job(rng, 10**6 + sample, 0, slack_factor=rng.choice([1.0, 10.0, 100.0]))
        for how in collector if sample % 2 == 0 else collector[::-1]:
            policy = copy.deepcopy(base)
            # As the daemon keeps its long-lived state (berth.runtime.heap): frozen, so
            # the collector does not walk a fresh copy's millions of objects.
            gc.freeze()
            if how == "paused":
                gc.disable()
            started = time.perf_counter()
            policy.submit(job, 0)
            times[how].append(time.perf_counter() - started)
            gc.enable()
            gc.unfreeze()
    return times


def bench_ctc_replay(repeat: int) -> None:
    trace = find_shared_trace("CTC-SP2-1996-3.1-cln.swf.gz")
    if trace is None:
        print("skipping the CTC replay: trace not found in shared/traces")
        return
    workload = read_workload(trace)
    scenario = Scenario(first=5000, estimates="exact", load=1.6, stringency=0.2)
    times, report = [], {}
    for _ in range(repeat):
        started = time.perf_counter()
        (result,) = emulate(workload, "qops", scenario=scenario)
        times.append(time.perf_counter() - started)
        report = result.report
    print(
        f"\nCTC first 5,000 jobs, load 1.6, S = 0.2, qops: median {statistics.median(times):.1f} s "
        f"of {repeat} (target < 60 s); {report['jobs']} jobs, {report['rejected']} rejected, "
        f"{report['deadline_misses']} deadline misses"
    )


def machine_pace() -> float:
    """Seconds a bare Python loop of 10 million additions takes here, printed so that
    runs on different machines can be read side by side: the same code's decisions took
    23-28 ms on one day's machine and 40-56 ms on the next day's."""
    started = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--policies", default="qops")
    parser.add_argument("--sizes", default="100,300,1000,3000")
    parser.add_argument("--samples", type=int, default=21)
    parser.add_argument("--repeat", type=int, default=3, help="CTC replays (0: skip)")
    parser.add_argument("--nodes", type=int, default=0, help="plan on N named 32-cpu nodes")
    parser.add_argument(
        "--afresh",
        action="store_true",
        help="on nodes, as after a change: QoPS rebuilds insertion point 0 from nothing",
    )
    parser.add_argument(
        "--collector",
        choices=("paused", "running", "both"),
        default="paused",
        help="the cyclic collector during each decision: paused (as the daemon's writer "
        "applies a batch), running, or both (paired, alternating)",
    )
    args = parser.parse_args()
    where = f"{args.nodes} nodes of cpus=32,mem_gb=128" if args.nodes else f"{CPUS} cpus"
    if args.nodes:
        where += ", rebuilt from nothing" if args.afresh else ", right after the last decision"
    print(f"Admission decision time, {where}, median / p90 of {args.samples} decisions")
    print(f"  (this machine: 10^7 Python additions in {machine_pace():.2f} s)")
    width = 16 if args.collector == "both" else 6
    print(f"  {'policy':<{width}} {'waiting':>8} {'median ms':>10} {'p90 ms':>8}")
    collector = ("paused", "running") if args.collector == "both" else (args.collector,)
    for policy_name in args.policies.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            timed = measure(policy_name, size, args.samples, args.nodes, args.afresh, collector)
            for how, times in timed.items():
                label = policy_name if len(timed) == 1 else f"{policy_name} ({how})"
                ordered = sorted(times)
                p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
                print(
                    f"  {label:<{width}} {size:>8,} {statistics.median(ordered) * 1e3:>10.2f} "
                    f"{p90 * 1e3:>8.2f}"
                )
            if len(timed) == 2:
                ratios = sorted(
                    r / p for p, r in zip(timed["paused"], timed["running"], strict=True)
                )
                print(f"  running / paused, per decision: median {statistics.median(ratios):.3f}")
    if args.repeat:
        bench_ctc_replay(args.repeat)


if __name__ == "__main__":
    main()
