"""Deadline admission (QoPS, MSB, MRT) keeps its promise on random K-resource workloads.

With exact estimates every admitted job completes by its deadline (real or artificial),
a rejection leaves the schedule exactly as it was, and no resource is over-committed.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies import policy_class
from berth.core.policies.deadline import DeadlinePolicy
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import clusters, workloads
from tests.support.checks import peak_use
from tests.support.promises import assert_deadlines_kept

DEADLINE_POLICIES = ["qops", "msb", "mrt"]


@st.composite
def deadline_workloads(draw: st.DrawFn, capacity: dict[str, int]) -> list[TraceJob]:
    """Exact estimates; most jobs get a deadline of estimate + a random slack after submit."""
    jobs = draw(workloads(capacity, max_jobs=25, max_time=30))
    result = []
    for trace_job in jobs:
        job = trace_job.job
        deadline = None
        if draw(st.integers(0, 4)) > 0:
            deadline = job.submit + job.estimate + draw(st.integers(0, 3 * job.estimate + 20))
        exact = dataclasses.replace(job, deadline=deadline)
        result.append(TraceJob(exact, job.estimate))
    return result


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

    class Recording(base):  # type: ignore[valid-type,misc]
        def __init__(self, space: ResourceSpace) -> None:
            super().__init__(space)
            self.promised: dict[int, int] = {}
            self.unchanged_after_reject: list[bool] = []

        def submit(self, job: Job, now: int) -> Reserve | Reject | None:
            before = _snapshot(self)
            decision = super().submit(job, now)
            if isinstance(decision, Reject):
                self.unchanged_after_reject.append(_snapshot(self) == before)
            elif isinstance(decision, Reserve):
                assert decision.completion is not None
                self.promised[job.id] = decision.completion
            return decision

    return Recording


@pytest.mark.parametrize("policy_name", DEADLINE_POLICIES)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_admitted_job_meets_its_deadline(policy_name: str, data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(deadline_workloads(capacity))
    policy = _recording(policy_name)(ResourceSpace(capacity))
    records = {r.id: r for r in replay(jobs, policy)}
    assert_deadlines_kept(policy.promised, records, jobs)
    assert all(policy.unchanged_after_reject)
    peak = peak_use(records, capacity)
    assert all(peak[name] <= capacity[name] for name in capacity)
