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

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from berth.core.catalog import SELECTIONS
from berth.core.decisions import Reject, Reserve, Start, at
from berth.core.model import Job
from berth.core.node_selection import NodeSelector
from berth.core.nodes import Need, NodePlan, Placement, Stop
from berth.core.policies.base import next_reserved_start, pop_reached
from berth.core.policies.node_adopt import adopt_running, adopt_waiting, relax
from berth.core.policies.node_compression import compress
from berth.core.policies.node_easy import backfill
from berth.core.policies.node_fork import fork
from berth.core.policies.node_naming import describe, name_nodes
from berth.core.policies.node_select import (
    SelectionRound,
    backfill_by_selection,
    start_now_by_selection,
)
from berth.core.resources import ResourceSpace
from berth.core.room_log import LOG_LIMIT, RoomLog, RoomLogs
from berth.core.shapes import Shape, shape_of, shape_problem
from berth.core.whole_nodes import CountedPlan, identical

#: Planning policies on nodes, by name, and their reservation depth (None: every job).
#: The deadline policies and slack are conservative schedules with their own admission
#: (:mod:`berth.core.policies.node_deadline`, :mod:`berth.core.policies.node_slack`).
NODE_POLICIES: dict[str, int | None] = {
    "fcfs": 0,
    "easy": 1,
    "conservative": None,
    "qops": None,
    "msb": None,
    "mrt": None,
    "slack": None,
}

_DAWN = -(1 << 62)

#: How the reason of a job that only drained or down nodes could hold begins.
WAITS_FOR_NODES = "waits for nodes that are drained or down"


@dataclass(slots=True)
class Planned:
    """A job on the node plan: waiting (with a reservation or not) or running."""

    job: Job
    shape: Shape
    demand: int  # one slot, packed
    start: int | None = None
    placement: Placement | None = None
    held: dict[int, int] | None = None  # packed amount per node while reserved or running
    guarantee: int | None = None
    #: What the nodes that could hold it must have free together for any start (their
    #: summed profile and the job's total), if the plan knows.
    need: Need | None = None
    #: The log of room given back on the nodes that could hold it, and how much of it
    #: it had seen when it was last known to have no earlier start (-1: never).
    log: RoomLog | None = None
    checked: int = -1

    @property
    def expected_end(self) -> int:
        assert self.start is not None
        return self.start + self.job.estimate


class NodeBackfill:
    """FCFS, EASY or conservative backfilling on named nodes.

    ``nodes`` are the nodes it may place jobs on (the daemon passes the nodes that are
    up); ``configured`` all the cluster's nodes (default: the same). A job that only
    nodes outside ``nodes`` could hold waits, unplanned, with a reason, until the
    policy is rebuilt with them.
    """

    places_on_nodes = True

    def __init__(
        self,
        name: str,
        nodes: Mapping[str, Mapping[str, int]],
        configured: Mapping[str, Mapping[str, int]] | None = None,
        selection: str = "ff",
    ) -> None:
        if name not in NODE_POLICIES:
            raise ValueError(f"on nodes, policy must be one of {', '.join(NODE_POLICIES)}")
        if not (configured or nodes):
            raise ValueError("a node cluster needs at least one node")
        self.name = name
        self.depth = NODE_POLICIES[name]
        names: dict[str, int] = {}
        for amounts in (configured or nodes).values():
            for resource, amount in amounts.items():
                names[resource] = max(names.get(resource, 0), amount)
        self.space = ResourceSpace(names)
        self.node_names = list(nodes)
        self.node_index = {name: i for i, name in enumerate(self.node_names)}
        #: Where waiting jobs being adopted were planned (see :meth:`remember_nodes`).
        self.kept_nodes: dict[int, Mapping[str, int]] = {}
        capacities = [self.space.pack(nodes[n]) for n in self.node_names]
        #: What the nodes up hold together, per resource they have.
        self.totals = {n: a for n, a in self.space.unpack(sum(capacities)).items() if a}
        # Identical nodes are counted, not named, until a job would share a node.
        self.plan: NodePlan | CountedPlan = (
            CountedPlan(self.space, capacities, _DAWN)
            if identical(capacities)
            else NodePlan(self.space, capacities, _DAWN)
        )
        self.reserves_every_job = self.depth is None
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
        self.selector = NodeSelector(self.space, capacities, selection)
        self.waiting: dict[int, Planned] = {}
        self.running: dict[int, Planned] = {}
        #: Waiting jobs no node in ``nodes`` can hold, with why.
        self.parked: dict[int, str] = {}
        self._configured = [
            self.space.pack({n: a for n, a in amounts.items() if n in self.space.capacity})
            for amounts in (configured or nodes).values()
        ]
        self._replanned: set[int] = set()
        self._shape_problems: dict[tuple[object, ...], tuple[str | None, str | None]] = {}
        self._unpacked: dict[int, Mapping[str, int]] = {}
        #: Per summed profile (the nodes some slots need): the room given back on those
        #: nodes (completions, cancels, moves), in order.
        self._room_logs = RoomLogs(LOG_LIMIT)
        self._starts: list[tuple[int, int, int]] = []  # (start, arrival, job id); may be stale
        self._arrival: dict[int, int] = {}
        self._arrivals = 0
        #: Whether compression waits for :meth:`improve` (the daemon) instead of
        #: running whole at each end (the emulator).
        self.deferred = False
        self._improve_due = False
        #: Deferred BL/BB: the round of "who starts now" under way (None: none due).
        self.selection_round: SelectionRound | None = None
        #: Where a compression stopped by its shell goes on: the job it stopped at, and
        #: whether its pass had moved any job before it.
        self.compress_resume: tuple[int | None, bool] = (None, False)
        #: A search of that compression stopped midway: the job, the size of its room
        #: log then, and the start it had reached (none before holds the job).
        self.search_resume: tuple[int, int, int] | None = None
        #: Deferred: when an EASY pass must stop (the shell's clock), and the job the
        #: pass stopped at, where the next one goes on.
        self.pass_stop: Callable[[], bool] | None = None
        self.backfill_resume: int | None = None

    # ------------------------------------------------------------------ the Policy port
    def complete(self, job_ids: Sequence[int], now: int) -> None:
        for job_id in job_ids:
            done = self.running.pop(job_id)
            assert done.start is not None
            assert done.held is not None
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

    def _admit(self, job: Job, now: int) -> Planned | Reject:
        if job.id in self.waiting or job.id in self.running:
            return Reject(job.id, f"job id {job.id} is already queued or running")
        shape = job.shape or shape_of(job.resources)
        problem, waits = self._problems(shape)
        if problem is not None:
            return Reject(job.id, problem)
        entry = Planned(job, shape, self.space.pack(shape.per_slot))
        if waits is not None:
            self.parked[job.id] = f"{WAITS_FOR_NODES} ({waits})"
        elif (
            isinstance(self.plan, CountedPlan)
            and self.plan.nodes_taken(shape, entry.demand) is None
        ):
            self._name_nodes(now)
        entry.need = self.plan.need(shape, entry.demand)
        entry.log = self._log_of(entry)
        self.waiting[job.id] = entry
        self._arrivals += 1
        self._arrival[job.id] = self._arrivals
        return entry

    def _forget(self, job_id: int) -> None:
        """Drop a job :meth:`_admit` queued but its policy's admission refused."""
        del self.waiting[job_id], self._arrival[job_id]
        self.parked.pop(job_id, None)
        self._left_queue(job_id)

    def _left_queue(self, job_id: int) -> None:
        """A job left the queue (started, withdrawn, refused): what a policy keeps per
        waiting job (a deadline, a slack state) goes with it."""

    def _problems(self, shape: Shape) -> tuple[str | None, str | None]:
        """Why no configured node set could ever hold ``shape``, and why the nodes up
        cannot now (``None``: they can); remembered per shape, as jobs repeat them."""
        key = (tuple(shape.per_slot.items()), shape.count, shape.nodes, shape.exclusive)
        known = self._shape_problems.get(key)
        if known is None:
            unknown = [n for n, a in shape.per_slot.items() if a and n not in self.space.capacity]
            problem = (
                f"slots.per_slot: no node has {', '.join(unknown)}"
                if unknown
                else shape_problem(shape, self.space, self._configured)
            )
            waits = None if problem else shape_problem(shape, self.space, self.plan.capacities)
            known = self._shape_problems[key] = (problem, waits)
        return known

    def schedule(self, now: int) -> list[Start]:
        if self.depth is None:
            return self._start_reached(now)
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
                # EASY: the head holds its reservation while the rest are backfilled.
                held = self._hold(entry, found[0], found[1])
                self._backfill(entry, found[0], now, started)
                self.plan.release(held, found[0], entry.job.estimate)
                entry.start = entry.placement = entry.held = None
                break
        return started

    def next_wakeup(self) -> int | None:
        return next_reserved_start(self._starts, self.waiting)

    def _backfill(self, head: Planned, reserved: int, now: int, started: list[Start]) -> None:
        """See :func:`~berth.core.policies.node_easy.backfill` (first fit) and
        :func:`~berth.core.policies.node_select.backfill_by_selection` (BL, BB)."""
        if self.selector.rule == "ff":
            backfill(self, head, reserved, now, started)
        else:
            backfill_by_selection(self, head, reserved, now, started)

    # ------------------------------------------------------------------ live shells
    @property
    def free(self) -> int:
        """What the running jobs leave free, summed over the nodes (packed)."""
        used = sum(
            amount for entry in self.running.values() for amount in (entry.held or {}).values()
        )
        return sum(self.plan.capacities) - used

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
            self._compress(now)
            self._improve_due = False

    def withdraw(self, job_id: int, now: int) -> bool:
        entry = self.waiting.pop(job_id, None)
        if entry is None:
            return False
        del self._arrival[job_id]
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

    # ------------------------------------------------------------------ internals
    def _hold(self, entry: Planned, start: int, placement: Placement) -> dict[int, int]:
        held = self.plan.held(placement, entry.demand, entry.shape.exclusive)
        self.plan.reserve(held, start, entry.job.estimate)
        if self.depth is None and entry.start != start and entry.job.id in self.waiting:
            self._replanned.add(entry.job.id)
        entry.start, entry.placement, entry.held = start, placement, held
        return held

    def _reserve_earliest(self, entry: Planned, now: int) -> None:
        job = entry.job
        found = self.plan.earliest(entry.shape, entry.demand, job.estimate, job.ready(now))
        assert found is not None, "an admitted job always fits once all has ended"
        self._hold(entry, *found)
        heapq.heappush(self._starts, (found[0], self._arrival[entry.job.id], entry.job.id))
        assert entry.log is not None
        entry.checked = entry.log.size

    def _log_of(self, entry: Planned) -> RoomLog:
        """The log of room given back on the nodes that could hold ``entry``'s slots:
        one per summed profile (the whole cluster's when the plan keeps none for them)."""
        return self._room_logs.of(self.plan.aggregate if entry.need is None else entry.need[0])

    def _given_back(self, held: Mapping[int, int], since: int, until: int) -> None:
        """Log room given back on the nodes of ``held`` during ``[since, until)``, in the
        log of every summed profile they are part of: a job whose slots only other nodes
        can hold has no new start from it."""
        restarted = self._room_logs.append(self.plan.summed_over(held), since, until)
        for log in restarted:
            for entry in self.waiting.values():
                if entry.log is log:
                    entry.checked = -1

    def _name_nodes(self, now: int) -> None:
        """See :func:`~berth.core.policies.node_naming.name_nodes`."""
        name_nodes(self, now)

    def compression_order(self) -> Iterable[Planned]:
        """The order compression asks waiting jobs in: arrival order here."""
        return self.waiting.values()

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

    def _move_earlier(
        self, entry: Planned, first: int, before: int | None = None, stop: Stop | None = None
    ) -> bool:
        """Move a reserved job to its earliest placement before its current start, if
        there is one (none starts before ``first``, none new from ``before`` on).
        ``stop``: see :meth:`NodePlan.earlier` (raises :class:`SearchStopped`)."""
        old = entry.start
        assert old is not None
        assert entry.held is not None
        found = self.plan.earlier(
            entry.shape, entry.demand, entry.job.estimate, first, old, entry.held, before, stop
        )
        if found is None:
            return False
        held = entry.held
        new = self._hold(entry, *found)
        heapq.heappush(self._starts, (found[0], self._arrival[entry.job.id], entry.job.id))
        # Its old window is free from the new end on; and on a node it holds less of
        # now (a move may change nodes), from its old start on.
        kept = all(new.get(node, 0) >= amount for node, amount in held.items())
        since = max(old, found[0] + entry.job.estimate) if kept else old
        self._given_back(held, since, old + entry.job.estimate)
        return True

    def _start_reached(self, now: int) -> list[Start]:
        started: list[Start] = []
        for start, entry in pop_reached(self._starts, self.waiting, now):
            assert entry.placement is not None
            reason = f"its reservation at {at(start)} is reached"
            started.append(self._launch(entry, now, entry.placement, reason, reserved=True))
        return started

    def _launch(
        self, entry: Planned, now: int, placement: Placement, reason: str, reserved: bool = False
    ) -> Start:
        job = entry.job
        del self.waiting[job.id]
        del self._arrival[job.id]
        self._replanned.discard(job.id)
        self._left_queue(job.id)
        if not reserved:
            self._hold(entry, now, placement)
        assert entry.placement is not None
        assert entry.held is not None
        entry.placement, entry.held = self.plan.pin(
            entry.placement, entry.held, entry.shape, entry.demand, now
        )
        self.running[job.id] = entry
        return Start(job.id, now, reason, self.describe(entry))

    def describe(self, entry: Planned) -> dict[str, Mapping[str, int]]:
        """See :func:`~berth.core.policies.node_naming.describe`."""
        return describe(self, entry)
