"""Job arrays: one submission, many tasks, each a job with its own guaranteed start.

``--array 0-99``, ``1,3,5-9`` or ``0-99:4`` (Slurm's spelling) names the task indices;
each task is an ordinary job that also carries its array's id (the first task's job id)
and its index, so the plan, the agents and the store treat it like any job. The tasks
are admitted in index order, a part a batch for a large array, with a scheduling pass
after each part (:mod:`berth.service.jobs.array_fill`: its job numbers set aside, the
rest stored so that a restart finishes it).
Cancelling the array cancels each task that has not ended, with one scheduling pass
after the last. A limit on running tasks (``%N``) becomes needs between the tasks
(:func:`berth.core.arrays.throttle`). The handlers of the typed array commands:
functions of the engine, working through its core steps. No I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.core import arrays
from berth.service.jobs.array_fill import PART_SECONDS, ArrayFill
from berth.service.model import JobRecord, JobRequest, RequestError
from berth.service.planning.budgets import within
from berth.service.rows import job_row

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
) -> tuple[list[JobRecord], bool] | int:
    """Admit one job per task, at most ``limit`` running at once; ``(tasks' records,
    created)``, or the array's id when they do not all go in in one part (its first
    part is in; :func:`fill_part` admits the rest, a part a batch). A repeated
    idempotency key returns the array it created the first time."""
    known = engine.memory.made_for(request)
    if known is not None:
        first = engine.jobs[known]
        return engine.book.array_tasks(first.array_job_id or first.id), False
    engine.validate(request, now)
    book = engine.book
    array_id = book.next_id
    needs = engine.deps.array_needs(request, tasks, limit)
    book.next_id += len(tasks)  # (set aside: task i is job array_id + i)
    fill = ArrayFill(array_id, tasks, limit, first_row={}, needs=needs, asked=request)
    _enter_part(engine, fill, now)
    engine.schedule_pass(now)
    if fill.whole:
        return fill.records, True
    book.filling[array_id] = fill
    engine.outbox.config_changed()  # (what is left is stored with each part)
    return array_id


def fill_part(engine: Engine, array_id: int, now: int) -> list[JobRecord] | None:
    """Admit the next part of an array going in (:class:`ArrayFill`); the array's tasks
    once the last part is in (those admitted since a restart, after one), else
    ``None``."""
    book = engine.book
    fill = book.filling[array_id]
    if not fill.needs:  # (a restart: worked out again, for the same job numbers)
        fill.needs = engine.deps.array_needs(fill.request(), fill.tasks, fill.limit, array_id)
    _enter_part(engine, fill, now)
    engine.schedule_pass(now)
    engine.outbox.config_changed()
    if not fill.whole:
        return None
    del book.filling[array_id]
    return fill.records


def fill_whole(engine: Engine, array_id: int, now: int) -> list[JobRecord]:
    """Every part left of an array going in, at once (a restart does so before any
    command); the array's tasks admitted by them."""
    while (records := fill_part(engine, array_id, now)) is None:
        pass
    return records


def _enter_part(engine: Engine, fill: ArrayFill, now: int) -> None:
    """The next part of ``fill``: tasks admitted, each as its set-aside job number (the
    first carries the request's idempotency key, and its row is kept), until
    :data:`PART_SECONDS` have passed or :data:`.array_fill.TASKS_PER_BATCH` are in."""
    request = fill.request()
    stop = within(PART_SECONDS)
    for at in fill.next_part():
        task = (fill.array_id, fill.tasks[at], at == 0)
        record = engine.life.enter_job(
            request, now, fill.needs[at], task=task, job_id=fill.array_id + at
        )
        if at == 0:
            fill.first_row = job_row(record)
        fill.records.append(record)
        fill.done = at + 1
        if stop():
            return


def give_up_filling(engine: Engine, array_id: int) -> None:
    """Stop filling an array whose part failed (a bug): the tasks in stay, and the
    commands waiting for it go on instead of waiting for ever."""
    if engine.book.filling.pop(array_id, None) is not None:
        engine.outbox.config_changed()


def waits_for_parts(engine: Engine, request: JobRequest) -> bool:
    """Whether a submission waits until the arrays going in are whole: one that names
    dependencies (an array's later tasks would be missing from them, and from its
    ``singleton``'s earlier jobs), or a retry of an array still going in."""
    filling = engine.book.filling
    if not filling:
        return False
    if request.dependency is not None:
        return True
    known = engine.memory.made_for(request)
    return known is not None and engine.jobs[known].array_job_id in filling


def tasks_left(engine: Engine, array_id: int) -> list[int]:
    """Every task of the array that has not ended (404 if there is no such array)."""
    tasks = engine.book.array_tasks(array_id)
    if not tasks:
        raise RequestError("not_found", f"no array {array_id}", "array_id")
    return [record.id for record in tasks if not record.final]
