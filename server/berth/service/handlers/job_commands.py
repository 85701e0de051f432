"""What happens to a job from its submission on, by its user or an operator: submit
(a new job, numbered and admitted or rejected; a repeated idempotency key answers the
job it made), cancel (a running job is killed), hold and release (a held job waits out of the queue, and comes
back at the back of it with a new admission decision), and the political priority an
operator sets. The handlers of the typed commands on one job (:mod:`berth.service.
commands`): functions of the engine, working through its core steps (``enter_job``,
``cancel_job``, ``schedule_pass``). No I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.service.model import JobRecord, JobRequest, JobState, RequestError
from berth.service.ports import JobFilter

if TYPE_CHECKING:
    from berth.service.engine import Engine


def submit(engine: Engine, request: JobRequest, now: int) -> tuple[JobRecord, bool]:
    """Admit (or reject) a new job; ``(record, created)``. A repeated idempotency key
    returns the job it created the first time."""
    known = engine.memory.made_for(request)
    if known is not None:
        return engine.jobs[known], False
    engine.validate(request, now)
    needs, singleton = engine.deps.needs_of(request, engine.book.next_id)
    record = engine.life.enter_job(request, now, needs, singleton)
    engine.schedule_pass(now)
    return record, True


def cancel(engine: Engine, job_id: int, now: int, reason: str) -> JobRecord:
    record = engine.life.cancel_job(job_id, now, reason)
    engine.schedule_pass(now)
    return record


def matching(engine: Engine, where: JobFilter, name: str | None) -> list[int]:
    """Every job not ended that ``where`` (and ``name``, if given) selects, as scancel's
    filters do, by id."""
    return sorted(
        record.id
        for record in engine.jobs.values()
        if not record.final
        and (name is None or record.name == name)
        and where.holds(record.state.value, record.user, record.account, record.partition)
    )


def cancel_each(engine: Engine, job_ids: list[int], now: int, reason: str) -> list[JobRecord]:
    """Cancel each of ``job_ids`` that has not ended meanwhile (nor been let go from
    memory since), then one pass; the jobs cancelled."""
    held = (engine.jobs.get(job_id) for job_id in job_ids)
    cancelled = [
        engine.life.cancel_job(record.id, now, reason)
        for record in held
        if record is not None and not record.final
    ]
    engine.schedule_pass(now)
    return cancelled


def hold(engine: Engine, job_id: int, now: int, reason: str, kind: str = "admin") -> JobRecord:
    """Hold a pending job (``kind`` ``"user"``: by its user, who may release it;
    ``"admin"``: by an operator or its account's coordinator, who alone may). An admin
    hold over its user's own hold takes its place, as Slurm's does."""
    record = engine.book.job(job_id)
    if record.state is JobState.HELD and kind == "admin" and record.hold == "user":
        engine.life.put_on_hold(record, now, reason, kind)  # (out of the plan already)
        return record
    _in_state(record, JobState.PENDING, "held")
    engine.life.withdraw(record, now)
    record.drop_plan()
    engine.life.put_on_hold(record, now, reason, kind)
    engine.schedule_pass(now)
    return record


def release(engine: Engine, job_id: int, now: int, admin: bool = True) -> JobRecord:
    """A held job queues again, at the back, with a new admission decision. Without
    ``admin`` (its user asks) only a hold of its user's own is released: 403 otherwise."""
    record = _in_state(engine.book.job(job_id), JobState.HELD, "released")
    if not admin and record.hold != "user":
        raise RequestError(
            "forbidden",
            f"job {job_id} is held ({record.state_reason}): only an operator or its "
            "account's coordinator can release it",
            "job_id",
        )
    engine.outbox.emit("job.released", now, job_id)
    engine.life.admit(record, engine.life.decide(record, now), now)
    engine.schedule_pass(now)
    return record


def set_political_priority(engine: Engine, job_id: int, value: float | None, now: int) -> JobRecord:
    record = engine.book.job(job_id)
    record.political_priority = value
    engine.outbox.job_changed(record)
    engine.outbox.emit("job.priority_changed", now, job_id, political_priority=value)
    return record


def _in_state(record: JobRecord, state: JobState, done: str) -> JobRecord:
    """``record``, if it is in ``state``; else 409 saying what can be ``done`` to whom."""
    if record.state is not state:
        raise RequestError(
            "conflict",
            f"only a {state.value.lower()} job can be {done}; job {record.id} is {record.state}",
            "job_id",
        )
    return record
