"""Workflows in the emulator: a JSONL workload's arrays and dependencies, replayed
through the same planner as the daemon, and when each job would start."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from berth.core.dependencies import Need
from berth.emulate.traces import read_workload
from berth.emulate.workload import WorkloadError
from berth.runtime.main import main

NODES = '{"nodes": [{"count": 2, "resources": {"cpus": 8}}]}'
FLOW = [
    NODES,
    '{"id": 1, "submit": 0, "runtime": 600, "estimate": 900, "resources": {"cpus": 16}}',
    '{"id": 10, "submit": 0, "runtime": 300, "estimate": 600, "resources": {"cpus": 2},'
    ' "array": "0-7%4", "dependency": "afterok:1"}',
    '{"id": 20, "submit": 0, "runtime": 120, "estimate": 300, "resources": {"cpus": 8},'
    ' "dependency": "afterok:10"}',
]


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "flow.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_array_line_makes_its_tasks_with_lanes_and_dependencies(tmp_path: Path) -> None:
    workload = read_workload(_write(tmp_path, FLOW))
    needs = {t.job.id: t.needs for t in workload.jobs}
    assert sorted(needs) == [1, *range(10, 18), 20]
    assert needs[10] == (Need("afterok", 1),)
    assert needs[14] == (Need("afterok", 1), Need("throttle", 10))
    assert needs[20] == tuple(Need("afterok", i) for i in range(10, 18))  # the whole array


def test_emulate_prints_when_each_job_of_a_workflow_would_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, FLOW)
    out = tmp_path / "jobs.jsonl"
    assert main(["emulate", str(path), "--policy", "conservative", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == [
        "job", "waits_for", "guaranteed", "start", "end", "status",
    ]  # fmt: skip
    jobs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    # Guarantees follow the predecessors' guaranteed ends: prepare's 900, then each lane's
    # previous task's 900 + 600, then the array's last end 1500 + 600.
    assert [jobs[i]["guarantee"] for i in (1, 10, 13, 14, 17, 20)] == [
        0,
        900,
        900,
        1500,
        1500,
        2100,
    ]
    # Starts follow the real ends: never before what they wait for, never more than 4.
    assert jobs[10]["start"] == jobs[1]["end"] == 600
    assert jobs[14]["start"] == jobs[10]["end"] == 900
    assert jobs[20]["start"] == max(jobs[i]["end"] for i in range(10, 18)) == 1200


def test_a_failed_predecessor_cancels_afterok_in_the_replay(tmp_path: Path) -> None:
    lines = [
        NODES,
        '{"id": 1, "submit": 0, "runtime": 900, "estimate": 60, "resources": {"cpus": 1}}',
        '{"id": 2, "submit": 0, "runtime": 10, "estimate": 60, "resources": {"cpus": 1},'
        ' "dependency": "afterok:1"}',
        '{"id": 3, "submit": 0, "runtime": 10, "estimate": 60, "resources": {"cpus": 1},'
        ' "dependency": "afternotok:1"}',
    ]
    out = tmp_path / "jobs.jsonl"
    assert main(["emulate", str(_write(tmp_path, lines)), "--out", str(out)]) == 0
    jobs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert jobs[1]["status"] == "killed"
    assert jobs[2]["status"] == "cancelled"
    assert jobs[2]["start"] is None
    assert jobs[3]["start"] == 60


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"id": 5, "submit": 0, "runtime": 1, "estimate": 1, "resources": {"cpus": 1}, "dependency": '
         '"afterok:9"}', "flow.jsonl:2: field 'dependency': no job 9 on an earlier line"),
        ('{"id": 5, "submit": 0, "runtime": 1, "estimate": 1, "resources": {"cpus": 1}, "array": "0-3%0"}',
         "flow.jsonl:2: field 'array': array '0-3%0': %N must be"),
        ('{"id": 5, "submit": 0, "runtime": 1, "estimate": 1, "resources": {"cpus": 1}, "dependency": '
         '"afterok:5"}', "no job 5 on an earlier line"),
        ('{"id": 5, "submit": 0, "runtime": 1, "estimate": 1, "resources": {"cpus": 1}, "dependency": 3}',
         "field 'dependency' must be a string"),
    ],
)  # fmt: skip
def test_bad_workflow_lines_name_the_line_and_the_field(
    tmp_path: Path, line: str, says: str
) -> None:
    with pytest.raises(WorkloadError, match=re.escape(says)):
        read_workload(_write(tmp_path, [NODES, line]))


def test_a_job_waits_only_for_jobs_that_arrive_before_it(tmp_path: Path) -> None:
    lines = [
        NODES,
        '{"id": 1, "submit": 50, "runtime": 1, "estimate": 1, "resources": {"cpus": 1}}',
        '{"id": 2, "submit": 0, "runtime": 1, "estimate": 1, "resources": {"cpus": 1}, "dependency": '
        '"afterany:1"}',
    ]
    with pytest.raises(WorkloadError, match="job 1 does not arrive before this one"):
        read_workload(_write(tmp_path, lines))


def test_a_workflow_is_not_replayed_where_it_cannot_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, FLOW)
    assert main(["emulate", str(path), "--slice", "month"]) == 2
    assert "--slice cannot replay" in capsys.readouterr().err
