"""Scenario preparation: first N jobs, load scaling, deadlines from an EASY replay."""

from __future__ import annotations

import re
from typing import cast

import pytest

from berth.emulate.run import emulate
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.scenario import Scenario, derive_deadlines, scale_load
from berth.emulate.traces import read_workload
from tests.support.builders import run, trace_job

JOBS = [trace_job(i, submit=10 * i, runtime=100, cpus=1 + i % 3) for i in range(1, 101)]


def test_duplication_adds_copies_within_the_trace_span_incrementally() -> None:
    at_14 = scale_load(JOBS, 1.4, "duplicate", seed=3)
    at_16 = scale_load(JOBS, 1.6, "duplicate", seed=3)
    assert (len(at_14), len(at_16)) == (140, 160)
    assert {t.job.id for t in at_14} <= {t.job.id for t in at_16}, "1.6 contains 1.4"
    by_id = {t.job.id: t for t in at_16}
    assert all(by_id[t.job.id].job.submit == t.job.submit for t in at_14)
    copies = [t for t in at_16 if t.job.id > 100]
    assert all(10 <= t.job.submit <= 1000 for t in copies)
    originals = {(t.job.estimate, dict(t.job.resources).get("cpus"), t.runtime) for t in JOBS}
    assert all((t.job.estimate, t.job.resources["cpus"], t.runtime) in originals for t in copies)
    assert [t.job.submit for t in at_16] == sorted(t.job.submit for t in at_16)


def test_expansion_compresses_submit_times() -> None:
    expanded = scale_load(JOBS, 2.0, "expand", seed=0)
    assert [t.job.submit for t in expanded][:3] == [10, 15, 20]
    assert len(expanded) == len(JOBS)


def test_deadlines_follow_the_easy_response_with_stringency() -> None:
    capacity = {"cpus": 2}
    jobs = [trace_job(1, 0, runtime=100, cpus=2), trace_job(2, 0, runtime=50, cpus=2)]
    easy = run(jobs, "easy", capacity)
    assert (easy[1].end, easy[2].end) == (100, 150)
    timed = derive_deadlines(jobs, capacity, stringency=0.2, fraction=1.0, seed=0)
    # max(runtime, 0.8 x response): job 1: max(100, 80) = 100; job 2: max(50, 120) = 120.
    assert [t.job.deadline for t in timed] == [100, 120]
    none_timed = derive_deadlines(jobs, capacity, stringency=0.2, fraction=0.0, seed=0)
    assert [t.job.deadline for t in none_timed] == [None, None]
    half = derive_deadlines(JOBS, {"cpus": 3}, stringency=0.5, fraction=0.2, seed=1)
    assert sum(t.job.deadline is not None for t in half) == 20


def test_deadline_replay_reports_admission_and_zero_misses() -> None:
    scenario = Scenario(first=300, estimates="exact", load=1.4, stringency=0.5,
                        deadline_fraction=0.8, seed=2)  # fmt: skip
    (result,) = emulate(read_workload(KTH_SAMPLE), "qops", scenario=scenario)
    report = result.report
    assert report["jobs"] == 420
    assert report["admitted"] == 420 - cast(int, report["rejected"])
    assert report["deadline_jobs"] == 336
    assert report["non_deadline_jobs"] == 84
    assert report["deadline_misses"] == 0
    assert report["promise_misses"] == 0
    rejected = report["rejected_resource_seconds"]
    assert isinstance(rejected, dict)
    assert 0.0 <= rejected["cpus"] < 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"load": 0.5}, "--load must be >= 1.0"),
        ({"load_method": "stretch"}, "--load-method must be duplicate or expand"),
        ({"stringency": 1.0}, "stringency S must be in [0, 1)"),
        ({"deadline_fraction": 1.5}, "--deadline-fraction must be in [0, 1]"),
        ({"first": 0}, "--first must be positive"),
        ({"estimates": "guess"}, "--estimates must be user, exact or badness:F"),
    ],
)
def test_bad_scenarios_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Scenario(**kwargs)  # type: ignore[arg-type]


def test_the_deadline_jobs_share_of_rejected_work_is_over_their_own_work() -> None:
    workload = read_workload(KTH_SAMPLE)
    mixed = Scenario(first=300, estimates="exact", load=1.6, stringency=0.2,
                     deadline_fraction=0.5, seed=1)  # fmt: skip
    (result,) = emulate(workload, "qops", scenario=mixed)
    records = result.records
    timed = [r for r in records if r.deadline is not None]
    work = sum(r.resources["cpus"] * min(r.runtime, r.estimate) for r in timed)
    lost = sum(r.resources["cpus"] * min(r.runtime, r.estimate) for r in timed
               if r.status == "rejected")  # fmt: skip
    assert lost > 0, "the scenario rejects some deadline jobs"
    share = result.report["deadline_rejected_resource_seconds"]
    assert isinstance(share, dict)
    assert share["cpus"] == pytest.approx(lost / work)
    every = Scenario(first=300, estimates="exact", load=1.6, stringency=0.2, seed=1)
    (alone,) = emulate(workload, "qops", scenario=every)
    assert (
        alone.report["deadline_rejected_resource_seconds"]
        == alone.report["rejected_resource_seconds"]
    )
