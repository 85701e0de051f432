"""The C node search walks the blocks' bounds between its candidates (``_profile_block_walk.h``)
once the nodes have failed at a few: it passes over starts where the blocks' summed copies
fall short of the count, and must find the start and nodes the Python reference walk finds
(which asks every candidate) and the search without blocks finds.

The plan here is a churn of short holes: sixteen four-cpu nodes in blocks of four, each
node busy in back-to-back reservations of three or four cpus, so a job of a few one-cpu
slots for a while meets room in the sums at many candidates and on no nodes for its whole
window until late; blocks with no room at one candidate come back at a later one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from unittest import mock

import pytest

from berth.core import node_search
from berth.core import nodes as node_module
from berth.core.node_search import Placement
from berth.core.nodes import NodePlan
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape
from tests.profile_classes import python_search

pytestmark = pytest.mark.skipif(
    node_search.NATIVE_SEARCH is None, reason="the C profile is not built"
)

SPACE = ResourceSpace({"cpus": 4})
NODES = 16
ONE = SPACE.pack({"cpus": 1})


def churned_plan(seed: int) -> NodePlan:
    """Sixteen nodes, each booked back to back for 2,000 s in pieces of 3 or 4 cpus
    lasting 5-40 s: short one-cpu holes that come and go on every node."""
    rng = random.Random(seed)
    plan = NodePlan(SPACE, [SPACE.pack({"cpus": 4})] * NODES, 0)
    for node in range(NODES):
        at = rng.randrange(0, 20)
        if at:
            plan.reserve({node: SPACE.pack({"cpus": 4})}, 0, at)
        while at < 2000:
            length = rng.randrange(5, 41)
            cpus = rng.choice((3, 4, 4))
            plan.reserve({node: SPACE.pack({"cpus": cpus})}, at, length)
            at += length
    return plan


def searches(
    seed: int, blocks_from: int, context: Callable[[], AbstractContextManager[object]]
) -> list[tuple[int, Placement] | None]:
    """Every answer of a set of searches on :func:`churned_plan` (one-cpu slots, 1-9 of
    them, for 10-120 s, from 0 and from 500), blocks made from ``blocks_from`` nodes on."""
    with mock.patch.object(node_module, "BLOCKS_FROM", blocks_from), context():
        plan = churned_plan(seed)
        return [
            plan.earliest_afresh(Shape(count, {"cpus": 1}), ONE, duration, after)
            for count in range(1, 10)
            for duration in (10, 30, 60, 120)
            for after in (0, 500)
        ]


@pytest.mark.parametrize("seed", range(12))
def test_the_c_search_walking_the_blocks_finds_what_the_reference_finds(seed: int) -> None:
    walked = searches(seed, 1, nullcontext)
    assert walked == searches(seed, 1, python_search)
    assert walked == searches(seed, 1 << 30, nullcontext)
    # Not every answer is the first candidate: the searches walked.
    assert sum(1 for found in walked if found is not None and found[0] > 500) > 10
