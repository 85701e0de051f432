"""Job arrays: one submission, many tasks, each a job with its own guaranteed start.

``--array 0-99``, ``1,3,5-9`` or ``0-99:4`` (Slurm's spelling) names the task indices;
each task is an ordinary job that also carries its array's id (the first task's job id)
and its index, so the plan, the agents and the store treat it like any job. The tasks
are admitted in index order in one batch, with one scheduling pass after the last.
Cancelling the array cancels each task that has not ended, with one scheduling pass
after the last. A limit on running tasks (``%N``) is not taken yet: it is refused,
naming it. A mixin of :class:`~berth.service.engine.Engine`; no I/O.
"""

from __future__ import annotations

import dataclasses
import re

from berth.service.engine_base import EngineBase
from berth.service.model import JobRecord, JobRequest, RequestError

#: The most tasks one array may have.
MAX_ARRAY_TASKS = 10_000
#: The largest task index.
MAX_TASK_INDEX = 4_000_000


def parse_array(spec: str) -> tuple[int, ...]:
    """The task indices of ``spec`` (``0-99``, ``1,3,5-9``, ``0-99:4``), in order, each
    once; :class:`RequestError` naming ``array`` if it cannot be read or is too big."""
    text = spec.strip()
    if "%" in text:
        raise RequestError(
            "invalid",
            f"array {spec!r}: a limit on running tasks (%N) is not supported yet",
            "array",
        )
    indices: set[int] = set()
    for part in text.split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if match is None:
            raise RequestError(
                "invalid", f"array {spec!r}: expected N, N-M or N-M:STEP, comma-separated", "array"
            )
        first = int(match.group(1))
        last = int(match.group(2) or first)
        step = int(match.group(3) or 1)
        if last < first or step < 1 or last > MAX_TASK_INDEX:
            raise RequestError(
                "invalid",
                f"array {spec!r}: {part.strip()} must run upwards, by a step of at least 1, "
                f"to at most {MAX_TASK_INDEX}",
                "array",
            )
        if len(indices) + (last - first) // step + 1 > MAX_ARRAY_TASKS:
            raise RequestError(
                "invalid", f"array {spec!r}: more than {MAX_ARRAY_TASKS} tasks", "array"
            )
        indices.update(range(first, last + 1, step))
    return tuple(sorted(indices))


class ArrayCommands(EngineBase):
    """Submitting and cancelling a whole array (mixed into the engine)."""

    def submit_array(
        self, request: JobRequest, tasks: tuple[int, ...], now: int
    ) -> tuple[list[JobRecord], bool]:
        """Admit one job per task; ``(tasks' records, created)``. A repeated
        idempotency key returns the array it created the first time."""
        key = request.idempotency_key
        if key is not None and (request.user, key) in self._idempotency:
            first = self.jobs[self._idempotency[(request.user, key)]]
            return self.array_tasks(first.array_job_id or first.id), False
        self.validate(request, now)
        array_id = self.next_id
        records = [
            # The first task alone carries the key (one job per key, as the store keeps).
            self._enter(
                dataclasses.replace(
                    request,
                    array_job_id=array_id,
                    array_task_id=index,
                    idempotency_key=key if index == tasks[0] else None,
                ),
                now,
            )
            for index in tasks
        ]
        self._pass(now)
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
        self._pass(now)
        return cancelled
