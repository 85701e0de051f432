"""The index of a profile's runs of room (``RoomRuns``) against counting each window.

A search asks a node without room at a start when it first has room during a whole
window; once walks over runs too short since the profile's last change have gone
through as many steps as it has, the profile answers from the index instead, exactly (the walk may stop early with a
bound). The index is checked here against ``copies_during`` at every second; the
profile's answers from it (exact, and dropped at every change) with its other
memories, in ``test_profile``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.profile import NEVER
from berth.core.profile import PythonProfile as Profile
from berth.core.room_runs import RoomRuns
from tests.unit.core.test_profile import (
    SLOTS,
    SPACE,
    _booked,
    first_window,
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
