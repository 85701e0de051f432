"""Hypothesis: the node plan's blocks prune without changing a single answer.

:class:`~berth.core.node_blocks.NodeBlocks` passes over whole blocks of nodes whose
summed profile lacks one slot. The pruning is exact: every policy gives the same starts,
guarantees and placements with blocks (of two or three nodes, so that pruning happens
on small clusters too) as with every node asked; and on clusters of hundreds of nodes
the placements stay real (no node over-committed, no slot split, no guarantee broken).
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core import node_search
from berth.core import nodes as node_module
from berth.core.model import Job
from berth.core.policies.node_registry import make_node_policy
from berth.core.policies.node_schedule import NODE_POLICIES
from berth.core.shapes import Shape
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.test_node_planner import check, node_jobs

RESOURCES = ("cpus", "mem", "gpus")


@st.composite
def blocky_clusters(draw: st.DrawFn, least: int = 2, most: int = 9) -> dict[str, dict[str, int]]:
    """Clusters of a few node shapes, some with a resource others lack."""
    k = draw(st.integers(1, 3))
    shapes = [
        {name: draw(st.integers(0 if name == "gpus" else 1, 4)) for name in RESOURCES[:k]}
        for _ in range(draw(st.integers(1, 3)))
    ]
    shapes = [{name: amount for name, amount in shape.items() if amount} for shape in shapes]
    count = draw(st.integers(least, most))
    return {f"n{i:03d}": dict(draw(st.sampled_from(shapes))) for i in range(count)}


@st.composite
def blocky_workloads(
    draw: st.DrawFn,
) -> tuple[dict[str, dict[str, int]], list[TraceJob]]:
    """A cluster of :func:`blocky_clusters` and up to 30 node-shaped jobs on it."""
    nodes = draw(blocky_clusters())
    return nodes, draw(node_jobs(nodes, 30))


def _replay(jobs: list[TraceJob], policy: str, nodes: dict[str, dict[str, int]],
            blocks_from: int, block_steps: int = node_search.BLOCK_STEPS,
            ) -> list[JobRecord]:  # fmt: skip
    with (
        mock.patch.object(node_module, "BLOCKS_FROM", blocks_from),
        mock.patch.object(node_search, "BLOCK_STEPS", block_steps),
    ):
        return replay(jobs, make_node_policy(policy, nodes))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), policy=st.sampled_from(sorted(NODE_POLICIES)))
def test_blocks_give_the_schedule_of_every_node_asked(data: st.DataObject, policy: str) -> None:
    nodes, jobs = data.draw(blocky_workloads())
    pruned = _replay(jobs, policy, nodes, blocks_from=1)
    every_node = _replay(jobs, policy, nodes, blocks_from=1 << 30)
    # A block's summed profile read one step at a time: each time it gives is a bound.
    bounded = _replay(jobs, policy, nodes, blocks_from=1, block_steps=1)
    expected = [(r.id, r.start, r.guarantee, r.nodes) for r in every_node]
    assert [(r.id, r.start, r.guarantee, r.nodes) for r in pruned] == expected
    assert [(r.id, r.start, r.guarantee, r.nodes) for r in bounded] == expected


@st.composite
def wide_jobs(draw: st.DrawFn, nodes: dict[str, dict[str, int]], most: int) -> list[TraceJob]:
    """Jobs from one slot to a third of the cluster's slots, on hundreds of nodes."""
    names = sorted({name for amounts in nodes.values() for name in amounts})
    jobs = []
    for job_id in range(1, draw(st.integers(1, most)) + 1):
        per_slot = {names[0]: draw(st.integers(1, 2))}
        count = draw(st.integers(1, max(1, len(nodes) // 3)))
        spread = draw(st.one_of(st.none(), st.integers(1, min(count, len(nodes)))))
        shape = Shape(count, per_slot, nodes=spread, exclusive=draw(st.booleans()) and count < 8)
        estimate = draw(st.integers(1, 20))
        job = Job(job_id, draw(st.integers(0, 30)), estimate, {}, shape=shape)
        jobs.append(TraceJob(job, draw(st.integers(1, 20))))
    return sorted(jobs, key=lambda t: (t.job.submit, t.job.id))


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    policy=st.sampled_from(sorted(NODE_POLICIES)),
    count=st.integers(100, 400),
)
def test_placements_are_real_on_hundreds_of_nodes(
    data: st.DataObject, policy: str, count: int
) -> None:
    cpus = data.draw(st.integers(2, 8))
    nodes = {f"n{i:03d}": {"cpus": cpus if i % 7 else cpus + 2} for i in range(count)}
    jobs = data.draw(wide_jobs(nodes, 60))
    records = replay(jobs, make_node_policy(policy, nodes))
    check(records, jobs, nodes, policy)
