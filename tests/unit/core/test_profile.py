"""The availability profile written in Python against a per-second brute-force model.

The C profile is compared with this one in ``tests/property/test_native_profile.py``."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.profile import NEVER
from berth.core.profile import PythonProfile as Profile
from berth.core.profile_sets import summed
from berth.core.resources import ResourceSpace

SPACE = ResourceSpace({"cpus": 4, "mem": 3})
HORIZON = 40


def first_window(profile: Profile, demand: int, at: int, duration: int) -> int:
    """The first second from ``at`` on whose window of ``duration`` has room for one
    slot (the last step of a profile is all free, so there is one)."""
    start = at
    while profile.copies_during(demand, start, start + duration, 1) == 0:
        start += 1
    return start


@contextmanager
def runs_indexed_after(walks: float) -> Iterator[None]:
    """Profiles index their runs of room once walks have gone through their steps
    ``walks`` times (0: at the first walk over a run too short; infinity: never)."""
    before = Profile._WALKS_BEFORE_RUNS
    Profile._WALKS_BEFORE_RUNS = walks
    try:
        yield
    finally:
        Profile._WALKS_BEFORE_RUNS = before


def indexed_at_once() -> AbstractContextManager[None]:
    """Every walk that passes over a run too short indexes the profile's runs."""
    return runs_indexed_after(0.0)


def _profile() -> Profile:
    return Profile(SPACE.packed_capacity, SPACE.guard, origin=0)


def _booked(ops: list[tuple[int, int, int, int]]) -> Profile:
    """A profile with each ``(cpus, mem, length, after)`` reserved at its earliest start."""
    profile = _profile()
    for cpus, mem, length, after in ops:
        demand = SPACE.pack({"cpus": cpus, "mem": mem})
        start = profile.earliest_start(demand, length, after)
        assert start is not None
        profile.reserve(start, length, demand)
    return profile


def test_earliest_start_waits_for_a_window_long_enough() -> None:
    profile = _profile()
    one_cpu = SPACE.pack({"cpus": 1})
    profile.reserve(0, 10, SPACE.pack({"cpus": 4}))  # full until 10
    profile.reserve(12, 5, SPACE.pack({"cpus": 4}))  # full again 12..17
    assert profile.earliest_start(one_cpu, 2, after=0) == 10  # the hole 10..12 is enough
    assert profile.earliest_start(one_cpu, 3, after=0) == 17  # but not for 3 s
    assert profile.earliest_start(one_cpu, 3, after=20) == 20


def test_a_profile_indexes_its_runs_of_room_once_walks_have_gone_through_its_steps() -> None:
    """Walks over runs too short cost their steps; the index costs about the profile's
    steps: it is built once walks since the last change have gone through as many
    steps as the profile has, and dropped at the next change."""
    profile = _profile()
    full, one_cpu = SPACE.pack({"cpus": 4}), SPACE.pack({"cpus": 1})
    for gap in range(100):  # 200 steps: full for 3 s, then 1 s with room
        profile.reserve(4 * gap, 3, full)
    assert len(profile) == 200
    assert Profile._LONG_WALK_STEPS == 64
    assert profile.copies_until(one_cpu, 380, 2, 1) == (0, 399)  # 8 steps walked
    walks = 0
    while one_cpu not in profile._runs and walks < 10:
        copies, until = profile.copies_until(one_cpu, 0, 2, 1)  # 64 steps a walk
        assert copies == 0
        assert until <= 399
        walks += 1
    assert walks == 3
    assert one_cpu in profile._runs
    assert profile.copies_until(one_cpu, 0, 2, 1) == (0, 399)  # the index: exact at once
    profile.reserve(399, 1, one_cpu)
    assert not profile._runs
    assert profile._walked == 0


def test_release_undoes_reserve_and_merges_steps() -> None:
    profile = _profile()
    demand = SPACE.pack({"cpus": 2, "mem": 1})
    profile.reserve(5, 10, demand)
    assert len(profile) == 3
    profile.release(5, 10, demand)
    assert profile.steps() == [(0, SPACE.packed_capacity)]


def test_limit_asks_whether_a_reserved_job_can_move_earlier() -> None:
    profile = _profile()
    two = SPACE.pack({"cpus": 2})
    profile.reserve(0, 10, SPACE.pack({"cpus": 3}))  # 1 cpu free until 10
    profile.reserve(10, 6, two)  # our job, reserved at 10 for 6 s
    # Only 1 cpu is free before 10, so it cannot move.
    assert profile.earliest_start(two, 6, after=0, limit=10) is None
    profile.release(4, 6, SPACE.pack({"cpus": 3}))  # the blocker ends early at 4
    assert profile.earliest_start(two, 6, after=4, limit=10) == 4


def test_before_only_bounds_the_start_not_the_window() -> None:
    profile = _profile()
    one_cpu = SPACE.pack({"cpus": 1})
    profile.reserve(0, 10, SPACE.pack({"cpus": 4}))  # full until 10
    profile.reserve(12, 5, SPACE.pack({"cpus": 4}))  # full again 12..17
    assert profile.earliest_start(one_cpu, 3, after=0, before=17) is None  # 17 is too late
    assert profile.earliest_start(one_cpu, 3, after=0, before=18) == 17
    assert profile.earliest_start(one_cpu, 2, after=0, before=11) == 10
    # With a limit, the earlier of the two bounds the start; the window stops at limit.
    assert profile.earliest_start(one_cpu, 3, after=0, limit=12, before=20) == 10
    assert profile.earliest_start(one_cpu, 3, after=0, limit=12, before=10) is None


def test_copy_is_independent() -> None:
    profile = _profile()
    twin = profile.copy()
    twin.reserve(0, 5, SPACE.pack({"cpus": 1}))
    assert profile.steps() == [(0, SPACE.packed_capacity)]
    assert len(twin) == 2


def _grid_earliest(
    grid: list[dict[str, int]], demand: dict[str, int], duration: int, after: int
) -> int:
    t = after
    while not all(
        grid[u][r] + demand[r] <= SPACE.capacity[r] for u in range(t, t + duration) for r in demand
    ):
        t += 1
    return t


#: A slot of up to two cpus and two units of memory, asking for something.
SLOTS = st.tuples(st.integers(0, 2), st.integers(0, 2)).filter(lambda s: s != (0, 0))


def _assert_steps_merged(profile: Profile) -> None:
    """No two neighbouring steps hold the same free vector."""
    steps = profile.steps()
    assert all(a[1] != b[1] for a, b in itertools.pairwise(steps)), "steps merged"


operations = st.lists(
    st.tuples(
        st.integers(0, 4), st.integers(0, 3), st.integers(1, 8), st.integers(0, HORIZON // 2)
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(ops=operations, release_mask=st.lists(st.booleans(), max_size=25))
def test_profile_matches_a_per_second_grid(
    ops: list[tuple[int, int, int, int]], release_mask: list[bool]
) -> None:
    profile = _profile()
    grid = [{"cpus": 0, "mem": 0} for _ in range(HORIZON * 4)]
    placed: list[tuple[int, int, dict[str, int]]] = []
    for cpus, mem, duration, after in ops:
        demand = {"cpus": cpus, "mem": mem}
        start = profile.earliest_start(SPACE.pack(demand), duration, after)
        assert start == _grid_earliest(grid, demand, duration, after)
        profile.reserve(start, duration, SPACE.pack(demand))
        for u in range(start, start + duration):
            for r in demand:
                grid[u][r] += demand[r]
        placed.append((start, duration, demand))
    for (start, duration, demand), release in zip(placed, release_mask, strict=False):
        if release:
            profile.release(start, duration, SPACE.pack(demand))
            for u in range(start, start + duration):
                for r in demand:
                    grid[u][r] -= demand[r]
    for t in range(HORIZON * 3):
        used = {r: SPACE.capacity[r] - v for r, v in SPACE.unpack(profile.free_at(t)).items()}
        assert used == grid[t]
    _assert_steps_merged(profile)


#: What a question of ``copies_until`` draws: a booked profile, a slot, a window, a most
#: and a limit.
COPIES_ASKED = {
    "ops": operations,
    "slot": SLOTS,
    "duration": st.integers(1, 12),
    "most": st.integers(1, 5),
    "limit": st.none() | st.integers(1, HORIZON * 3),
}


@settings(max_examples=300, deadline=None)
@given(**COPIES_ASKED, forget=st.integers(0, HORIZON), indexed=st.booleans())
def test_copies_until_holds_its_answer_until_the_time_it_gives(
    ops: list[tuple[int, int, int, int]],
    slot: tuple[int, int],
    duration: int,
    most: int,
    limit: int | None,
    forget: int,
    indexed: bool,
) -> None:
    """Every start from the one asked up to the returned time gets the same answer: the
    node planner skips the starts in between. An answer of none holds exactly until
    the first start whose window has room for one, or a time from ``limit`` on (asked
    twice: the second from what the first remembered, after the steps before
    ``forget`` have gone, as time passes in a plan). With the runs of room ``indexed``
    at once, an answer from the index is that first start itself, whatever ``limit``
    (the walk may give an earlier bound)."""
    with indexed_at_once() if indexed else nullcontext():
        profile = _booked(ops)
        demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
        bound = HORIZON * 4 if limit is None else limit
        for start in [*range(HORIZON * 3), -1, *range(forget, HORIZON * 3)]:
            if start < 0:
                profile.forget_before(forget)
                continue
            walked = demand not in profile._runs  # (else the index's exact answer)
            if limit is None:
                copies, until = profile.copies_until(demand, start, duration, most)
            else:
                copies, until = profile.copies_until(demand, start, duration, most, limit)
            assert until > start
            for later in range(start, min(until, HORIZON * 4)):
                assert profile.copies_during(demand, later, later + duration, most) == copies
            if copies == 0 and until < bound:
                assert profile.copies_during(demand, until, until + duration, most) > 0
            if copies == 0 and not walked:
                assert until == first_window(profile, demand, start, duration)
            if copies == 0 and limit is not None and until >= limit and walked:
                # The walk from run to run stopped at the first it met from ``limit`` on.
                steps = profile.steps()
                runs = [
                    time
                    for at, (time, free) in enumerate(steps)
                    if SPACE.fits(free, demand)
                    and (at == 0 or not SPACE.fits(steps[at - 1][1], demand))
                ]
                assert not any(max(start + 1, limit) <= time < until for time in runs)


@settings(max_examples=300, deadline=None)
@given(**COPIES_ASKED, walk=st.integers(1, 3))
def test_a_walk_to_a_long_run_cut_short_answers_the_same_count_and_no_later(
    ops: list[tuple[int, int, int, int]],
    slot: tuple[int, int],
    duration: int,
    most: int,
    limit: int | None,
    walk: int,
) -> None:
    """With the walk to a run of room long enough stopped after ``walk`` steps, every
    answer counts the same, and the time it holds until is after the start asked and
    no later than the whole walk's (the searches ask again from there). Walks only:
    an index of the runs, once built, answers exactly, also past ``limit``."""
    profile = _booked(ops)
    demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
    whole_walk = Profile._LONG_WALK_STEPS
    with runs_indexed_after(float("inf")):
        for start in range(HORIZON * 3):
            whole = profile.copies_until(demand, start, duration, most, limit)
            Profile._LONG_WALK_STEPS = walk
            try:
                cut = profile.copies_until(demand, start, duration, most, limit)
            finally:
                Profile._LONG_WALK_STEPS = whole_walk
            assert cut[0] == whole[0]
            assert start < cut[1] <= whole[1]
            assert not profile._runs


@settings(max_examples=300, deadline=None)
@given(
    ops=operations,
    slot=st.tuples(st.integers(0, 3), st.integers(0, 2)).filter(lambda s: s != (0, 0)),
    changes=st.lists(st.tuples(st.integers(0, HORIZON), st.integers(1, 6)), max_size=4),
)
def test_the_search_for_room_answers_as_a_walk_does_when_built_reused_and_changed(
    ops: list[tuple[int, int, int, int]],
    slot: tuple[int, int],
    changes: list[tuple[int, int]],
) -> None:
    """``_next_room`` walks the first long search, builds an index at the second and
    reuses it until the profile changes: every answer is the plain walk's."""
    profile = _booked(ops)
    demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
    one_cpu = SPACE.pack({"cpus": 1})
    for moment, length in [(0, 0), *changes]:
        if length:  # a change: the index built before no longer holds
            profile.reserve(moment, length, 0)  # nothing taken, steps split
            start = profile.earliest_start(one_cpu, length, moment)
            assert start is not None
            profile.reserve(start, length, one_cpu)
        free = [step for _, step in profile.steps()]
        walked = [
            next((j for j in range(i, len(free)) if SPACE.fits(free[j], demand)), len(free))
            for i in range(len(free) + 1)
        ]
        for _ in range(3):  # a walk, then the index built, then the index reused
            assert [profile._next_room(demand, i) for i in range(len(free) + 1)] == walked


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(operations, min_size=1, max_size=4), forget=st.lists(st.integers(0, 30)))
def test_a_summed_profile_holds_what_its_parts_hold_together(
    parts: list[list[tuple[int, int, int, int]]], forget: list[int]
) -> None:
    """``Profile.summed``: at every time, the sum of the parts' free vectors, its equal
    neighbours merged, also over parts that forgot their past at different times."""
    profiles = [_booked(ops) for ops in parts]
    for profile, now in zip(profiles, forget, strict=False):
        profile.forget_before(now)
    now = max(forget[: len(profiles)], default=0)
    total = summed(profiles)
    assert total.capacity == SPACE.packed_capacity * len(profiles)
    for t in range(now, HORIZON * 3):
        assert total.free_at(t) == sum(p.free_at(t) for p in profiles), t
    _assert_steps_merged(total)


@settings(max_examples=300, deadline=None)
@given(
    ops=operations,
    slot=SLOTS,
    steps=st.lists(
        st.tuples(st.integers(0, HORIZON), st.integers(1, 8), st.booleans()), max_size=12
    ),
    indexed=st.booleans(),
)
def test_copies_until_forgets_what_it_remembered_when_the_profile_changes(
    ops: list[tuple[int, int, int, int]],
    slot: tuple[int, int],
    steps: list[tuple[int, int, bool]],
    indexed: bool,
) -> None:
    """A node with no room at a start is remembered as such until the next step with
    room, and (``indexed``) its runs of room are indexed at once; every reservation and
    release in between drops both: each answer is the one counted afresh over the
    window, and from the index the exact first start with room."""
    with indexed_at_once() if indexed else nullcontext():
        profile = _booked(ops)
        demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
        one_cpu = SPACE.pack({"cpus": 1})
        held: list[tuple[int, int]] = []
        for moment, length, take in steps:
            for start in range(moment, moment + 6):
                from_index = demand in profile._runs
                copies, until = profile.copies_until(demand, start, length, 3)
                assert copies == profile.copies_during(demand, start, start + length, 3)
                assert until > start
                if copies == 0 and from_index:
                    assert until == first_window(profile, demand, start, length)
            if take or not held:
                found = profile.earliest_start(one_cpu, length, moment)
                assert found is not None
                profile.reserve(found, length, one_cpu)
                held.append((found, length))
            else:
                begin, taken = held.pop()
                profile.release(begin, taken, one_cpu)
            assert not profile._runs, "a change drops the index of runs"


@settings(max_examples=300, deadline=None)
@given(
    ops=operations,
    forget=st.integers(0, HORIZON // 2),
    question=st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(1, 10)),
    after=st.integers(0, HORIZON),
    limit=st.none() | st.integers(0, HORIZON * 2),
    before=st.none() | st.integers(0, HORIZON * 2),
)
def test_earliest_start_with_a_limit_or_a_bound_is_the_first_second_that_fits(
    ops: list[tuple[int, int, int, int]],
    forget: int,
    question: tuple[int, int, int],
    after: int,
    limit: int | None,
    before: int | None,
) -> None:
    """Against a walk over every second: the first ``t >= after`` (below ``limit`` and
    ``before``) whose window, cut at ``limit``, has room at every second."""
    profile = _booked(ops)
    profile.forget_before(forget)
    after = max(after, forget)
    cpus, mem, duration = question
    demand = SPACE.pack({"cpus": cpus, "mem": mem})
    guard = SPACE.guard

    def fits(t: int) -> bool:
        end = t + duration if limit is None else min(t + duration, limit)
        return all(((profile.free_at(u) | guard) - demand) & guard == guard for u in range(t, end))

    everything_ended = HORIZON // 2 + 25 * 8  # the latest any of ``ops`` can end
    bound = min(b for b in (limit, before, everything_ended + 1) if b is not None)
    expected = next((t for t in range(after, bound) if fits(t)), None)
    assert profile.earliest_start(demand, duration, after, limit, before) == expected


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    origin=st.integers(0, 5),
    jobs=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 20)), max_size=12),
)
def test_the_first_room_of_a_profile_that_only_grows_is_found_by_bisection(
    data: st.DataObject, origin: int, jobs: list[tuple[int, int, int]]
) -> None:
    """Running jobs only (each from the origin to its end): free room only grows, and
    ``earliest_growing`` finds what ``earliest_start`` finds for any window, with and
    without a limit, for demands that fit somewhere, nowhere, or beyond the capacity."""
    space = ResourceSpace({"cpus": 6, "mem": 6})
    profile = Profile(space.packed_capacity, space.guard, origin)
    for cpus, mem, length in jobs:
        held = space.pack({"cpus": cpus, "mem": mem})
        if held and profile.fits_during(held, origin, length):
            profile.reserve(origin, length, held)
    for _ in range(6):
        demand = space.pack(
            {"cpus": data.draw(st.integers(0, 7)), "mem": data.draw(st.integers(0, 6))}
        )
        duration = data.draw(st.integers(1, 30))
        after = origin + data.draw(st.integers(0, 25))
        limit = data.draw(st.one_of(st.none(), st.integers(origin, origin + 30)))
        expected = profile.earliest_start(demand, duration, after, limit)
        assert profile.earliest_growing(demand, duration, after, limit) == expected


@settings(max_examples=300, deadline=None)
@given(
    ops=operations,
    slot=SLOTS,
    duration=st.integers(1, 12),
    after=st.integers(0, HORIZON * 2),
    steps=st.integers(0, 4),
)
def test_a_bounded_first_fit_is_the_first_fit_or_a_time_before_it(
    ops: list[tuple[int, int, int, int]],
    slot: tuple[int, int],
    duration: int,
    after: int,
    steps: int,
) -> None:
    """The first fit when it lies within ``steps`` steps, else a time after ``after`` and
    no later than the first fit; the first fit itself once the steps cover the profile."""
    profile = _booked(ops)
    demand = SPACE.pack({"cpus": slot[0], "mem": slot[1]})
    found = profile.earliest_start(demand, duration, after)
    first = NEVER if found is None else found
    bound = profile.earliest_or_bound(demand, duration, after, steps)
    assert after <= bound <= first
    assert profile.earliest_or_bound(demand, duration, after, len(profile)) == first
    if bound < first:  # a bound past the steps read: at one of the profile's breakpoints
        assert bound in [time for time, _ in profile.steps()]
