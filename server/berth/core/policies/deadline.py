"""Shared machinery of deadline admission control (QoPS, MSB, MRT; Islam et al. 2003).

A deadline policy keeps a full schedule like conservative backfilling: running jobs
until start + estimate and a reservation for every waiting job, in one profile; jobs
start when their reservation is reached and the schedule is compressed (jobs only move
earlier) at every early completion. What differs is admission: an arriving job is
admitted only if some rearrangement of the waiting jobs meets *every* deadline —
the new job's and all those already admitted. The rearrangement is computed as a
:class:`Plan` on a copy of the profile; accepting commits the plan, rejecting drops it,
so a rejection leaves the schedule exactly as it was.

Jobs without a deadline get the paper's artificial deadline
``submit + max(24 h, R * estimate)`` (R = ``relaxation``, default 5), so nothing starves.
An admitted job is promised completion by its (possibly artificial) deadline, hence a
start no later than ``deadline - estimate``. Pure: time is an argument, no I/O.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from berth.core.catalog import DEADLINE_HEURISTICS
from berth.core.decisions import Reject, Reserve, Start, at
from berth.core.model import Job
from berth.core.policies.base import Waiting
from berth.core.policies.conservative import Conservative
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace

#: The artificial deadline's floor: a job without a deadline may wait up to a day.
ARTIFICIAL_DEADLINE_FLOOR = 24 * 3600

#: Orders for (re)placing waiting jobs: earliest deadline first, least laxity first.
HEURISTICS = DEADLINE_HEURISTICS


def non_negative(name: str, value: int) -> int:
    """``value`` if it is >= 0; a ``ValueError`` naming the option otherwise."""
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


@dataclass(slots=True)
class Plan:
    """A candidate schedule: the profile with every reservation, and the planned starts."""

    profile: Profile
    starts: dict[int, int]


@dataclass(frozen=True, slots=True)
class Broken:
    """Why a candidate schedule failed: ``job_id`` would complete at ``completion``."""

    job_id: int
    completion: int
    deadline: int


class DeadlinePolicy(Conservative):
    """Base of the deadline admission policies; subclasses implement :meth:`plan`."""

    name = "deadline"

    def __init__(
        self, space: ResourceSpace, heuristic: str = "edf", relaxation: float = 5.0
    ) -> None:
        super().__init__(space)
        if heuristic not in HEURISTICS:
            raise ValueError(f"heuristic must be one of {', '.join(HEURISTICS)}, got {heuristic!r}")
        if relaxation <= 0:
            raise ValueError(f"relaxation factor R must be positive, got {relaxation}")
        self.heuristic = heuristic
        self.relaxation = relaxation
        self.deadline_of: dict[int, int] = {}

    # ------------------------------------------------------------------ admission
    def effective_deadline(self, job: Job) -> int:
        """The job's deadline, or its artificial one: submit + max(24 h, R * estimate)."""
        if job.deadline is not None:
            return job.deadline
        return job.submit + max(
            ARTIFICIAL_DEADLINE_FLOOR, math.ceil(self.relaxation * job.estimate)
        )

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        deadline = self.effective_deadline(job)
        if deadline < now + job.estimate:
            return Reject(
                job.id,
                f"deadline {at(deadline)} is before now ({at(now)}) + its estimate ({job.estimate} s)",
            )
        self.deadline_of[job.id] = deadline
        outcome = self.plan(entry, now)
        if isinstance(outcome, Broken):
            del self.deadline_of[job.id]
            return Reject(job.id, self.explain(job.id, outcome))
        self._commit(entry, outcome)
        start = outcome.starts[job.id]
        kind = "deadline" if job.deadline is not None else "artificial deadline"
        return Reserve(
            job.id,
            start,
            deadline - job.estimate,
            f"admitted by {self.name}: every admitted deadline holds ({kind} {at(deadline)})",
            completion=deadline,
        )

    def plan(self, new: Waiting, now: int) -> Plan | Broken:
        """A schedule for the waiting jobs plus ``new`` meeting every deadline, or why not."""
        raise NotImplementedError

    @staticmethod
    def explain(job_id: int, broken: Broken) -> str:
        if broken.job_id == job_id:
            return (
                f"its deadline {at(broken.deadline)} cannot be met: it would complete at "
                f"{at(broken.completion)} at best beside the admitted jobs"
            )
        return (
            f"admitting it would break the deadline {at(broken.deadline)} of admitted job "
            f"{broken.job_id} (it would complete at {at(broken.completion)})"
        )

    def _commit(self, new: Waiting, plan: Plan) -> None:
        self.profile = plan.profile
        new.guarantee = self.deadline_of[new.job.id] - new.job.estimate
        self.waiting[new.job.id] = new
        self._arrivals += 1
        self._arrival_of[new.job.id] = self._arrivals
        starts = self._starts
        for job_id, start in plan.starts.items():
            entry = self.waiting[job_id]
            if entry.start != start:
                entry.start = start
                self.replanned.add(job_id)
                heapq.heappush(starts, (start, self._arrival_of[job_id], job_id))
        if len(starts) > 4 * len(self.waiting) + 64:
            # Rescheduling leaves stale entries behind; drop them before they pile up.
            self._starts = [
                (e.start, self._arrival_of[i], i)
                for i, e in self.waiting.items()
                if e.start is not None
            ]
            heapq.heapify(self._starts)

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        """Without a planned ``start``, admission runs as for a new arrival (a policy
        change). With one (recovery), the job was admitted already: it keeps its
        deadline and is reserved at ``start`` if still feasible, else at its earliest."""
        if start is None:
            return self.submit(job, now)
        deadline = self.effective_deadline(job)
        self.deadline_of[job.id] = deadline
        decision = super().adopt_waiting(job, now, start, deadline - job.estimate)
        if isinstance(decision, Reject):
            del self.deadline_of[job.id]
            return decision
        assert isinstance(decision, Reserve), "conservative adoption always reserves"
        entry = self.waiting[job.id]
        entry.guarantee = deadline - job.estimate
        return Reserve(
            job.id, decision.start, entry.guarantee, decision.reason, completion=deadline
        )

    def withdraw(self, job_id: int, now: int) -> bool:
        withdrawn = super().withdraw(job_id, now)
        if withdrawn:
            del self.deadline_of[job_id]
        return withdrawn

    def schedule(self, now: int) -> list[Start]:
        started = super().schedule(now)
        for start in started:
            del self.deadline_of[start.job_id]
        return started

    # ------------------------------------------------------------------ helpers
    def order_key(self) -> Callable[[Waiting], tuple[int, int]]:
        """Sort key of the heuristic: (deadline, id) for EDF, (deadline - estimate, id) for LLF.

        Laxity at any fixed instant is ``deadline - now - estimate``; ``now`` is common to
        all jobs, so it does not change the order. Ties go to the lower job id.
        """
        deadline_of = self.deadline_of
        if self.heuristic == "edf":
            return lambda e: (deadline_of[e.job.id], e.job.id)
        return lambda e: (deadline_of[e.job.id] - e.job.estimate, e.job.id)

    def scheduled(self) -> list[Waiting]:
        """Waiting jobs in order of their reserved start (ties: arrival order)."""
        arrival = self._arrival_of
        return sorted(
            self.waiting.values(),
            key=lambda e: (e.start if e.start is not None else 0, arrival[e.job.id]),
        )

    def released(self, entries: Iterable[Waiting]) -> Profile:
        """A copy of the profile without the reservations of ``entries``."""
        profile = self.profile.copy()
        for entry in entries:
            assert entry.start is not None
            profile.release(entry.start, entry.job.estimate, entry.demand)
        return profile

    def late(self, entry: Waiting, start: int) -> Broken | None:
        """A :class:`Broken` if starting ``entry`` at ``start`` misses its deadline."""
        completion = start + entry.job.estimate
        deadline = self.deadline_of[entry.job.id]
        return Broken(entry.job.id, completion, deadline) if completion > deadline else None
