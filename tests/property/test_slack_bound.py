"""The slack guarantee under random workloads, priorities, heuristics and parameters.

Talby & Feitelson's promise: a job is never pushed past its reservation plus its
remaining slack. Here that is checked at every event: each waiting job's bound (start +
remaining slack, fixed when the job is placed) never changes and its reservation never
passes it; every job starts, never after its bound; nothing is over-committed.
"""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.policies.slack import HEURISTICS, SlackBackfilling
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from tests.property.strategies import clusters, workloads
from tests.support.checks import peak_use
from tests.support.promises import BoundChecks

PRIORITIES = st.sampled_from([0.0, 0.25, 0.5, 1.0])


class _CheckedSlack(BoundChecks, SlackBackfilling):
    """Slack backfilling that checks its own promises after every event."""


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_no_job_is_pushed_past_its_slack_and_every_job_starts(data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity, max_jobs=30, max_time=40))
    over_quota = data.draw(st.integers(0, 9))
    prioritized = []
    for index, trace_job in enumerate(jobs):
        political = -math.inf if over_quota and index % 10 == over_quota else data.draw(PRIORITIES)
        priority = {"user": data.draw(PRIORITIES), "political": political}
        job = dataclasses.replace(trace_job.job, priority=priority)
        prioritized.append(dataclasses.replace(trace_job, job=job))
    policy = _CheckedSlack(
        ResourceSpace(capacity),
        heuristic=data.draw(st.sampled_from(HEURISTICS)),
        slack_factor=data.draw(st.sampled_from([0.0, 1.0, 3.0])),
        awt=data.draw(st.sampled_from([1.0, 10.0, 60.0])),
        alpha_t=data.draw(st.sampled_from([1.0, 0.5])),
        selection=data.draw(st.sampled_from(["ff", "bb"])),
    )
    records = {r.id: r for r in replay(prioritized, policy)}
    peak = peak_use(records, capacity)
    assert all(peak[name] <= capacity[name] for name in capacity), (peak, capacity)
    for record in records.values():
        if record.status == "rejected":
            continue
        assert record.start is not None, f"job {record.id} never started"
        if record.guarantee is not None:
            assert record.start <= record.guarantee, (record.id, record.start, record.guarantee)
