"""The workload of Zhou, Brent and Walsh (section 4.2), after Downey's model.

128 processors by default; a job's work is uniform in log space between 1 and 120 slots
and rounded to whole slots; its size is uniform in log space between 1 and the machine,
rounded to an integer or (``powers_of_two``) to the nearest power of two in log space;
inter-arrival times are exponential with the mean that makes the offered load
``rho = lambda * mean size * mean work / P`` (the set's own means, so every set is
offered exactly ``rho``). Times are written in seconds for a given slot length, so
``berth emulate --policy gang --slot-seconds`` with the same length reads the slots back.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from berth.core.model import Job
from berth.emulate.workload import TraceJob

#: The paper's machine, longest job and slot length (5 s: jobs of 10 minutes at most).
PROCESSORS, LONGEST, SLOT_SECONDS = 128, 120, 5


@dataclass(frozen=True, slots=True)
class ZhouWorkload:
    jobs: list[TraceJob]
    processors: int
    mean_interarrival_slots: float


def log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def job_size(rng: random.Random, processors: int, powers_of_two: bool) -> int:
    if powers_of_two:
        exponent = rng.uniform(0.0, math.log2(processors))
        return 1 << round(exponent)
    return min(processors, max(1, round(log_uniform(rng, 1.0, processors))))


def generate_zhou(
    load: float,
    jobs: int,
    seed: int,
    processors: int = PROCESSORS,
    powers_of_two: bool = True,
    slot_seconds: int = SLOT_SECONDS,
    longest: int = LONGEST,
) -> ZhouWorkload:
    """``jobs`` jobs offered load ``load`` on ``processors`` processors."""
    if not load > 0.0:
        raise ValueError(f"--load must be positive, got {load}")
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {jobs}")
    if processors < 1 or processors & (processors - 1):
        raise ValueError(f"--processors must be a power of two, got {processors}")
    rng = random.Random(f"zhou:{seed}")
    shapes = [
        (
            job_size(rng, processors, powers_of_two),
            min(longest, max(1, round(log_uniform(rng, 1.0, longest)))),
        )
        for _ in range(jobs)
    ]
    mean_size = sum(size for size, _ in shapes) / jobs
    mean_work = sum(work for _, work in shapes) / jobs
    gap = mean_size * mean_work / (load * processors)  # slots between arrivals, on average
    clock = 0.0
    result = []
    for number, (size, work) in enumerate(shapes, start=1):
        runtime = work * slot_seconds
        job = Job(id=number, submit=round(clock * slot_seconds), estimate=runtime,
                  resources={"cpus": size})  # fmt: skip
        result.append(TraceJob(job, runtime))
        clock += rng.expovariate(1.0 / gap)
    return ZhouWorkload(result, processors, gap)
