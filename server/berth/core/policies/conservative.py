"""Conservative backfilling with schedule compression (Feitelson & Mu'alem Weil 1998, 2.1).

Every arriving job gets a reservation at the earliest time it fits for its whole
estimate, given the running jobs (until start + estimate) and every earlier reservation:
that first reservation is its *guarantee*. At each instant where at least one job ended,
the schedule is compressed once: in arrival order, each waiting job is removed and
re-inserted at its earliest feasible time, which is never later than before (the paper's
"retain the profile and update it one job at a time"). A job starts when its
reservation time is reached, so no job ever starts after its guarantee. Pure: time is
an argument, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from berth.core.decisions import Reject, Reserve, Start, at
from berth.core.model import Job
from berth.core.policies.base import (
    QueuePolicy,
    Waiting,
    next_reserved_start,
    pop_reached,
    push_starts,
)
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace
from berth.core.selection import Selector

#: The profile's origin: earlier than any time a shell will use.
_DAWN = -(1 << 62)


class Conservative(QueuePolicy):
    """Conservative backfilling: a reservation, and a guarantee, for every job at submit."""

    name = "conservative"
    reserves_every_job = True

    def __init__(self, space: ResourceSpace, selection: str = "ff") -> None:
        super().__init__(space)
        self.selector = Selector(space, selection)
        self.profile = Profile(space.packed_capacity, space.guard, origin=_DAWN)
        # (reserved start, arrival number, job id); entries go stale when a job moves up.
        self._starts: list[tuple[int, int, int]] = []
        self._arrivals = 0
        self._arrival_of: dict[int, int] = {}
        #: Reservations moved earlier by compression so far (each is a kept promise
        #: improved; the daemon reports them as "predicted start changed").
        self.moved_up = 0
        #: Waiting jobs whose reserved start changed since the shell last asked.
        self.replanned: set[int] = set()

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        profile = self.profile
        for job_id in job_ids:
            done = self.finish(job_id)
            if done.expected_end > now:
                profile.release(now, done.expected_end - now, done.demand)
        profile.forget_before(now)
        if job_ids:
            if self.selector.rule != "ff":
                self.start_now_by_selection(now)
            self.compress(now)

    def compress(self, now: int) -> None:
        """One compression pass: move each waiting job, in :meth:`compression_order`, as
        early as it fits.

        Removing a job and re-inserting it at its earliest start is done without touching
        the profile for jobs that cannot move: a start ``t`` earlier than the current one
        is feasible exactly when the demand fits during ``[t, min(t + estimate, current))``
        in the profile that still holds the job (``Profile.earliest_start`` with ``limit``).
        """
        earliest_start = self.profile.earliest_start
        for entry in self.compression_order():
            # Every waiting job holds a reservation (entry.start); the limit is positional
            # and looked up once: this loop asks millions of questions on a long trace.
            job = entry.job
            earlier = earliest_start(entry.demand, job.estimate, job.ready(now), entry.start)
            if earlier is not None:
                self._move(entry, earlier)

    def compression_order(self) -> Iterable[Waiting]:
        """The order in which :meth:`compress` moves jobs up: arrival order here."""
        return self.waiting.values()

    def start_now_by_selection(self, now: int) -> None:
        """With BL or BB: before compressing, move up to ``now`` the jobs that can start
        now, best-balanced first (re-checking after each move). Moving a job into room that
        is free delays no reservation, so every guarantee still holds."""
        profile = self.profile
        while True:
            movable = [
                entry
                for entry in self.waiting.values()
                if entry.start is not None
                and entry.start > now
                and entry.job.ready(now) == now
                and profile.earliest_start(entry.demand, entry.job.estimate, now, limit=entry.start)
                == now
            ]
            if not movable:
                return
            chosen = movable[self.selector.pick(profile.free_at(now), [e.demand for e in movable])]
            self._move(chosen, now)

    def _move(self, entry: Waiting, earlier: int) -> None:
        """Move ``entry``'s reservation up to ``earlier`` (which must be feasible)."""
        assert entry.start is not None
        estimate = entry.job.estimate
        self.profile.release(entry.start, estimate, entry.demand)
        self.profile.reserve(earlier, estimate, entry.demand)
        self.moved_up += 1
        self.reschedule(entry, earlier)

    def reschedule(self, entry: Waiting, start: int) -> None:
        """Record ``entry``'s new reserved start (the caller has moved it in the profile)."""
        entry.start = start
        self.replanned.add(entry.job.id)
        push_starts(self._starts, [(start, entry.job.id)], self.waiting, self._arrival_of)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        start = self.profile.earliest_start(entry.demand, job.estimate, job.ready(now))
        assert start is not None, "an admitted job always fits once everything has ended"
        self.enqueue(entry, start, start)
        return Reserve(job.id, start, start, "earliest time it fits beside every earlier promise")

    def enqueue(self, entry: Waiting, start: int, guarantee: int) -> None:
        """Reserve ``entry`` at ``start`` (feasible) and queue it after every earlier arrival."""
        job = entry.job
        self.profile.reserve(start, job.estimate, entry.demand)
        entry.start = start
        entry.guarantee = guarantee
        self.waiting[job.id] = entry
        self._arrivals += 1
        self._arrival_of[job.id] = self._arrivals
        self.replanned.add(job.id)
        push_starts(self._starts, [(start, job.id)], self.waiting, self._arrival_of)

    def adopt_running(
        self,
        job: Job,
        start: int,
        now: int,
        held: Mapping[str, int] | None = None,
        placement: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        super().adopt_running(job, start, now, held)
        running = self.running[job.id]
        if running.expected_end > now:
            self.profile.reserve(now, running.expected_end - now, running.demand)

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        start = self.adoptable_start(entry, now, start)
        kept = guarantee if guarantee is not None and start <= guarantee else None
        return self.keep(entry, start, kept)

    def keep(self, entry: Waiting, start: int, promise: int | None) -> Reserve:
        """Queue an adopted job at ``start`` (feasible) with its kept ``promise``, or with a
        fresh one when the old one is gone (``None``)."""
        guarantee = start if promise is None else promise
        self.enqueue(entry, start, guarantee)
        return Reserve(entry.job.id, start, guarantee, "taken over with its reservation")

    def adoptable_start(self, entry: Waiting, now: int, start: int | None) -> int:
        """``start`` if the job can still be reserved there, else its earliest start."""
        estimate = entry.job.estimate
        ready = entry.job.ready(now)
        if (
            start is None
            or start < ready
            or not self.profile.fits_during(entry.demand, start, estimate)
        ):
            found = self.profile.earliest_start(entry.demand, estimate, ready)
            assert found is not None
            start = found
        return start

    def settle(self, now: int, tighten: bool = True) -> None:
        self.profile.forget_before(now)
        if tighten:
            self.compress(now)

    def withdraw(self, job_id: int, now: int) -> bool:
        entry = self.waiting.pop(job_id, None)
        if entry is None:
            return False
        assert entry.start is not None
        self.profile.release(entry.start, entry.job.estimate, entry.demand)
        del self._arrival_of[job_id]
        self.replanned.discard(job_id)
        self.compress(now)
        return True

    def relax(self, job_id: int, not_before: int | None, now: int) -> None:
        """A waiting job may start from ``not_before`` (earlier than before): it moves
        up now if it fits earlier (the next compression may move it further)."""
        super().relax(job_id, not_before, now)
        entry = self.waiting.get(job_id)
        if entry is None or entry.start is None:
            return
        job = entry.job
        earlier = self.profile.earliest_start(
            entry.demand, job.estimate, job.ready(now), entry.start
        )
        if earlier is not None:
            self._move(entry, earlier)

    def take_replanned(self) -> set[int]:
        changed, self.replanned = self.replanned, set()
        return changed

    def schedule(self, now: int) -> list[Start]:
        started: list[Start] = []
        # The launch happens after each pop, so the heap is read as jobs leave the queue.
        for start, entry in pop_reached(self._starts, self.waiting, now):
            del self._arrival_of[entry.job.id]
            started.append(self.launch(entry, now, f"its reservation at {at(start)} is reached"))
        return started

    def next_wakeup(self) -> int | None:
        return next_reserved_start(self._starts, self.waiting)
