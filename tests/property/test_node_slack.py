"""Slack-based priority backfilling on named nodes keeps its promises.

* On random node clusters and node-shaped jobs, with random priorities, heuristics and
  parameters: a waiting job's bound never moves and its reservation never passes it,
  every job starts no later than its bound, on nodes never over-committed, with whole
  slots.
* On one-cpu nodes (jobs given as cpus: whole nodes, counted), every job starts when
  the pool's slack policy starts it, once the pool compresses in passes until no job
  moves, as the node planner does (slack leaves room a second pass can use).
"""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.model import Job
from berth.core.policies.node_slack import NodeSlack
from berth.core.policies.slack import SlackBackfilling
from berth.core.policies.slack_pricing import HEURISTICS
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import drawing, workloads
from tests.property.test_node_planner import check, node_clusters, node_jobs
from tests.support.promises import BoundChecks, RepeatedCompression

PRIORITIES = st.sampled_from([0.0, 0.25, 0.5, 1.0])


class CheckedNodeSlack(BoundChecks, NodeSlack):
    """Slack on nodes that checks its own promises after every event."""


class RepeatedSlack(RepeatedCompression, SlackBackfilling):
    """The pool's slack policy compressing as the node planner does."""


def with_priorities(draw: st.DrawFn, jobs: list[TraceJob]) -> list[TraceJob]:
    over_quota = draw(st.integers(0, 9))
    result = []
    for index, trace_job in enumerate(jobs):
        political = -math.inf if over_quota and index % 10 == over_quota else draw(PRIORITIES)
        priority = {"user": draw(PRIORITIES), "political": political}
        job = dataclasses.replace(trace_job.job, priority=priority)
        result.append(dataclasses.replace(trace_job, job=job))
    return result


@settings(max_examples=150, deadline=None)
@given(data=st.data(), budget=st.sampled_from([None, 1, 3]))
def test_slack_on_nodes_keeps_every_bound_on_real_placements(
    data: st.DataObject, budget: int | None
) -> None:
    """With whole compression, and in slices of 1 or 3 questions an instant."""
    nodes = data.draw(node_clusters())
    jobs = with_priorities(drawing(data), data.draw(node_jobs(nodes, most=16)))
    policy = CheckedNodeSlack(
        nodes,
        heuristic=data.draw(st.sampled_from(HEURISTICS)),
        slack_factor=data.draw(st.sampled_from([0.0, 1.0, 3.0])),
        awt=data.draw(st.sampled_from([1.0, 10.0, 60.0])),
        alpha_t=data.draw(st.sampled_from([1.0, 0.5])),
        selection=data.draw(st.sampled_from(["ff", "bb"])),
    )
    records = replay(jobs, policy, compression_budget=budget)
    check(records, jobs, nodes, "slack")
    for record in records:
        if record.status == "rejected":  # a shape no node set can hold
            assert "count" in record.reason or "per_slot" in record.reason, record
            continue
        assert record.start is not None
        if record.guarantee is not None:
            assert record.start <= record.guarantee, record


@settings(max_examples=150, deadline=None)
@given(data=st.data(), heuristic=st.sampled_from(HEURISTICS))
def test_on_one_cpu_nodes_slack_gives_the_pools_schedule(
    data: st.DataObject, heuristic: str
) -> None:
    cpus = data.draw(st.integers(1, 6))
    capacity = {"cpus": cpus}
    jobs = with_priorities(drawing(data), data.draw(workloads(capacity, max_jobs=14, max_time=10)))
    pool = replay(jobs, RepeatedSlack(ResourceSpace(capacity), heuristic=heuristic))
    nodes = {f"n{i}": {"cpus": 1} for i in range(cpus)}
    on_nodes = replay(jobs, NodeSlack(nodes, heuristic=heuristic))
    assert [(r.id, r.status, r.start, r.guarantee) for r in on_nodes] == [
        (r.id, r.status, r.start, r.guarantee) for r in pool
    ]


def test_a_job_slack_inserted_later_than_its_earliest_start_is_compressed_as_on_the_pool() -> None:
    """Found by Hypothesis: job 10 is inserted at 4 by price, though it fits at 3 once
    jobs 3 and 11 end on time. No room is given back then, yet the pool compresses it to
    3: the node planner must not take the priced slot for its earliest."""
    spec = [  # id, submit, estimate, cpus, runtime
        (1, 0, 4, 2, 4), (2, 0, 1, 1, 1), (5, 0, 1, 1, 1), (6, 0, 1, 1, 1), (7, 0, 1, 1, 1),
        (4, 1, 4, 4, 1), (8, 1, 1, 1, 1), (9, 1, 1, 1, 1), (12, 1, 1, 5, 1),
        (3, 2, 1, 1, 1), (10, 2, 4, 1, 1), (11, 2, 1, 1, 1),
    ]  # fmt: skip
    political = {2: -math.inf, 11: -math.inf, 4: 0.25}
    jobs = [
        TraceJob(
            job=Job(
                id=i, submit=s, estimate=e, resources={"cpus": c},
                priority={"user": 0.0, "political": political.get(i, 0.0)},
            ),
            runtime=r,
        )
        for i, s, e, c, r in spec
    ]  # fmt: skip
    pool = replay(jobs, RepeatedSlack(ResourceSpace({"cpus": 5}), heuristic="ast"))
    nodes = {f"n{i}": {"cpus": 1} for i in range(5)}
    on_nodes = replay(jobs, NodeSlack(nodes, heuristic="ast"))
    starts = {r.id: r.start for r in on_nodes}
    assert starts == {r.id: r.start for r in pool}
    assert starts[10] == 3
