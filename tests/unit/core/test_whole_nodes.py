"""The counted plan for identical nodes: exact where named reservations fragment, nodes
named at start, a colouring that never overlaps, and the switch to named nodes when a
job would share a node."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from berth.core.model import Job
from berth.core.nodes import NodePlan
from berth.core.policies.nodes import NodeBackfill
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape
from berth.core.whole_nodes import TENTATIVE, CountedPlan

SPACE = ResourceSpace({"cpus": 1})
ONE = SPACE.pack({"cpus": 1})
ONE_NODE = Shape(1, {"cpus": 1})


def fragmented(plan: NodePlan | CountedPlan) -> None:
    """Node 1 runs a job until 5; a one-node reservation starts at 5 (on node 0, where
    the named plan's first fit puts it)."""
    plan.reserve({1: ONE}, 0, 5)
    found = plan.earliest(ONE_NODE, ONE, 5, 0)
    assert found is not None
    assert found[0] == 0  # node 0 is free
    both = plan.earliest(Shape(2, {"cpus": 1}), ONE, 5, 0)
    assert both is not None
    assert both[0] == 5
    placement = {0: 1} if isinstance(plan, NodePlan) else {TENTATIVE: 1}
    plan.reserve(plan.held(placement, ONE, False), 5, 5)


def test_counting_finds_the_start_a_named_reservation_hides() -> None:
    """Node 0 is free until 5, node 1 from 5: a 10-second job fits on one node from 0
    only if the reservation at 5 moves to node 1, which the counted plan may do."""
    named = NodePlan(SPACE, [ONE, ONE], 0)
    counted = CountedPlan(SPACE, [ONE, ONE], 0)
    fragmented(named)
    fragmented(counted)
    assert named.earliest(ONE_NODE, ONE, 10, 0) == (5, {1: 1})
    found = counted.earliest(ONE_NODE, ONE, 10, 0)
    assert found == (0, {TENTATIVE: 1})
    held = counted.held(found[1], ONE, False)
    counted.reserve(held, 0, 10)
    placement, named_held = counted.pin(found[1], held, ONE_NODE, ONE, 0)
    assert placement == {0: 1}  # node 1 is busy until 5
    assert named_held == {0: ONE}
    # The reservation at 5 is coloured onto node 1, which is free by then.
    (waiting,) = [b.held for b in counted._bookings.values() if TENTATIVE in b.held]
    assert counted.names(waiting) == {1: ONE}


def test_the_colouring_gives_every_reservation_nodes_free_all_its_window() -> None:
    plan = CountedPlan(SPACE, [ONE] * 3, 0)
    windows = [(0, 4, 2), (2, 6, 1), (4, 9, 2), (6, 8, 1), (9, 12, 3)]
    helds = []
    for start, end, count in windows:
        assert plan.place(Shape(count, {"cpus": 1}), ONE, start, end - start) is not None
        held = plan.held({TENTATIVE: count}, ONE, False)
        plan.reserve(held, start, end - start)
        helds.append(held)
    busy: dict[int, list[tuple[int, int]]] = {}
    for (start, end, count), held in zip(windows, helds, strict=True):
        nodes = plan.names(held)
        assert len(nodes) == count
        for node in nodes:
            assert all(end <= s or e <= start for s, e in busy.get(node, []))
            busy.setdefault(node, []).append((start, end))


def test_whole_nodes_are_counted_and_sharing_shapes_are_not() -> None:
    space = ResourceSpace({"cpus": 4, "gpus": 1})
    cap = space.pack({"cpus": 4, "gpus": 1})
    plan = CountedPlan(space, [cap] * 4, 0)

    def taken(shape: Shape) -> int | None:
        return plan.nodes_taken(shape, space.pack(shape.per_slot))

    assert taken(Shape(8, {"cpus": 1}, exclusive=True)) == 2
    assert taken(Shape(2, {"cpus": 1}, nodes=2, exclusive=True)) == 2
    assert taken(Shape(2, {"cpus": 4, "gpus": 1})) == 2  # a slot fills a node
    assert taken(Shape(3, {"cpus": 1})) is None  # a node would keep a cpu
    assert taken(Shape(1, {"cpus": 4})) is None  # the GPU stays free for another job
    assert taken(Shape(8, {"cpus": 1}, nodes=4)) is None  # half nodes


def test_a_copy_keeps_its_own_bookings() -> None:
    """What-if answers and forecasts run a deep copy of the policy: its plan must find
    the copies of the held dicts the copied jobs hold."""
    policy = NodeBackfill("conservative", {f"n{i}": {"cpus": 1} for i in range(2)})
    policy.submit(Job(1, 0, 10, {"cpus": 2}), 0)
    policy.submit(Job(2, 0, 10, {"cpus": 1}), 0)
    twin = copy.deepcopy(policy)
    started = twin.schedule(0)
    assert [s.job_id for s in started] == [1]
    assert started[0].placement == {"n0": {"cpus": 1}, "n1": {"cpus": 1}}
    assert policy.waiting.keys() == {1, 2}  # the original is untouched
    assert [s.job_id for s in policy.schedule(0)] == [1]


def counting(policy: NodeBackfill) -> bool:
    return isinstance(policy.plan, CountedPlan)


def test_a_job_that_shares_a_node_ends_counting_and_keeps_every_start() -> None:
    nodes = {f"n{i}": {"cpus": 2} for i in range(3)}
    policy = NodeBackfill("conservative", nodes)
    assert counting(policy)
    whole = Shape(1, {"cpus": 2})
    for job_id, count in ((1, 2), (2, 3), (3, 1), (4, 2)):
        policy.submit(Job(job_id, 0, 10 * job_id, {}, shape=Shape(count, whole.per_slot)), 0)
    started = {s.job_id: s.placement for s in policy.schedule(0)}
    before = {job_id: policy.planned_start(job_id) for job_id in policy.waiting}
    planned = {job_id: policy.planned_nodes(job_id) for job_id in policy.waiting}
    reply = policy.submit(Job(5, 0, 5, {"cpus": 1}), 0)  # one cpu: shares a node
    assert not counting(policy)
    assert {j: policy.planned_start(j) for j in before} == before
    assert {j: policy.planned_nodes(j) for j in planned} == planned  # the colouring's
    assert reply is not None
    assert started.keys() == {1}  # on two nodes; job 3 waits behind job 2's reservation
    assert started[1] is not None
    assert len(started[1]) == 2


def test_a_node_held_past_its_estimate_stays_held_until_its_job_ends() -> None:
    """A job that runs past its estimate still holds its node, which the plan counts
    free: a job started then may be named onto it too, and the node stays held until
    both have ended."""
    plan = CountedPlan(SPACE, [ONE] * 3, 0)
    overran, overran_held = plan.start_now({TENTATIVE: 1}, ONE_NODE, ONE, 0, 5)
    assert overran == {0: 1}
    # At 7 the plan counts node 0 free (its job's window ended at 5); a job of three
    # nodes is named onto it too.
    three, three_held = plan.start_now({TENTATIVE: 3}, Shape(3, {"cpus": 1}), ONE, 7, 5)
    assert three == {0: 1, 1: 1, 2: 1}
    plan.release(three_held, 8, 4)  # it ends early; node 0 is still held
    two, _ = plan.start_now({TENTATIVE: 2}, Shape(2, {"cpus": 1}), ONE, 8, 5)
    assert two == {1: 1, 2: 1}
    plan.release(overran_held, 9, 0)  # the job past its estimate ends: node 0 is idle
    one, _ = plan.start_now({TENTATIVE: 1}, ONE_NODE, ONE, 9, 1)
    assert one == {0: 1}


def test_starting_now_names_the_same_nodes_as_reserving_then_pinning() -> None:
    fused = CountedPlan(SPACE, [ONE] * 4, 0)
    apart = CountedPlan(SPACE, [ONE] * 4, 0)
    for start, count, duration in ((0, 1, 9), (0, 2, 3), (3, 2, 4), (4, 1, 2)):
        shape = Shape(count, {"cpus": 1})
        placement = {TENTATIVE: count}
        named = fused.start_now(placement, shape, ONE, start, duration)
        held = apart.held(placement, ONE, False)
        apart.reserve(held, start, duration)
        assert named == apart.pin(placement, held, shape, ONE, start)
    assert fused.aggregate.free_at(4) == apart.aggregate.free_at(4)


@given(
    others=st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 2), st.integers(1, 12)), max_size=3
    ),
    current=st.integers(1, 30),
    back=st.integers(1, 30),
    duration=st.integers(1, 15),
    count=st.integers(1, 2),
)
def test_moving_a_reservation_earlier_is_releasing_and_reserving_it_there(
    others: list[tuple[int, int, int]], current: int, back: int, duration: int, count: int
) -> None:
    """``move`` changes only the parts of the two windows that do not overlap: the same
    profile, step for step, and the same colouring as giving the reservation back and
    taking it again at its new start, whether the windows meet or not."""
    first = max(current - back, 0)
    if first == current:
        return
    moved, apart = CountedPlan(SPACE, [ONE] * 8, 0), CountedPlan(SPACE, [ONE] * 8, 0)
    for plan in (moved, apart):  # (8 nodes: never more taken at once than there are)
        for start, taken, length in others:
            plan.reserve({TENTATIVE: taken * ONE}, start, length)
    held = {TENTATIVE: count * ONE}
    moved.reserve(held, current, duration)
    twin = {TENTATIVE: count * ONE}
    apart.reserve(twin, current, duration)
    moved.move(held, current, first, duration)
    shape = Shape(count, {"cpus": 1})
    found = apart.earlier(shape, ONE, duration, first, current, twin)
    assert found is not None
    apart.reserve(apart.held(found[1], ONE, False), first, duration)
    assert moved.aggregate.steps() == apart.aggregate.steps()
    assert sorted(moved.colouring().values()) == sorted(apart.colouring().values())


def test_a_job_that_fills_its_nodes_partly_fills_the_first_ones() -> None:
    """Slots spread over the nodes a job takes: the first ones full, the next one what
    is left, one on each other (every node it takes holds a slot at least)."""
    eight = ResourceSpace({"cpus": 8})
    plan = CountedPlan(eight, [eight.pack({"cpus": 8})] * 6, 0)
    slot = eight.pack({"cpus": 1})
    spread = plan.named_placement([0, 2, 3, 5], Shape(19, {"cpus": 1}, exclusive=True), slot)
    assert spread == {0: 8, 2: 8, 3: 2, 5: 1}
    assert plan.named_placement([1, 4], Shape(9, {"cpus": 1}, exclusive=True), slot) == {
        1: 8,
        4: 1,
    }
    assert plan.named_placement([0, 1], Shape(16, {"cpus": 1}), slot) == {0: 8, 1: 8}
    assert plan.named_placement([0, 1, 2], Shape(3, {"cpus": 1}), slot) == {0: 1, 1: 1, 2: 1}
