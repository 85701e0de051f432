"""Column-wise construction of frozen job objects (berth.core.columns)."""

from __future__ import annotations

import dataclasses
from itertools import repeat

import pytest

from berth.core.columns import build_frozen
from berth.core.model import Job, jobs_of_columns
from berth.emulate.workload import TraceJob, trace_jobs


def test_jobs_built_by_columns_equal_jobs_built_one_by_one() -> None:
    resources = [{"cpus": 1}, {"cpus": 4}, {"cpus": 1}]
    users = ["7", None, "9"]
    built = jobs_of_columns([10, 11, 12], [0, 5, 5], [60, 1, 3600], resources, users)
    assert built == [
        Job(10, 0, 60, {"cpus": 1}, None, "7"),
        Job(11, 5, 1, {"cpus": 4}, None, None),
        Job(12, 5, 3600, {"cpus": 1}, None, "9"),
    ]
    traced = trace_jobs(built, [30, 1, 7200], ["a", "b", None])
    assert traced == [
        TraceJob(built[0], 30, "a"),
        TraceJob(built[1], 1, "b"),
        TraceJob(built[2], 7200),
    ]


def test_objects_built_by_columns_stay_frozen() -> None:
    (job,) = jobs_of_columns([1], [0], [60], [{"cpus": 1}], [None])
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.estimate = 5  # type: ignore[misc]


def test_every_slot_must_be_given() -> None:
    with pytest.raises(TypeError, match=r"missing \['swf_line'\]"):
        build_frozen(TraceJob, 1, {"job": repeat(None), "runtime": repeat(1), "needs": repeat(())})
    with pytest.raises(TypeError, match=r"extra \['colour'\]"):
        build_frozen(
            TraceJob,
            1,
            {
                "job": repeat(None),
                "runtime": repeat(1),
                "swf_line": repeat(None),
                "needs": repeat(()),
                "colour": [1],
            },
        )


def test_an_estimate_below_the_minimum_is_refused_not_stored() -> None:
    with pytest.raises(ValueError, match="at least 1 s"):
        jobs_of_columns([1], [0], [0], [{"cpus": 1}], [None])
