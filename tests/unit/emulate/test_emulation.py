"""Emulation options: estimate models, calendar-month slices, metrics, golden schedules."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.emulate.estimates import apply_estimates, parse_estimates
from berth.emulate.metrics import bounded_slowdown, summarize
from berth.emulate.run import emulate
from berth.emulate.slicing import by_month
from berth.emulate.traces import read_workload
from tests.support.builders import run, trace_job

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # Figure 1 (b) of Leinberger et al.: FCFS needs four epochs, FCFS/FF three.
        ("fcfs", {0: 0, 1: 0, 2: 100, 3: 200, 4: 200, 5: 300}),
        ("easy", {0: 0, 1: 0, 4: 0, 5: 0, 2: 100, 3: 200}),
        ("conservative", {0: 0, 1: 0, 4: 0, 5: 0, 2: 100, 3: 200}),
    ],
)
def test_leinberger_figure_1_epochs(policy: str, expected: dict[int, int]) -> None:
    (result,) = emulate(read_workload(DATA / "k2.jsonl"), policy)
    assert {r.id: r.start for r in result.records} == expected


def test_exact_and_badness_estimates() -> None:
    jobs = [trace_job(i, 0, runtime=100, estimate=5000) for i in range(200)]
    assert {t.job.estimate for t in apply_estimates(jobs, "exact")} == {100}
    bad = [t.job.estimate for t in apply_estimates(jobs, "badness:4", seed=7)]
    assert min(bad) >= 100
    assert max(bad) <= 400
    assert len(set(bad)) > 50
    assert bad == [t.job.estimate for t in apply_estimates(jobs, "badness:4", seed=7)]
    assert bad != [t.job.estimate for t in apply_estimates(jobs, "badness:4", seed=8)]
    assert apply_estimates(jobs, "user") == jobs


@pytest.mark.parametrize("spec", ["badness", "badness:0.5", "perfect", "badness:x"])
def test_bad_estimate_specs_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match=r"--estimates"):
        parse_estimates(spec)


def test_months_follow_the_traces_time_zone() -> None:
    workload = read_workload(DATA / "tiny.swf")
    # UnixStartTime 844120800 is 1996-10-01 00:00 in Stockholm (CEST) but still
    # 1996-09-30 in UTC; job 6 is submitted 30 days later, on 1996-10-31 (CET).
    months = by_month(workload)
    assert [(label, [t.job.id for t in jobs]) for label, jobs in months] == [
        ("1996-10", [1, 2, 5, 6])
    ]
    workload.timezone = None
    assert [label for label, _ in by_month(workload)] == ["1996-09", "1996-10"]


def test_sliced_replays_start_each_month_from_an_empty_machine() -> None:
    workload = read_workload(DATA / "tiny.swf")
    workload.timezone = "UTC"
    results = emulate(workload, "easy", slice_by="month")
    assert [r.label for r in results] == ["1996-09", "1996-10"]
    assert results[1].records[0].start == results[1].records[0].submit


def test_metrics_of_a_hand_computed_replay() -> None:
    jobs = [
        trace_job(1, 0, runtime=100, cpus=2),
        trace_job(2, 0, runtime=5, cpus=2),  # waits 100, runs 5: bsld 105/10
        trace_job(3, 0, runtime=50, cpus=9),  # rejected
    ]
    records = run(jobs, "fcfs", {"cpus": 2})
    report = summarize(list(records.values()), {"cpus": 2})
    assert report["jobs"] == 3
    assert report["rejected"] == 1
    assert report["avg_wait"] == 50.0
    assert report["max_wait"] == 100
    assert report["avg_response"] == (100 + 105) / 2
    assert report["avg_bounded_slowdown"] == (1.0 + 10.5) / 2
    assert report["makespan"] == 105
    assert report["utilization"] == {"cpus": (2 * 100 + 2 * 5) / (2 * 105)}
    # Weights: share 1.0 x run; weighted response = (100*100 + 5*105) / 105.
    assert report["weighted_avg_response"] == pytest.approx((100 * 100 + 5 * 105) / 105)
    assert bounded_slowdown(3, 1) == 1.0


def test_missing_capacity_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(
        '{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "resources": {"gpus": 1}}\n'
    )
    with pytest.raises(
        ValueError, match=r"no cluster capacity declared; pass --capacity \(resources used: gpus\)"
    ):
        emulate(read_workload(path), "easy")
    (result,) = emulate(read_workload(path), "easy", capacity={"gpus": 2})
    assert result.records[0].status == "completed"
