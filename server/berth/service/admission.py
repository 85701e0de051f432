"""A job's admission: the decision its partition's policy makes, and what the engine
records of it.

:meth:`JobAdmission.decide` asks the policy (a gang partition's matrix, or a
backfilling partition's policy, for a job whose predecessors allow it: see
:mod:`berth.service.dependents`), and never accepts a deadline it does not guarantee;
:meth:`JobAdmission.admit` records the decision, and :meth:`JobAdmission._note_plan`
the plan a queued job has (or why it has none). :meth:`JobAdmission.enter_job` is a new
job entering (numbered, waiting for what it needs, decided) and
:meth:`JobAdmission.cancel_job` one leaving by cancellation: the core steps the job
and array handlers (:mod:`berth.service.job_commands`, :mod:`berth.service.arrays`)
and the dependencies work through. A mixin of :class:`~berth.service.engine.Engine`;
no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.decisions import Reject, Reserve
from berth.core.dependencies import Need
from berth.service.engine_base import EngineBase
from berth.service.intents import Kill
from berth.service.model import JobRecord, JobRequest, JobState, RequestError, moment


class JobAdmission(EngineBase):
    """Admission decisions and their records (mixed into the engine)."""

    def decide(self, record: JobRecord, now: int) -> Reserve | Reject | None:
        """The policy's admission decision, and a deadline is never accepted unkept:
        under a policy that does not admit by deadline, a deadline job is accepted only
        if its guaranteed start plus its time limit meets the deadline. A gang job joins
        its partition's next slot boundary (gang scheduling promises nothing). A job
        that waits for others reaches its policy only once they allow
        (:meth:`_held_back`)."""
        held_back = self._held_back(record)
        if held_back is not None:
            if record.deadline is not None:
                return Reject(
                    record.id,
                    f"its deadline cannot be guaranteed: {self.waiting_reason(held_back)}",
                )
            return None
        part = self.gang_of(record)
        if part is not None:
            if record.deadline is not None:
                return Reject(
                    record.id,
                    f"gang partition {part.spec.name!r} makes no promises, so it cannot "
                    "guarantee a deadline",
                )
            part.arrive(record.id, record.resources, now)
            return None
        lane = self.planner.lanes[record.partition]
        decision = lane.arrive(record.as_job(), now)
        if record.deadline is None or isinstance(decision, Reject):
            return decision
        if decision is None or decision.guarantee is None:
            lane.policy.withdraw(record.id, now)
            return Reject(
                record.id,
                f"policy {self.policy_spec(record.partition)[0]} makes no promises, so it cannot "
                "guarantee a deadline (use conservative, slack, qops, msb or mrt)",
            )
        completion = decision.completion or decision.guarantee + record.time_limit
        if completion > record.deadline:
            lane.policy.withdraw(record.id, now)
            return Reject(
                record.id,
                f"its deadline {moment(record.deadline)} cannot be guaranteed: the "
                f"earliest guaranteed completion is {moment(completion)}",
            )
        return Reserve(
            decision.job_id, decision.start, decision.guarantee, decision.reason, completion
        )

    def admit(self, record: JobRecord, decision: Reserve | Reject | None, now: int) -> None:
        if isinstance(decision, Reject):
            self.set_state(record, JobState.REJECTED, decision.reason)
            record.end_time = now
            self.counters["rejected"] += 1
            self.outbox.emit("job.rejected", now, record.id, reason=record.state_reason)
            return
        self._note_plan(record, decision, now)
        self.counters["accepted"] += 1
        self.outbox.emit(
            "job.accepted",
            now,
            record.id,
            guaranteed_start=record.guaranteed_start,
            guaranteed_end=record.guaranteed_end,
        )

    def _note_plan(self, record: JobRecord, decision: Reserve | None, now: int) -> None:
        """Queue an admitted job with its plan (guarantee, planned start and nodes), or
        with why it waits without one."""
        self.pending[record.id] = record
        part = self.gang_of(record)
        held_back = self.waits.gated.get(record.id)
        if held_back is not None:
            reason = self.waiting_reason(held_back)
        elif part is not None:
            self._gang_reason(part, record, now)
            reason = record.state_reason
        else:
            reason = self.planner.policy_of(record.partition).wait_reason(record.id) or "queued"
        if isinstance(decision, Reserve):
            record.guaranteed_start = decision.guarantee
            record.guaranteed_end = decision.completion
            record.planned_start = decision.start
            record.planned_nodes = self.planner.policy_of(record.partition).named_plan(record.id)
            reason = decision.reason
        self.set_state(record, JobState.PENDING, reason)

    def enter_job(
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
        self.admit(record, self.decide(record, now), now)
        return record

    def cancel_job(self, job_id: int, now: int, reason: str) -> JobRecord:
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
            self.planner.ended([(job_id, record.partition)], now)
        else:
            if record.state is JobState.PENDING:
                self.withdraw(record, now)
            self.set_state(record, JobState.CANCELLED, reason)
            record.end_time = now
            self.outbox.emit("job.cancelled", now, job_id, reason=reason)
        return record
