"""The semantics hold on real traces: full replays of archive logs under every policy.

Marked ``slow`` (a few seconds each); skipped when ``shared/traces`` is not beside the
checkout (set ``$BERTH_TRACES`` to point elsewhere).
"""

from __future__ import annotations

from typing import cast

import pytest

from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.runtime.paths import find_shared_trace
from tests.support.checks import peak_use

TRACES = [
    ("KTH-SP2-1996-2.1-cln.swf.gz", None),
    ("CTC-SP2-1996-3.1-cln.swf.gz", 5000),
    ("SDSC-SP2-1998-4.2-cln.swf.gz", 5000),
]


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
@pytest.mark.parametrize(("trace", "first"), TRACES)
def test_real_trace_replay_keeps_every_invariant(
    trace: str, first: int | None, policy: str
) -> None:
    path = find_shared_trace(trace)
    if path is None:
        pytest.skip(f"{trace} not found (set BERTH_TRACES)")
    workload = read_workload(path)
    workload.jobs = workload.jobs[:first]
    (result,) = emulate(workload, policy)
    records = {r.id: r for r in result.records}
    peak = peak_use(records, workload.capacity)
    assert peak["cpus"] <= workload.capacity["cpus"]
    assert all(r.status in ("completed", "killed") for r in records.values())
    for r in records.values():
        assert r.start is not None
        assert r.end is not None
        assert r.submit <= r.start < r.end
        assert r.end - r.start == min(r.runtime, r.estimate)
        if policy == "conservative":
            assert r.guarantee is not None
            assert r.start <= r.guarantee
        else:
            assert r.guarantee is None


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["qops", "msb", "mrt"])
def test_deadline_admission_on_a_real_trace_misses_nothing(policy: str) -> None:
    path = find_shared_trace("CTC-SP2-1996-3.1-cln.swf.gz")
    if path is None:
        pytest.skip("CTC trace not found (set BERTH_TRACES)")
    scenario = Scenario(first=1500, estimates="exact", load=1.4, stringency=0.2,
                        deadline_fraction=0.8)  # fmt: skip
    (result,) = emulate(read_workload(path), policy, scenario=scenario)
    report = result.report
    assert report["jobs"] == 2100
    assert 0 < cast(int, report["admitted"]) < 2100  # some, not all, are admitted at this load
    assert report["deadline_misses"] == 0
    assert report["promise_misses"] == 0
    for record in result.records:
        if record.status == "rejected":
            assert record.start is None
            assert record.reason
        else:
            assert record.promised_completion is not None
            assert record.end is not None
            assert record.end <= record.promised_completion
