"""The node planner's state and its primitive steps, under every policy on nodes.

:class:`NodeSchedule` holds what a policy on named nodes knows: the plan of the nodes
(counted while every job takes whole identical nodes, named from the first job that
shares one), the waiting and running jobs as :class:`Planned` entries with their
placements, the logs of room given back, and where interrupted work goes on. Its steps
are the ones every policy is built from: admit a job, hold a placement, reserve the
earliest one, move a reservation earlier, launch, name the nodes, describe a placement
by node name. The policies (:class:`~berth.core.policies.nodes.NodeBackfill` and the
deadline and slack policies over it) and their helper modules (compression, EASY
passes, BL/BB selection, adoption, forks) work through these steps; none of them is
imported here, so the planner's parts depend on this module and never on each other
in a circle. Pure: no clock, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from berth.core.catalog import SELECTIONS
from berth.core.decisions import Reject, Start
from berth.core.model import Job
from berth.core.node_search import Stop
from berth.core.node_selection import NodeSelector
from berth.core.nodes import Need, NodePlan, Placement
from berth.core.policies.arrival_walk import ArrivalWalk
from berth.core.policies.base import push_starts
from berth.core.policies.placement_names import PlacementNames
from berth.core.policies.shape_checks import ShapeChecks
from berth.core.policies.total_index import TotalIndex
from berth.core.resources import ResourceSpace
from berth.core.room_log import LOG_LIMIT, RoomLog, RoomLogs
from berth.core.shapes import Shape, shape_of
from berth.core.whole_nodes import TENTATIVE, CountedPlan, identical

if TYPE_CHECKING:
    from berth.core.profile import Profile

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
    #: A search for its earliest start stopped midway (by the shell's ``stop()``): the
    #: size of ``log`` then and the start the search had reached. No earlier start
    #: holds it while no room is given back; compression goes on from there.
    searched: tuple[int, int] | None = None
    #: What it needs free summed over the nodes for any start, packed: ``need``'s total
    #: (its slots', or on a counted plan the whole nodes it takes), 0 when the plan
    #: has none (whole nodes on a plan that names them: the test says nothing of
    #: those). EASY's pass filters the queue with it at C speed.
    total: int = 0

    def plan_on(self, plan: NodePlan | CountedPlan) -> None:
        """Set what the job needs free together on ``plan`` (``need`` and ``total``)."""
        self.need = plan.need(self.shape, self.demand)
        self.total = 0 if self.need is None else self.need[1]

    @property
    def expected_end(self) -> int:
        assert self.start is not None
        return self.start + self.job.estimate


@dataclass(slots=True)
class SelectionRound:
    """A conservative BL/BB round under way in the daemon: the jobs asked so far, and
    those of them that could start now (with what they would hold)."""

    asked: set[int] = field(default_factory=set)
    movable: list[tuple[Planned, dict[int, int]]] = field(default_factory=list)


class NodeSchedule:
    """The plan of the nodes and the jobs on it, with the steps every policy on nodes
    is built from (see the module's docstring).

    ``nodes`` are the nodes it may place jobs on (the daemon passes the nodes that are
    up); ``configured`` all the cluster's nodes (default: the same). A job that only
    nodes outside ``nodes`` could hold waits, unplanned, with a reason, until the
    policy is rebuilt with them.
    """

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
        self._plan_grows_only(self.plan)
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
        self.selector = NodeSelector(self.space, capacities, selection)
        self.waiting: dict[int, Planned] = {}
        self.running: dict[int, Planned] = {}
        #: What the running jobs hold, summed over the nodes (packed): kept as they
        #: start and end, not summed when asked (a start-time answer on 4,096 nodes
        #: summed thousands of placements).
        self.used = 0
        #: Waiting jobs no node in ``nodes`` can hold, with why.
        self.parked: dict[int, str] = {}
        #: Whether a job's shape fits the configured nodes, and the nodes up now.
        self.shape_checks = ShapeChecks(self.space, (configured or nodes).values(), capacities)
        self._replanned: set[int] = set()
        #: Placements written by node name (each Start's, the daemon's views).
        self.naming = PlacementNames(self.node_names, self.space)
        #: Per summed profile (the nodes some slots need): the room given back on those
        #: nodes (completions, cancels, moves), in order.
        self._room_logs = RoomLogs(LOG_LIMIT)
        self._starts: list[tuple[int, int, int]] = []  # (start, arrival, job id); may be stale
        self._arrival: dict[int, int] = {}
        self._arrivals = 0
        #: The waiting jobs by total, for EASY's filter (:mod:`total_index`).
        self.by_total: TotalIndex[Planned] = TotalIndex()
        #: Whether compression waits for :meth:`improve` (the daemon) instead of
        #: running whole at each end (the emulator).
        self.deferred = False
        self._improve_due = False
        #: Deferred BL/BB: the round of "who starts now" under way (None: none due).
        self.selection_round: SelectionRound | None = None
        #: Where a compression stopped by its shell goes on: the job it stopped at, and
        #: whether its pass had moved any job before it.
        self.compress_resume: tuple[int | None, bool] = (None, False)
        #: The waiting jobs in arrival order, kept between compression slices.
        self.arrival_walk: ArrivalWalk[Planned] = ArrivalWalk()
        #: Deferred: when an EASY pass must stop (the shell's clock), and the job the
        #: pass stopped at, where the next one goes on; for first fit, also the list of
        #: jobs that pass was asking and the place of that job in it.
        self.pass_stop: Callable[[], bool] | None = None
        self.backfill_resume: int | None = None
        self.backfill_rest: tuple[list[Planned], int] | None = None
        #: A forecast's or a what-if's copy (:func:`~berth.core.policies.node_fork.fork`)
        #: shares the live policy's entries, and copies one before it writes on it
        #: (:meth:`_own`); the ids of those it has copied or queued itself.
        self.shares_entries = False
        self._own_entries: set[int] = set()
        #: EASY's last pass that started nothing and asked every job it had to: (the
        #: plan's changes after it, the head, how many jobs were parked, the last job
        #: queued then). See :func:`~berth.core.policies.node_easy.idle_since`.
        self.idle_pass: tuple[int, int, int, int] | None = None

    @property
    def pass_slices_exact(self) -> bool:
        """Whether a pass stopped by ``pass_stop`` and gone on at the same instant starts
        what the whole pass would: under first fit, yes; BL and BB start the best job
        found so far when a slice ends."""
        return self.depth is not None and self.selector.rule == "ff"

    @property
    def pass_unfinished(self) -> bool:
        """Whether the last pass stopped midway (``backfill_resume``), to go on at the
        next one."""
        return self.backfill_resume is not None

    def _plan_grows_only(self, plan: NodePlan | CountedPlan) -> None:
        """A policy that reserves no waiting job (EASY, FCFS: the head is booked only
        during a pass, after its search) searches a plan of running jobs only."""
        if isinstance(plan, NodePlan):
            plan.grows_only = self.depth is not None

    def _admit(self, job: Job, now: int) -> Planned | Reject:
        if job.id in self.waiting or job.id in self.running:
            return Reject(job.id, f"job id {job.id} is already queued or running")
        shape = job.shape or shape_of(job.resources)
        problem, waits, demand = self.shape_checks.problems(shape)
        if problem is not None:
            return Reject(job.id, problem)
        entry = Planned(job, shape, demand)
        entry.plan_on(self.plan)
        if waits is not None:
            self.parked[job.id] = f"{WAITS_FOR_NODES} ({waits})"
        elif entry.need is None and isinstance(self.plan, CountedPlan):
            self._name_nodes(now)  # (it would share a node: counting ends)
            entry.plan_on(self.plan)
        entry.log = self._log_of(entry)
        self.waiting[job.id] = entry
        if self.shares_entries:
            self._own_entries.add(job.id)
        self._arrivals += 1
        self._arrival[job.id] = self._arrivals
        self.by_total.add(entry, self._arrivals)
        return entry

    def _own(self, job_id: int) -> Planned:
        """The waiting entry of ``job_id``, to write on: a copy that shares the live
        policy's entries (``shares_entries``) puts a copy of its own in their place
        first (in the queue and its index), once."""
        entry = self.waiting[job_id]
        if self.shares_entries and job_id not in self._own_entries:
            arrival = self._arrival[job_id]
            self.by_total.remove(entry, arrival)
            entry = self.waiting[job_id] = copy.copy(entry)
            self.by_total.add(entry, arrival)
            self._own_entries.add(job_id)
        return entry

    def _forget(self, job_id: int) -> None:
        """Drop a job :meth:`_admit` queued but its policy's admission refused."""
        self.by_total.remove(self.waiting.pop(job_id), self._arrival.pop(job_id))
        self.parked.pop(job_id, None)
        self._left_queue(job_id)

    def _left_queue(self, job_id: int) -> None:
        """A job left the queue (started, withdrawn, refused): what a policy keeps per
        waiting job (a deadline, a slack state) goes with it."""

    def configure(self, resources: Mapping[str, int]) -> bool:
        """See :meth:`~berth.core.policies.base.QueuePolicy.configure` and
        :meth:`ShapeChecks.configure`."""
        return self.shape_checks.configure(resources)

    def _hold(self, entry: Planned, start: int, placement: Placement) -> dict[int, int]:
        held = self._book(entry, start, placement)
        self._note_replanned(entry, start)
        entry.start, entry.placement, entry.held = start, placement, held
        return held

    def _note_replanned(self, entry: Planned, start: int) -> None:
        """A waiting job's reservation moves to ``start``: the shell is told of it."""
        if self.depth is None and entry.start != start and entry.job.id in self.waiting:
            self._replanned.add(entry.job.id)

    def _book(self, entry: Planned, start: int, placement: Placement) -> dict[int, int]:
        """Reserve ``placement`` at ``start`` in the plan only, not on the entry: what
        :meth:`_hold` writes down, and EASY's head during a pass (a forecast's copy
        shares its waiting entries with the live policy; the pass gives ``held`` back)."""
        held = self.plan.held(placement, entry.demand, entry.shape.exclusive)
        self.plan.reserve(held, start, entry.job.estimate)
        return held

    def _reserve_earliest(self, entry: Planned, now: int) -> None:
        job = entry.job
        found = self.plan.earliest(entry.shape, entry.demand, job.estimate, job.ready(now))
        assert found is not None, "an admitted job always fits once all has ended"
        self._hold(entry, *found)
        push_starts(self._starts, [(found[0], entry.job.id)], self.waiting, self._arrival)
        assert entry.log is not None
        entry.checked = entry.log.size

    def _log_of(self, entry: Planned) -> RoomLog:
        """The log of room given back on the nodes that could hold ``entry``'s slots:
        one per summed profile (the whole cluster's when the plan keeps none for them)."""
        return self._room_logs.of(self.plan.aggregate if entry.need is None else entry.need[0])

    def _given_back(self, held: Mapping[int, int], since: int, until: int) -> None:
        """Log room given back on the nodes of ``held`` during ``[since, until)`` (with
        those nodes), in the log of every summed profile they are part of: a job whose
        slots only other nodes can hold has no new start from it. Only compression reads
        the logs: a policy that reserves only the head (EASY, FCFS) keeps none."""
        self._given_back_each([(held, since, until)])

    def _given_back_each(self, windows: Sequence[tuple[Mapping[int, int], int, int]]) -> None:
        """:meth:`_given_back` for each ``(held, since, until)``, in order (a QoPS commit
        logs hundreds: each log takes its windows in one pass)."""
        if not self.reserves_every_job:
            return
        # (A counted plan's keys are no node indices: it logs no nodes, and is read so.)
        named = not self.plan.looks_before_start
        by_sum: dict[Profile, list[tuple[int, int, Iterable[int]]]] = {}  # (in order)
        for held, since, until in windows:
            for summed in self.plan.summed_over(held):
                by_sum.setdefault(summed, []).append((since, until, held if named else ()))
        for summed, logged in by_sum.items():
            for log in self._room_logs.extend(summed, logged):
                for entry in self.waiting.values():
                    if entry.log is log:
                        entry.checked = -1

    def _name_nodes(self, now: int) -> None:
        """Leave counting for a plan that names every node: a job that shares nodes
        arrives. Every reservation keeps its start, on the nodes of the colouring."""
        counted = self.plan
        assert isinstance(counted, CountedPlan)
        colours = counted.colouring()
        plan = NodePlan(self.space, counted.capacities, _DAWN)
        self._plan_grows_only(plan)
        for entry in self.running.values():
            assert entry.start is not None
            left = entry.start + entry.job.estimate - now
            if entry.held and left > 0:
                plan.reserve(entry.held, now, left)
        self.plan = plan
        self._room_logs.clear()  # kept per summed profile: this plan's from now on
        for entry in self.waiting.values():
            entry.plan_on(plan)
            entry.log = self._log_of(entry)
            entry.checked = -1  # asked of the counted plan, not of this one
            if entry.held is None or entry.start is None:
                continue
            nodes = colours[id(entry.held)]
            self._replanned.add(entry.job.id)  # its nodes are named from now on
            entry.placement = counted.named_placement(nodes, entry.shape, entry.demand)
            entry.held = plan.held(entry.placement, entry.demand, entry.shape.exclusive)
            plan.reserve(entry.held, entry.start, entry.job.estimate)
        self.by_total.rebuild([(e, self._arrival[i]) for i, e in self.waiting.items()])

    def compression_walk(self, resume: int | None) -> tuple[list[Planned], int]:
        """The waiting jobs in the order compression asks them (arrival order here),
        and where in that list a compression stopped at job ``resume`` goes on (from
        the first if it left the queue). The list may hold jobs that left the queue
        since: compression skips an entry that is not ``waiting``'s."""
        entries = self.arrival_walk.current(self.waiting, self._arrival, self._arrivals)
        number = None if resume is None else self._arrival.get(resume)
        return entries, 0 if number is None else self.arrival_walk.index_of(number)

    def _move_earlier(
        self, entry: Planned, first: int, before: int | None = None, stop: Stop | None = None
    ) -> bool:
        """Move a reserved job to its earliest placement before its current start, if
        there is one (none starts before ``first``, none new from ``before`` on).
        ``stop``: see :meth:`NodePlan.earlier` (raises :class:`SearchStopped`)."""
        old, held, estimate = entry.start, entry.held, entry.job.estimate
        assert old is not None
        assert held is not None
        plan = self.plan
        if isinstance(plan, CountedPlan) and TENTATIVE in held:
            # The aggregate's answer is exact (CountedPlan.earlier): the reservation
            # moves there, holding what it held.
            plan.move(held, old, first, estimate)
            self._note_replanned(entry, first)
            entry.start = start = first
            since = max(old, first + estimate)
        else:
            found = plan.earlier(
                entry.shape, entry.demand, estimate, first, old, held, before, stop
            )
            if found is None:
                return False
            start = found[0]
            new = self._hold(entry, *found)
            # Its old window is free from the new end on; and on a node it holds less
            # of now (a move may change nodes), from its old start on.
            kept = all(new.get(node, 0) >= amount for node, amount in held.items())
            since = max(old, start + estimate) if kept else old
        push_starts(self._starts, [(start, entry.job.id)], self.waiting, self._arrival)
        self._given_back(held, since, old + estimate)
        return True

    def _launch(
        self, entry: Planned, now: int, placement: Placement, reason: str, reserved: bool = False
    ) -> Start:
        job = entry.job
        if self.shares_entries:  # (a forecast's or a what-if's copy shares the entries)
            self._own(job.id)
        entry = self.waiting.pop(job.id)
        self.by_total.remove(entry, self._arrival.pop(job.id))
        self._replanned.discard(job.id)
        self._left_queue(job.id)
        plan = self.plan
        if not reserved and isinstance(plan, CountedPlan):
            entry.start = now
            entry.placement, held = plan.start_now(
                placement, entry.shape, entry.demand, now, job.estimate
            )
            # (whole nodes, the same amount on each: no sum, no test of the amounts)
            used, described = (
                len(held) * plan.node_capacity,
                self.naming.alike(held, plan.node_capacity),
            )
        else:
            if not reserved:
                self._hold(entry, now, placement)
            assert entry.placement is not None
            assert entry.held is not None
            entry.placement, held = plan.pin(
                entry.placement, entry.held, entry.shape, entry.demand, now
            )
            used, described = sum(held.values()), self.naming.of(held)
        entry.held = held
        self.running[job.id] = entry
        self.used += used
        return Start(job.id, now, reason, described)

    def describe(self, entry: Planned) -> dict[str, Mapping[str, int]]:
        """A placement as node name -> resources held there (:class:`PlacementNames`);
        a reservation not yet named gets the nodes of the plan's colouring."""
        held = entry.held
        assert held is not None
        if TENTATIVE in held:
            held = self.plan.names(held)
        return self.naming.of(held)
