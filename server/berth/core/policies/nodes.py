"""Backfilling on named nodes: reservations that are real placements.

The pool policies treat the cluster as one pool of K resources (the papers' model).
:class:`NodeBackfill` plans on a :class:`~berth.core.nodes.NodePlan` instead: every
reservation is a placement of whole slots on named nodes, consistent with every other
reservation, so at a job's guaranteed start the nodes it was promised are free.

One backfill engine with a reservation *depth* (flux-sched's model):

* ``conservative`` (depth: every job) — each arriving job is reserved at its earliest
  placement; that start is its guarantee. When jobs end, the schedule is compressed
  once in arrival order: each job is taken out and put back at its earliest placement
  before its current start, else at its current start and placement (so a reservation
  never moves later).
* ``easy`` (depth 1) — only the head of the queue holds a reservation; any other job
  starts now if it has a placement for its whole estimate beside that reservation, so
  the head is never delayed. No promises.
* ``fcfs`` (depth 0) — jobs start in arrival order, each as soon as it has a placement.

A :class:`~berth.core.decisions.Start` carries the placement. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from berth.core.decisions import Reject, Reserve, Start, at
from berth.core.model import Job
from berth.core.nodes import NodePlan
from berth.core.policies.base import next_reserved_start, pop_reached
from berth.core.policies.node_adopt import adopt_running, adopt_waiting, relax
from berth.core.policies.node_compression import compress
from berth.core.policies.node_easy import easy_pass
from berth.core.policies.node_fork import fork
from berth.core.policies.node_schedule import NodeSchedule, SelectionRound
from berth.core.policies.node_select import (
    backfill_by_selection,
    start_now_by_selection,
)


class NodeBackfill(NodeSchedule):
    """FCFS, EASY or conservative backfilling on named nodes.

    The plan, the jobs on it and the steps this is built from are
    :class:`~berth.core.policies.node_schedule.NodeSchedule`'s; this class is the
    policy port the timeline drives (submit, complete, schedule, adopt, improve).
    """

    places_on_nodes = True

    # ------------------------------------------------------------------ the Policy port
    def complete(self, job_ids: Sequence[int], now: int) -> None:
        for job_id in job_ids:
            done = self.running.pop(job_id)
            assert done.start is not None
            assert done.held is not None
            self.used -= sum(done.held.values())
            if done.held:  # nothing is held on nodes outside the plan (draining)
                end = done.start + done.job.estimate
                self.plan.release(done.held, now, end - now)
                self._given_back(done.held, now, end)
        self.plan.forget_before(now)
        if job_ids and self.depth is None:
            if self.selector.rule != "ff":
                self._select_now(now)
            self._tighten(now)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self._admit(job, now)
        if isinstance(entry, Reject):
            return entry
        if self.depth is None and job.id not in self.parked:
            self._reserve_earliest(entry, now)
            entry.guarantee = entry.start
            assert entry.start is not None
            return Reserve(job.id, entry.start, entry.start, "earliest placement on the nodes")
        return None

    def schedule(self, now: int) -> list[Start]:
        if self.depth is None:
            return self._start_reached(now)
        if self.depth and self.selector.rule == "ff":
            return easy_pass(self, now)
        started: list[Start] = []
        head = True
        for entry in list(self.waiting.values()):
            if entry.job.id in self.parked:
                continue  # no node up can hold it: it blocks nobody
            if head:
                found = self.plan.earliest(entry.shape, entry.demand, entry.job.estimate, now)
                assert found is not None, "an admitted job always fits once all has ended"
                if found[0] == now:
                    started.append(self._launch(entry, now, found[1], "head of the queue fits"))
                    continue
                head = False
                if self.depth == 0:
                    break
                # EASY with BL/BB: the head holds its reservation while the rest are
                # backfilled (first fit is easy_pass's).
                held = self._book(entry, found[0], found[1])
                backfill_by_selection(self, entry, found[0], now, started)
                self.plan.release(held, found[0], entry.job.estimate)
                break
        return started

    def next_wakeup(self) -> int | None:
        return next_reserved_start(self._starts, self.waiting)

    # ------------------------------------------------------------------ live shells
    @property
    def free(self) -> int:
        """What the running jobs leave free, summed over the nodes (packed)."""
        return sum(self.plan.capacities) - self.used

    def adopt_running(
        self,
        job: Job,
        start: int,
        now: int,
        held: Mapping[str, int] | None = None,
        placement: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        """See :func:`~berth.core.policies.node_adopt.adopt_running`."""
        adopt_running(self, job, start, now, placement)

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        """See :func:`~berth.core.policies.node_adopt.adopt_waiting`."""
        return adopt_waiting(self, job, now, start, guarantee)

    def remember_nodes(self, planned: Mapping[int, Mapping[str, int]]) -> None:
        """Before adopting a queue: where each waiting job was planned (slots per node
        name), to be put back there at its old start if those nodes are still free."""
        self.kept_nodes = dict(planned)

    def named_plan(self, job_id: int) -> dict[str, int] | None:
        """A waiting job's planned slots per node, when the plan names its nodes (a
        counted plan's are only a colouring, and a restart needs none to be exact)."""
        entry = self.waiting.get(job_id)
        if entry is None or entry.placement is None or not isinstance(self.plan, NodePlan):
            return None
        names = self.node_names
        return {names[index]: slots for index, slots in entry.placement.items()}

    def settle(self, now: int, tighten: bool = True) -> None:
        self.kept_nodes = {}
        self.plan.forget_before(now)
        if tighten and self.depth is None:
            self._tighten(now)  # (deferred: in the shell's slices, once installed)

    def withdraw(self, job_id: int, now: int) -> bool:
        entry = self.waiting.pop(job_id, None)
        if entry is None:
            return False
        self.by_total.remove(entry, self._arrival.pop(job_id))
        self.parked.pop(job_id, None)
        self._replanned.discard(job_id)
        self._left_queue(job_id)
        if entry.start is not None and entry.held is not None:
            self.plan.release(entry.held, entry.start, entry.job.estimate)
            self._given_back(entry.held, entry.start, entry.start + entry.job.estimate)
            if self.depth is None:
                self._tighten(now)
        return True

    def relax(self, job_id: int, not_before: int | None, now: int) -> None:
        """See :func:`~berth.core.policies.node_adopt.relax`."""
        relax(self, job_id, not_before, now)

    def planned_start(self, job_id: int) -> int | None:
        entry = self.waiting.get(job_id)
        return None if entry is None or self.depth is not None else entry.start

    def planned_nodes(self, job_id: int) -> dict[str, dict[str, int]] | None:
        entry = self.waiting.get(job_id)
        if entry is None or entry.held is None:
            return None
        return {node: dict(amounts) for node, amounts in self.describe(entry).items()}

    def take_replanned(self) -> set[int]:
        changed, self._replanned = self._replanned, set()
        return changed

    def wait_reason(self, job_id: int) -> str | None:
        return self.parked.get(job_id)

    def fork(self) -> NodeBackfill:
        """See :func:`~berth.core.policies.node_fork.fork`."""
        return fork(self)

    def trial(self) -> NodeBackfill:
        """See :func:`~berth.core.policies.node_fork.fork` (``trial``)."""
        return fork(self, trial=True)

    # ------------------------------------------------------------------ internals
    def _tighten(self, now: int) -> None:
        """Conservative compresses after room was given back: at once, or (``deferred``)
        later, in the slices the shell asks for with :meth:`improve`."""
        if self.deferred:
            self._improve_due = True
            stopped_at, _ = self.compress_resume
            if stopped_at is not None:
                # Room given back behind a compression under way: its pass goes on from
                # where it stopped, and another pass asks the jobs before that again.
                self.compress_resume = (stopped_at, True)
        else:
            self._compress(now)

    def _select_now(self, now: int) -> None:
        """BL/BB moves to now after jobs end: at once, or (``deferred``) in slices."""
        if self.deferred:
            self.selection_round = self.selection_round or SelectionRound()
        else:
            start_now_by_selection(self, now)

    @property
    def improvement_due(self) -> bool:
        due = self._improve_due or self.selection_round is not None
        return due or self.backfill_resume is not None

    def improve(self, now: int, stop: Callable[[], bool]) -> bool:
        """Go on with deferred BL/BB moves, then a deferred compression, until
        ``stop()`` says the slice is over; whether all is done (a guarantee is an upper
        bound: work not yet done breaks no promise, it only keeps reservations later
        than they could be)."""
        if self.selection_round is not None and not start_now_by_selection(self, now, stop):
            return False
        if self._improve_due:
            self._improve_due = not self._compress(now, stop)
        return not self.improvement_due  # an EASY pass under way goes on in the next pass

    def _compress(self, now: int, stop: Callable[[], bool] | None = None) -> bool:
        """See :func:`~berth.core.policies.node_compression.compress`."""
        return compress(self, now, stop)

    def _start_reached(self, now: int) -> list[Start]:
        started: list[Start] = []
        for start, entry in pop_reached(self._starts, self.waiting, now):
            assert entry.placement is not None
            reason = f"its reservation at {at(start)} is reached"
            started.append(self._launch(entry, now, entry.placement, reason, reserved=True))
        return started
