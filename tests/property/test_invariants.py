"""Scheduling invariants over random K-resource workloads (larger than the oracle's)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.decisions import Start
from berth.core.policies.easy import Easy
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from tests.property.strategies import clusters, workloads
from tests.support.builders import run
from tests.support.checks import peak_use


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "slack"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_no_resource_is_ever_over_committed(policy: str, data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity, max_jobs=40, max_time=50))
    records = run(jobs, policy, capacity)
    peak = peak_use(records, capacity)
    assert all(peak[name] <= capacity[name] for name in capacity), (peak, capacity)
    assert all(r.status != "queued" for r in records.values()), "every admitted job ran"


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_conservative_never_starts_a_job_after_its_guarantee(data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity, max_jobs=40, max_time=50))
    for record in run(jobs, "conservative", capacity).values():
        if record.status == "rejected":
            assert record.guarantee is None
            continue
        assert record.guarantee is not None
        assert record.start is not None
        assert record.submit <= record.start <= record.guarantee


class _ShadowRecordingEasy(Easy):
    """EASY that notes, at every pass, the blocked head's shadow time."""

    def __init__(self, space: ResourceSpace, selection: str = "ff") -> None:
        super().__init__(space, selection)
        self.promised: dict[int, int] = {}

    def schedule(self, now: int) -> list[Start]:
        started = super().schedule(now)
        if self.waiting:
            head = next(iter(self.waiting.values()))
            shadow, _ = self.shadow(head.demand)
            self.promised[head.job.id] = min(self.promised.get(head.job.id, shadow), shadow)
        return started


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_easy_never_delays_the_head_jobs_shadow_reservation(data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity, max_jobs=40, max_time=50))
    policy = _ShadowRecordingEasy(ResourceSpace(capacity))
    records = {r.id: r for r in replay(jobs, policy)}
    for job_id, shadow in policy.promised.items():
        start = records[job_id].start
        assert start is not None
        assert start <= shadow, (job_id, start, shadow)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_fcfs_starts_jobs_in_arrival_order(data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity, max_jobs=40, max_time=50))
    records = run(jobs, "fcfs", capacity)
    started = [start for t in jobs if (start := records[t.job.id].start) is not None]
    assert started == sorted(started)


@pytest.mark.parametrize("policy", ["easy", "conservative"])
@pytest.mark.parametrize("selection", ["bl", "bb"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_balancing_selection_keeps_every_invariant(
    policy: str, selection: str, data: st.DataObject
) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity, max_jobs=40, max_time=50))
    if policy == "easy":
        recorder = _ShadowRecordingEasy(ResourceSpace(capacity), selection=selection)
        records = {r.id: r for r in replay(jobs, recorder)}
        for job_id, shadow in recorder.promised.items():
            start = records[job_id].start
            assert start is not None
            assert start <= shadow
    else:
        records = run(jobs, policy, capacity, selection=selection)
        for record in records.values():
            if record.status != "rejected":
                assert record.guarantee is not None
                assert record.start is not None
                assert record.start <= record.guarantee
    peak = peak_use(records, capacity)
    assert all(peak[name] <= capacity[name] for name in capacity)
    assert all(r.status != "queued" for r in records.values())
