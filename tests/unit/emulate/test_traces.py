"""Workload readers: SWF field mapping and skips, JSONL validation with clear errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from berth.emulate.traces import read_workload
from berth.emulate.workload import WorkloadError

DATA = Path(__file__).resolve().parents[2] / "data"


def test_swf_maps_fields_and_counts_skipped_jobs() -> None:
    workload = read_workload(DATA / "tiny.swf")
    assert workload.capacity == {"cpus": 8}
    assert workload.timezone == "Europe/Stockholm"
    assert workload.unix_start == 844120800
    by_id = {t.job.id: t for t in workload.jobs}
    assert sorted(by_id) == [1, 2, 5, 6]
    assert by_id[1].job.resources == {"cpus": 4}
    assert by_id[1].job.estimate == 120
    assert by_id[2].job.resources == {"cpus": 8}, "requested -1: use allocated (field 5)"
    assert (by_id[5].runtime, by_id[5].job.estimate) == (1, 1), "clamped; no estimate: runtime"
    assert workload.skipped == {
        "runtime unknown (field 4 < 0)": 1,
        "no processors (fields 8 and 5 <= 0)": 1,
    }


def test_swf_jobs_come_by_submit_time_then_job_number_then_file_order(tmp_path: Path) -> None:
    # job number, submit, run time: out of order, two submits shared, one number twice
    lines = [(7, 10, 1), (3, 10, 2), (5, 0, 3), (3, 10, 4), (1, 20, 5)]
    trace = tmp_path / "order.swf"
    trace.write_text("".join(f"{n} {s} 0 {r} 1 -1 -1 1 60 -1 1 1 1 1 1 -1 -1 -1\n"
                             for n, s, r in lines))  # fmt: skip
    jobs = read_workload(trace).jobs
    assert [(t.job.id, t.job.submit, t.runtime) for t in jobs] == [
        (5, 0, 3), (3, 10, 2), (3, 10, 4), (7, 10, 1), (1, 20, 5)
    ]  # fmt: skip


def test_gzipped_swf_reads_the_same(tmp_path: Path) -> None:
    packed = tmp_path / "tiny.swf.gz"
    packed.write_bytes(gzip.compress((DATA / "tiny.swf").read_bytes()))
    assert read_workload(packed).jobs == read_workload(DATA / "tiny.swf").jobs


def test_jsonl_reads_capacity_line_and_k_resources() -> None:
    workload = read_workload(DATA / "k2.jsonl")
    assert workload.capacity == {"cpus": 16, "mem_gb": 32}
    assert [t.job.id for t in workload.jobs] == [0, 1, 2, 3, 4, 5]
    assert workload.jobs[3].job.resources == {"cpus": 11, "mem_gb": 20}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "submit": 0, "runtime": 5, "resources": {"cpus": 1}}',
         ":1: field 'estimate' must be an integer, got None"),
        ('{"id": 1, "submit": -3, "runtime": 5, "estimate": 5, "resources": {"cpus": 1}}',
         ":1: field 'submit' must be >= 0, got -3"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "resources": {"cpus": 0.5}}',
         ":1: resources.cpus must be a non-negative integer, got 0.5"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "resources": {}}',
         ":1: field 'resources' must be a non-empty object of amounts"),
        ('{"id": 1, "submit": 9, "runtime": 5, "estimate": 5, "resources": {"cpus": 1}, "deadline": 3}',
         ":1: field 'deadline' must be >= 9, got 3"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "resources": {"cpus": 1}, "colour": 1}',
         ":1: unknown field(s) ['colour']"),
        ("{not json", ":1: not valid JSON"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "resources": {"cpus": 1}, '
         '"slots": {"count": 1, "per_slot": {"cpus": 1}}}',
         ":1: give 'resources' (totals) or 'slots', not both"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "resources": {"cpus": 1}, '
         '"nodes": {"count": 1}}',
         ":1: field 'nodes' goes with 'slots', not 'resources'"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "slots": {"count": 0, '
         '"per_slot": {"cpus": 1}}}',
         ":1: field 'count' must be >= 1, got 0"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "slots": {"count": 2, '
         '"per_slot": {"cpus": 1}}, "nodes": {"exclusive": "yes"}}',
         ":1: nodes.exclusive must be true or false"),
        ('{"id": 1, "submit": 0, "runtime": 5, "estimate": 5, "time_limit": 5, "resources": {"cpus": 1}}',
         ":1: give 'estimate' or 'time_limit' (the same), not both"),
        ('{"id": 1, "submit": 0, "runtime": 5, "time_limit": 0, "resources": {"cpus": 1}}',
         ":1: field 'time_limit' must be >= 1, got 0"),
        ('{"nodes": [{"count": 2}]}', ":1: field 'nodes[0].resources' must be a non-empty object"),
        ('{"nodes": [{"name": "a", "resources": {"cpus": 1}}, {"name": "a", "resources": {"cpus": 1}}]}',
         ":1: nodes[1].name must be a new non-empty string"),
    ],
)  # fmt: skip
def test_jsonl_errors_name_the_line_and_the_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(WorkloadError) as error:
        read_workload(path)
    assert message in str(error.value)


def test_jsonl_takes_the_daemons_time_limit_for_the_estimate(tmp_path: Path) -> None:
    path = tmp_path / "asked.jsonl"
    path.write_text(
        '{"id": 1, "submit": 0, "runtime": 5, "time_limit": 300, "resources": {"cpus": 1}}\n'
        '{"id": 2, "submit": 0, "runtime": 5, "estimate": 200, "resources": {"cpus": 1}}\n'
    )
    assert [t.job.estimate for t in read_workload(path).jobs] == [300, 200]


def test_jsonl_rejects_duplicate_ids(tmp_path: Path) -> None:
    job = '{"id": 7, "submit": 0, "runtime": 5, "estimate": 5, "resources": {"cpus": 1}}\n'
    path = tmp_path / "dup.jsonl"
    path.write_text(job + job)
    with pytest.raises(WorkloadError, match=r"dup.jsonl:2: duplicate job id 7"):
        read_workload(path)


def test_priority_and_deadline_are_carried_to_the_job(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"id": 1, "submit": 0, "runtime": 5, "estimate": 9, "resources": {"cpus": 1},'
        ' "deadline": 100, "user": "ann", "priority": {"user": 1.0, "political": 0.5}}\n'
    )
    job = read_workload(path).jobs[0].job
    assert (job.deadline, job.user, dict(job.priority)) == (
        100,
        "ann",
        {"user": 1.0, "political": 0.5},
    )


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown workload format"):
        read_workload("trace.csv")


def test_jsonl_jobs_ask_for_slots_on_the_nodes_line_s_nodes(tmp_path: Path) -> None:
    """Slots and nodes as the daemon's API takes them; a nodes line of named nodes and
    groups; written back and read again, the same workload."""
    from berth.core.shapes import Shape
    from berth.emulate.traces.jsonl import write_jsonl

    path = tmp_path / "nodes.jsonl"
    path.write_text(
        '{"nodes": [{"count": 2, "resources": {"cpus": 4}}, '
        '{"name": "gpu1", "resources": {"cpus": 4, "gpus": 2}}]}\n'
        '{"id": 1, "submit": 0, "runtime": 5, "estimate": 9, '
        '"slots": {"count": 4, "per_slot": {"cpus": 1}}, "nodes": {"count": 2}}\n'
        '{"id": 2, "submit": 1, "runtime": 5, "estimate": 9, '
        '"slots": {"count": 1, "per_slot": {"cpus": 2}}, "nodes": {"exclusive": true}}\n'
        '{"id": 3, "submit": 2, "runtime": 5, "estimate": 9, "resources": {"cpus": 3}}\n'
    )
    workload = read_workload(path)
    assert workload.nodes == {
        "node001": {"cpus": 4}, "node002": {"cpus": 4}, "gpu1": {"cpus": 4, "gpus": 2}
    }  # fmt: skip
    first, second, third = (t.job for t in workload.jobs)
    assert first.shape == Shape(4, {"cpus": 1}, 2, False)
    assert first.resources == {"cpus": 4}
    assert second.shape == Shape(1, {"cpus": 2}, None, True)
    assert third.shape is None
    again = tmp_path / "again.jsonl"
    with again.open("w") as stream:
        write_jsonl(workload.jobs, {}, stream, nodes=workload.nodes)
    reread = read_workload(again)
    assert reread.nodes == workload.nodes
    assert [t.job for t in reread.jobs] == [t.job for t in workload.jobs]


def test_jobs_with_slots_are_replayed_on_the_declared_nodes_and_refused_on_a_pool(
    tmp_path: Path,
) -> None:
    from berth.emulate.run import emulate

    path = tmp_path / "nodes.jsonl"
    path.write_text(
        '{"nodes": [{"count": 2, "resources": {"cpus": 4}}]}\n'
        '{"id": 1, "submit": 0, "runtime": 5, "estimate": 9, '
        '"slots": {"count": 4, "per_slot": {"cpus": 1}}, "nodes": {"count": 2}}\n'
    )
    workload = read_workload(path)
    (result,) = emulate(workload, "conservative", nodes=workload.nodes)
    (record,) = result.records
    assert record.nodes is not None
    assert sorted(record.nodes) == ["node001", "node002"]  # exactly two nodes, 4 slots
    assert sum(held["cpus"] for held in record.nodes.values()) == 4
    with pytest.raises(ValueError, match="job 1 asks for slots on nodes"):
        emulate(workload, "conservative", capacity={"cpus": 8})
