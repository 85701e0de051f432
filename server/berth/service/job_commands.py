"""What happens to a job from its submission on, by its user or an operator: submit
(a new job, numbered and admitted or rejected; a repeated idempotency key answers the
job it made), cancel (a running job is killed), hold and release (a held job waits out of the queue, and comes
back at the back of it with a new admission decision), and the political priority an
operator sets. A mixin of :class:`~berth.service.engine.Engine`; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.dependencies import Need
from berth.service.engine_base import EngineBase
from berth.service.intents import Kill
from berth.service.model import JobRecord, JobRequest, JobState, RequestError


class JobCommands(EngineBase):
    """The engine's commands on one job (mixed into :class:`~berth.service.engine.Engine`)."""

    def submit(self, request: JobRequest, now: int) -> tuple[JobRecord, bool]:
        """Admit (or reject) a new job; ``(record, created)``. A repeated idempotency key
        returns the job it created the first time."""
        if request.idempotency_key is not None:
            known = self.memory.job_with_key(request.user, request.idempotency_key)
            if known is not None:
                return self.jobs[known], False
        self.validate(request, now)
        needs, singleton = self.needs_of(request, self.next_id)
        record = self._enter(request, now, needs, singleton)
        self.schedule_pass(now)
        return record, True

    def _enter(
        self,
        request: JobRequest,
        now: int,
        needs: Sequence[Need] = (),
        singleton: bool = False,
        task: tuple[int, int, bool] | None = None,
    ) -> JobRecord:
        """A new job for a checked ``request``, numbered next, waiting for ``needs``
        (and, ``singleton``, for the earlier jobs of its name), admitted (or rejected);
        the caller runs the scheduling pass. An array's ``task`` is ``(array id, index,
        whether it carries the request's idempotency key)``: one job per key, as the
        store keeps, so only the first task does."""
        record = JobRecord.from_request(self.next_id, request, now)
        self.next_id += 1
        self.jobs[record.id] = record
        if task is not None:
            record.array_job_id, record.array_task_id, keyed = task
            if not keyed:
                record.idempotency_key = None
        self.memory.note_key(record)
        if singleton:
            needs = [*needs, *self.singleton_needs(record)]
        self.wait_for(record, needs)
        self._admit(record, self._decide(record, now), now)
        return record

    def cancel(self, job_id: int, now: int, reason: str) -> JobRecord:
        record = self.cancel_without_pass(job_id, now, reason)
        self.schedule_pass(now)
        return record

    def cancel_without_pass(self, job_id: int, now: int, reason: str) -> JobRecord:
        """Cancel one job and leave the scheduling pass to the caller (one pass after a
        whole array's tasks, not one per task)."""
        record = self.job(job_id)
        if record.final:
            raise RequestError(
                "conflict", f"job {job_id} has already ended ({record.state})", "job_id"
            )
        if record.state is JobState.RUNNING:
            self.outbox.intend(Kill(job_id, now))
            self.end_job(record, JobState.CANCELLED, now, reason)
            self._ended_in_lanes([job_id], now)
        else:
            if record.state is JobState.PENDING:
                self._withdraw(record, now)
            self._set_state(record, JobState.CANCELLED, reason)
            record.end_time = now
            self.outbox.emit("job.cancelled", now, job_id, reason=reason)
        return record

    def hold(self, job_id: int, now: int, reason: str) -> JobRecord:
        record = _in_state(self.job(job_id), JobState.PENDING, "held")
        self._withdraw(record, now)
        self._set_state(record, JobState.HELD, reason)
        record.drop_plan()
        self.outbox.emit("job.held", now, job_id, reason=reason)
        self.schedule_pass(now)
        return record

    def release(self, job_id: int, now: int) -> JobRecord:
        """A held job queues again, at the back, with a new admission decision."""
        record = _in_state(self.job(job_id), JobState.HELD, "released")
        self.outbox.emit("job.released", now, job_id)
        self._admit(record, self._decide(record, now), now)
        self.schedule_pass(now)
        return record

    def set_political_priority(self, job_id: int, value: float | None, now: int) -> JobRecord:
        record = self.job(job_id)
        record.political_priority = value
        self.outbox.job_changed(record)
        self.outbox.emit("job.priority_changed", now, job_id, political_priority=value)
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
