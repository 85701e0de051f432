"""Experiment scenarios: how a trace is turned into the workload a policy replays.

In this order (Islam et al. 2003, section 4, for the deadline parts):

1. ``first``: keep the first N jobs (in submit order);
2. ``estimates``: ``user``, ``exact`` or ``badness:F`` (see :mod:`berth.emulate.estimates`);
3. ``load`` > 1 raises the offered load, by ``duplicate`` (copies of randomly chosen
   jobs inserted at random times within the trace's span; incremental: the copies for a
   load of 1.6 include those for 1.4) or by ``expand`` (submit times compressed by the
   load factor: ``first_submit + (submit - first_submit) / load``);
4. ``priorities`` ``every-nth:N`` gives every N-th job (in submit order: the N-th, the
   2N-th, ...) user and political priority 1 and every other job 0 (Talby & Feitelson
   1999, section 3.3, with N = 5); ``every-nth:N:G`` gives them a smaller *gap* G in
   [0, 2], user and political priority G/2 each (the paper's Table 4);
5. ``stringency`` S gives jobs deadlines from an EASY replay of the resulting workload:
   ``deadline = submit + max(runtime, (1 - S) * EASY response time)``; with
   ``deadline_fraction`` below 1 only that fraction of jobs (chosen at random) gets one
   and the others keep none (deadline policies give them an artificial deadline).

All randomness comes from ``seed``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.core.policies import make_policy
from berth.core.resources import ResourceSpace
from berth.emulate.estimates import apply_estimates, parse_estimates
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob

LOAD_METHODS = ("duplicate", "expand")


@dataclass(frozen=True, slots=True)
class Scenario:
    """How to derive the replayed workload from a trace (defaults: the trace as it is)."""

    first: int | None = None
    estimates: str = "user"
    load: float = 1.0
    load_method: str = "duplicate"
    stringency: float | None = None
    deadline_fraction: float = 1.0
    seed: int = 0
    priorities: str | None = None

    def __post_init__(self) -> None:
        parse_estimates(self.estimates)
        if self.first is not None and self.first <= 0:
            raise ValueError(f"--first must be positive, got {self.first}")
        if self.load < 1.0:
            raise ValueError(f"--load must be >= 1.0, got {self.load}")
        if self.load_method not in LOAD_METHODS:
            raise ValueError(f"--load-method must be duplicate or expand, got {self.load_method!r}")
        if self.stringency is not None and not 0.0 <= self.stringency < 1.0:
            raise ValueError(f"stringency S must be in [0, 1), got {self.stringency}")
        if self.priorities is not None:
            every_nth(self.priorities)
        if not 0.0 <= self.deadline_fraction <= 1.0:
            raise ValueError(f"--deadline-fraction must be in [0, 1], got {self.deadline_fraction}")

    def prepare(self, jobs: Sequence[TraceJob], capacity: Mapping[str, int]) -> list[TraceJob]:
        """The workload to replay, sorted by (submit, id)."""
        chosen = list(jobs[: self.first] if self.first is not None else jobs)
        chosen = apply_estimates(chosen, self.estimates, self.seed)
        chosen = scale_load(chosen, self.load, self.load_method, self.seed)
        if self.priorities is not None:
            chosen = assign_priorities(chosen, *every_nth(self.priorities))
        if self.stringency is not None:
            chosen = derive_deadlines(
                chosen, capacity, self.stringency, self.deadline_fraction, self.seed
            )
        return chosen


def every_nth(spec: str) -> tuple[int, float]:
    """``(N, gap)`` of a ``--priorities every-nth:N[:GAP]`` option (N >= 2, 0 <= gap <= 2)."""
    kind, _, rest = spec.partition(":")
    number, _, gap_text = rest.partition(":")
    problem = f"--priorities must be every-nth:N[:GAP] with an integer N >= 2 and a gap in [0, 2], got {spec!r}"
    if kind != "every-nth" or not number.isdigit() or int(number) < 2:
        raise ValueError(problem)
    try:
        gap = float(gap_text) if gap_text else 2.0
    except ValueError:
        raise ValueError(problem) from None
    if not 0.0 <= gap <= 2.0:
        raise ValueError(problem)
    return int(number), gap


def assign_priorities(jobs: list[TraceJob], nth: int, gap: float = 2.0) -> list[TraceJob]:
    """Every ``nth`` job high priority (user = political = gap / 2), the others low (0)."""
    high = {"user": gap / 2, "political": gap / 2}
    low = {"user": 0.0, "political": 0.0}
    return [
        dataclasses.replace(
            t, job=dataclasses.replace(t.job, priority=high if index % nth == nth - 1 else low)
        )
        for index, t in enumerate(jobs)
    ]


def scale_load(jobs: list[TraceJob], load: float, method: str, seed: int) -> list[TraceJob]:
    """Raise the offered load of ``jobs`` by ``load`` (see the module docstring)."""
    if load == 1.0 or not jobs:
        return jobs
    first = jobs[0].job.submit
    last = jobs[-1].job.submit
    if method == "expand":
        scaled = [
            dataclasses.replace(
                t,
                job=dataclasses.replace(t.job, submit=first + round((t.job.submit - first) / load)),
            )
            for t in jobs
        ]
        return sorted(scaled, key=lambda t: (t.job.submit, t.job.id))
    # The random stream is drawn in the same order whatever the load, so a higher load's
    # duplicates extend a lower load's: the 1.6 workload contains the 1.4 one.
    rng = random.Random(f"duplicate:{seed}")
    next_id = max(t.job.id for t in jobs) + 1
    extra = []
    for offset in range(round((load - 1.0) * len(jobs))):
        source = jobs[rng.randrange(len(jobs))]
        submit = rng.randint(first, last)
        copy = dataclasses.replace(source.job, id=next_id + offset, submit=submit)
        extra.append(dataclasses.replace(source, job=copy, swf_line=None))
    return sorted([*jobs, *extra], key=lambda t: (t.job.submit, t.job.id))


def derive_deadlines(
    jobs: list[TraceJob],
    capacity: Mapping[str, int],
    stringency: float,
    fraction: float,
    seed: int,
) -> list[TraceJob]:
    """Deadlines from an EASY replay of ``jobs`` with stringency factor ``stringency``."""
    records = replay(jobs, make_policy("easy", ResourceSpace(capacity)))
    response = {r.id: r.end - r.submit for r in records if r.end is not None}
    rng = random.Random(f"deadlines:{seed}")
    count = round(fraction * len(jobs))
    with_deadline = set(rng.sample(range(len(jobs)), count)) if count < len(jobs) else None
    result = []
    for index, trace_job in enumerate(jobs):
        job = trace_job.job
        if job.id not in response or (with_deadline is not None and index not in with_deadline):
            result.append(trace_job)
            continue
        relative = max(trace_job.runtime, round((1.0 - stringency) * response[job.id]))
        timed = dataclasses.replace(job, deadline=job.submit + relative)
        result.append(dataclasses.replace(trace_job, job=timed))
    return result
