"""Job arrays: one submission, many tasks, each a job with its own guaranteed start.

``--array 0-99``, ``1,3,5-9`` or ``0-99:4`` (Slurm's spelling) names the task indices;
each task is an ordinary job that also carries its array's id (the first task's job id)
and its index, so the plan, the agents and the store treat it like any job. The tasks
are admitted in index order in one batch, with one scheduling pass after the last.
Cancelling the array cancels each task that has not ended, with one scheduling pass
after the last. A limit on running tasks (``%N``) becomes needs between the tasks
(:func:`berth.core.arrays.throttle`). A mixin of :class:`~berth.service.engine.Engine`; no I/O.
"""

from __future__ import annotations

from berth.core import arrays
from berth.service.engine_base import EngineBase
from berth.service.model import JobRecord, JobRequest, RequestError


def parse_array(spec: str) -> tuple[tuple[int, ...], int | None]:
    """:func:`berth.core.arrays.parse_array`, refused as a :class:`RequestError` naming
    ``array``."""
    try:
        return arrays.parse_array(spec)
    except ValueError as error:
        raise RequestError("invalid", str(error), "array") from None


class ArrayCommands(EngineBase):
    """Submitting and cancelling a whole array (mixed into the engine)."""

    def submit_array(
        self, request: JobRequest, tasks: tuple[int, ...], now: int, limit: int | None = None
    ) -> tuple[list[JobRecord], bool]:
        """Admit one job per task, at most ``limit`` running at once; ``(tasks'
        records, created)``. A repeated idempotency key returns the array it created
        the first time."""
        key = request.idempotency_key
        known = None if key is None else self.memory.job_with_key(request.user, key)
        if known is not None:
            first = self.jobs[known]
            return self.array_tasks(first.array_job_id or first.id), False
        self.validate(request, now)
        array_id = self.next_id
        needs = self.array_needs(request, tasks, limit)
        records = [
            self._enter(request, now, task_needs, task=(array_id, index, index == tasks[0]))
            for index, task_needs in zip(tasks, needs, strict=True)
        ]
        self.schedule_pass(now)
        return records, True

    def array_tasks(self, array_id: int) -> list[JobRecord]:
        """The tasks of array ``array_id`` the engine holds, by index."""
        tasks = [r for r in self.jobs.values() if r.array_job_id == array_id]
        return sorted(tasks, key=lambda r: r.array_task_id or 0)

    def cancel_array(self, array_id: int, now: int, reason: str) -> list[JobRecord]:
        """Cancel every task of the array that has not ended; the tasks cancelled."""
        tasks = self.array_tasks(array_id)
        if not tasks:
            raise RequestError("not_found", f"no array {array_id}", "array_id")
        cancelled = [self.cancel_without_pass(r.id, now, reason) for r in tasks if not r.final]
        self.schedule_pass(now)
        return cancelled
