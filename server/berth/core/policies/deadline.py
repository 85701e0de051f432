"""Deadline admission control on the pool (QoPS, MSB, MRT; Islam et al. 2003).

A deadline policy keeps a full schedule like conservative backfilling: running jobs
until start + estimate and a reservation for every waiting job, in one profile; jobs
start when their reservation is reached and the schedule is compressed (jobs only move
earlier) at every early completion. What differs is admission: an arriving job is
admitted only if some rearrangement of the waiting jobs meets *every* deadline — the
new job's and all those already admitted. The rearrangement is made on a
:class:`~berth.core.policies.boards.PoolBoard` (a copy of the profile) by the
algorithms of :mod:`berth.core.policies.admission`; accepting commits it, rejecting
drops it, so a rejection leaves the schedule exactly as it was. The rules (artificial
deadlines, lateness, heuristics) are :class:`~berth.core.policies.deadline_rules.
Deadlines`, shared with the node planner. Pure: time is an argument, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.admission import Admission, Queue
from berth.core.policies.base import Waiting, push_starts
from berth.core.policies.boards import PoolBoard
from berth.core.policies.conservative import Conservative
from berth.core.policies.deadline_rules import (
    ARTIFICIAL_DEADLINE_FLOOR,
    HEURISTICS,
    Broken,
    Deadlines,
)
from berth.core.resources import ResourceSpace

__all__ = [
    "ARTIFICIAL_DEADLINE_FLOOR",
    "HEURISTICS",
    "Broken",
    "DeadlinePolicy",
]


class DeadlinePolicy(Conservative):
    """Deadline admission on the pool; the subclasses name the algorithm."""

    name = "deadline"

    def __init__(
        self,
        space: ResourceSpace,
        heuristic: str = "edf",
        relaxation: float = 5.0,
        **options: int,
    ) -> None:
        super().__init__(space)
        self.rules = Deadlines(heuristic, relaxation)
        self.admission = Admission(self.name, **options)

    @property
    def heuristic(self) -> str:
        return self.rules.heuristic

    @property
    def relaxation(self) -> float:
        return self.rules.relaxation

    @property
    def deadline_of(self) -> dict[int, int]:
        """Every admitted waiting job's deadline (real or artificial)."""
        return self.rules.of

    def effective_deadline(self, job: Job) -> int:
        return self.rules.effective(job)

    def order_key(self) -> Callable[[Waiting], tuple[int, int]]:
        return self.rules.order_key()

    # ------------------------------------------------------------------ admission
    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        too_late = self.rules.too_late(job, now)
        if too_late is not None:
            return too_late
        deadline = self.rules.of[job.id] = self.rules.effective(job)
        board = PoolBoard(self.profile, self.space, self.waiting.values(), now)
        broken = self.admission(board, self.rules, self.queue(), entry, now)
        if broken is not None:
            del self.rules.of[job.id]
            return Reject(job.id, self.rules.explain(job.id, broken))
        self._commit(entry, board)
        return Reserve(
            job.id,
            board.starts[job.id],
            deadline - job.estimate,
            self.rules.admitted(self.name, job),
            completion=deadline,
        )

    def _commit(self, new: Waiting, board: PoolBoard) -> None:
        self.profile = board.profile
        new.guarantee = self.rules.of[new.job.id] - new.job.estimate
        self.waiting[new.job.id] = new
        self._arrivals += 1
        self._arrival_of[new.job.id] = self._arrivals
        moved = []
        for job_id, start in board.starts.items():
            entry = self.waiting[job_id]
            if entry.start != start:
                entry.start = start
                self.replanned.add(job_id)
                moved.append((start, job_id))
        push_starts(self._starts, moved, self.waiting, self._arrival_of)

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        """Without a planned ``start``, admission runs as for a new arrival (a policy
        change). With one (recovery), the job was admitted already: it keeps its
        deadline and is reserved at ``start`` if still feasible, else at its earliest."""
        if start is None:
            return self.submit(job, now)
        deadline = self.rules.effective(job)
        self.rules.of[job.id] = deadline
        decision = super().adopt_waiting(job, now, start, deadline - job.estimate)
        if isinstance(decision, Reject):
            del self.rules.of[job.id]
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
            del self.rules.of[job_id]
        return withdrawn

    def schedule(self, now: int) -> list[Start]:
        started = super().schedule(now)
        for start in started:
            del self.rules.of[start.job_id]
        return started

    def queue(self) -> Queue:
        """The waiting jobs, put in order of their reserved start (ties: arrival order)
        when an algorithm asks for it."""
        arrival = self._arrival_of
        return Queue(
            self.waiting.values(),
            key=lambda e: (e.start if e.start is not None else 0, arrival[e.job.id]),
        )
