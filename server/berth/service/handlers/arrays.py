"""Job arrays: one submission, many tasks, each a job with its own guaranteed start.

``--array 0-99``, ``1,3,5-9`` or ``0-99:4`` (Slurm's spelling) names the task indices;
each task is an ordinary job that also carries its array's id (the first task's job id)
and its index, so the plan, the agents and the store treat it like any job. The tasks
are admitted in index order in one batch, with one scheduling pass after the last.
Cancelling the array cancels each task that has not ended, with one scheduling pass
after the last. A limit on running tasks (``%N``) becomes needs between the tasks
(:func:`berth.core.arrays.throttle`). The handlers of the typed array commands:
functions of the engine, working through its core steps. No I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.core import arrays
from berth.service.model import JobRecord, JobRequest, RequestError

if TYPE_CHECKING:
    from berth.service.engine import Engine


def parse_array(spec: str) -> tuple[tuple[int, ...], int | None]:
    """:func:`berth.core.arrays.parse_array`, refused as a :class:`RequestError` naming
    ``array``."""
    try:
        return arrays.parse_array(spec)
    except ValueError as error:
        raise RequestError("invalid", str(error), "array") from None


def submit_array(
    engine: Engine, request: JobRequest, tasks: tuple[int, ...], now: int, limit: int | None = None
) -> tuple[list[JobRecord], bool]:
    """Admit one job per task, at most ``limit`` running at once; ``(tasks'
    records, created)``. A repeated idempotency key returns the array it created
    the first time."""
    key = request.idempotency_key
    known = None if key is None else engine.memory.job_with_key(request.user, key)
    if known is not None:
        first = engine.jobs[known]
        return engine.book.array_tasks(first.array_job_id or first.id), False
    engine.validate(request, now)
    array_id = engine.book.next_id
    needs = engine.deps.array_needs(request, tasks, limit)
    records = [
        engine.life.enter_job(request, now, task_needs, task=(array_id, index, index == tasks[0]))
        for index, task_needs in zip(tasks, needs, strict=True)
    ]
    engine.schedule_pass(now)
    return records, True


def tasks_left(engine: Engine, array_id: int) -> list[int]:
    """Every task of the array that has not ended (404 if there is no such array)."""
    tasks = engine.book.array_tasks(array_id)
    if not tasks:
        raise RequestError("not_found", f"no array {array_id}", "array_id")
    return [record.id for record in tasks if not record.final]
