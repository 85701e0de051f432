"""The policy interface and the queue state every policy shares.

A policy is driven by its shell at each instant with events, in the normative order of
``docs/semantics.md``: :meth:`Policy.complete` for the jobs that ended (conservative
compresses its schedule there), :meth:`Policy.submit` for each arrival in (submit time,
job id) order, then :meth:`Policy.schedule`, which returns the jobs to start now. A
policy keeps its own view of the queue and the running jobs; it never learns a job's
real runtime, only that it ended. Nothing here reads a clock or does I/O.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, Self, TypeVar

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.resources import ResourceSpace


@dataclass(slots=True)
class Waiting:
    """A queued job with its packed demand and, under planning policies, its reservation."""

    job: Job
    demand: int
    start: int | None = None
    guarantee: int | None = None


@dataclass(frozen=True, slots=True)
class Running:
    """A running job: it holds ``demand`` until at most ``expected_end`` (start + estimate)."""

    job_id: int
    demand: int
    start: int
    expected_end: int


class Reserved(Protocol):
    """A queue entry with a reserved start (or none)."""

    @property
    def start(self) -> int | None: ...


def next_reserved_start(
    starts: list[tuple[int, int, int]], waiting: Mapping[int, Reserved]
) -> int | None:
    """The earliest ``(start, arrival, job id)`` of the heap ``starts`` that is still a
    waiting job's reservation; entries gone stale (the job started or moved) are dropped."""
    while starts:
        start, _, job_id = starts[0]
        entry = waiting.get(job_id)
        if entry is not None and entry.start == start:
            return start
        heapq.heappop(starts)
    return None


W = TypeVar("W", bound=Reserved)


#: Stale entries the heap of reserved starts may hold, per waiting job, before it is
#: built again from the reservations (see :func:`push_starts`).
STALE_STARTS_PER_JOB = 4


def push_starts(
    starts: list[tuple[int, int, int]],
    reserved: Iterable[tuple[int, int]],
    waiting: Mapping[int, Reserved],
    arrival: Mapping[int, int],
) -> None:
    """Push each ``(start, job id)`` of ``reserved`` (the job's entry already holds that
    start) onto the heap ``starts`` of ``(start, arrival, job id)``, which every policy
    reads lazily, and keep the heap bounded: each move of a reservation leaves its old
    entry behind until the clock passes it (the readers skip it), and a burst of QoPS
    decisions on nodes, each moving ~800 jobs, had left 74,706 entries for 1,000 waiting
    jobs, every one copied by each what-if. Past :data:`STALE_STARTS_PER_JOB` entries per
    waiting job (and 64) the heap is built again, in place, from the reservations; the
    readers see the same ones, in the same order. Every push goes through here."""
    for start, job_id in reserved:
        heapq.heappush(starts, (start, arrival[job_id], job_id))
    if len(starts) > STALE_STARTS_PER_JOB * len(waiting) + 64:
        starts[:] = [
            (entry.start, arrival[job_id], job_id)
            for job_id, entry in waiting.items()
            if entry.start is not None
        ]
        heapq.heapify(starts)


def pop_reached(
    starts: list[tuple[int, int, int]], waiting: Mapping[int, W], now: int
) -> Iterator[tuple[int, W]]:
    """``(start, entry)`` for each waiting job whose reservation is reached by ``now``,
    in (start, arrival) order, popping them from the heap (stale entries are skipped)."""
    while starts and starts[0][0] <= now:
        start, _, job_id = heapq.heappop(starts)
        entry = waiting.get(job_id)
        if entry is not None and entry.start == start:
            yield start, entry


Q = TypeVar("Q")


def queued_after(waiting: dict[int, Q], job_id: int) -> list[Q]:
    """The entries queued after job ``job_id`` (which is still queued), in queue order:
    read from the end, so it costs what arrived since, not the queue's length."""
    arrived: list[Q] = []
    for queued_id, entry in reversed(waiting.items()):
        if queued_id == job_id:
            break
        arrived.append(entry)
    arrived.reverse()
    return arrived


class Policy(Protocol):
    """What a scheduling policy offers its shell (the emulator or the daemon)."""

    name: str
    space: ResourceSpace

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        """Running jobs ``job_ids`` ended at ``now`` (finished, killed or cancelled)."""
        ...

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        """A job arrives at ``now``: reject it, reserve it, or queue it (``None``)."""
        ...

    def schedule(self, now: int) -> list[Start]:
        """The queued jobs to start at ``now``; the policy records them as running."""
        ...

    def next_wakeup(self) -> int | None:
        """The next time the policy must be called even if no job arrives or ends."""
        ...


class Ending(Protocol):
    """A running job as the forecast sees it."""

    @property
    def expected_end(self) -> int: ...


class LivePolicy(Policy, Protocol):
    """What the daemon's engine needs from a policy beyond the emulator's :class:`Policy`:
    rebuilding from persisted state, withdrawing jobs, reading the plan, and saying
    what it can do (``reserves_every_job``: every waiting job holds a reservation, so
    its planned start is the prediction; ``places_on_nodes``: a ``Start`` carries its
    placement on named nodes)."""

    reserves_every_job: bool
    places_on_nodes: bool
    #: Whether improvements of the plan (compression) wait for :meth:`improve`.
    deferred: bool
    #: Deferred: when a long scheduling pass must stop, to go on at the next one.
    pass_stop: Callable[[], bool] | None

    @property
    def pass_slices_exact(self) -> bool:
        """Whether a pass stopped by ``pass_stop`` and gone on at the same instant starts
        what the whole pass would (a forecast then runs its copy's passes in slices)."""
        ...

    @property
    def pass_unfinished(self) -> bool:
        """Whether the last pass stopped midway, to go on at the next one."""
        ...

    @property
    def improvement_due(self) -> bool:
        """Whether :meth:`improve` has work left."""
        ...

    @property
    def free(self) -> int: ...

    @property
    def waiting(self) -> Mapping[int, object]: ...

    @property
    def running(self) -> Mapping[int, Ending]: ...

    def adopt_running(
        self,
        job: Job,
        start: int,
        now: int,
        held: Mapping[str, int] | None = None,
        placement: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None: ...

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None: ...

    def settle(self, now: int, tighten: bool = True) -> None: ...

    def withdraw(self, job_id: int, now: int) -> bool: ...

    def relax(self, job_id: int, not_before: int | None, now: int) -> None: ...

    def planned_start(self, job_id: int) -> int | None: ...

    def planned_nodes(self, job_id: int) -> dict[str, dict[str, int]] | None: ...

    def named_plan(self, job_id: int) -> dict[str, int] | None: ...

    def remember_nodes(self, planned: Mapping[int, Mapping[str, int]]) -> None: ...

    def configure(self, resources: Mapping[str, int]) -> bool: ...

    def take_replanned(self) -> set[int]: ...

    def wait_reason(self, job_id: int) -> str | None: ...

    def improve(self, now: int, stop: Callable[[], bool]) -> bool: ...

    def fork(self) -> Self:
        """An independent copy to drive forward (a forecast)."""
        ...

    def trial(self) -> Self:
        """An independent copy to try one submission on, with the pass at the same
        instant (a what-if); never driven forward, so it may share more than
        :meth:`fork`'s."""
        ...


class QueuePolicy:
    """State and bookkeeping shared by all policies: the queue, running jobs, free vector.

    ``waiting`` keeps arrival order (dicts preserve insertion order and delete in O(1)).
    """

    name = "base"
    #: Every waiting job holds a reservation (conservative and its descendants).
    reserves_every_job = False
    #: The pool model: the shell places a started job on nodes.
    places_on_nodes = False
    #: The pool policies improve their plans whole, at once (see :meth:`improve`).
    deferred = False
    improvement_due = False
    pass_stop: Callable[[], bool] | None = None
    #: A pool pass is never stopped midway.
    pass_slices_exact = False
    pass_unfinished = False

    def __init__(self, space: ResourceSpace) -> None:
        self.space = space
        self.guard = space.guard
        self.free = space.packed_capacity
        self.waiting: dict[int, Waiting] = {}
        self.running: dict[int, Running] = {}
        #: Bumped whenever the running set or the queue loses a job: a pass may reuse
        #: what it computed at the same version (EASY's shadow time).
        self.version = 0

    def admit(self, job: Job) -> Waiting | Reject:
        """Validate ``job`` against the cluster: a queue entry, or a rejection with reason."""
        if job.id in self.waiting or job.id in self.running:
            return Reject(job.id, f"job id {job.id} is already queued or running")
        problem = self.space.violation(job.resources)
        if problem is not None:
            return Reject(job.id, problem)
        return Waiting(job, self.space.pack(job.resources))

    def launch(self, entry: Waiting, now: int, reason: str) -> Start:
        """Move ``entry`` from the queue to the running set at ``now``."""
        job = entry.job
        del self.waiting[job.id]
        self.version += 1
        self.free -= entry.demand
        self.running[job.id] = Running(job.id, entry.demand, now, now + job.estimate)
        return Start(job.id, now, reason)

    def finish(self, job_id: int) -> Running:
        """Remove a running job and return its resources to the free vector."""
        done = self.running.pop(job_id)
        self.version += 1
        self.free += done.demand
        return done

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        raise NotImplementedError

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        raise NotImplementedError

    def schedule(self, now: int) -> list[Start]:
        raise NotImplementedError

    def next_wakeup(self) -> int | None:
        return None

    # ------------------------------------------------------------------ live shells
    # The daemon rebuilds a policy from persisted state (recovery, a node change, a policy
    # change) and withdraws jobs (cancel, hold); the emulator never needs these.

    def adopt_running(
        self,
        job: Job,
        start: int,
        now: int,
        held: Mapping[str, int] | None = None,
        placement: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        """Take over ``job``, running since ``start``, holding ``held`` of this cluster
        (default: its whole request; less when part of it sits on nodes outside the
        cluster's schedulable capacity, such as a draining node). The pool ignores
        ``placement`` (what it holds per node)."""
        demand = self.space.pack(job.resources if held is None else held)
        self.version += 1
        self.free -= demand
        self.running[job.id] = Running(job.id, demand, start, start + job.estimate)

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        """Take over a queued ``job`` (in arrival order), keeping its planned ``start`` and
        ``guarantee`` where the policy plans and they are still feasible. Policies without
        reservations simply queue it."""
        return self.submit(job, now)

    def settle(self, now: int, tighten: bool = True) -> None:
        """After adopting a whole queue: forget the past and, with ``tighten``, tighten
        the plan (conservative compresses)."""

    def withdraw(self, job_id: int, now: int) -> bool:
        """Remove a waiting job (cancelled or held); whether it was waiting."""
        if self.waiting.pop(job_id, None) is None:
            return False
        self.version += 1
        return True

    def relax(self, job_id: int, not_before: int | None, now: int) -> None:
        """A waiting job may start from ``not_before`` on, no later than it could before
        (its predecessors' promised ends came earlier); planning policies may move it up."""
        entry = self.waiting.get(job_id)
        if entry is not None:
            entry.job = replace(entry.job, not_before=not_before)

    def planned_start(self, job_id: int) -> int | None:
        """The reserved start of a waiting job, or ``None`` (not waiting, or no plan)."""
        entry = self.waiting.get(job_id)
        return None if entry is None else entry.start

    def planned_nodes(self, job_id: int) -> dict[str, dict[str, int]] | None:
        """Where a waiting job's reservation is held (node -> resources); ``None`` for
        policies that plan the pool as a whole."""
        return None

    def named_plan(self, job_id: int) -> dict[str, int] | None:
        """Where a waiting job's reservation is held (slots per node), when a restart
        must put it back there; ``None`` on the pool."""
        return None

    def remember_nodes(self, planned: Mapping[int, Mapping[str, int]]) -> None:
        """Where waiting jobs about to be adopted were planned; the pool needs none."""

    def configure(self, resources: Mapping[str, int]) -> bool:
        """A node of ``resources`` was added down: count it among the nodes a job may
        wait for, if this policy can without being rebuilt (whether it did; the pool
        cannot: rebuild it)."""
        return False

    def take_replanned(self) -> set[int]:
        """Ids of waiting jobs whose reserved start (or planned nodes) changed since the
        last call."""
        return set()

    def wait_reason(self, job_id: int) -> str | None:
        """Why a waiting job has no plan yet, if the policy knows better than "queued"."""
        return None

    def fork(self) -> Self:
        """An independent copy to drive forward (a forecast): a deep copy."""
        return copy.deepcopy(self)

    def trial(self) -> Self:
        """An independent copy to try one submission on (a what-if): :meth:`fork`'s."""
        return self.fork()

    def improve(self, now: int, stop: Callable[[], bool]) -> bool:
        """Go on with improvements of the plan deferred until now (``deferred``), until
        ``stop()``; whether none is left. The pool policies defer none."""
        return True
