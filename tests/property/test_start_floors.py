"""Hypothesis: a node plan's searches that begin at the bounds of the searches before
them (:mod:`berth.core.start_floors`) answer exactly as searches from the question's
own start: the same start and the same placement, on random clusters, through random
reservations taken, given back whole or in part (a job ending early), and moved
earlier (compression's :meth:`NodePlan.earlier`); and again when every window of room
given back is merged into one span before the bounds read it."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core import start_floors
from berth.core.nodes import NodePlan
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape

NAMES = ("cpus", "mem")


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    # Few kinds of slot, so that searches meet the bounds of others of their kind.
    count = draw(st.integers(1, 4))
    return Shape(
        count=count,
        per_slot={"cpus": 1, "mem": draw(st.sampled_from((0, 0, 1)))},
        nodes=draw(st.sampled_from((None, None, None, min(2, count)))),
        exclusive=draw(st.sampled_from((False, False, False, True))),
    )


#: One step of a plan's life: ``("ask", shape, duration, delay)`` searches from ``delay``
#: after the present and books the answer; ``("end", which)`` gives a booking back from
#: the present on (a running job ending early) or whole (a waiting job withdrawn);
#: ``("earlier", which)`` asks a booking for an earlier start, as compression does;
#: ``("tick", seconds)`` moves the present on. Room is only ever given back from the
#: present on or whole, as in a policy: a plan's free room then grows only at ends.
steps = st.one_of(
    st.tuples(st.just("ask"), shapes(), st.integers(1, 20), st.integers(0, 3)),
    st.tuples(st.just("ask"), shapes(), st.integers(1, 20), st.just(0)),
    st.tuples(st.just("ask"), shapes(), st.integers(1, 20), st.just(0)),
    st.tuples(st.just("end"), st.integers(0, 50)),
    st.tuples(st.just("earlier"), st.integers(0, 50)),
    st.tuples(st.just("tick"), st.integers(1, 4)),
)


clusters = st.lists(
    st.fixed_dictionaries({"cpus": st.integers(4, 6), "mem": st.integers(2, 4)}),
    min_size=1,
    max_size=3,
)


@settings(max_examples=600, deadline=None)
@given(clusters, st.lists(steps, min_size=10, max_size=80))
def test_bounded_searches_answer_as_unbounded_ones(
    nodes: list[dict[str, int]], plan_steps: list[tuple[object, ...]]
) -> None:
    check(nodes, plan_steps)


@settings(max_examples=300, deadline=None)
@given(clusters, st.lists(steps, min_size=10, max_size=80))
def test_windows_merged_into_one_span_still_answer_as_unbounded_searches(
    nodes: list[dict[str, int]], plan_steps: list[tuple[object, ...]]
) -> None:
    with mock.patch.object(start_floors, "PENDING_LIMIT", 1):
        check(nodes, plan_steps)


def check(nodes: list[dict[str, int]], plan_steps: list[tuple[object, ...]]) -> None:
    """Every search of ``plan_steps`` on ``nodes`` answers as the unbounded search."""
    space = ResourceSpace({name: max(n[name] for n in nodes) for name in NAMES})
    plan = NodePlan(space, [space.pack(n) for n in nodes], 0)
    now = 0
    # Each booking: shape, packed slot, start, duration, what it holds per node.
    booked: list[tuple[Shape, int, int, int, dict[int, int]]] = []
    for step in plan_steps:
        kind, *args = step
        if kind == "ask":
            shape, duration, delay = args
            assert isinstance(shape, Shape)
            assert isinstance(duration, int)
            assert isinstance(delay, int)
            demand = space.pack(shape.per_slot)
            after = now + delay
            unbounded = plan._earliest(shape, demand, duration, after, None, None, None)
            found = plan.earliest(shape, demand, duration, after)
            assert found == unbounded, (shape, duration, after)
            if found is not None:
                held = plan.held(found[1], demand, shape.exclusive)
                plan.reserve(held, found[0], duration)
                booked.append((shape, demand, found[0], duration, held))
        elif kind == "tick":
            assert isinstance(args[0], int)
            now += args[0]
            booked = [b for b in booked if b[2] + b[3] > now]  # the ended are gone
            plan.forget_before(now)
        elif booked and kind == "end":
            assert isinstance(args[0], int)
            shape, demand, start, duration, held = booked.pop(args[0] % len(booked))
            given_from = max(start, now)
            plan.release(held, given_from, start + duration - given_from)
        elif booked and kind == "earlier":
            assert isinstance(args[0], int)
            at = args[0] % len(booked)
            shape, demand, start, duration, held = booked[at]
            if start <= now:
                continue  # running
            moved = plan.earlier(shape, demand, duration, now, start, held)
            if moved is not None:
                new_held = plan.held(moved[1], demand, shape.exclusive)
                plan.reserve(new_held, moved[0], duration)
                booked[at] = (shape, demand, moved[0], duration, new_held)
