"""Deadline admission (QoPS, MSB, MRT) keeps its promise on random K-resource workloads.

With exact estimates every admitted job completes by its deadline (real or artificial),
a rejection leaves the schedule exactly as it was, and no resource is over-committed.
"""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.policies import policy_class
from berth.core.policies.deadline import DeadlinePolicy
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import clusters, with_deadlines, workloads
from tests.support.checks import peak_use
from tests.support.promises import RecordsPromises, assert_deadlines_kept

DEADLINE_POLICIES = ["qops", "msb", "mrt"]


@st.composite
def deadline_workloads(draw: st.DrawFn, capacity: dict[str, int]) -> list[TraceJob]:
    """Exact estimates; most jobs get a deadline of estimate + a random slack after submit."""
    return with_deadlines(draw, draw(workloads(capacity, max_jobs=25, max_time=30)))


def _snapshot(policy: DeadlinePolicy) -> tuple[object, ...]:
    return (
        policy.profile.steps(),
        {job_id: entry.start for job_id, entry in policy.waiting.items()},
        dict(policy.deadline_of),
    )


def _recording(name: str) -> type[DeadlinePolicy]:
    base = policy_class(name)
    assert isinstance(base, type)
    assert issubclass(base, DeadlinePolicy)

    class Recording(RecordsPromises, base):  # type: ignore[valid-type,misc]
        def snapshot(self, now: int) -> object:
            return _snapshot(self)

    return Recording


@pytest.mark.parametrize("policy_name", DEADLINE_POLICIES)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_admitted_job_meets_its_deadline(policy_name: str, data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(deadline_workloads(capacity))
    policy = _recording(policy_name)(ResourceSpace(capacity))
    records = {r.id: r for r in replay(jobs, policy)}
    recorded = cast(RecordsPromises, policy)  # (the Recording mixin's)
    assert_deadlines_kept(recorded.promised, records, jobs)
    assert all(recorded.unchanged_after_reject)
    peak = peak_use(records, capacity)
    assert all(peak[name] <= capacity[name] for name in capacity)
