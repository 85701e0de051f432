"""A job's admission: the decision its partition's policy makes, and what the engine
records of it.

:meth:`JobAdmission._decide` asks the policy (a gang partition's matrix, or a
backfilling partition's policy, for a job whose predecessors allow it: see
:mod:`berth.service.dependents`), and never accepts a deadline it does not guarantee;
:meth:`JobAdmission._admit` records the decision, and :meth:`JobAdmission._note_plan`
the plan a queued job has (or why it has none). A mixin of
:class:`~berth.service.engine.Engine`; no I/O.
"""

from __future__ import annotations

from berth.core.decisions import Reject, Reserve
from berth.service.engine_base import EngineBase
from berth.service.model import JobRecord, JobState, moment


class JobAdmission(EngineBase):
    """Admission decisions and their records (mixed into the engine)."""

    def _decide(self, record: JobRecord, now: int) -> Reserve | Reject | None:
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

    def _admit(self, record: JobRecord, decision: Reserve | Reject | None, now: int) -> None:
        if isinstance(decision, Reject):
            self._set_state(record, JobState.REJECTED, decision.reason)
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
            reason = self.planner.lanes[record.partition].policy.wait_reason(record.id) or "queued"
        if isinstance(decision, Reserve):
            record.guaranteed_start = decision.guarantee
            record.guaranteed_end = decision.completion
            record.planned_start = decision.start
            record.planned_nodes = self.planner.lanes[record.partition].policy.named_plan(record.id)
            reason = decision.reason
        self._set_state(record, JobState.PENDING, reason)
