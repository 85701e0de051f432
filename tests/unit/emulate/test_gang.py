"""The gang emulation and the Zhou workload: measures, units and the commands."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from berth.core.model import Job
from berth.emulate.gang import replay_gang
from berth.emulate.workload import TraceJob
from berth.emulate.zhou import generate_zhou
from berth.runtime.main import main


def job(job_id: int, submit: int, cpus: int, runtime: int) -> TraceJob:
    return TraceJob(Job(job_id, submit, runtime, {"cpus": cpus}), runtime)


def test_two_full_machine_jobs_take_turns() -> None:
    """Slots of 10 s; jobs of 3 and 2 slots on the whole machine: rows alternate."""
    jobs = [job(1, 0, 4, 30), job(2, 0, 4, 20)]
    result = replay_gang(jobs, 4, "br", 10)
    ends = {r.id: r.end for r in result.records}
    # Slots: 1 2 1 2 1 -> job 2 ends after slot 4 (40 s), job 1 after slot 5 (50 s).
    assert ends == {1: 50, 2: 40}
    report = result.report
    assert report["slots"] == 5
    assert report["n_l"] == 2
    assert report["n_a"] == pytest.approx((2 * 4 + 1) / 5)
    assert report["r_a"] == pytest.approx(1.0)
    assert report["avg_turnaround"] == pytest.approx((5 + 4) / 2)


def test_arrivals_wait_for_the_next_boundary_and_idle_time_counts() -> None:
    jobs = [job(1, 0, 2, 10), job(2, 25, 1, 10)]
    result = replay_gang(jobs, 4, "brmms", 10)
    by_id = {r.id: r for r in result.records}
    assert by_id[2].end == 40
    assert by_id[2].turnaround == pytest.approx(1.5)
    # Span: slot 0 (job 1 on 2 of 4 processors), slots 1 and 2 empty, slot 3 (job 2).
    assert result.report["slots"] == 4
    assert result.report["r_a"] == pytest.approx((2 + 1) / (4 * 4))
    assert result.report["n_a"] == pytest.approx(2 / 4)


def test_size_classes_follow_the_paper() -> None:
    jobs = [job(1, 0, 1, 12), job(2, 0, 1, 13), job(3, 0, 1, 61)]
    report = replay_gang(jobs, 4, "br", 1).report
    assert (report["small_jobs"], report["medium_jobs"], report["large_jobs"]) == (1, 1, 1)


def test_zhou_workload_offers_the_requested_load() -> None:
    made = generate_zhou(0.7, 4000, seed=2)
    sizes = [j.job.resources["cpus"] for j in made.jobs]
    work = [j.runtime // 5 for j in made.jobs]
    assert all(size & (size - 1) == 0 and 1 <= size <= 128 for size in sizes)
    assert min(work) == 1
    assert max(work) == 120
    span = made.jobs[-1].job.submit / 5
    offered = (sum(s * w for s, w in zip(sizes, work, strict=True)) / span) / 128
    assert offered == pytest.approx(0.7, rel=0.08)
    # Uniform in log space: about as many jobs of 1-10 slots as of 11-120 (ln 10 / ln 120).
    short = sum(1 for w in work if w <= 10) / len(work)
    assert short == pytest.approx(math.log(10.5) / math.log(120), abs=0.04)
    integers = generate_zhou(0.7, 2000, seed=2, powers_of_two=False)
    assert any(j.job.resources["cpus"] & (j.job.resources["cpus"] - 1) for j in integers.jobs)


def test_generate_and_emulate_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "zhou.jsonl"
    assert main(["workload", "generate", "--model", "zhou", "--load", "0.5", "--jobs", "300",
                 "--seed", "1", "--out", str(out)]) == 0  # fmt: skip
    assert "wrote 300 jobs" in capsys.readouterr().out
    per_job = tmp_path / "jobs.jsonl"
    assert main(["emulate", str(out), "--policy", "gang", "--scheme", "br", "--json",
                 "--out", str(per_job)]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    lines = [json.loads(line) for line in per_job.read_text().splitlines()]
    assert len(lines) == 300
    assert all(line["end"] > line["submit"] and line["turnaround"] >= 1 for line in lines)
    for key in ("r_a", "n_a", "n_l", "avg_turnaround", "avg_turnaround_small",
                "avg_turnaround_medium", "avg_turnaround_large"):  # fmt: skip
        assert key in report
    assert report["jobs"] == 300
    assert report["scheme"] == "br"
    assert 0.3 < report["r_a"] < 0.6


def test_gang_emulation_errors_name_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "zhou.jsonl"
    main(["workload", "generate", "--model", "zhou", "--load", "0.5", "--jobs", "50",
          "--out", str(out)])  # fmt: skip
    capsys.readouterr()
    assert main(["emulate", str(out), "--policy", "gang", "--capacity", "cpus=100"]) == 2
    assert "power-of-two processor count (buddy blocks), got 100; pass --capacity cpus=128" in (
        capsys.readouterr().err
    )
    assert main(["emulate", str(out), "--policy", "gang", "--slice", "month"]) == 2
    assert "does not take --slice" in capsys.readouterr().err
    assert main(["emulate", str(out), "--policy", "gang", "--compression-budget", "8"]) == 2
    assert "does not take --compression-budget" in capsys.readouterr().err
    # (a backfilling policy's options are not gang scheduling's: refused, not ignored)
    assert main(["emulate", str(out), "--policy", "gang", "--selection", "bb"]) == 2
    assert "does not take --selection" in capsys.readouterr().err
    assert main(["emulate", str(out), "--policy", "gang", "--k-factor", "0"]) == 2
    assert "does not take --k-factor" in capsys.readouterr().err
    assert main(["workload", "generate", "--model", "zhou", "--out", str(out)]) == 2
    assert "needs --load" in capsys.readouterr().err
    assert main(["emulate", str(out), "--policy", "gang", "--slot-seconds", "0"]) == 2
    assert "--slot-seconds must be >= 1" in capsys.readouterr().err


def test_a_row_limit_makes_jobs_wait_and_is_reported() -> None:
    jobs = [job(1, 0, 4, 30), job(2, 0, 4, 20)]
    result = replay_gang(jobs, 4, "br", 10, max_rows=1)
    # One row: job 1 runs its three slots, then job 2 its two.
    assert {r.id: r.end for r in result.records} == {1: 30, 2: 50}
    assert result.report["most_waiting"] == 1
    assert result.report["n_l"] == 1
