"""Where a window of room starts in one profile: an index of its runs of room.

A search for a job's earliest start asks each node's profile, again and again, for the
first start from a step on at which a slot of ``demand`` has room during a whole window
of the job's ``duration`` (:meth:`RoomWalks._long_run`, for a node with no room at the
start asked). In a plan thousands of reservations deep whose jobs end early, a node's
room comes in short runs between reservations, and the answer was a walk over the steps
of every run too short for the window: on 4,096 nodes, half of a daemon's time during
submissions. :class:`RoomRuns` gives the answer from an index of the profile's runs of
room for one ``demand``, built at most once per change of the profile: the run that
holds the start, then only runs longer than every run passed (each run points to the
next longer one), so the runs too short are jumped over a few at a time. Pure: no
clock, no I/O.
"""

from __future__ import annotations

from bisect import bisect_right

#: Later than any time a profile describes (:data:`berth.core.profile.NEVER`).
NEVER = 1 << 62


class RoomRuns:
    """The runs of room for one ``demand`` in a profile's steps (``times``, ``free``,
    ``guard`` as :class:`~berth.core.profile.Profile` keeps them), as times: run ``j``
    has room during ``[starts[j], ends[j])`` (the last one may end at :data:`NEVER`),
    and ``longer[j]`` is the first later run that is longer (``len(starts)``: none)."""

    __slots__ = ("ends", "lengths", "longer", "starts")

    def __init__(self, times: list[int], free: list[int], guard: int, demand: int) -> None:
        starts: list[int] = []
        ends: list[int] = []
        inside = False
        for time, step in zip(times, free, strict=True):
            if (step - demand) & guard == guard:
                if not inside:
                    starts.append(time)
                    inside = True
            elif inside:
                ends.append(time)
                inside = False
        if inside:
            ends.append(NEVER)
        lengths = [end - start for start, end in zip(starts, ends, strict=True)]
        count = len(lengths)
        longer = [count] * count
        shorter: list[int] = []  # runs still waiting for a longer one, lengths not rising
        for run, length in enumerate(lengths):
            while shorter and lengths[shorter[-1]] < length:
                longer[shorter.pop()] = run
            shorter.append(run)
        self.starts, self.ends, self.lengths, self.longer = starts, ends, lengths, longer

    def first_long(self, at: int, duration: int) -> int:
        """The first start from ``at`` (the start of a step with room) whose window of
        ``duration`` has room throughout: ``at`` if its run lasts that long, else the
        start of the first later run that does (:data:`NEVER`: none). Every run between
        one and the next longer one is no longer than it, so a run too short is left
        for the next longer one."""
        run = bisect_right(self.starts, at) - 1
        if self.ends[run] - at >= duration:
            return at
        lengths, longer = self.lengths, self.longer
        count = len(lengths)
        run += 1
        while run < count and lengths[run] < duration:
            run = longer[run]
        return self.starts[run] if run < count else NEVER
