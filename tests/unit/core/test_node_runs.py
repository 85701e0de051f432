"""A run of placements in C bounds each search by the ones before it, only where it may.

:func:`berth.core.node_runs.place_run` starts a job's search no earlier than where an
earlier job of the run, one its placement would contain, was found (the run only takes
room). A shorter or wider job, or one that names its node count, must not be bounded by
it; the property test (``tests/property/test_board_runs.py``) compares whole runs with the
method-by-method path, and these cases pin each condition down.
"""

from __future__ import annotations

import pytest

from berth.core import node_runs
from berth.core.nodes import NodePlan
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape

pytestmark = pytest.mark.skipif(
    node_runs.PLACE_RUN is None, reason="the C profile is not built (tools/build_native.py)"
)

SPACE = ResourceSpace({"cpus": 8, "mem": 8})
NODE = SPACE.pack({"cpus": 2, "mem": 2})
NEVER_LATE = 1 << 40


def holed() -> NodePlan:
    """One node of 2 cpus, full during [5, 10): a gap of 5 s before it."""
    plan = NodePlan(SPACE, [NODE], 0)
    plan.reserve({0: NODE}, 5, 5)
    return plan


def half_full() -> NodePlan:
    """One node of 2 cpus and 2 mem, half taken during [0, 10)."""
    plan = NodePlan(SPACE, [NODE], 0)
    plan.reserve({0: SPACE.pack({"cpus": 1, "mem": 1})}, 0, 10)
    return plan


Run = tuple[dict[str, int], int, int, int | None, int]


def starts(plan: NodePlan, *jobs: Run) -> list[int]:
    """The starts a run gives jobs ``(slot, count, duration, node count, after)``."""
    run = []
    for per_slot, count, duration, spread, after in jobs:
        shape = Shape(count, per_slot, nodes=spread)
        job = node_runs.run_job(plan, shape, SPACE.pack(per_slot), duration, after, NEVER_LATE)
        assert job is not None
        run.append(job)
    return [found[0] for found in node_runs.place_run(plan, run) if found is not None]


ONE = {"cpus": 1}


def test_a_job_that_contains_an_earlier_one_starts_no_earlier_than_it() -> None:
    # (and the bound gives what the search gives: the second has no room before 10)
    assert starts(holed(), (ONE, 1, 8, None, 0), (ONE, 2, 8, None, 0)) == [10, 18]


def test_a_shorter_job_takes_the_gap_a_longer_one_could_not() -> None:
    assert starts(holed(), (ONE, 1, 8, None, 0), (ONE, 1, 3, None, 0)) == [10, 0]


def test_a_job_asked_from_earlier_takes_the_gap() -> None:
    assert starts(holed(), (ONE, 1, 3, None, 3), (ONE, 1, 3, None, 0)) == [10, 0]


def test_a_smaller_slot_or_fewer_slots_take_the_room_left() -> None:
    assert starts(half_full(), ({"cpus": 2}, 1, 3, None, 0), (ONE, 1, 3, None, 0)) == [10, 0]
    assert starts(half_full(), ({"cpus": 1, "mem": 2}, 1, 3, None, 0), (ONE, 1, 3, None, 0)) == [
        10,
        0,
    ]
    assert starts(half_full(), (ONE, 2, 3, None, 0), (ONE, 1, 3, None, 0)) == [10, 0]


def test_a_job_with_a_node_count_bounds_no_other() -> None:
    """Two slots on one node wait for a whole node; two anywhere start at once."""
    plan = NodePlan(SPACE, [NODE, NODE], 0)
    plan.reserve({0: SPACE.pack(ONE), 1: SPACE.pack(ONE)}, 0, 10)
    assert starts(plan, (ONE, 2, 3, 1, 0), (ONE, 2, 3, None, 0)) == [10, 0]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((ONE, 1, 8, 1, 0), (ONE, 1, 3, None, 0)),  # shorter
        ((ONE, 1, 3, 1, 3), (ONE, 1, 3, None, 0)),  # asked from earlier
    ],
)
def test_where_the_nodes_held_an_earlier_job_together_bounds_no_shorter_or_earlier_one(
    first: Run, second: Run
) -> None:
    """The summed profile's starts are bounded alike (an earlier job with a node count
    leaves no bound on the nodes: only the summed one is left to get it wrong)."""
    assert starts(holed(), first, second) == [10, 0]


def test_where_the_nodes_held_a_larger_job_together_bounds_no_smaller_one() -> None:
    assert starts(half_full(), ({"cpus": 2}, 1, 3, 1, 0), (ONE, 1, 3, None, 0)) == [10, 0]


@pytest.mark.parametrize(("part", "value"), [(7, (0,)), (8, "blocks")])
def test_a_job_whose_nodes_or_blocks_are_not_lists_is_refused(part: int, value: object) -> None:
    """The C loop reads a job's able nodes and blocks as lists without asking again (each
    search of the run used to check them): anything else is a TypeError, not a crash."""
    plan = half_full()
    job = node_runs.run_job(plan, Shape(1, ONE), SPACE.pack(ONE), 5, 0, NEVER_LATE)
    assert job is not None
    broken = (*job[:part], value, *job[part + 1 :])
    with pytest.raises(TypeError, match="lists"):
        node_runs.place_run(plan, [broken])  # type: ignore[list-item]
    assert node_runs.place_run(plan, [job])[0] is not None  # (the plan is unchanged)
