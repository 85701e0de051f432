"""Every policy matches the brute-force oracle exactly on random tiny workloads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property.strategies import clusters, workloads
from tests.support.builders import run
from tests.support.oracle import OracleJob, oracle


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_policy_matches_brute_force_oracle(policy: str, data: st.DataObject) -> None:
    capacity = data.draw(clusters())
    jobs = data.draw(workloads(capacity))
    records = run(jobs, policy, capacity)
    expected = oracle(
        [
            OracleJob(t.job.id, t.job.submit, t.runtime, t.job.estimate, dict(t.job.resources))
            for t in jobs
        ],
        capacity,
        policy,
    )
    actual = {
        job_id: None if r.start is None else (r.start, r.end) for job_id, r in records.items()
    }
    assert actual == expected
