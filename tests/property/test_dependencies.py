"""Dependencies under every policy, on the pool and on nodes, through the emulator.

For random workloads where jobs wait for earlier ones (``after``, ``afterany``,
``afterok``, ``afternotok``) and arrays run under a ``%N`` limit:

* no job starts before what it waits for has started (``after``) or ended;
* a job whose need can never be satisfied is cancelled, and only then;
* under a policy that plans every job, each dependent's guarantee is at or after its
  predecessors' promised ends, and it starts no later than its guarantee;
* no more than N tasks of a throttled array run at once, even when some are
  cancelled before they start;
* no resource is over-committed.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.arrays import throttle
from berth.core.dependencies import KINDS, Need, verdict
from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.node_registry import make_node_policy
from berth.core.resources import ResourceSpace
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import clusters, workloads
from tests.support.checks import peak_use

PLANNING = ("conservative", "slack", "qops", "msb", "mrt")


@st.composite
def dependent_workloads(draw: st.DrawFn, capacity: dict[str, int]) -> list[TraceJob]:
    """Jobs where some wait for earlier-arriving ones; runtimes often over the estimate
    (killed: ``afterok`` fails) so that every kind resolves both ways."""
    jobs = draw(workloads(capacity, max_jobs=14, max_time=12))
    out: list[TraceJob] = []
    for index, trace_job in enumerate(jobs):
        earlier = [t.job.id for t in jobs[:index]]
        needs: tuple[Need, ...] = ()
        if earlier and draw(st.integers(0, 2)) > 0:
            chosen = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=3, unique=True))
            needs = tuple(Need(draw(st.sampled_from(KINDS)), p) for p in chosen)
        out.append(replace(trace_job, needs=needs))
    return out


def _satisfied(need: Need, records: dict[int, JobRecord]) -> bool:
    """Whether ``need`` was met by how its predecessor ended."""
    before = records[need.job_id]
    return bool(verdict(need.kind, before.start is not None, True, before.status == "completed"))


def _check(jobs: list[TraceJob], records: dict[int, JobRecord], plans_every_job: bool) -> None:
    for trace_job in jobs:
        record = records[trace_job.job.id]
        if record.status == "rejected":
            continue
        assert record.status != "queued", record  # every job ran or was cancelled
        if record.status == "cancelled":
            assert not all(_satisfied(n, records) for n in trace_job.needs), record
            continue
        assert record.start is not None
        for need in trace_job.needs:
            before = records[need.job_id]
            assert _satisfied(need, records), (need, before, record)
            if need.kind == "after":
                assert before.start is None or before.start <= record.start, (need, before, record)
            elif before.start is not None:  # (one that never ran ended before it)
                assert before.end is not None, before
                assert before.end <= record.start, (need, before, record)
            if plans_every_job and record.guarantee is not None and before.start is not None:
                # Its promise never counted on the predecessor ending (starting) earlier
                # than it did.
                done = before.start if need.kind == "after" else before.end
                assert done is not None, before
                assert record.guarantee >= done, (need, before, record)
        if plans_every_job and record.guarantee is not None:
            assert record.start <= record.guarantee, record


@pytest.mark.parametrize("policy", ["fcfs", "easy", *PLANNING])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_dependents_wait_for_what_they_need_on_the_pool(policy: str, data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(dependent_workloads(capacity))
    made = make_policy(policy, ResourceSpace(capacity))
    records = {r.id: r for r in replay(jobs, made)}
    _check(jobs, records, made.reserves_every_job)
    peak = peak_use(records, capacity)
    assert all(peak[name] <= capacity[name] for name in capacity)


@pytest.mark.parametrize("policy", ["easy", "conservative", "slack", "qops"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_dependents_wait_for_what_they_need_on_nodes(policy: str, data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    nodes = {f"n{i}": dict(capacity) for i in range(data.draw(st.integers(1, 3)))}
    jobs = data.draw(dependent_workloads(capacity))
    made = make_node_policy(policy, nodes)
    records = {r.id: r for r in replay(jobs, made)}
    _check(jobs, records, made.reserves_every_job)


@pytest.mark.parametrize("policy", ["easy", "conservative", "slack"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_a_throttled_array_never_runs_more_than_its_limit(policy: str, data: st.DataObject) -> None:
    """Tasks in lanes of ``%N``; some tasks first wait for a job that fails (``afterok``)
    and are cancelled before they start: their lane passes on, the limit holds."""
    capacity = {"cpus": data.draw(st.integers(4, 12))}
    limit = data.draw(st.integers(1, 3))
    count = data.draw(st.integers(1, 12))
    # Runs over its estimate: killed, so afterok on it can never be satisfied.
    failing = TraceJob(Job(0, 0, 1, {"cpus": 1}), 5)
    ids = list(range(1, count + 1))
    lanes = throttle(ids, limit)
    doomed = set(data.draw(st.lists(st.sampled_from(ids), unique=True, max_size=count)))
    submit = data.draw(st.integers(0, 2))
    tasks = []
    for task_id in ids:
        needs = [lanes[task_id]] if task_id in lanes else []
        if task_id in doomed:
            needs.append(Need("afterok", 0))
        estimate = data.draw(st.integers(1, 6))
        job = Job(task_id, submit, estimate, {"cpus": 1})  # one submission
        tasks.append(TraceJob(job, data.draw(st.integers(1, estimate)), needs=tuple(needs)))
    jobs = sorted([failing, *tasks], key=lambda t: (t.job.submit, t.job.id))
    records = {r.id: r for r in replay(jobs, make_policy(policy, ResourceSpace(capacity)))}
    assert {records[i].status for i in doomed} <= {"cancelled"}
    ran = [records[i] for i in ids if records[i].start is not None]
    assert len(ran) == count - len(doomed)
    for moment in {r.start for r in ran if r.start is not None}:
        running = [r for r in ran if r.start is not None and r.end is not None
                   and r.start <= moment < r.end]  # fmt: skip
        assert len(running) <= limit, (moment, running)
