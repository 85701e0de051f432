"""The live engine: job and node records around one core policy, driven by commands.

Every command takes the cluster time ``now`` from its caller and runs to completion
without I/O of its own: it updates the records, asks the policy, tells the node backend
to start or kill, and queues :class:`Event` values and dirty records for its caller
(the coordinator) to persist and publish. Commands that the engine refuses raise
:class:`RequestError` naming the field and the limit.

The policy is rebuilt from the records whenever the pool of schedulable resources or
the policy itself changes, and on restart: running jobs are adopted with what they hold,
waiting jobs in arrival order with their planned start and guarantee (kept where still
feasible). A rebuild reports every guarantee it cannot keep; operator commands refuse
such a change unless forced, a node failure applies it and announces the new times.

Jobs run in partitions: the default partition is the policy above over every node no
other partition names; gang partitions (:mod:`berth.service.partitions`) keep Zhou's
matrix and move it on at each slot boundary, inside the same scheduling pass.

Four parts stand on their own, with narrow interfaces: the :class:`Planner` (each
partition's policy in its timeline, improvements deferred to slices), the
:class:`Outbox` (what the commands leave for the shell to commit and send), the
:class:`JobMemory` (which finished jobs are held) and the :class:`Forecasts` (the
predicted starts, a read model). The commands on jobs, arrays, nodes and partitions
and the policy change are handlers outside the engine (:mod:`~berth.service.
job_commands`, :mod:`~berth.service.arrays`, :mod:`~berth.service.node_commands`,
:mod:`~berth.service.partition_commands`, :mod:`~berth.service.policy_commands`) that
work through its core steps (``enter_job``, ``cancel_job``, ``decide``, ``admit``,
``withdraw``, ``set_state``, ``replan``, ``install``, ``end_job``, ``requeue_ended``,
``schedule_pass``). Admission, dependencies, gang slots, partition lookups and the
lookups of a job or node are still mixins kept in their own modules
(``docs/architecture.md`` says where the engine is going).

Why one module of over 400 lines: it is still where the mixins meet (time, the pass,
ends, replans); it shrinks as the parts leave it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from berth.core.decisions import Reject, Reserve
from berth.core.policies.base import LivePolicy
from berth.core.policies.node_schedule import WAITS_FOR_NODES
from berth.core.waits import Waits
from berth.service.admission import JobAdmission
from berth.service.budgets import PASS_SECONDS, within
from berth.service.checks import check_request
from berth.service.cluster import Cluster
from berth.service.dependents import DependentJobs
from berth.service.forecasts import Forecasts
from berth.service.gang import GangPartition
from berth.service.gang_slots import GangSlots
from berth.service.intents import Kill, StartOn
from berth.service.job_memory import JobMemory
from berth.service.model import (
    FINAL_STATES,
    JobRecord,
    JobRequest,
    JobState,
    NodeRecord,
    StartLags,
    readable,
)
from berth.service.outbox import Outbox
from berth.service.partition_specs import BackfillSpec
from berth.service.partitions import PartitionLookups
from berth.service.planner import Planner
from berth.service.ports import Changes, NodeBackend
from berth.service.queries import EngineQueries
from berth.service.replan import Replan, build_policy, replan

#: The event announcing each way a running job can end.
END_EVENT = {
    JobState.COMPLETED: "job.completed",
    JobState.FAILED: "job.failed",
    JobState.TIMEOUT: "job.killed",
    JobState.CANCELLED: "job.cancelled",
    JobState.NODE_FAIL: "job.node_fail",
    JobState.OUT_OF_MEMORY: "job.out_of_memory",
}


class Engine(
    JobAdmission,
    DependentJobs,
    PartitionLookups,
    GangSlots,
    EngineQueries,
):
    """Job and node records, one policy, and the commands that change them."""

    def __init__(
        self,
        nodes: Iterable[NodeRecord],
        policy_name: str,
        policy_options: dict[str, object],
        backend: NodeBackend,
    ) -> None:
        self.cluster = Cluster(nodes)
        #: Gang partitions, and backfilling partitions besides the default one, by name
        #: (every node no partition names is in the default partition).
        self.gang: dict[str, GangPartition] = {}
        self.backfill: dict[str, BackfillSpec] = {}
        self.backend = backend
        self.policy_name = policy_name
        self.policy_options = dict(policy_options)
        self.jobs: dict[int, JobRecord] = {}
        self.pending: dict[int, JobRecord] = {}  # arrival order
        self.running: dict[int, JobRecord] = {}
        self.next_id = 1
        #: Jobs that wait for other jobs (:mod:`berth.service.dependents`).
        self.waits = Waits()
        #: Which finished jobs are held, and the idempotency keys known.
        self.memory = JobMemory(self.jobs)
        #: What the commands leave for the shell: changed rows, events, node intents.
        self.outbox = Outbox(backend)
        #: Jobs a node failure ended that will be queued again.
        self._to_requeue: list[JobRecord] = []
        #: Node tokens as SHA-256 digest -> node name (persisted with the configuration).
        self.node_tokens: dict[str, str] = {}
        self.counters: Counter[str] = Counter()
        self.start_lags = StartLags()
        #: The latest time the engine has been advanced to, and the last time asked.
        self._stepped = -(1 << 62)
        self._advanced_to = self._stepped
        self._catch_up_budget: Callable[[], bool] | None = None
        #: Each backfilling partition's policy in its timeline, and deferred improvements.
        self.planner = Planner(self._build_policy(policy_name, self.policy_options))
        #: The predicted start of every pending job (a read model).
        self.forecasts = Forecasts(self.pending, self.planner.lanes, self.outbox)
        #: Inside :meth:`batch`: the scheduling pass at the batch's instant waits for
        #: the batch's end.
        self._batching = False

    @property
    def policy(self) -> LivePolicy:
        """The default partition's policy."""
        return self.planner.default.policy

    @property
    def defer_improvements(self) -> bool:
        """Whether plan improvements (compression after jobs end, forecasts) wait for
        :meth:`improve`, which the single writer runs in bounded slices between
        commands, instead of being made within the command that needed them."""
        return self.planner.deferred

    @defer_improvements.setter
    def defer_improvements(self, on: bool) -> None:
        self.planner.deferred = self.forecasts.sliced = on

    @property
    def improvement_due(self) -> bool:
        return self.forecasts.under_way or self.planner.improvement_due

    def improve(self, now: int, stop: Callable[[], bool]) -> bool:
        """Improve the plans deferred until now, then the forecast, until ``stop()``;
        whether all is done (moved reservations and the starts they make due follow in
        the batch's pass)."""
        return self.planner.improve(now, stop) and self.forecasts.advance(stop)

    def _build_policy(
        self, name: str, options: dict[str, object], partition: str | None = None
    ) -> LivePolicy:
        return build_policy(self.pool(partition), name, options)

    def replan(
        self,
        name: str,
        options: dict[str, object],
        now: int,
        keep_plan: bool,
        partition: str | None = None,
        tighten: bool = True,
    ) -> Replan:
        """A backfilling partition's policy (the default one's unless named) rebuilt from
        its jobs (see :func:`~berth.service.replan.replan`)."""
        return replan(
            self.pool(partition),
            [r for r in self.running.values() if r.partition == partition],
            [
                r
                for r in self.pending.values()
                if r.partition == partition and r.id not in self.waits.gated
            ],
            name,
            options,
            now,
            keep_plan,
            tighten,
        )

    def validate(self, request: JobRequest, now: int) -> None:
        """Refuse (:class:`RequestError`) what no configured node set could hold."""
        lane = request.partition
        if lane is None or lane in self.backfill:
            self.check_open(lane)
            name, _ = self.policy_spec(lane)
            check_request(request, self.pool(lane), self.planner.policy_of(lane), name, now)
            return
        part = self.partition(lane)
        error = self.gang_request_problem(part, JobRecord.from_request(0, request, now))
        if error is not None:
            raise error

    def take_changes(self) -> Changes:
        """The rows changed since the last call, for the shell to commit."""
        changes = self.outbox.take_changes(self.jobs, self.cluster.nodes, self._config_row)
        self.memory.let_go()  # what it lets go is in ``changes``, committed before any read
        return changes

    def _config_row(self) -> dict[str, object]:
        return {
            "policy": self.policy_name,
            "policy_options": dict(self.policy_options),
            "node_tokens": dict(self.node_tokens),
            "partitions": [
                *(p.spec.as_dict() for p in self.gang.values()),
                *(spec.as_dict() for spec in self.backfill.values()),
            ],
        }

    @contextmanager
    def batch(self, now: int) -> Iterator[None]:
        """Apply several commands at ``now`` as one round of the timeline: whatever they
        end or submit, the scheduling pass runs once, after the last of them (as the
        emulator runs it once after every arrival of an instant)."""
        self._batching = True
        try:
            yield
        finally:
            self._batching = False
            self._run_pass(now)

    # ------------------------------------------------------------------ time
    def advance(self, now: int) -> None:
        """Handle what is due by ``now``, event by event: a late wake-up catches up at
        each event's own time (as the emulator would have), so reservations made for
        those instants never overlap. Each step: jobs that ended, jobs past their time
        limit (killed), then starts."""
        self._advanced_to = now
        # One budget for the passes of every instant caught up: each pass stops after a
        # question once it is spent, so a late wake-up over many ends (a deep EASY queue
        # on thousands of nodes) does not hold the loop for a whole pass per instant.
        self._catch_up_budget = within(PASS_SECONDS) if self.planner.deferred else None
        try:
            while (due := self.next_event()) is not None and self._stepped < due < now:
                self._step(due, catching_up=True)
            self._step(now)
        finally:
            self._catch_up_budget = None

    def _step(self, now: int, catching_up: bool = False) -> None:
        """Ends at ``now``, then the pass (an earlier instant caught up always passes at
        its own time; the batch's own instant passes when the batch ends)."""
        self._stepped = max(self._stepped, now)
        done: list[int] = []
        for ended in self.backend.finished(now):
            record = self.running.get(ended.job_id)
            if record is None:
                continue
            assert record.start_time is not None
            limit_at = record.limit_at
            overran = limit_at is not None and ended.time > limit_at
            if ended.state is JobState.COMPLETED and overran:
                continue  # it overran: the kill below ends it at its limit
            record.exit_code, record.exit_signal = ended.exit_code, ended.signal
            record.usage = ended.usage
            self.end_job(
                record, ended.state, min(max(ended.time, record.start_time), now), ended.reason
            )
            self.counters.update(record.measured_counts())
            done.append(ended.job_id)
        for record in list(self.running.values()):
            limit_at = record.limit_at
            if limit_at is not None and limit_at <= now:
                self.outbox.intend(Kill(record.id, now))
                self.end_job(
                    record,
                    JobState.TIMEOUT,
                    limit_at,
                    f"killed on reaching its time limit of {record.time_limit} s",
                )
                done.append(record.id)
        self._settle_waits(now)  # before compression: what waited for them may move up
        self.planner.ended(((i, self.jobs[i].partition) for i in done), now)
        self.requeue_ended(now)
        if catching_up:
            self._run_pass(now)
        else:
            self.schedule_pass(now)

    def next_event(self) -> int | None:
        """The next cluster time the engine must be advanced at, without any command."""
        times = [t for r in self.running.values() if (t := r.limit_at) is not None]
        more = (
            self.planner.next_wakeup(),
            self.backend.next_event(),
            self.gang_next_event(),
        )
        times.extend(t for t in more if t is not None)
        return min(times, default=None)

    # ------------------------------------------------------------------ internals
    def schedule_pass(self, now: int) -> None:
        """Start what the policy says, and note reservations that moved; inside a
        :meth:`batch`, only note that a pass is due."""
        if not self._batching:
            self._run_pass(now)

    def _run_pass(self, now: int) -> None:
        """What moved jobs mean for those waiting for them, then each partition's pass;
        again while jobs others wait for started."""
        while True:
            self._settle_waits(now)
            for lane in self.planner.lanes:
                self._run_lane(lane, now)
            self._gang_boundaries(now)
            if not self.waits.unsettled:
                return

    def _run_lane(self, lane: str | None, now: int) -> None:
        """One backfilling partition's pass: its starts, then its moved reservations."""
        timeline = self.planner.lanes[lane]
        if self.planner.deferred:
            budget = self._catch_up_budget if now < self._advanced_to else None
            if budget is not None and not timeline.policy.reserves_every_job and budget():
                # Catching up, the budget spent: a policy that promises nothing (EASY,
                # FCFS) passes at the batch's own instant instead; one that reserves
                # every job passes at each instant, as its reservations are due there.
                return
            timeline.policy.pass_stop = budget or within(PASS_SECONDS)
        for start in timeline.close(now):
            record = self.pending.pop(start.job_id)
            if start.placement is not None:  # the policy placed it on named nodes
                record.allocation = {n: dict(a) for n, a in start.placement.items()}
                self.cluster.bind(record.allocation)
            else:
                record.allocation = self.pool(lane).allocate(record)
            # A late wake-up starts a job at its planned instant (caught up), but on the
            # nodes only now: the lag is from the clock's time.
            if self.start_lags.starts(record, max(now, self._advanced_to)):
                self.counters["guarantee_broken"] += 1
            record.start_time = record.planned_start = now
            record.planned_nodes = None
            self.set_state(record, JobState.RUNNING, start.reason)
            self.running[record.id] = record
            self.outbox.intend(StartOn.of(record, now))
            self.counters["started"] += 1
            self.outbox.emit("job.started", now, record.id, nodes=sorted(record.allocation))
        for job_id in timeline.policy.take_replanned():
            moved = self.pending.get(job_id)
            if moved is not None:
                self._take_plan(moved, timeline.policy)

    def withdraw(self, record: JobRecord, now: int) -> None:
        """A pending job leaves its partition's plan (cancelled or held)."""
        part = self.gang_of(record)
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
        part = self.gang_of(record)
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
            self._to_requeue.append(record)

    def requeue_ended(self, now: int, decide: bool = True) -> None:
        """Queue again the jobs a node failure ended that asked for it: at the back, with
        a new admission decision (``decide``), or left to the replan that follows."""
        records, self._to_requeue = self._to_requeue, []
        for record in records:
            record.requeued += 1
            record.start_time = record.end_time = record.launched_at = None
            record.exit_code = record.exit_signal = record.usage = None
            record.drop_plan()
            record.allocation = {}
            self.counters["requeued"] += 1
            self.outbox.emit("job.requeued", now, record.id, times=record.requeued)
            if decide or record.partition is not None:  # no replan decides for gang jobs
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
            self._take_plan(record, policy)
            self.waits.touch(job_id)  # its promise may have moved: its waiters hear
        policy.take_replanned()
        self.outbox.version += 1

    def _take_plan(self, record: JobRecord, policy: LivePolicy) -> None:
        """Record where the policy now plans a waiting job (start and nodes)."""
        record.planned_start = policy.planned_start(record.id)
        record.planned_nodes = policy.named_plan(record.id)
        self.outbox.job_changed(record)

    def set_state(self, record: JobRecord, state: JobState, reason: str) -> None:
        if state in FINAL_STATES and not record.final:
            self.memory.finished(record.id)
            self.waits.ended(record.id, started=record.start_time is not None)
        elif state is not JobState.PENDING:
            self.waits.left(record.id)
        self.waits.touch(record.id)
        record.state = state
        record.state_reason = readable(reason)  # the core's times as dates
        self.outbox.job_changed(record)
