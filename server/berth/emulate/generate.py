"""K-resource workloads built the way Leinberger, Karypis & Kumar (1999, section 3.1) did.

A single-resource base (the sizes, runtimes and estimates of a trace's jobs) is extended
to K resources: for a job of size ``n`` on a machine of ``P`` processors, each of the K
requirements is ``ceil(x * n)`` with ``x`` drawn from a uniform distribution on (0, 1]
or from an exponential distribution of mean 1/2 capped at 1 (mostly small requirements),
and every resource has capacity ``P``. The trace's own arrival times are dropped: jobs
arrive as a Poisson process whose rate is calibrated, by bisection on the mean
inter-arrival time, so that FCFS with first-fit EASY backfilling reaches a target
average ready-queue length (the paper uses 64, 128 and 256). The queue length is the
time-average number of waiting jobs while jobs arrive (from the first to the last
submission), so the drain after the last arrival does not dilute it.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from berth.core.catalog import DISTRIBUTIONS
from berth.core.policies import make_policy
from berth.core.resources import ResourceSpace
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob

#: Mean of the exponential draw (before the cap at 1), matching the uniform's mean.
EXPONENTIAL_MEAN = 0.5


@dataclass(frozen=True, slots=True)
class Calibration:
    """The arrival process found: mean inter-arrival seconds and the queue it gives."""

    mean_interarrival: float
    queue_length: float
    iterations: int


def resource_names(k: int) -> list[str]:
    """``r1`` .. ``rK``."""
    return [f"r{i}" for i in range(1, k + 1)]


def extend_to_k(
    base: Sequence[TraceJob], k: int, distribution: str, processors: int, seed: int
) -> list[TraceJob]:
    """``base`` with K requirements per job drawn from ``distribution`` scaled by its size.

    A job's size is its ``cpus`` request (the single resource of an SWF trace).
    """
    if k < 1:
        raise ValueError(f"--k must be >= 1, got {k}")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"--distribution must be uniform or exponential, got {distribution!r}")
    rng = random.Random(f"k-resources:{distribution}:{k}:{seed}")
    names = resource_names(k)
    result = []
    for trace_job in base:
        size = min(trace_job.job.resources.get("cpus", 1), processors)
        requirements = {}
        for name in names:
            if distribution == "uniform":
                fraction = 1.0 - rng.random()  # (0, 1]
            else:
                fraction = min(rng.expovariate(1.0 / EXPONENTIAL_MEAN), 1.0)
            requirements[name] = max(1, math.ceil(fraction * size))
        job = dataclasses.replace(trace_job.job, resources=requirements)
        result.append(dataclasses.replace(trace_job, job=job, swf_line=None))
    return result


def with_poisson_arrivals(
    jobs: Sequence[TraceJob], mean_interarrival: float, seed: int
) -> list[TraceJob]:
    """``jobs`` renumbered 1..N, arriving as a Poisson process of the given mean gap.

    The same ``seed`` gives the same unit-mean gaps whatever the mean, so calibration
    compares like with like (only the time scale of the arrivals changes).
    """
    rng = random.Random(f"arrivals:{seed}")
    clock = 0.0
    result = []
    for number, trace_job in enumerate(jobs, start=1):
        job = dataclasses.replace(trace_job.job, id=number, submit=round(clock))
        result.append(dataclasses.replace(trace_job, job=job))
        clock += rng.expovariate(1.0) * mean_interarrival
    return result


def average_queue_length(records: Sequence[JobRecord]) -> float:
    """Time-average number of waiting jobs between the first and the last submission."""
    if not records:
        return 0.0
    first = min(r.submit for r in records)
    last = max(r.submit for r in records)
    if last == first:
        return 0.0
    waiting = 0
    for record in records:
        start = last if record.start is None else min(record.start, last)
        waiting += max(0, start - record.submit)
    return waiting / (last - first)


def offered_gap(jobs: Sequence[TraceJob], processors: int) -> float:
    """The mean inter-arrival time at which the busiest resource is offered load 1."""
    work: dict[str, int] = {}
    for trace_job in jobs:
        for name, amount in trace_job.job.resources.items():
            work[name] = work.get(name, 0) + amount * trace_job.runtime
    return max(work.values()) / (processors * len(jobs))


def calibrate(
    jobs: Sequence[TraceJob],
    capacity: dict[str, int],
    target: float,
    seed: int,
    tolerance: float = 0.05,
    max_iterations: int = 30,
    progress: Callable[[int, float, float], None] | None = None,
) -> Calibration:
    """The mean inter-arrival time at which FCFS/FF-EASY's average queue is ``target``.

    Bisection on the logarithm of the gap (the queue shrinks as the gap grows) until the
    queue is within ``tolerance`` (relative) of the target. ``progress`` is called after
    each replay with (iteration, gap, queue length).
    """
    if target <= 0:
        raise ValueError(f"--queue-length must be positive, got {target}")
    space = ResourceSpace(capacity)

    def queue_at(gap: float) -> float:
        arrivals = with_poisson_arrivals(jobs, gap, seed)
        return average_queue_length(replay(arrivals, make_policy("easy", space)))

    base = offered_gap(jobs, max(capacity.values()))
    low, high = base * 0.25, base * 4.0  # queue(low) is long, queue(high) is short
    best = Calibration(high, queue_at(high), 1)
    for iteration in range(1, max_iterations + 1):
        gap = math.sqrt(low * high)
        length = queue_at(gap)
        if progress is not None:
            progress(iteration, gap, length)
        if abs(length - target) < abs(best.queue_length - target):
            best = Calibration(gap, length, iteration)
        if abs(length - target) <= tolerance * target:
            return Calibration(gap, length, iteration)
        if length > target:
            low = gap
        else:
            high = gap
    return best
