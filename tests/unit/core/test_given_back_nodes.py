"""Compression's test on the nodes that gained room: a new start needs one of them."""

from __future__ import annotations

from berth.core.nodes import NodePlan
from berth.core.policies.node_compression import first_on_given_back
from berth.core.resources import ResourceSpace

SPACE = ResourceSpace({"cpus": 8})
FOUR = SPACE.pack({"cpus": 4})
SLOT = SPACE.pack({"cpus": 1})


def busy_pair() -> NodePlan:
    """Two 4-cpu nodes, both full until 100, node 0 given back during [10, 40)."""
    plan = NodePlan(SPACE, [FOUR, FOUR], 0)
    plan.reserve({0: FOUR, 1: FOUR}, 0, 100)
    plan.release({0: FOUR}, 10, 30)
    return plan


def test_the_first_start_is_where_a_node_that_gained_room_holds_a_slot() -> None:
    plan = busy_pair()
    windows = [(10, 40, (0,))]
    assert first_on_given_back(plan, SLOT, 30, windows, 0, 100) == 10
    # From 12 on, the gap is too short for 30 s: no start before 100 is new.
    assert first_on_given_back(plan, SLOT, 30, windows, 12, 100) is None
    assert first_on_given_back(plan, SLOT, 31, windows, 0, 100) is None


def test_room_on_nodes_not_logged_is_no_reason_to_search() -> None:
    plan = busy_pair()
    plan.release({1: FOUR}, 0, 100)  # node 1 free, but the log names node 0 only
    assert first_on_given_back(plan, SLOT, 31, [(10, 40, (0,))], 0, 100) is None
    assert first_on_given_back(plan, SLOT, 31, [(0, 100, (1,))], 0, 100) == 0


def test_the_window_is_cut_at_the_jobs_own_start() -> None:
    """From its own start on the job's reservation is its room: 31 s fit before 40."""
    plan = busy_pair()
    assert first_on_given_back(plan, SLOT, 31, [(10, 40, (0,))], 0, 40) == 10


def test_a_window_may_begin_before_the_room_it_reaches() -> None:
    """Node 0 is free during [10, 30) and given back during [30, 50): a 25-s window
    fits from 10 on now, though it fitted nowhere before."""
    plan = NodePlan(SPACE, [FOUR], 0)
    plan.reserve({0: FOUR}, 0, 10)
    plan.reserve({0: FOUR}, 30, 70)
    plan.release({0: FOUR}, 30, 20)
    assert first_on_given_back(plan, SLOT, 25, [(30, 50, (0,))], 0, 200) == 10


def test_room_given_back_on_nodes_not_named_bounds_nothing() -> None:
    plan = busy_pair()
    assert first_on_given_back(plan, SLOT, 31, [(10, 40, ())], 5, 100) == 5
