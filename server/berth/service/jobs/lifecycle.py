"""A job's life in the engine: admitted, queued with its plan, started, ended.

:class:`JobLifecycle` holds the steps every command and every pass works through, over
the engine's parts: :meth:`~JobLifecycle.decide` asks the job's partition (a gang
partition's matrix, or a backfilling partition's policy, for a job whose predecessors
allow it: see :mod:`berth.service.jobs.dependencies`) and never accepts a deadline it does not
guarantee; :meth:`~JobLifecycle.admit` records the decision and
:meth:`~JobLifecycle.note_plan` the plan a queued job has (or why it has none);
:meth:`~JobLifecycle.enter_job` is a new job entering (numbered, waiting for what it
needs, decided), :meth:`~JobLifecycle.cancel_job` one leaving by cancellation,
:meth:`~JobLifecycle.end_job` a running one ending, :meth:`~JobLifecycle.install` a
replan adopted; :meth:`~JobLifecycle.set_state` is the one place a job's state changes
(its waiters and the memory of finished jobs hear of it). The job and array handlers
(:mod:`berth.service.handlers.job_commands`, :mod:`berth.service.handlers.arrays`), the dependencies'
settling and the gang slots work through these steps; the engine drives them in time.
A part of :class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.decisions import Reject, Reserve
from berth.core.dependencies import Need
from berth.core.policies.base import LivePolicy
from berth.core.policies.node_schedule import WAITS_FOR_NODES
from berth.service.jobs.book import JobBook
from berth.service.jobs.dependencies import Dependencies
from berth.service.jobs.memory import JobMemory
from berth.service.model import (
    FINAL_STATES,
    HELD_AT_SUBMISSION,
    JobRecord,
    JobRequest,
    JobState,
    RequestError,
    moment,
    readable,
)
from berth.service.nodes.cluster import Cluster
from berth.service.nodes.intents import Kill
from berth.service.outbox import Outbox
from berth.service.partitions.registry import Partitions, gang_reason
from berth.service.planning.planner import Planner
from berth.service.planning.replan import Replan

#: The event announcing each way a running job can end.
END_EVENT = {
    JobState.COMPLETED: "job.completed",
    JobState.FAILED: "job.failed",
    JobState.TIMEOUT: "job.killed",
    JobState.CANCELLED: "job.cancelled",
    JobState.NODE_FAIL: "job.node_fail",
    JobState.OUT_OF_MEMORY: "job.out_of_memory",
}


def kept_deadline(
    record: JobRecord, decision: Reserve | Reject | None, policy: str
) -> Reserve | Reject | None:
    """``decision`` (of ``policy``, on ``record``'s arrival), or its rejection when it does
    not keep the job's deadline: under a policy that does not admit by deadline, a
    deadline job is accepted only if its guaranteed start plus its time limit meets the
    deadline. The submission and the what-if both decide so."""
    if record.deadline is None or isinstance(decision, Reject):
        return decision
    if decision is None or decision.guarantee is None:
        return Reject(
            record.id,
            f"policy {policy} makes no promises, so it cannot "
            "guarantee a deadline (use conservative, slack, qops, msb or mrt)",
        )
    completion = decision.completion or decision.guarantee + record.time_limit
    if completion > record.deadline:
        return Reject(
            record.id,
            f"its deadline {moment(record.deadline)} cannot be guaranteed: the "
            f"earliest guaranteed completion is {moment(completion)}",
        )
    return Reserve(decision.job_id, decision.start, decision.guarantee, decision.reason, completion)


class JobLifecycle:
    """The steps of a job's life, over the engine's records and parts."""

    def __init__(
        self,
        book: JobBook,
        cluster: Cluster,
        partitions: Partitions,
        deps: Dependencies,
        planner: Planner,
        outbox: Outbox,
        memory: JobMemory,
    ) -> None:
        self.book = book
        self.jobs, self.pending, self.running = book.jobs, book.pending, book.running
        self.counters = book.counters
        self.cluster = cluster
        self.partitions = partitions
        self.deps = deps
        self.waits = deps.waits
        self.planner = planner
        self.outbox = outbox
        self.memory = memory
        #: Jobs a node failure ended that will be queued again.
        self.to_requeue: list[JobRecord] = []

    def decide(self, record: JobRecord, now: int) -> Reserve | Reject | None:
        """The policy's admission decision, and a deadline is never accepted unkept:
        under a policy that does not admit by deadline, a deadline job is accepted only
        if its guaranteed start plus its time limit meets the deadline. A gang job joins
        its partition's next slot boundary (gang scheduling promises nothing). A job
        that waits for others reaches its policy only once they allow
        (:meth:`_held_back`)."""
        held_back = self.deps.held_back(record) or self.deps.held_to_begin(record, now)
        if held_back is not None:
            if record.deadline is not None:
                return Reject(
                    record.id,
                    f"its deadline cannot be guaranteed: {self.deps.waiting_reason(held_back)}",
                )
            return None
        part = self.partitions.gang_of(record)
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
        final = kept_deadline(record, decision, self.partitions.policy_spec(record.partition)[0])
        if isinstance(final, Reject) and not isinstance(decision, Reject):
            lane.policy.withdraw(record.id, now)
        return final

    def admit(self, record: JobRecord, decision: Reserve | Reject | None, now: int) -> None:
        if isinstance(decision, Reject):
            self.set_state(record, JobState.REJECTED, decision.reason)
            record.end_time = now
            self.counters["rejected"] += 1
            self.outbox.emit("job.rejected", now, record.id, reason=record.state_reason)
            return
        self.note_plan(record, decision, now)
        self.counters["accepted"] += 1
        self.outbox.emit(
            "job.accepted",
            now,
            record.id,
            guaranteed_start=record.guaranteed_start,
            guaranteed_end=record.guaranteed_end,
        )

    def note_plan(self, record: JobRecord, decision: Reserve | None, now: int) -> None:
        """Queue an admitted job with its plan (guarantee, planned start and nodes), or
        with why it waits without one."""
        self.pending[record.id] = record
        part = self.partitions.gang_of(record)
        held_back = self.waits.gated.get(record.id)
        if held_back is not None:
            reason = self.deps.waiting_reason(held_back)
        elif part is not None:
            gang_reason(part, record, now)
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
        job_id: int | None = None,
    ) -> JobRecord:
        """A new job for a checked ``request``, numbered next (or ``job_id``, a number
        set aside before: an array's task), waiting for ``needs`` (and, ``singleton``,
        for the earlier jobs of its name), admitted (or rejected); the caller runs the
        scheduling pass. An array's ``task`` is ``(array id, index, whether it carries
        the request's idempotency key)``: one job per key, as the store keeps, so only
        the first task does."""
        if job_id is None:
            job_id = self.book.next_id
            self.book.next_id += 1
        record = JobRecord.from_request(job_id, request, now)
        self.jobs[record.id] = record
        if task is not None:
            record.array_job_id, record.array_task_id, keyed = task
            if not keyed:
                record.idempotency_key = None
        self.memory.note_key(record)
        if singleton:
            needs = [*needs, *self.deps.singleton_needs(record)]
        self.deps.wait_for(record, needs)
        if request.hold:  # (no decision: one is made when it is released)
            self.put_on_hold(record, now, HELD_AT_SUBMISSION, "user")
        else:
            self.admit(record, self.decide(record, now), now)
        return record

    def put_on_hold(self, record: JobRecord, now: int, reason: str, kind: str) -> None:
        """``record`` held, for ``reason``, by ``kind`` (``"user"``: its user, who may
        release it; ``"admin"``: an operator or its account's coordinator); the caller
        has taken it out of the plan if it was in."""
        record.hold = kind
        self.set_state(record, JobState.HELD, reason)
        self.outbox.emit("job.held", now, record.id, reason=reason)

    def cancel_job(self, job_id: int, now: int, reason: str) -> JobRecord:
        """Cancel one job and leave the scheduling pass to the caller (one pass after a
        whole array's tasks, not one per task)."""
        record = self.book.job(job_id)
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

    def withdraw(self, record: JobRecord, now: int) -> None:
        """A pending job leaves its partition's plan (cancelled or held)."""
        part = self.partitions.gang_of(record)
        if record.id in self.waits.gated:
            pass  # it waits outside the plan
        elif part is not None:
            part.withdraw(record.id)
        else:
            self.planner.policy_of(record.partition).withdraw(record.id, now)
        del self.pending[record.id]

    def end_job(self, record: JobRecord, state: JobState, end: int, reason: str) -> None:
        """A running job ended; one that asked for it is queued again after a node
        failure (same id, a new admission decision)."""
        del self.running[record.id]
        self.cluster.unbind(record.allocation)
        part = self.partitions.gang_of(record)
        if part is not None:
            part.end(record.id)
            if record.suspended_at is not None:
                record.suspended_for += end - record.suspended_at
                record.suspended_at = None
        record.end_time = end
        self.set_state(record, state, reason)
        self.counters[state.value.lower()] += 1
        kind = END_EVENT[state]
        self.outbox.emit(kind, end, record.id, reason=record.state_reason)
        if state is JobState.NODE_FAIL and record.requeue:
            self.to_requeue.append(record)

    def requeue_ended(self, now: int, decide: bool = True) -> None:
        """Queue again the jobs a node failure ended that asked for it: at the back, with
        a new admission decision (``decide``), or left to the replan that follows (one
        of a backfilling partition: gang partitions do not replan)."""
        records, self.to_requeue = self.to_requeue, []
        for record in records:
            record.clear_run()
            self.counters["requeued"] += 1
            self.outbox.emit("job.requeued", now, record.id, times=record.requeued)
            if decide or self.partitions.gang_of(record) is not None:
                self.admit(record, self.decide(record, now), now)
            else:
                self.pending[record.id] = record
                self.set_state(record, JobState.PENDING, "requeued after a node failure")

    def install(
        self, replan: Replan, now: int, restoring: bool = False, partition: str | None = None
    ) -> None:
        """Adopt a replan of a backfilling partition (the default one unless named).
        Restoring keeps every guarantee on record: one the downtime made impossible is
        reported missed, never silently rewritten."""
        policy = replan.policy
        self.planner.install(partition, policy)
        for job_id, decision in replan.decisions.items():
            record = self.pending[job_id]
            if isinstance(decision, Reject):
                del self.pending[job_id]
                self.set_state(
                    record, JobState.REJECTED, f"dropped when capacity changed: {decision.reason}"
                )
                record.end_time = now
                record.drop_plan()
                self.outbox.emit("job.rejected", now, job_id, reason=record.state_reason)
                continue
            guarantee = decision.guarantee if isinstance(decision, Reserve) else None
            completion = decision.completion if isinstance(decision, Reserve) else None
            said = (record.state_reason, record.guaranteed_start, record.guaranteed_end)
            waits = policy.wait_reason(job_id)
            if waits is not None:
                record.state_reason = readable(waits)
            elif record.state_reason.startswith(WAITS_FOR_NODES) and decision is not None:
                record.state_reason = readable(decision.reason)  # its nodes are back: planned again
            if restoring:
                planned = policy.planned_start(job_id)
                promised = record.guaranteed_start
                if promised is not None and planned is not None and planned > promised:
                    self.outbox.emit(
                        "job.guarantee_missed",
                        now,
                        job_id,
                        guaranteed_start=promised,
                        planned_start=planned,
                        reason="the daemon was down",
                    )
            elif (guarantee, completion) != (record.guaranteed_start, record.guaranteed_end):
                self.outbox.emit(
                    "job.guarantee_changed",
                    now,
                    job_id,
                    previous=record.guaranteed_start,
                    guaranteed_start=guarantee,
                    guaranteed_end=completion,
                )
                record.guaranteed_start, record.guaranteed_end = guarantee, completion
            changed = said != (record.state_reason, record.guaranteed_start, record.guaranteed_end)
            self.take_plan(record, policy, changed)
            self.waits.touch(job_id)  # its promise may have moved: its waiters hear
            # Under easy or fcfs (a switch to one, a restart), a begin time still ahead
            # keeps the job outside the plan until then.
            if self.deps.held_to_begin(record, now) is not None:
                policy.withdraw(job_id, now)
                record.drop_plan()
                self.note_plan(record, None, now)
                self.outbox.job_changed(record)
        policy.take_replanned()
        self.outbox.version += 1

    def take_plan(self, record: JobRecord, policy: LivePolicy, changed: bool = False) -> None:
        """Record where the policy now plans a waiting job (start and nodes), saved if
        that or (``changed``) anything else of the record changed: a replan on 4,096
        nodes kept most of 3,900 plans, and rewrote every row, on the event loop."""
        planned = (policy.planned_start(record.id), policy.named_plan(record.id))
        if changed or planned != (record.planned_start, record.planned_nodes):
            record.planned_start, record.planned_nodes = planned
            self.outbox.job_changed(record)

    def set_state(self, record: JobRecord, state: JobState, reason: str) -> None:
        if state in FINAL_STATES and not record.final:
            self.memory.finished(record.id)
            self.waits.ended(record.id, started=record.start_time is not None)
        elif state is not JobState.PENDING:
            self.waits.left(record.id)
        self.waits.touch(record.id)
        if state is not JobState.HELD:
            record.hold = None  # (who holds it means something only while it is held)
        record.state = state
        record.state_reason = readable(reason)  # the core's times as dates
        self.outbox.job_changed(record)
