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
other partition names; gang partitions (:mod:`berth.service.partitions.registry`) keep Zhou's
matrix and move it on at each slot boundary, inside the same scheduling pass.

The engine is composed of parts, each in its own module with its own state, and holds
only what ties them together in time (the clock, the passes, batches). The parts: the
:class:`JobBook` (the job records), the :class:`Cluster` (the node records), the
:class:`Partitions`, the :class:`Dependencies` (who waits for whom), the
:class:`Planner` (each partition's policy in its timeline, improvements deferred to
slices), the :class:`Outbox` (what the commands leave for the shell to commit and
send), the :class:`JobMemory` (which finished jobs are held), the :class:`Forecasts`
(the predicted starts, a read model) and the :class:`JobLifecycle` (the steps of a
job's life over all of them). The commands on jobs, arrays, nodes and partitions and
the policy change are handlers outside the engine (:mod:`~berth.service.handlers.job_commands`,
:mod:`~berth.service.handlers.arrays`, :mod:`~berth.service.handlers.node_commands`,
:mod:`~berth.service.handlers.partition_commands`, :mod:`~berth.service.handlers.policy_commands`) that
work through the lifecycle's steps and :meth:`Engine.schedule_pass`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager

from berth.core.policies.base import LivePolicy
from berth.service.jobs.book import JobBook
from berth.service.jobs.checks import check_request
from berth.service.jobs.dependencies import Dependencies
from berth.service.jobs.gang_slots import gang_boundaries
from berth.service.jobs.lifecycle import JobLifecycle
from berth.service.jobs.memory import JobMemory
from berth.service.jobs.settling import plan_again, settle_waits
from berth.service.model import JobRecord, JobRequest, JobState, NodeRecord
from berth.service.nodes.cluster import Cluster
from berth.service.nodes.intents import Kill, StartOn
from berth.service.outbox import Outbox
from berth.service.partitions.registry import Partitions
from berth.service.planning.budgets import PASS_SECONDS, within
from berth.service.planning.forecasts import Forecasts
from berth.service.planning.planner import Planner
from berth.service.planning.replan import Replan, build_policy, replan
from berth.service.ports import Changes, NodeBackend


class Engine:
    """Job and node records, one policy per partition, and the passes that move them
    on in time: the composition of the parts above."""

    def __init__(
        self,
        nodes: Iterable[NodeRecord],
        policy_name: str,
        policy_options: dict[str, object],
        backend: NodeBackend,
    ) -> None:
        self.backend = backend
        self.cluster = Cluster(nodes)
        #: The job records; the engine's own names for its tables, the same objects.
        self.book = JobBook()
        self.jobs, self.pending, self.running = self.book.jobs, self.book.pending, self.book.running
        self.counters, self.start_lags = self.book.counters, self.book.start_lags
        #: The partitions (the gang and backfilling ones by name, as the engine's names).
        self.partitions = Partitions(self.cluster, self.jobs, policy_name, policy_options)
        self.gang, self.backfill = self.partitions.gang, self.partitions.backfill
        #: Each backfilling partition's policy in its timeline, and deferred improvements.
        self.planner = Planner(self._build_policy(policy_name, self.partitions.policy_options))
        #: Jobs that wait for other jobs (:mod:`berth.service.jobs.dependencies`).
        self.deps = Dependencies(self.book, self.partitions, self.planner)
        #: Which finished jobs are held, and the idempotency keys known.
        self.memory = JobMemory(self.jobs)
        #: What the commands leave for the shell: changed rows, events, node intents.
        self.outbox = Outbox(backend)
        #: The predicted start of every pending job (a read model).
        self.forecasts = Forecasts(self.pending, self.planner.lanes, self.outbox)
        #: The steps of a job's life, over the parts above.
        self.life = JobLifecycle(
            self.book, self.cluster, self.partitions, self.deps, self.planner, self.outbox,
            self.memory,
        )  # fmt: skip
        #: Node tokens as SHA-256 digest -> node name (persisted with the configuration).
        self.node_tokens: dict[str, str] = {}
        #: The latest time the engine has been advanced to, and the last time asked.
        self._stepped = -(1 << 62)
        self._advanced_to = self._stepped
        #: Deferred, inside :meth:`batch`: the one budget of wall time every piece of
        #: planning work in the batch shares (caught-up passes, an improvement slice,
        #: the batch's own pass), so a batch holds the loop for one slice, not three.
        self._batch_budget: Callable[[], bool] | None = None
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
        budget = self._batch_budget
        if budget is not None:  # inside a batch: its slice and the batch's one budget
            slice_over = stop
            stop = lambda: budget() or slice_over()  # noqa: E731
        return self.planner.improve(now, stop) and self.forecasts.advance(stop)

    def _build_policy(
        self, name: str, options: dict[str, object], partition: str | None = None
    ) -> LivePolicy:
        return build_policy(self.partitions.pool(partition), name, options)

    def replan(
        self,
        name: str,
        options: dict[str, object],
        now: int,
        keep_plan: bool,
        partition: str | None = None,
        tighten: bool = True,
        pool: Cluster | None = None,
        ended: Collection[int] = (),
        requeued: Sequence[JobRecord] = (),
    ) -> Replan:
        """A backfilling partition's policy (the default one's unless named) rebuilt from
        its jobs (see :func:`~berth.service.planning.replan.replan`); ``pool``: its nodes
        as a change would leave them (by default as they are); ``ended``: running jobs a
        change will end, and ``requeued``, waiting jobs it will queue again (after the
        others), so that the replan is made before the change (without making it)."""
        return replan(
            self.partitions.pool(partition) if pool is None else pool,
            [r for r in self.running.values() if r.partition == partition and r.id not in ended],
            [
                r
                for r in itertools.chain(self.pending.values(), requeued)
                if r.partition == partition and r.id not in self.deps.waits.gated
            ],
            name,
            options,
            now,
            keep_plan,
            tighten,
            self.planner.deferred,
        )

    def validate(self, request: JobRequest, now: int) -> None:
        """Refuse (:class:`RequestError`) what no configured node set could hold."""
        lane = request.partition
        partitions = self.partitions
        if lane is None or lane in self.backfill:
            partitions.check_open(lane)
            name, _ = partitions.policy_spec(lane)
            check_request(request, partitions.pool(lane), self.planner.policy_of(lane), name, now)
            return
        part = partitions.partition(lane)
        error = partitions.gang_request_problem(part, JobRecord.from_request(0, request, now))
        if error is not None:
            raise error

    def take_changes(self) -> Changes:
        """The rows changed since the last call, for the shell to commit."""
        changes = self.outbox.take_changes(self.jobs, self.cluster.nodes, self._config_row)
        self.memory.let_go()  # what it lets go is in ``changes``, committed before any read
        return changes

    def _config_row(self) -> dict[str, object]:
        return {
            "policy": self.partitions.policy_name,
            "policy_options": dict(self.partitions.policy_options),
            "node_tokens": dict(self.node_tokens),
            "arrays_in_parts": [fill.as_dict() for fill in self.book.filling.values()],
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
        self._batch_budget = within(PASS_SECONDS) if self.planner.deferred else None
        try:
            yield
        finally:
            self._batching = False
            try:
                self._run_pass(now)
            finally:
                self._batch_budget = None

    # ------------------------------------------------------------------ time
    def advance(self, now: int) -> None:
        """Handle what is due by ``now``, event by event: a late wake-up catches up at
        each event's own time (as the emulator would have), so reservations made for
        those instants never overlap. Each step: jobs that ended, jobs past their time
        limit (killed), then starts."""
        self._advanced_to = now
        # One budget for the passes of every instant caught up (the batch's): each pass
        # stops after a question once it is spent, so a late wake-up over many ends (a
        # deep EASY queue on thousands of nodes) does not hold the loop for a whole
        # pass per instant.
        own = self._batch_budget is None and self.planner.deferred  # (outside a batch)
        if own:
            self._batch_budget = within(PASS_SECONDS)
        try:
            while (due := self.next_event()) is not None and self._stepped < due < now:
                self._step(due, catching_up=True)
            self._step(now)
        finally:
            if own:
                self._batch_budget = None

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
            self.life.end_job(
                record, ended.state, min(max(ended.time, record.start_time), now), ended.reason
            )
            self.counters.update(record.measured_counts())
            done.append(ended.job_id)
        while (over := self.book.reaching_limit(now)) is not None:
            limit_at = over.limit_at
            assert limit_at is not None
            self.outbox.intend(Kill(over.id, now))
            self.life.end_job(
                over,
                JobState.TIMEOUT,
                limit_at,
                f"killed on reaching its time limit of {over.time_limit} s",
            )
            done.append(over.id)
        settle_waits(self.life, now)  # before compression: what waited for them may move up
        self.planner.ended(((i, self.jobs[i].partition) for i in done), now)
        self.life.requeue_ended(now)
        if catching_up:
            self._run_pass(now)
        else:
            self.schedule_pass(now)

    def next_event(self) -> int | None:
        """The next cluster time the engine must be advanced at, without any command."""
        times = (
            self.book.next_limit(),
            self.planner.next_wakeup(),
            self.backend.next_event(),
            self.partitions.next_gang_boundary(),
            self.deps.next_begin(),
        )
        return min((t for t in times if t is not None), default=None)

    # ------------------------------------------------------------------ internals
    def schedule_pass(self, now: int) -> None:
        """Start what the policy says, and note reservations that moved; inside a
        :meth:`batch`, only note that a pass is due."""
        if not self._batching:
            self._run_pass(now)

    def _run_pass(self, now: int) -> None:
        """What moved jobs mean for those waiting for them, then each partition's pass;
        again while jobs others wait for started."""
        for job_id in self.deps.begun(now):  # (their begin time has come: they join)
            plan_again(self.life, self.jobs[job_id], now)
        while True:
            settle_waits(self.life, now)
            for lane in self.planner.lanes:
                self._run_lane(lane, now)
            gang_boundaries(self.life, now)
            if not self.deps.waits.unsettled:
                return

    def _run_lane(self, lane: str | None, now: int) -> None:
        """One backfilling partition's pass: its starts, then its moved reservations."""
        timeline = self.planner.lanes[lane]
        if self.planner.deferred:
            budget = self._batch_budget
            if (
                budget is not None
                and now < self._advanced_to
                and not timeline.policy.reserves_every_job
                and budget()
            ):
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
                record.allocation = self.partitions.pool(lane).allocate(record)
            # A late wake-up starts a job at its planned instant (caught up), but on the
            # nodes only now: the lag is from the clock's time.
            if self.start_lags.starts(record, max(now, self._advanced_to)):
                self.counters["guarantee_broken"] += 1
            record.start_time = record.planned_start = now
            record.planned_nodes = None
            self.life.set_state(record, JobState.RUNNING, start.reason)
            self.book.add_running(record)
            self.outbox.intend(StartOn.of(record, now))
            self.counters["started"] += 1
            self.outbox.emit("job.started", now, record.id, nodes=sorted(record.allocation))
        for job_id in timeline.policy.take_replanned():
            moved = self.pending.get(job_id)
            if moved is not None:
                self.life.take_plan(moved, timeline.policy)
