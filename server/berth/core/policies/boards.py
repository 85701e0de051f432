"""Boards: a schedule the admission algorithms rearrange, on the pool or on nodes.

Deadline admission (QoPS, MSB, MRT) takes waiting jobs' reservations out, puts jobs
back at their earliest starts, tries again from an earlier state. A :class:`Board`
offers exactly that, with a log to undo to any earlier :meth:`~Board.mark`, so each
algorithm is written once (:mod:`berth.core.policies.admission`) and runs on the pool's
profile (:class:`PoolBoard`) or on a plan of named nodes
(:class:`~berth.core.policies.node_deadline.NodeBoard`), where a place is a placement.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from berth.core.filler import Filler
from berth.core.model import Job
from berth.core.policies.base import Waiting
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace

#: Where a job is on a board: its start and what it holds there (a packed demand on the
#: pool; a placement and the amounts per node on nodes).
Where = TypeVar("Where")


class Entry(Protocol):
    """A queue entry: the job it holds."""

    @property
    def job(self) -> Job: ...


#: A queue entry of the policy that owns the board.
E = TypeVar("E", bound=Entry)


class Board(Generic[E, Where]):
    """Reservations of queue entries that can be taken out, placed again and undone.

    ``starts`` maps every job on the board to its start. Subclasses say how a job is
    found room for (:meth:`_find`), and how what it holds is taken and given back.
    """

    def __init__(self, entries: Iterable[tuple[int, int, Where]]) -> None:
        self.starts: dict[int, int] = {}
        self.where: dict[int, Where] = {}
        for job_id, start, where in entries:
            self.starts[job_id] = start
            self.where[job_id] = where
        # (placed?, entry, start, where) in order; undone from the end.
        self._log: list[tuple[bool, E, int, Where]] = []

    def take(self, entry: E) -> None:
        """Take ``entry``'s reservation off the board."""
        start, where = self._taken(entry)
        self._give_back(entry, start, where)

    def _taken(self, entry: E) -> tuple[int, Where]:
        """Take ``entry`` off the board's records (and log it): where it was; the caller
        gives back what it held."""
        job_id = self._id(entry)
        start, where = self.starts.pop(job_id), self.where.pop(job_id)
        self._log.append((False, entry, start, where))
        return start, where

    def place(self, entry: E, after: int) -> int:
        """Reserve ``entry`` at its earliest start ``>= after`` (and from when it may
        start on) and return that start."""
        start, where = self._find(entry, entry.job.ready(after))
        self._hold(entry, start, where)
        self._placed(entry, start, where)
        return start

    def place_each(
        self, entries: Sequence[E], after: int, deadlines: Mapping[int, int]
    ) -> list[int]:
        """:meth:`place` each of ``entries`` in turn, until one completes after its deadline
        in ``deadlines`` (by job id; placed too): the starts of those placed."""
        starts = []
        for entry in entries:
            start = self.place(entry, after)
            starts.append(start)
            if start + entry.job.estimate > deadlines[self._id(entry)]:
                break
        return starts

    def take_each(self, entries: Iterable[E]) -> None:
        """:meth:`take` each of ``entries``, in turn."""
        for entry in entries:
            self.take(entry)

    def put(self, entry: E, start: int, where: Where | None = None) -> bool:
        """Reserve ``entry`` at ``start`` exactly: where it was (``where``, which must be
        free then) or wherever it fits then; whether it does (never before the job
        may start)."""
        if start < entry.job.ready(start):
            return False
        if where is None:
            found = self._at(entry, start)
            if found is None:
                return False
            where = found
        self._hold(entry, start, where)
        self._placed(entry, start, where)
        return True

    def _placed(self, entry: E, start: int, where: Where) -> None:
        """Record (and log) a reservation just held on the board."""
        job_id = self._id(entry)
        self.starts[job_id], self.where[job_id] = start, where
        self._log.append((True, entry, start, where))

    def shift(self, entry: E, delay: int) -> None:
        """Move ``entry``'s reservation ``delay`` later, where it is (the caller knows it
        is free there: every later reservation moves by as much)."""
        job_id = self._id(entry)
        start, where = self.starts[job_id], self.where[job_id]
        self.take(entry)
        self.put(entry, start + delay, where)

    def earliest(self, entry: E, after: int) -> int:
        """The earliest start ``>= after`` of ``entry`` on the board as it is (never
        before the job may start)."""
        return self._find(entry, entry.job.ready(after))[0]

    def mark(self) -> int:
        """A point :meth:`undo` can return to."""
        return len(self._log)

    def undo(self, mark: int) -> None:
        """Undo every take and place since ``mark``, latest first."""
        log = self._log
        while len(log) > mark:
            placed, entry, start, where = log.pop()
            job_id = self._id(entry)
            if placed:
                del self.starts[job_id], self.where[job_id]
                self._give_back(entry, start, where)
            else:
                self.starts[job_id], self.where[job_id] = start, where
                self._hold(entry, start, where)

    def size(self, entry: E) -> float:
        """The job's request as the sum of its shares of the cluster, per resource."""
        raise NotImplementedError

    def breakpoints(self, start: int, end: int) -> list[int]:
        """Times in ``[start, end)`` where the cluster's free resources change."""
        raise NotImplementedError

    # ------------------------------------------------------------------ per kind
    def _id(self, entry: E) -> int:
        raise NotImplementedError

    def _find(self, entry: E, after: int) -> tuple[int, Where]:
        raise NotImplementedError

    def _at(self, entry: E, start: int) -> Where | None:
        """Where ``entry`` fits at ``start`` for its whole estimate, if it does."""
        raise NotImplementedError

    def _hold(self, entry: E, start: int, where: Where) -> None:
        raise NotImplementedError

    def _give_back(self, entry: E, start: int, where: Where) -> None:
        raise NotImplementedError


class PoolBoard(Board[Waiting, int]):
    """A board on a copy of the pool's profile: a job holds its packed demand."""

    def __init__(
        self, profile: Profile, space: ResourceSpace, waiting: Iterable[Waiting], now: int
    ) -> None:
        super().__init__((e.job.id, _start(e), e.demand) for e in waiting)
        # The Filler keeps lower bounds of earliest starts from ``now`` while the profile
        # only fills up (a rebuild places many jobs in a row); its release forgets them.
        # They hold for searches from ``now`` only: MRT searches from later bounds.
        self.filler = Filler(profile.copy())
        self.space = space
        self.now = now

    @property
    def profile(self) -> Profile:
        return self.filler.profile

    def breakpoints(self, start: int, end: int) -> list[int]:
        """Times in ``[start, end)`` where the cluster's free resources change."""
        return self.profile.breakpoints(start, end)

    def size(self, entry: Waiting) -> float:
        amounts = self.space.unpack(entry.demand)
        capacity = self.space.capacity
        return sum(amounts[name] / capacity[name] for name in capacity)

    def _id(self, entry: Waiting) -> int:
        return entry.job.id

    def _find(self, entry: Waiting, after: int) -> tuple[int, int]:
        start = self.profile.earliest_start(entry.demand, entry.job.estimate, after)
        assert start is not None, "an admitted job always fits once everything has ended"
        return start, entry.demand

    def _at(self, entry: Waiting, start: int) -> int | None:
        fits = self.profile.fits_during(entry.demand, start, entry.job.estimate)
        return entry.demand if fits else None

    def place(self, entry: Waiting, after: int) -> int:
        if after != self.now or entry.job.ready(after) != after:
            return super().place(entry, after)
        # The Filler's bounds find the same start as _find, faster.
        start = self.filler.place(entry.demand, entry.job.estimate, after)
        self._placed(entry, start, entry.demand)
        return start

    def _hold(self, entry: Waiting, start: int, where: int) -> None:
        # Reserving only fills the profile up: the Filler's bounds stay true.
        self.profile.reserve(start, entry.job.estimate, where)

    def _give_back(self, entry: Waiting, start: int, where: int) -> None:
        self.filler.release(start, entry.job.estimate, where)


def _start(entry: Waiting) -> int:
    assert entry.start is not None, "every waiting job of a deadline policy is reserved"
    return entry.start
