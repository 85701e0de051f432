"""Deadline admission (QoPS, MSB, MRT) on named nodes keeps its promises.

* On random node clusters and node-shaped jobs with exact estimates, every admitted job
  completes by its deadline (real or artificial), on nodes never over-committed, with
  whole slots; a rejection leaves the plan exactly as it was.
* On one-cpu nodes (jobs given as cpus: whole nodes, counted), with jobs ending early,
  each policy admits the same jobs and starts them at the same times as on the pool,
  once the pool compresses in passes until no job moves, as the node planner does.
"""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.nodes import NodePlan
from berth.core.policies import policy_class
from berth.core.policies.node_deadline import NODE_DEADLINE_POLICIES, NodeDeadline
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import drawing, with_deadlines, workloads
from tests.property.test_node_planner import check, node_clusters, node_jobs
from tests.support.promises import RecordsPromises, RepeatedCompression, assert_deadlines_kept


def _from(profile: Profile, now: int) -> list[tuple[int, int]]:
    """A profile's steps from ``now`` on (what it held before is past)."""
    return [(now, profile.free_at(now))] + [(t, f) for t, f in profile.steps() if t > now]


def _snapshot(policy: NodeDeadline, now: int) -> tuple[object, ...]:
    """The plan as a schedule: every node's profile and placement when nodes are named;
    the counted total and the starts when they are counted (an arrival that shares a
    node names them first, which changes how the plan is kept, not what it holds)."""
    plan = policy.plan
    named = isinstance(plan, NodePlan)
    return (
        named,
        _from(plan.aggregate, now),
        [_from(profile, now) for profile in plan.profiles] if isinstance(plan, NodePlan) else None,
        {i: (e.start, e.placement if named else None) for i, e in policy.waiting.items()},
        dict(policy.deadline_of),
    )


def _same_schedule(before: tuple[object, ...], after: tuple[object, ...]) -> bool:
    if before[0] == after[0]:
        return before == after
    # Counted before, named after: the totals, the starts and the deadlines are kept.
    starts_before = {i: start for i, (start, _) in before[3].items()}  # type: ignore[attr-defined]
    starts_after = {i: start for i, (start, _) in after[3].items()}  # type: ignore[attr-defined]
    return (before[1], starts_before, before[4]) == (after[1], starts_after, after[4])


class Recording(RecordsPromises, NodeDeadline):
    """Records each promise and whether each rejection left the plan unchanged."""

    def snapshot(self, now: int) -> object:
        return _snapshot(self, now)

    def same(self, before: object, after: object) -> bool:
        assert isinstance(before, tuple)
        assert isinstance(after, tuple)
        return _same_schedule(before, after)


@pytest.mark.parametrize("name", NODE_DEADLINE_POLICIES)
@settings(max_examples=120, deadline=None)
@given(data=st.data(), budget=st.sampled_from([None, 1, 3]))
def test_every_admitted_job_meets_its_deadline_on_nodes(
    name: str, data: st.DataObject, budget: int | None
) -> None:
    """With whole compression, and with compression in slices of 1 or 3 questions an
    instant (the emulator's ``--compression-budget``, the daemon's deferred slices)."""
    nodes = data.draw(node_clusters())
    jobs = with_deadlines(drawing(data), data.draw(node_jobs(nodes, most=16)), spare=12)
    policy = Recording(name, nodes)
    records = replay(jobs, policy, compression_budget=budget)
    check(records, jobs, nodes, name)
    assert_deadlines_kept(policy.promised, {r.id: r for r in records}, jobs)
    assert all(policy.unchanged_after_reject)


@pytest.mark.parametrize("name", NODE_DEADLINE_POLICIES)
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_on_one_cpu_nodes_each_deadline_policy_gives_the_pools_schedule(
    name: str, data: st.DataObject
) -> None:
    cpus = data.draw(st.integers(1, 6))
    capacity = {"cpus": cpus}
    drawn = data.draw(workloads(capacity, max_jobs=14, max_time=10))
    jobs = [
        TraceJob(t.job, min(runtime.runtime, t.job.estimate))
        for t, runtime in zip(with_deadlines(drawing(data), drawn), drawn, strict=True)
    ]
    pool_class = cast(type, policy_class(name))
    repeated = type("Repeated", (RepeatedCompression, pool_class), {})
    pool = replay(jobs, repeated(ResourceSpace(capacity)))
    nodes = {f"n{i}": {"cpus": 1} for i in range(cpus)}
    on_nodes = replay(jobs, NodeDeadline(name, nodes))
    assert [(r.id, r.status, r.start, r.guarantee) for r in on_nodes] == [
        (r.id, r.status, r.start, r.guarantee) for r in pool
    ]
