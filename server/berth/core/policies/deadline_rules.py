"""The rules of deadline admission (Islam et al. 2003), shared by the pool and the nodes.

A deadline policy promises every admitted job completion by its deadline; a job without
one gets the paper's artificial deadline ``submit + max(24 h, R * estimate)`` (R =
``relaxation``, default 5), so nothing starves. :class:`Deadlines` keeps each admitted
job's (effective) deadline, says when a start is late, orders jobs by the heuristic
(EDF or LLF) and words the reasons. The admission algorithms themselves are in
:mod:`berth.core.policies.admission`. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from berth.core.catalog import DEADLINE_HEURISTICS
from berth.core.decisions import Reject, at
from berth.core.model import Job
from berth.core.policies.option_values import number

#: The artificial deadline's floor: a job without a deadline may wait up to a day.
ARTIFICIAL_DEADLINE_FLOOR = 24 * 3600

#: Orders for (re)placing waiting jobs: earliest deadline first, least laxity first.
HEURISTICS = DEADLINE_HEURISTICS


class Queued(Protocol):
    """A waiting job as the admission algorithms see it."""

    @property
    def job(self) -> Job: ...

    @property
    def start(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Broken:
    """Why a candidate schedule failed: ``job_id`` would complete at ``completion``."""

    job_id: int
    completion: int
    deadline: int


#: The largest relaxation factor R: an artificial deadline is R times the estimate
#: away, and must stay a time the plans hold (64-bit seconds); an infinite R made the
#: first job without a deadline fail its admission with an ``OverflowError``.
MOST_RELAXATION = 1e6


class Deadlines:
    """Every admitted waiting job's deadline, and the rules that use it."""

    __slots__ = ("heuristic", "of", "relaxation")

    def __init__(self, heuristic: str = "edf", relaxation: float = 5.0) -> None:
        if heuristic not in HEURISTICS:
            raise ValueError(f"heuristic must be one of {', '.join(HEURISTICS)}, got {heuristic!r}")
        relaxation = number("relaxation factor R", relaxation, 0.0, MOST_RELAXATION, strict=True)
        self.heuristic = heuristic
        self.relaxation = relaxation
        #: Job id -> its deadline, real or artificial.
        self.of: dict[int, int] = {}

    def copy(self) -> Deadlines:
        """The same rules with a copy of the deadlines (a what-if's)."""
        twin = Deadlines(self.heuristic, self.relaxation)
        twin.of = dict(self.of)
        return twin

    def effective(self, job: Job) -> int:
        """The job's deadline, or its artificial one: submit (or, later, the time it may
        start from: its dependencies) + max(24 h, R * estimate)."""
        if job.deadline is not None:
            return job.deadline
        return job.ready(job.submit) + max(
            ARTIFICIAL_DEADLINE_FLOOR, math.ceil(self.relaxation * job.estimate)
        )

    def too_late(self, job: Job, now: int) -> Reject | None:
        """A rejection if no start from ``now`` on can meet the job's deadline."""
        deadline = self.effective(job)
        ready = job.ready(now)
        if deadline < ready + job.estimate:
            since = f"now ({at(now)})" if ready == now else f"its dependencies' end ({at(ready)})"
            return Reject(
                job.id,
                f"deadline {at(deadline)} is before {since} + its estimate ({job.estimate} s)",
            )
        return None

    def late(self, entry: Queued, start: int) -> Broken | None:
        """A :class:`Broken` if starting ``entry`` at ``start`` misses its deadline."""
        completion = start + entry.job.estimate
        deadline = self.of[entry.job.id]
        return Broken(entry.job.id, completion, deadline) if completion > deadline else None

    def order_key(self) -> Callable[[Queued], tuple[int, int]]:
        """Sort key of the heuristic: (deadline, id) for EDF, (deadline - estimate, id) for LLF.

        Laxity at any fixed instant is ``deadline - now - estimate``; ``now`` is common to
        all jobs, so it does not change the order. Ties go to the lower job id.
        """
        deadline_of = self.of
        if self.heuristic == "edf":
            return lambda e: (deadline_of[e.job.id], e.job.id)
        return lambda e: (deadline_of[e.job.id] - e.job.estimate, e.job.id)

    def admitted(self, name: str, job: Job) -> str:
        """The reason of an admission."""
        kind = "deadline" if job.deadline is not None else "artificial deadline"
        return f"admitted by {name}: every admitted deadline holds ({kind} {at(self.of[job.id])})"

    @staticmethod
    def explain(job_id: int, broken: Broken) -> str:
        """Why a job was rejected."""
        if broken.job_id == job_id:
            return (
                f"its deadline {at(broken.deadline)} cannot be met: it would complete at "
                f"{at(broken.completion)} at best beside the admitted jobs"
            )
        return (
            f"admitting it would break the deadline {at(broken.deadline)} of admitted job "
            f"{broken.job_id} (it would complete at {at(broken.completion)})"
        )
