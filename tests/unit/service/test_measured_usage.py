"""Measured usage beside allocations: what ``berth usage``, ``berth show`` and
``/metrics`` are built from."""

from __future__ import annotations

from berth.service.model import JobRecord, JobState
from berth.service.rows import tally_usage
from berth_client.efficiency import job_lines, size, usage_columns


def test_usage_sums_measured_cpu_beside_the_cpu_seconds_of_the_same_jobs() -> None:
    totals = tally_usage(
        [
            ("alice", {"cpus": 2}, 0, 100, {"cpu_seconds": 150.0}),  # measured
            ("alice", {"cpus": 4}, 0, 100, None),  # emulated: not measured
            ("bob", {"cpus": 1}, 10, 20, {"peak_memory_bytes": 1.0}),  # no CPU figure
        ]
    )
    assert totals["alice"] == {
        "jobs": 2,
        "cpus_seconds": 600,
        "measured_jobs": 1,
        "used_cpu_seconds": 150.0,
        "measured_cpus_seconds": 200,  # the efficiency's denominator: measured jobs only
    }
    assert "measured_jobs" not in totals["bob"]
    assert usage_columns(totals["alice"]).split() == ["0.0", "75.0%"]
    assert usage_columns(totals["bob"]).split() == ["-", "-"]


def test_a_measured_end_adds_to_the_daemons_counters_once() -> None:
    record = JobRecord(1, "j", "alice", {"cpus": 2, "mem_gb": 1}, 600, 0, JobState.COMPLETED)
    assert record.measured_counts() == {}  # never started
    record.start_time, record.end_time = 100, 110
    assert record.measured_counts() == {}  # not measured
    record.usage = {"cpu_seconds": 15.0}
    assert record.measured_counts() == {
        "measured_jobs": 1,
        "used_cpu_seconds": 15.0,
        "measured_cpus_seconds": 20.0,
    }


def test_show_prints_efficiency_like_seff() -> None:
    job = {"resources": {"cpus": 2, "mem_gb": 2}, "start_time": 0, "end_time": 10,
           "usage": {"cpu_seconds": 15.0, "peak_memory_bytes": 2**30, "gpus": 1}}  # fmt: skip
    assert job_lines(job) == [
        ("cpu_used", "15.0 s of 20 cpu-seconds held: efficiency 75.0%"),
        ("memory_peak", "1.00 GiB of 2.00 GiB asked: efficiency 50.0%"),
        ("gpus_used", "1"),
    ]
    ran = {"start_time": 1, "end_time": 5, "usage": None}
    assert job_lines(ran) == [("usage", "not measured (emulated nodes, or its command never ran)")]
    assert job_lines({"start_time": None, "end_time": 5}) == [("usage", "none: it never started")]
    assert job_lines({"start_time": 1, "end_time": None}) == [("usage", "measured at its end")]
    assert size(812 * 2**10) == "812 KiB"
    assert size(10) == "10 B"
