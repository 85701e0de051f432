"""K-resource workload generation (Leinberger et al. 1999) and the priority scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from berth.core.policies import make_policy
from berth.core.resources import ResourceSpace
from berth.emulate.generate import (
    average_queue_length,
    calibrate,
    extend_to_k,
    with_poisson_arrivals,
)
from berth.emulate.metrics import summarize
from berth.emulate.replay import replay
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.runtime.main import main
from tests.support.builders import trace_job


@pytest.mark.parametrize("distribution", ["uniform", "exponential"])
def test_requirements_are_scaled_by_job_size(distribution: str) -> None:
    base = [trace_job(i, submit=0, runtime=10, cpus=1 + i % 64) for i in range(1, 2001)]
    jobs = extend_to_k(base, 4, distribution, processors=64, seed=1)
    fractions = []
    for source, job in zip(base, jobs, strict=True):
        size = source.job.resources["cpus"]
        assert set(job.job.resources) == {"r1", "r2", "r3", "r4"}
        assert all(1 <= amount <= size for amount in job.job.resources.values())
        fractions += [amount / size for amount in job.job.resources.values() if size >= 32]
    mean = sum(fractions) / len(fractions)
    # Uniform on (0, 1] has mean 1/2; an exponential of mean 1/2 capped at 1 about 0.43.
    assert mean == pytest.approx(0.5 if distribution == "uniform" else 0.43, abs=0.03)
    assert extend_to_k(base, 4, distribution, 64, seed=1) == jobs  # deterministic


def test_poisson_arrivals_have_the_requested_mean_gap() -> None:
    base = [trace_job(i, submit=0, runtime=10) for i in range(1, 5001)]
    jobs = with_poisson_arrivals(base, 100.0, seed=3)
    assert [t.job.id for t in jobs] == list(range(1, 5001))
    assert jobs[-1].job.submit / 4999 == pytest.approx(100.0, rel=0.05)


def test_queue_length_is_the_time_average_of_waiting_jobs() -> None:
    # One 1-cpu machine: job 1 runs [0, 100), job 2 waits [10, 100), job 3 arrives at 100.
    jobs = [trace_job(1, 0, 100), trace_job(2, 10, 50), trace_job(3, 100, 5)]
    records = replay(jobs, make_policy("fcfs", ResourceSpace({"cpus": 1})))
    assert average_queue_length(records) == pytest.approx(90 / 100)


def test_calibration_reaches_the_target_queue_length() -> None:
    base = read_workload(KTH_SAMPLE).jobs
    jobs = extend_to_k(base, 2, "uniform", 100, seed=0)
    capacity = {"r1": 100, "r2": 100}
    found = calibrate(jobs, capacity, target=20, seed=0)
    assert found.queue_length == pytest.approx(20, rel=0.05)
    again = replay(
        with_poisson_arrivals(jobs, found.mean_interarrival, 0),
        make_policy("easy", ResourceSpace(capacity)),
    )
    assert average_queue_length(again) == pytest.approx(found.queue_length)


def test_workload_generate_writes_a_replayable_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "k2.jsonl"
    argv = ["workload", "generate", "--from", str(KTH_SAMPLE), "--k", "2", "--jobs", "300",
            "--queue-length", "16", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert "wrote 300 jobs" in capsys.readouterr().out
    workload = read_workload(out)
    assert workload.capacity == {"r1": 100, "r2": 100}
    assert len(workload.jobs) == 300
    assert main(["emulate", str(out), "--policy", "easy", "--selection", "bb", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == 300


def test_workload_generate_names_a_bad_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "workload",
        "generate",
        "--from",
        str(KTH_SAMPLE),
        "--k",
        "0",
        "--out",
        str(tmp_path / "x"),
    ]
    assert main(argv) == 2
    assert "--k must be >= 1, got 0" in capsys.readouterr().err


def test_every_fifth_job_gets_high_priority_and_the_report_splits_the_classes() -> None:
    workload = read_workload(KTH_SAMPLE)
    jobs = Scenario(priorities="every-nth:5").prepare(workload.jobs, workload.capacity)
    high = [t.job.id for t in jobs if t.job.priority == {"user": 1.0, "political": 1.0}]
    assert len(high) == 80
    assert all(
        t.job.priority == {"user": 0.0, "political": 0.0} for t in jobs if t.job.id not in high
    )
    assert [t.job.id for t in jobs].index(high[0]) == 4
    records = replay(jobs, make_policy("slack", ResourceSpace(workload.capacity)))
    classes = summarize(records, workload.capacity)["priority_classes"]
    assert isinstance(classes, dict)
    assert classes["political=1,user=1"]["jobs"] == 80
    assert classes["political=0,user=0"]["jobs"] == 320


def test_a_smaller_priority_gap_splits_it_between_user_and_political() -> None:
    workload = read_workload(KTH_SAMPLE)
    jobs = Scenario(priorities="every-nth:5:0.5").prepare(workload.jobs, workload.capacity)
    high = [t for t in jobs if t.job.priority == {"user": 0.25, "political": 0.25}]
    assert len(high) == 80
    assert [t.job.id for t in jobs].index(high[0].job.id) == 4


@pytest.mark.parametrize(
    "spec", ["every-nth:1", "every-5", "every-nth:x", "every-nth:5:3", "every-nth:5:x"]
)
def test_bad_priority_scenario_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="--priorities must be every-nth:N"):
        Scenario(priorities=spec)


def test_emulate_takes_slack_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["emulate", str(KTH_SAMPLE), "--policy", "slack", "--heuristic", "dp",
            "--slack-factor", "5", "--awt", "1800", "--alpha-p", "0.5", "--json",
            "--priorities", "every-nth:5"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["policy"] == "slack"
    assert set(report["priority_classes"]) == {"political=0,user=0", "political=1,user=1"}
    assert main(["emulate", str(KTH_SAMPLE), "--policy", "slack", "--alpha-u", "3"]) == 2
    assert "alpha_u must be in [0.0, 1.0], got 3.0" in capsys.readouterr().err


def test_jsonl_priorities_reach_the_slack_policy(tmp_path: Path) -> None:
    path = tmp_path / "prio.jsonl"
    path.write_text(
        '{"capacity": {"cpus": 4}}\n'
        '{"id": 1, "submit": 0, "runtime": 10, "estimate": 10, "resources": {"cpus": 4}}\n'
        '{"id": 2, "submit": 1, "runtime": 10, "estimate": 10, "resources": {"cpus": 4},'
        ' "priority": {"user": 1.0, "political": -Infinity}}\n'
    )
    workload = read_workload(path)
    assert workload.jobs[1].job.priority == {"user": 1.0, "political": float("-inf")}
    records = {
        r.id: r for r in replay(workload.jobs, make_policy("slack", ResourceSpace({"cpus": 4})))
    }
    assert records[2].start == 10
    assert records[2].guarantee is None  # over quota: unbounded slack, no promise
