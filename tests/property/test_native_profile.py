"""The C availability profile answers as the Python one, question for question.

Both profiles go through the same random changes (reservations, releases, packed
changes, forgetting the past, copies, pickling); after each, their steps and every
question the planners ask are compared. ``copies_until``'s second answer (when the
count may change) is not the same by design: both walks to a run of room stop after a
few dozen steps and answer a bound, but the Python one counts them from another step and
may answer from its index of runs instead; both must hold their count until the time
they give, which is checked second by second.
"""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.profile import NATIVE, NEVER, Profile, PythonProfile
from berth.core.resources import ResourceSpace

pytestmark = pytest.mark.skipif(
    not NATIVE, reason="the C profile is not built (tools/build_native.py) or BERTH_NATIVE=0"
)

SPACES = [
    ResourceSpace({"cpus": 8}),
    ResourceSpace({"cpus": 6, "mem": 5}),
    ResourceSpace({"cpus": 4, "mem": 3, "gpus": 2}),
]
HORIZON = 60

#: A change: ``(kind, start, length, amounts)``; kind 0 reserves at the earliest start
#: from ``start``, 1 releases an earlier reservation, 2 forgets the past before
#: ``start``, 3 replaces the profiles by copies (and a pickled round trip).
changes = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 0, 1, 2, 3]),
        st.integers(0, HORIZON),
        st.integers(1, 20),
        st.lists(st.integers(0, 8), min_size=3, max_size=3),
    ),
    max_size=30,
)


def _demand(space: ResourceSpace, amounts: list[int]) -> int:
    """A packed demand within the space's capacity, asking for something."""
    named = {
        name: min(a, space.capacity[name]) for name, a in zip(space.names, amounts, strict=False)
    }
    if not any(named.values()):
        named[space.names[0]] = 1
    return space.pack(named)


def _questions(py: PythonProfile, c: Profile, space: ResourceSpace, data: st.DataObject) -> None:
    """Ask both the same questions; the answers must agree."""
    assert c.steps() == py.steps()
    assert len(c) == len(py)
    first = py.steps()[0][0]
    for _ in range(4):
        demand = _demand(space, data.draw(st.lists(st.integers(0, 8), min_size=3, max_size=3)))
        at = data.draw(st.integers(first, HORIZON * 2))
        duration = data.draw(st.integers(1, 25))
        most = data.draw(st.integers(0, 6))
        limit = data.draw(st.none() | st.integers(first, HORIZON * 2))
        before = data.draw(st.none() | st.integers(first, HORIZON * 2))
        steps = data.draw(st.integers(0, 5))
        assert c.free_at(at) == py.free_at(at)
        assert c.has_past(at) == py.has_past(at)
        assert c.breakpoints(at, at + duration) == py.breakpoints(at, at + duration)
        assert c.min_free(at, at + duration) == py.min_free(at, at + duration)
        assert c.fits_during(demand, at, duration) == py.fits_during(demand, at, duration)
        assert c.first_fit(demand, at) == py.first_fit(demand, at)
        assert c.slots_at(demand, at, most) == py.slots_at(demand, at, most)
        assert c.copies_from(demand, at, duration, most) == py.copies_from(
            demand, at, duration, most
        )
        assert c.copies_during(demand, at, at + duration, most) == py.copies_during(
            demand, at, at + duration, most
        )
        assert c.earliest_start(demand, duration, at, limit, before) == py.earliest_start(
            demand, duration, at, limit, before
        )
        assert c.earliest_start(demand, duration, at, limit=limit) == py.earliest_start(
            demand, duration, at, limit=limit
        )
        assert c.earliest_or_bound(demand, duration, at, steps) == py.earliest_or_bound(
            demand, duration, at, steps
        )
        assert c.earliest_growing(demand, duration, at, limit) == py.earliest_growing(
            demand, duration, at, limit
        )
        count, until = c.copies_until(demand, at, duration, max(most, 1), limit)
        py_count, _ = py.copies_until(demand, at, duration, max(most, 1), limit)
        assert count == py_count
        assert until > at
        for later in range(at, min(until, HORIZON * 3)):
            assert c.copies_during(demand, later, later + duration, max(most, 1)) == count
        bound = NEVER if limit is None else limit
        if count == 0 and until < bound and until < NEVER:
            assert c.copies_during(demand, until, until + duration, 1) > 0


@settings(max_examples=300, deadline=None)
@given(space_at=st.integers(0, len(SPACES) - 1), script=changes, data=st.data())
def test_the_c_profile_answers_as_the_python_one(
    space_at: int, script: list[tuple[int, int, int, list[int]]], data: st.DataObject
) -> None:
    space = SPACES[space_at]
    py = PythonProfile(space.packed_capacity, space.guard, 0)
    c = Profile(space.packed_capacity, space.guard, 0)
    held: list[tuple[int, int, int]] = []
    now = 0
    for kind, start, length, amounts in script:
        demand = _demand(space, amounts)
        if kind == 0:
            at = py.earliest_start(demand, length, max(start, now))
            assert at is not None
            assert c.earliest_start(demand, length, max(start, now)) == at
            py.reserve(at, length, demand)
            c.reserve(at, length, demand)
            held.append((at, length, demand))
        elif kind == 1 and held:
            at, length, demand = held.pop(start % len(held))
            if at >= now:
                py.release(at, length, demand)
                c.add(at, at + length, demand)  # (release as a packed change)
        elif kind == 2:
            now = max(now, min(start, HORIZON))
            py.forget_before(now)
            c.forget_before(now)
            held = [h for h in held if h[0] >= now]
        elif kind == 3:
            py = py.copy()
            c = pickle.loads(pickle.dumps(copy.deepcopy(c.copy())))
        _questions(py, c, space, data)


def test_a_change_before_the_origin_is_refused_as_in_python() -> None:
    space = SPACES[1]
    for profile in (PythonProfile(space.packed_capacity, space.guard, 10),
                    Profile(space.packed_capacity, space.guard, 10)):  # fmt: skip
        with pytest.raises(ValueError, match="before the profile's origin 10"):
            profile.reserve(5, 10, space.pack({"cpus": 1}))


def test_a_vector_wider_than_the_space_is_refused() -> None:
    space = SPACES[0]
    profile = Profile(space.packed_capacity, space.guard, 0)
    with pytest.raises(ValueError, match="more fields"):
        profile.fits_during(SPACES[1].pack({"mem": 1}), 0, 1)


@settings(max_examples=200, deadline=None)
@given(
    placement=st.dictionaries(st.integers(0, 4095), st.integers(1, 2**70), max_size=12),
    demand=st.sampled_from([1, 3 + (5 << 50), (1 << 62) + 7, 9 << 100, 2**63 - 1]),
)
def test_what_a_placement_holds_is_the_python_product(
    placement: dict[int, int], demand: int
) -> None:
    """``held_of`` (``NodePlan.held`` in C): the same dict as Python's products, in the
    same order, where a product fits in 64 bits and where it does not."""
    from berth.core.profile import HELD_OF

    assert HELD_OF is not None
    held = HELD_OF(placement, demand)
    python = {index: demand * slots for index, slots in placement.items()}
    assert held == python
    assert list(held) == list(python)
    with pytest.raises(TypeError):
        HELD_OF([(0, 1)], demand)  # type: ignore[arg-type]


def test_nodes_holding_as_many_slots_share_one_amount() -> None:
    """``held_of`` gives the nodes holding as many slots one Python int between them, and
    the same int to a placement made again (a commit compares old and new amounts by
    identity first; a booking finds a shared amount unpacked already). Thousands of
    other amounts in between (each replacing a kept one) change no value."""
    from berth.core.profile import HELD_OF

    assert HELD_OF is not None
    demand = 3 + (5 << 50)
    held = HELD_OF({0: 2, 1: 2, 2: 3}, demand)
    assert held[0] is held[1]
    assert held == {0: 2 * demand, 1: 2 * demand, 2: 3 * demand}
    assert HELD_OF({7: 2}, demand)[7] is held[0]
    for other in range(1, 5000):
        assert HELD_OF({0: 1, 1: 4}, other + (1 << 50)) == {
            0: other + (1 << 50),
            1: 4 * (other + (1 << 50)),
        }
    assert HELD_OF({0: 2, 1: 2, 2: 3}, demand) == {0: 2 * demand, 1: 2 * demand, 2: 3 * demand}
    wide = 9 << 100  # (products past 64 bits are shared within a placement too)
    held = HELD_OF({0: 5, 1: 5}, wide)
    assert held[0] is held[1]
    assert held[0] == 5 * wide


def test_a_summed_profile_is_the_same_from_either_class() -> None:
    from berth.core.profile_sets import summed

    space = SPACES[2]
    parts_py = [PythonProfile(space.packed_capacity, space.guard, 0) for _ in range(3)]
    parts_c = [Profile(space.packed_capacity, space.guard, 0) for _ in range(3)]
    for index, (py, c) in enumerate(zip(parts_py, parts_c, strict=True)):
        demand = space.pack({"cpus": index + 1, "gpus": 1})
        for profile in (py, c):
            profile.reserve(index * 5, 10, demand)
    assert summed(parts_c).steps() == summed(parts_py).steps()
    assert summed(parts_c).capacity == 3 * space.packed_capacity


def test_the_c_walk_to_a_long_run_stops_with_a_bound_a_search_asks_again_from() -> None:
    """A node free one second in two for 400 seconds, then free for good: no 10-second
    window has room before 399. The C walk to a run long enough stops after a few dozen
    steps and answers the time it reached (a bound: none of the starts before it has
    room), so a search asks again from there; the questions reach 399, in more than one
    step (walked to the end, the first question went through all 400 steps)."""
    space = SPACES[0]
    c = Profile(space.packed_capacity, space.guard, 0)
    for at in range(0, 400, 2):
        c.reserve(at, 1, space.pack({"cpus": 8}))
    slot = space.pack({"cpus": 1})
    asked = [0]
    count, until = c.copies_until(slot, 0, 10, 1)
    while count == 0:
        assert until > asked[-1]
        for start in range(asked[-1], until):
            assert c.copies_during(slot, start, start + 10, 1) == 0
        asked.append(until)
        count, until = c.copies_until(slot, until, 10, 1)
    assert asked[-1] == 399
    assert (count, until) == (1, NEVER)
    assert len(asked) > 2


QUESTIONS = [  # (method, its arguments: a demand first where it takes one, then times)
    ("breakpoints", (0, 5)),
    ("min_free", (0, 5)),
    ("fits_during", ("demand", 0, 5)),
    ("first_fit", ("demand", 0)),
    ("slots_at", ("demand", 0, 2)),
    ("copies_from", ("demand", 0, 5, 2)),
    ("copies_during", ("demand", 0, 5, 2)),
    ("copies_until", ("demand", 0, 5, 2)),
    ("earliest_or_bound", ("demand", 5, 0, 3)),
    ("earliest_growing", ("demand", 5, 0)),
]


@pytest.mark.parametrize(("method", "arguments"), QUESTIONS)
def test_a_question_with_a_missing_or_wrong_argument_is_refused_by_name(
    method: str, arguments: tuple[object, ...]
) -> None:
    space = ResourceSpace({"cpus": 8})
    profile = Profile(space.packed_capacity, space.guard, 0)
    ask = getattr(profile, method)
    filled = [space.pack({"cpus": 1}) if a == "demand" else a for a in arguments]
    ask(*filled)  # (answered)
    with pytest.raises(TypeError, match=rf"{method}\(\) takes"):
        ask(*filled[:-1])
    for at in range(len(filled)):
        wrong = [*filled[:at], "soon", *filled[at + 1 :]]
        with pytest.raises(TypeError):
            ask(*wrong)


@settings(max_examples=300, deadline=None)
@given(
    capacity=st.lists(st.integers(0, (1 << 49) - 1), min_size=1, max_size=8),
    share=st.lists(st.floats(0, 1), min_size=8, max_size=8),
)
def test_packed_vectors_of_any_width_are_read_as_python_reads_them(
    capacity: list[int], share: list[float]
) -> None:
    """A packed vector wider than 64 bits (two resources or more) is split from its bytes
    in C: the capacity given comes back from ``steps``, and a reservation of any demand
    (a new int each time, as a booking's amounts are) leaves what Python's subtraction
    leaves."""
    space = ResourceSpace({f"r{i}": max(1, amount) for i, amount in enumerate(capacity)})
    packed_capacity = space.packed_capacity
    profile = Profile(int(str(packed_capacity)), space.guard, 0)
    assert profile.steps() == [(0, packed_capacity)]
    demand = space.pack(
        {
            name: int(space.capacity[name] * part)
            for name, part in zip(space.names, share, strict=False)
        }
    )
    profile.reserve(0, 5, int(str(demand)))
    assert profile.free_at(0) == packed_capacity - demand
    assert profile.free_at(5) == packed_capacity


@pytest.mark.parametrize(
    ("packed", "message"),
    [(-(1 << 70), "must not be negative"), (1 << 100, "more fields"), (1 << 150, "more fields")],
)
def test_a_wide_vector_that_is_negative_or_too_wide_is_refused(packed: int, message: str) -> None:
    space = SPACES[1]  # two resources: 100 bits
    with pytest.raises(ValueError, match=message):
        Profile(packed, space.guard, 0)
    profile = Profile(space.packed_capacity, space.guard, 0)
    with pytest.raises(ValueError, match=message):
        profile.fits_during(packed, 0, 1)
