"""Whether some node set of a cluster could ever hold a shape: ``shape_problem`` against
a search of every node set.

The check runs for every submission, with the cluster's capacities counted once (how
many nodes have each); it answers the same for the nodes listed one by one, and says
``None`` exactly when some set of nodes holds the slots: any nodes (each up to the
slots it fits) without a node count, exactly N nodes of at least one slot each with
one.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape, shape_problem, slots_in

SPACE = ResourceSpace({"cpus": 1024, "gpus": 64})

nodes = st.lists(
    st.fixed_dictionaries(
        {"cpus": st.sampled_from([1, 2, 4, 8]), "gpus": st.sampled_from([0, 1, 2])}
    ),
    min_size=1,
    max_size=7,
)
slots = st.fixed_dictionaries({"cpus": st.integers(1, 5), "gpus": st.sampled_from([0, 0, 1])})


def _some_set_holds(shape: Shape, capacities: list[int]) -> bool:
    demand = SPACE.pack(shape.per_slot)
    holds = [slots_in(cap, demand, shape.count) for cap in capacities]
    if shape.nodes is None:
        return sum(holds) >= shape.count
    return any(
        all(holds[i] for i in chosen) and sum(holds[i] for i in chosen) >= shape.count
        for chosen in combinations(range(len(holds)), shape.nodes)
    )


@settings(max_examples=400, deadline=None)
@given(
    cluster=nodes,
    per_slot=slots,
    count=st.integers(1, 24),
    node_count=st.none() | st.integers(1, 8),
)
def test_a_shape_is_refused_exactly_when_no_node_set_holds_it(
    cluster: list[dict[str, int]], per_slot: dict[str, int], count: int, node_count: int | None
) -> None:
    if node_count is not None and node_count > count:
        node_count = count
    shape = Shape(count, per_slot, nodes=node_count)
    capacities = [SPACE.pack(node) for node in cluster]
    problem = shape_problem(shape, SPACE, capacities)
    assert shape_problem(shape, SPACE, dict(Counter(capacities))) == problem
    assert (problem is None) == _some_set_holds(shape, capacities), problem
