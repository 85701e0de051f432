"""The index of a profile's runs of room (``RoomRuns``) against counting each window.

A search asks a node without room at a start when it first has room during a whole
window; once walks since the profile's last change passed over enough runs too short,
the profile answers from the index instead, exactly (the walk may stop early with a
bound). Both are checked against ``copies_during`` at every second; that every change
drops the index is checked with the other memories of a profile, in ``test_profile``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.profile import NEVER, Profile
from berth.core.room_runs import RoomRuns
from tests.unit.core.test_profile import (
    COPIES_ASKED,
    HORIZON,
    SLOTS,
    SPACE,
    _booked,
    first_window,
    indexed_at_once,
    operations,
)


@settings(max_examples=300, deadline=None)
@given(ops=operations, slot=SLOTS, duration=st.integers(1, 12))
def test_the_runs_give_the_first_window_with_room_throughout(
    ops: list[tuple[int, int, int, int]], slot: tuple[int, int], duration: int
) -> None:
    profile = _booked(ops)
    demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
    runs = RoomRuns(profile._times, profile._free, profile._guard, demand)
    for time, free in profile.steps():
        if SPACE.fits(free, demand):
            expected = first_window(profile, demand, time, duration)
            assert runs.first_long(time, duration) == expected, time


@settings(max_examples=300, deadline=None)
@given(**COPIES_ASKED)
def test_an_answer_from_the_index_is_the_exact_first_start_with_room(
    ops: list[tuple[int, int, int, int]],
    slot: tuple[int, int],
    duration: int,
    most: int,
    limit: int | None,
) -> None:
    """No room at a start: the time given is the first start whose window has room
    (the walk may give an earlier bound; the index does not), whatever ``limit``."""
    profile = _booked(ops)
    demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
    with indexed_at_once():
        for start in range(HORIZON * 3):
            indexed = demand in profile._runs
            copies, until = profile.copies_until(demand, start, duration, most, limit)
            assert copies == profile.copies_during(demand, start, start + duration, most)
            if copies == 0 and indexed:
                assert until == first_window(profile, demand, start, duration)


def test_a_run_too_short_is_jumped_to_the_next_longer_one() -> None:
    """Runs of 2, 1, 3 and 5 seconds, then all free: a window of 4 starts in the fourth,
    one of 6 after the last reservation; runs point to the next longer one."""
    profile = Profile(SPACE.packed_capacity, SPACE.guard, origin=0)
    full = SPACE.pack({"cpus": 4})
    for start, end in [(2, 4), (5, 7), (10, 12), (17, 20)]:
        profile.reserve(start, end - start, full)
    one = SPACE.pack({"cpus": 1})
    runs = RoomRuns(profile._times, profile._free, profile._guard, one)
    assert runs.starts == [0, 4, 7, 12, 20]
    assert runs.ends == [2, 5, 10, 17, NEVER]
    assert runs.longer == [2, 2, 3, 4, 5]
    assert runs.first_long(0, 4) == 12
    assert runs.first_long(7, 3) == 7
    assert runs.first_long(0, 6) == 20
    assert runs.first_long(12, 5) == 12
