"""Availability profile: free resources over future time, in K packed resources.

The profile is a step function kept as two parallel lists: ``times`` (strictly
increasing breakpoints) and ``free`` (the packed vector free from ``times[i]`` until
``times[i + 1]``; the last step lasts forever and always equals the full capacity,
because every reservation is finite). This is the linked-list profile of Feitelson &
Mu'alem Weil (1998, section 2.1) with array storage: ``bisect`` finds a time in
O(log n), inserts are C-level memmoves, and the hot scans are tight loops over ints.
Adjacent equal steps are merged on every change, so the length stays proportional to
the number of running and reserved jobs.

Operations: :meth:`Profile.earliest_start` ("earliest feasible slot"), :meth:`reserve`
and :meth:`release` (remove and re-insert is release + earliest_start + reserve), and
:meth:`copy` (two list copies) for what-if evaluation. Times are ints given by the
caller; the profile never reads a clock and does no I/O.

The walks to where a demand has room again, with what they remember between two
changes, are the base class's (:class:`~berth.core.room_walks.RoomWalks`); every change
here forgets what they remember.

Where it is built (``tools/build_native.py``, run by ``make``), ``Profile`` is the same
class written in C (``_profile_native.c``): the same methods and answers, each step's
resources as machine integers. This class stays as the reference the C one is tested
against (:data:`PythonProfile`) and as the fallback where no compiler was found or
``BERTH_NATIVE=0`` is set.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from contextlib import suppress
from importlib import import_module
from typing import TYPE_CHECKING, Any

from berth.core.resources import copies_in, parts_of
from berth.core.room_runs import NEVER
from berth.core.room_walks import RoomWalks

__all__ = [
    "BOOK_NODES",
    "HELD_OF",
    "NATIVE",
    "NATIVE_SEARCH",
    "NEVER",
    "PLACE_RUN",
    "RELEASE_RUN",
    "WITH_PAST",
    "NativeProfile",
    "Profile",
    "PythonProfile",
]


class Profile(RoomWalks):
    """Free resources over time for one cluster.

    ``capacity`` and ``guard`` come from a :class:`~berth.core.resources.ResourceSpace`
    (``packed_capacity`` and ``guard``). ``origin`` is the earliest time the profile
    describes; asking about earlier times is a programming error.
    """

    __slots__ = ("capacity",)

    def __init__(self, capacity: int, guard: int, origin: int = 0) -> None:
        self.capacity = capacity
        self._guard = guard
        self._times = [origin]
        # Each step's packed free vector with every field's guard bit set: the fit test
        # ``(free - demand) & guard == guard`` then costs one operation less per step
        # scanned, and ``+``/``-`` keep the bits (a field never borrows while it fits).
        self._free = [capacity | guard]
        self._forget_rooms()

    def copy(self) -> Profile:
        """An independent copy (O(n)), for what-if evaluation."""
        twin = PythonProfile.__new__(PythonProfile)
        twin.capacity = self.capacity
        twin._guard = self._guard
        twin._times = self._times.copy()
        twin._free = self._free.copy()
        twin._forget_rooms()
        return twin

    @classmethod
    def from_steps(cls, capacity: int, guard: int, steps: Sequence[tuple[int, int]]) -> Profile:
        """A profile of the ``(from_time, packed_free)`` steps given (as :meth:`steps`
        returns them: times increasing, the last step the full capacity)."""
        profile = cls(capacity, guard, steps[0][0])
        profile._times = [time for time, _ in steps]
        profile._free = [free | guard for _, free in steps]
        return profile

    @property
    def guard(self) -> int:
        """The packed guard bits of the profile's resource space."""
        return self._guard

    def __len__(self) -> int:
        return len(self._times)

    def has_past(self, now: int) -> bool:
        """Whether a step ended at or before ``now`` (:meth:`forget_before` drops it)."""
        times = self._times
        return len(times) > 1 and times[1] <= now

    def steps(self) -> list[tuple[int, int]]:
        """The step function as ``(from_time, packed_free)`` pairs, in time order."""
        guard = self._guard
        return [(time, free ^ guard) for time, free in zip(self._times, self._free, strict=True)]

    def breakpoints(self, start: int, end: int) -> list[int]:
        """The times in ``[start, end)`` at which the free vector changes."""
        times = self._times
        return times[bisect_left(times, start) : bisect_left(times, end)]

    def free_at(self, time: int) -> int:
        """The packed vector free at ``time``."""
        at = bisect_right(self._times, time) - 1  # (no max(): EASY asks at every pass)
        return self._free[at if at > 0 else 0] ^ self._guard

    def min_free(self, start: int, end: int) -> list[int]:
        """The packed free vectors of every step overlapping ``[start, end)``."""
        times = self._times
        first = max(bisect_right(times, start) - 1, 0)
        last = bisect_left(times, end)
        guard = self._guard
        return [free ^ guard for free in self._free[first:last]]

    def copies_during(self, demand: int, start: int, end: int, most: int) -> int:
        """How many copies of ``demand`` (at most ``most``) fit in every step overlapping
        ``[start, end)``; stops at the first step with room for none (no list is built,
        so a node that is busy at ``start`` costs one bisect)."""
        times = self._times
        first = max(bisect_right(times, start) - 1, 0)
        return self._copies_in_steps(demand, first, bisect_left(times, end), most)[0]

    def copies_until(
        self, demand: int, start: int, duration: int, most: int, limit: int | None = None
    ) -> tuple[int, int]:
        """:meth:`copies_during` over ``[start, start + duration)``, and the first later
        start at which the answer may differ. The answer is the least over the steps
        the window overlaps. A step with room for none decides alone: the answer stays
        0 until the first start whose whole window has room for one (the start of a
        run of steps with room at least ``duration`` long, :meth:`_long_run`).
        Otherwise it can only rise (below ``most``) once the last step holding the
        least has left the window, and only fall once the window reaches a later step
        with room for fewer. A search that asks no start from ``limit`` on passes it:
        a later time may be given then, though the answer changes before it (the walk
        to a run long enough stops there, the answer still holding up to it).

        A node with no room at ``start`` has none until the next step with room, for
        any window: that answer is remembered until the profile changes, for the many
        questions a plan asks of a node between two of its changes."""
        known = self._no_room.get(demand)
        if known is not None and known[0] <= start < known[1]:
            return 0, self._long_run(demand, bisect_left(self._times, known[1]), duration, limit)
        times = self._times
        free = self._free
        guard = self._guard
        n = len(times)
        first = bisect_right(times, start) - 1
        if first < 0:
            first = 0
        if (free[first] - demand) & guard != guard:
            # No room at ``start``, as for most nodes asked (no count needed then).
            k, empty, last = 0, first, first
        else:
            last = bisect_left(times, start + duration, first)
            k, empty = self._copies_in_steps(demand, first, last, most)
        if empty >= 0:
            # 0 while a step with room for none is in the window: at least until the
            # first later step with room for one starts.
            room = self._room_from(demand, empty + 1)
            if empty == first:  # none at ``start``: none from this step's start on, too
                self._no_room[demand] = (times[first], times[room] if room < n else NEVER)
            return 0, self._long_run(demand, room, duration, limit)
        # The last step in the window holding only k (a step holding more never decides);
        # at ``most`` the answer cannot rise.
        rise = NEVER
        if k < most:
            more = demand * (k + 1)
            least = last - 1
            while least > first and (free[least] - more) & guard == guard:
                least -= 1
            rise = times[least + 1] if least + 1 < n else NEVER
        # The first step after the window with room for fewer than k.
        held = demand * k
        after = last
        while after < n and (free[after] - held) & guard == guard:
            after += 1
        fall = times[after] - duration + 1 if after < n else NEVER
        return k, min(rise, fall)

    def copies_from(
        self, demand: int, start: int, duration: int, most: int, limit: int | None = None
    ) -> tuple[int, int]:
        """:meth:`copies_until` for a profile whose free room only grows from ``start``
        on (a plan of running jobs only: EASY's, FCFS's), whatever the window (so
        ``duration`` and ``limit`` are not read: the signature is the other's, for the
        caller to pick one): the copies free at ``start`` (the least over any window from it), and the
        next step, where they may rise (never, once ``most`` fit)."""
        k, _, until = self.slots_at(demand, start, most)
        return k, until

    def slots_at(self, demand: int, start: int, most: int) -> tuple[int, int, int]:
        """:meth:`copies_from` with the start of the step it read: ``(copies, since,
        until)``, the copies free at every instant of ``[since, until)``."""
        times = self._times
        at = bisect_right(times, start) - 1
        if at < 0:
            at = 0
        step = self._free[at]
        k = (
            0
            if (step - demand) & self._guard != self._guard
            else copies_in(step, parts_of(demand), most)
        )
        if k >= most or at + 1 >= len(times):
            return k, times[at], NEVER
        return k, times[at], times[at + 1]

    def _copies_in_steps(self, demand: int, first: int, last: int, most: int) -> tuple[int, int]:
        """Copies of ``demand`` (at most ``most``) that fit in steps ``first .. last - 1``,
        and the index of the first step with room for none (then 0 copies), or -1."""
        free = self._free
        guard = self._guard
        k = most
        held = demand * k
        for i in range(first, last):
            step = free[i]
            if (step - held) & guard != guard:  # room for fewer than k here: count them
                k = copies_in(step, parts_of(demand), k)
                if k == 0:
                    return 0, i
                held = demand * k
        return k, -1

    def earliest_start(
        self,
        demand: int,
        duration: int,
        after: int,
        limit: int | None = None,
        before: int | None = None,
    ) -> int | None:
        """The earliest ``t >= after`` at which ``demand`` fits for ``duration`` seconds.

        With ``limit``, only starts ``t < limit`` are considered and the window checked
        is ``[t, min(t + duration, limit))``: this is the test "can a job reserved at
        ``limit`` move earlier", run on the profile that still holds that job (the part
        of its window from ``limit`` on is its own reservation, so it always fits).
        With ``before``, only starts ``t < before`` are considered (the window checked
        is not cut). Returns ``None`` when no such start exists (with ``limit`` or
        ``before``) or when ``demand`` exceeds the capacity (without them). The result
        is always ``after`` or a breakpoint of the profile.
        """
        times = self._times
        free = self._free
        guard = self._guard
        n = len(times)
        last = limit if before is None or (limit is not None and limit <= before) else before
        if last is None:
            stop = n
            cut = NEVER
        elif last <= after:
            return None
        else:
            stop = bisect_left(times, last)
            cut = NEVER if limit is None else limit
        # Compression asks from the profile's first step, and most steps start later.
        i = 0 if n == 1 or times[1] > after else bisect_right(times, after) - 1
        while True:
            # Skip steps where the demand does not fit at all.
            while i < stop and (free[i] - demand) & guard != guard:
                i += 1
            if i >= stop:
                return None
            start = times[i] if times[i] > after else after
            end = start + duration
            if end > cut:
                end = cut
            j = i + 1
            while j < n and times[j] < end:
                if (free[j] - demand) & guard != guard:
                    break
                j += 1
            else:
                return start
            i = j + 1

    def earliest_or_bound(self, demand: int, duration: int, after: int, steps: int) -> int:
        """:meth:`earliest_start` from ``after`` (``NEVER`` for none), or, if none starts in
        the next ``steps`` steps, the time just past them (no start is earlier). For a
        caller that only needs to know when to ask again (a block of nodes deep in a
        plan walked its whole profile at each search)."""
        times = self._times
        last = bisect_right(times, after) + steps
        if last < len(times):
            found = self.earliest_start(demand, duration, after, None, times[last])
            return times[last] if found is None else found
        found = self.earliest_start(demand, duration, after)
        return NEVER if found is None else found

    def earliest_growing(
        self, demand: int, duration: int, after: int, limit: int | None = None
    ) -> int | None:
        """:meth:`earliest_start` for a profile whose free room only grows from ``after``
        on (a plan of running jobs only: EASY's, FCFS's), whatever the window (so
        ``duration`` is not read, as in :meth:`copies_from`): once ``demand`` fits in a
        step it fits in every later one, so the first such step is found by bisection
        instead of a walk (a wide head job's walk crossed thousands of steps)."""
        if limit is not None and limit <= after:
            return None
        times, free, guard = self._times, self._free, self._guard
        stop = len(times) if limit is None else bisect_left(times, limit)
        first = bisect_right(times, after) - 1
        if first < 0:
            first = 0
        steps = range(first, stop)
        at = bisect_left(steps, True, key=lambda i: (free[i] - demand) & guard == guard)
        if at == len(steps):
            return None
        start = times[first + at]
        return start if start > after else after

    def first_fit(self, demand: int, after: int) -> int | None:
        """The earliest ``t >= after`` at which ``demand`` fits at all (for any duration)."""
        times = self._times
        free = self._free
        guard = self._guard
        n = len(times)
        i = max(bisect_right(times, after) - 1, 0)
        while i < n and (free[i] - demand) & guard != guard:
            i += 1
        if i == n:
            return None
        return times[i] if times[i] > after else after

    def fits_during(self, demand: int, start: int, duration: int) -> bool:
        """Whether ``demand`` fits during all of ``[start, start + duration)``. Stops at
        the first step without room: on a busy cluster most questions end at the
        first step (an EASY pass asks it of every waiting job)."""
        times, free, guard = self._times, self._free, self._guard
        end = start + duration
        n = len(times)
        i = bisect_right(times, start) - 1
        if i < 0:
            i = 0
        while i < n and times[i] < end:
            if (free[i] - demand) & guard != guard:
                return False
            i += 1
        return True

    def reserve(self, start: int, duration: int, demand: int) -> None:
        """Take ``demand`` during ``[start, start + duration)``.

        Precondition: it fits (``fits_during``); the profile does not check, because the
        policies have always just asked. Violating it corrupts the packed fields.
        """
        self.add(start, start + duration, -demand)

    def release(self, start: int, duration: int, demand: int) -> None:
        """Give back ``demand`` during ``[start, start + duration)`` (undo of :meth:`reserve`)."""
        self.add(start, start + duration, demand)

    def add(self, start: int, end: int, change: int) -> None:
        """Add ``change`` (a packed vector, negative to take) to every step in ``[start,
        end)``: breakpoints made at both ends, then steps left equal to their neighbours
        merged. Written out in one body: every reservation, release and move of the
        schedulers comes through here."""
        if self._long_searches or self._no_room or self._walked:
            self._forget_rooms()
        times, free = self._times, self._free
        first = bisect_left(times, start)
        if first == len(times) or times[first] != start:
            if first == 0:
                raise ValueError(f"time {start} is before the profile's origin {times[0]}")
            times.insert(first, start)
            free.insert(first, free[first - 1])
        last = bisect_left(times, end, first)
        if last == len(times) or times[last] != end:
            times.insert(last, end)
            free.insert(last, free[last - 1])
        free[first:last] = [step + change for step in free[first:last]]
        if 0 < last < len(free) and free[last] == free[last - 1]:
            del free[last]
            del times[last]
        if 0 < first < len(free) and free[first] == free[first - 1]:
            del free[first]
            del times[first]

    def forget_before(self, now: int) -> None:
        """Drop steps that ended at or before ``now``; queries must then use times >= now."""
        i = bisect_right(self._times, now) - 1
        if i > 0:
            if self._long_searches:
                self._forget_rooms()
            del self._times[:i]
            del self._free[:i]


#: The profile written in Python: the reference and the fallback (named so that its
#: objects pickle under a name that stays its own when ``Profile`` is the C one).
PythonProfile = Profile
PythonProfile.__name__ = PythonProfile.__qualname__ = "PythonProfile"

#: The node search over C profiles (:func:`berth.core.node_search.earliest_shared` in C),
#: where the C profile is built; and the C profile's class, which it reads.
NATIVE_SEARCH: Callable[..., object] | None = None


class _NotBuilt:
    """Stands for the C profile's class where it is not built: no profile is one."""


NativeProfile: type = _NotBuilt
#: Booking a placement on C profiles in one call (:meth:`berth.core.nodes.NodePlan.reserve`).
BOOK_NODES: Callable[..., None] | None = None
#: What a placement of shared slots holds per node, built in C
#: (:meth:`berth.core.nodes.NodePlan.held`).
HELD_OF: Callable[[dict[int, int], int], dict[int, int]] | None = None
#: Runs of placements and of give-backs on a node plan of C profiles, each in one call
#: (:mod:`berth.core.node_runs`).
PLACE_RUN: Callable[..., list[Any]] | None = None
RELEASE_RUN: Callable[..., None] | None = None
#: The places of the C profiles of a list with a step to drop before a time.
WITH_PAST: Callable[[list[Profile], int], list[int]] | None = None

if not TYPE_CHECKING:  # the C profile where built and not hidden (see ``berth/__init__``)
    with suppress(ImportError):  # (by name: the import graph knows Python modules only)
        _native = import_module("berth.core._profile_native")
        Profile = NativeProfile = _native.Profile
        NATIVE_SEARCH = _native.earliest_shared
        BOOK_NODES = _native.book_nodes
        HELD_OF = _native.held_of
        PLACE_RUN = _native.place_run
        RELEASE_RUN = _native.release_run
        WITH_PAST = _native.with_past

#: Whether ``Profile`` is the C one.
NATIVE: bool = Profile is not PythonProfile
