"""Slot by slot: the rows take turns under a pointer.

:meth:`Rotation.step` is one slot boundary: the jobs that ended leave, arrivals join,
the scheme settles the matrix, then the row under the pointer runs for the next slot
and the pointer moves on (wrapping to the row count when rows come or go). The core
never knows how much work a job has left: the emulator counts it down, a live partition
hears it from the nodes. The same step serves both; it does no I/O and knows no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from berth.core.gang.schemes import GangScheduler


@dataclass(frozen=True, slots=True)
class SlotReport:
    """One slot: rows in the matrix, processors active, the jobs that run (by id)."""

    rows: int
    active: int
    running: tuple[int, ...]


class Rotation:
    """A gang partition in time: the scheduler and the pointer to the next row."""

    __slots__ = ("pointer", "scheduler")

    def __init__(self, scheduler: GangScheduler) -> None:
        self.scheduler = scheduler
        self.pointer = 0

    def step(
        self, ended: Iterable[int] = (), arrived: Iterable[tuple[int, int]] = ()
    ) -> SlotReport:
        """One slot boundary; ``arrived`` are ``(job id, processors)`` in order."""
        scheduler = self.scheduler
        scheduler.settle(ended, arrived)
        matrix = scheduler.matrix
        rows = len(matrix.rows)
        if rows == 0:
            self.pointer = 0
            return SlotReport(0, 0, ())
        self.pointer %= rows
        running = tuple(sorted(matrix.rows[self.pointer].jobs))
        self.pointer += 1
        jobs = matrix.jobs
        active = sum(jobs[job_id].processors for job_id in running)
        return SlotReport(rows, active, running)
