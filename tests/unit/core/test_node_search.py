"""The node search asks a node with no room at a start when its room comes back only if
the search goes on past that start (the walk to a long enough run is what costs)."""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import pytest

from berth.core.nodes import NodePlan
from berth.core.profile import PythonProfile
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape
from tests.profile_classes import python_profiles

SPACE = ResourceSpace({"cpus": 4})


@pytest.fixture(autouse=True)
def _python_profiles() -> Iterator[None]:
    """These tests count the Python profile's calls: the plans are made of it."""
    with python_profiles():
        yield


FOUR = SPACE.pack({"cpus": 4})


def asked(plan: NodePlan, shape: Shape, duration: int) -> tuple[object, list[int]]:
    """The plan's earliest placement of ``shape`` from 0, and the nodes whose window of
    slots was asked (``copies_until``), in order."""
    demand = SPACE.pack(dict(shape.per_slot))
    with mock.patch.object(
        PythonProfile, "copies_until", autospec=True, side_effect=PythonProfile.copies_until
    ) as spy:
        found = plan.earliest(shape, demand, duration, 0)
    nodes = [plan.profiles.index(call.args[0]) for call in spy.call_args_list]
    return found, nodes


def test_a_node_busy_at_the_start_found_is_not_asked_when_it_frees_up() -> None:
    plan = NodePlan(SPACE, [FOUR, FOUR, FOUR], 0)
    plan.reserve({0: FOUR}, 0, 100)  # node 0 busy until 100: no slot at 0
    found, nodes = asked(plan, Shape(2, {"cpus": 2}), 10)
    assert found == (0, {1: 2})
    assert 0 not in nodes
    assert nodes == [1, 2]


def test_nodes_put_off_are_asked_once_the_search_goes_past_their_start() -> None:
    """At 0 the nodes hold 6 cpus together but no 3-cpu slot; node 2's comes at 60."""
    plan = NodePlan(SPACE, [FOUR, FOUR, FOUR], 0)
    two = SPACE.pack({"cpus": 2})
    plan.reserve({0: two, 1: two}, 0, 100)
    plan.reserve({2: FOUR}, 0, 60)
    found, nodes = asked(plan, Shape(1, {"cpus": 3}), 10)
    assert found == (60, {2: 1})
    assert sorted(nodes[:3]) == [0, 1, 2]  # each asked at 0 once 0 held no slot
    assert nodes[3:] == [2]  # and node 2 again where its room came back
