"""The walks over a profile's steps to where a slot has room again, and their memos.

A search for a job's earliest start asks each node's profile, again and again between
two of its changes, where a slot of ``demand`` has room next: the first step with room
(:meth:`RoomWalks._room_from`) and the first run of room at least a window long
(:meth:`RoomWalks._long_run`). :class:`RoomWalks` holds those walks and what they
remember until the profile next changes: the per-demand index of the next step with
room, the index of runs of room (:class:`~berth.core.room_runs.RoomRuns`), and where a
demand has no room at all. It is the base of :class:`~berth.core.profile.Profile`,
which owns the steps and calls :meth:`RoomWalks._forget_rooms` at every change; kept
apart so the profile's module holds the step function and its questions, this one the
walks and their memos. Pure: no clock, no I/O.
"""

from __future__ import annotations

from berth.core.room_runs import NEVER, RoomRuns


class RoomWalks:
    """The steps (``_times``, ``_free`` with every field's guard bit set, ``_guard``) as
    :class:`~berth.core.profile.Profile` keeps them, and the walks over them."""

    __slots__ = ("_free", "_guard", "_long_searches", "_no_room", "_rooms", "_runs", "_times",
                 "_walked")  # fmt: skip

    _times: list[int]
    _free: list[int]
    _guard: int
    #: Per demand, the index of the first step at or after each step with room for it
    #: (:meth:`_next_room`); built when asked, dropped at every change.
    _rooms: dict[int, list[int]]
    _long_searches: int  # since the last change
    #: Per demand, times ``[from, until)`` where it has no room at all (from
    #: :meth:`Profile.copies_until`); dropped at every change. Times, not step indices:
    #: :meth:`Profile.forget_before` keeps it while the steps before ``now`` go.
    _no_room: dict[int, tuple[int, int]]
    #: Per demand, the runs of room (:meth:`_long_run`), and the steps walks over runs
    #: too short went through since the last change; both dropped at every change.
    _runs: dict[int, RoomRuns]
    _walked: int

    #: Steps the walk to a run long enough takes before it answers where it is (still a
    #: start no answer changes before): 0.93x the time of ``bench_deep_submit.py --jobs
    #: 8000``, whose searches went on past most of the places such a walk reached.
    _LONG_WALK_STEPS = 64

    #: Steps a search for room looks at one by one before it asks :meth:`_next_room`:
    #: most searches end within a few steps.
    _SCAN_FIRST = 8

    def _room_from(self, demand: int, index: int) -> int:
        """The first step at or after ``index`` with room for ``demand`` (the number of
        steps if none): a few steps one by one, then :meth:`_next_room`."""
        free, guard = self._free, self._guard
        n = len(free)
        near = index + self._SCAN_FIRST
        while index < n and (free[index] - demand) & guard != guard:
            index += 1
            if index == near:  # a long walk: fully booked far ahead
                return self._next_room(demand, index)
        return index

    #: How many times its own steps walks over runs too short go through, since the
    #: profile's last change, before it indexes its runs of room for the demand asked
    #: (:class:`RoomRuns`: about the cost of walking the steps once or twice). Most
    #: walks end in the run they begin in, but a daemon's searches in a plan full of
    #: short gaps walk far, hundreds of times between two changes of a node. Steps,
    #: not runs: a deep profile that changes often would pay more for its index.
    _WALKS_BEFORE_RUNS = 1.0

    def _long_run(self, demand: int, index: int, duration: int, limit: int | None) -> int:
        """The start of the first step at or after ``index`` (a step with room for
        ``demand``, or the number of steps: then ``NEVER``) that starts a run of steps
        with room for it at least ``duration`` long: the first start from step ``index``
        on whose window has room throughout (a start inside a shorter run reaches the
        step with room for none that ends it; a start between runs is in such a step).

        A walk over the steps, which stops at the first step from ``limit`` on (its
        caller asks no start from there) and after :attr:`_LONG_WALK_STEPS` steps, with
        a start no earlier than the one it walks to (its callers ask again from there if
        the search gets that far); or, once walks over runs too short since the last
        change have gone through the profile's steps, the exact answer from the index."""
        times = self._times
        if self._runs:
            runs = self._runs.get(demand)
            if runs is not None:
                return runs.first_long(times[index], duration) if index < len(times) else NEVER
        free, guard = self._free, self._guard
        n = len(times)
        if limit is None:
            limit = NEVER
        began = index
        stop_at = index + self._LONG_WALK_STEPS
        skipped = False
        while index < n and times[index] < limit:
            if index >= stop_at:
                break  # no earlier start from ``index`` on is proven
            reach = times[index] + duration
            end = index + 1
            while end < n and times[end] < reach and (free[end] - demand) & guard == guard:
                end += 1
            if end == n or times[end] >= reach:
                break
            # ``end`` has room for none: on to the next step with room.
            skipped = True
            index = end + 1
            while index < n and (free[index] - demand) & guard != guard:
                index += 1
        if skipped:
            self._passed_runs(demand, index - began)
        return times[index] if index < n else NEVER

    def _passed_runs(self, demand: int, walked: int) -> None:
        """A walk passed over runs too short, through ``walked`` steps: once walks since
        the last change have gone through the profile's steps
        :attr:`_WALKS_BEFORE_RUNS` times, its runs of room for ``demand`` are indexed."""
        self._walked += walked
        if self._walked >= self._WALKS_BEFORE_RUNS * len(self._times):
            self._runs[demand] = RoomRuns(self._times, self._free, self._guard, demand)

    def _next_room(self, demand: int, index: int) -> int:
        """The first step at or after ``index`` with room for ``demand`` (the number of
        steps if none). A node fully booked far ahead makes this walk long; in a daemon
        with a deep queue it is asked again and again between two changes of the
        profile, so from the second long walk since the last change it builds, once per
        demand and change, the answer for every step (a replay that changes the profile
        between nearly every question would only throw such work away)."""
        free, guard = self._free, self._guard
        n = len(free)
        if index >= n:
            return n
        rooms = self._rooms.get(demand)
        if rooms is None and not self._long_searches:
            self._long_searches = 1
            while index < n and (free[index] - demand) & guard != guard:
                index += 1
            return index
        if rooms is None:
            rooms = [n] * n
            following = n
            for i in range(n - 1, -1, -1):
                if (free[i] - demand) & guard == guard:
                    following = i
                rooms[i] = following
            self._rooms[demand] = rooms
        return rooms[index]

    def _forget_rooms(self) -> None:
        """The profile is new or changes: nothing the walks built or counted holds."""
        self._rooms = {}
        self._no_room = {}
        self._long_searches = 0
        self._runs = {}
        self._walked = 0
