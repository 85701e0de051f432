"""Reserve jobs one after another in an availability profile that only fills up.

QoPS and MSB rebuild a schedule by placing many jobs in a row on a
:class:`~berth.core.profile.Profile`; while nothing is given back, earliest starts
only move later, and :class:`Filler` keeps the lower bounds that follows from that.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from berth.core.profile import Profile


class Filler:
    """Reserve jobs one after another in a profile that only fills up in between.

    Rebuilding a schedule (QoPS, MSB) places many jobs in a row. While nothing is
    released, earliest starts only move later, which gives two exact lower bounds for the
    next scan, remembered per demand: the first time the demand fits at all, and the
    start found for the same demand with a duration no longer than this one (a shorter
    window fits wherever a longer one does). Call :meth:`release` (not the profile's)
    to give a reservation back; it forgets what was remembered.
    """

    __slots__ = ("_floor", "_found", "profile")

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._floor: dict[int, int] = {}
        # Per demand, the starts found, as a Pareto front: durations ascending with
        # starts ascending, so the bound for a duration is the entry just below it.
        self._found: dict[int, tuple[list[int], list[int]]] = {}

    def place(self, demand: int, duration: int, after: int) -> int:
        """Reserve ``demand`` at its earliest start ``>= after``; return that start."""
        floor = self._floor.get(demand, after)
        if floor < after:
            floor = after
        first = self.profile.first_fit(demand, floor)
        assert first is not None, "a demand within the capacity always fits eventually"
        self._floor[demand] = first
        durations, starts = self._found.setdefault(demand, ([], []))
        below = bisect_right(durations, duration) - 1
        if below >= 0 and starts[below] > first:
            first = starts[below]
        start = self.profile.earliest_start(demand, duration, first)
        assert start is not None
        self.profile.reserve(start, duration, demand)
        # Insert (duration, start), dropping entries it dominates (longer, no later).
        at = bisect_left(durations, duration)
        end = at
        while end < len(durations) and starts[end] <= start:
            end += 1
        durations[at:end] = [duration]
        starts[at:end] = [start]
        return start

    def release(self, start: int, duration: int, demand: int) -> None:
        """Give a reservation back (see :meth:`Profile.release`)."""
        self.profile.release(start, duration, demand)
        self._floor.clear()
        self._found.clear()
