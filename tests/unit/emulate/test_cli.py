"""The ``berth`` command end to end: reports, output files, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from berth.emulate.samples import KTH_SAMPLE
from berth.runtime.main import main

DATA = Path(__file__).resolve().parents[2] / "data"


def test_emulate_prints_a_json_report_with_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", str(KTH_SAMPLE), "--policy", "easy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("jobs", "rejected", "avg_wait", "median_wait", "max_wait", "avg_response",
                "avg_bounded_slowdown", "weighted_avg_response", "utilization", "makespan"):  # fmt: skip
        assert key in report
    assert report["jobs"] == 400
    assert report["policy"] == "easy"
    assert report["skipped"] == 0
    assert 0 < report["utilization"]["cpus"] <= 1


def test_emulate_writes_per_job_jsonl_and_swf(tmp_path: Path) -> None:
    jobs, swf = tmp_path / "jobs.jsonl", tmp_path / "out.swf"
    argv = ["emulate", str(DATA / "tiny.swf"), "--policy", "conservative"]
    assert main([*argv, "--out", str(jobs), "--out-swf", str(swf)]) == 0
    lines = [json.loads(line) for line in jobs.read_text().splitlines()]
    assert [r["id"] for r in lines] == [1, 2, 5, 6]
    assert set(lines[0]) == {"id", "submit", "start", "end", "resources", "estimate",
                             "runtime", "guarantee", "status", "reason"}  # fmt: skip
    assert lines[1]["start"] == 60
    assert lines[1]["guarantee"] == 120
    rows = [line.split() for line in swf.read_text().splitlines() if not line.startswith(";")]
    assert rows[1][:5] == ["2", "10", "50", "200", "8"]  # wait 50, killed at estimate 200
    assert rows[1][10] == "0"  # killed: status 0 (failed), as in the archive
    assert all(len(row) == 18 for row in rows)


def test_emulate_text_report_by_month(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", str(KTH_SAMPLE), "--slice", "month"]) == 0
    out = capsys.readouterr().out
    assert "1996-09" in out
    assert "1996-10" in out
    assert "avg_bounded_slowdown" in out


def test_emulate_k_resources_with_capacity_override(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["emulate", str(DATA / "k2.jsonl"), "--capacity", "cpus=8,mem_gb=32", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rejected"] == 1  # job 3 asks for 11 cpus of 8
    assert set(report["utilization"]) == {"cpus", "mem_gb"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--capacity", "cpus=0"], "capacity of 'cpus' must be positive, got 0"),
        (["--capacity", "cpus"], "expected NAME=AMOUNT, got 'cpus'"),
        (["--capacity", "cpus=1.5"], "capacity of 'cpus' must be a whole number, got '1.5'"),
        (["--estimates", "badness:0"], "needs a factor F >= 1"),
        (["--policy", "lottery"], "invalid choice: 'lottery'"),
    ],
)
def test_bad_options_exit_2_naming_the_option(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["emulate", str(DATA / "tiny.swf"), *argv])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_unreadable_workload_exits_1_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", str(tmp_path / "missing.swf")]) == 1
    assert "missing.swf" in capsys.readouterr().err


def test_demo_replays_each_policy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--trace", str(KTH_SAMPLE), "--jobs", "200"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("fcfs", "easy", "conservative"))


def test_emulate_deadline_policy_with_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["emulate", str(KTH_SAMPLE), "--policy", "mrt", "--estimates", "exact",
            "--deadlines", "easy:0.2", "--load", "1.2", "--heuristic", "llf",
            "--max-backtracks", "3", "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["jobs"] == 480
    assert report["deadline_misses"] == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "easy", "--k-factor", "2"], "policy 'easy' does not take 'k_factor'"),
        (
            ["--policy", "qops", "--max-backtracks", "2"],
            "(it takes heuristic, relaxation, k_factor)",
        ),
    ],
)
def test_options_of_another_policy_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", str(KTH_SAMPLE), *argv]) == 2
    assert message in capsys.readouterr().err


def test_bad_stringency_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["emulate", str(KTH_SAMPLE), "--deadlines", "easy:1.5"])
    assert (
        "expected easy:S with a stringency S in [0, 1), got 'easy:1.5'" in capsys.readouterr().err
    )


def test_a_compression_budget_replays_on_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    """KTH's sample on 100 nodes of one cpu, conservative compressing in slices of 4
    questions an instant: every job runs, and the report is the usual one."""
    argv = ["emulate", str(KTH_SAMPLE), "--policy", "conservative", "--nodes", "100xcpus=1"]
    assert main([*argv, "--compression-budget", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["jobs"] == 400
    assert report["rejected"] == 0
    assert report["compression_budget"] == 4  # (a report says how it was replayed)
    assert main([*argv, "--compression-budget", "4"]) == 0
    assert "compressing 4 questions an instant" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--compression-budget", "8"], "--compression-budget slices the node planner's"),
        (["--nodes", "100xcpus=1", "--compression-budget", "0"], "must be at least 1, got 0"),
    ],
)
def test_a_compression_budget_needs_nodes_and_one_question(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", str(KTH_SAMPLE), "--policy", "conservative", *argv]) == 2
    assert message in capsys.readouterr().err
