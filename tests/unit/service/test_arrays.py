"""Job arrays in the engine: task indices, one job per task, cancelling the array."""

from __future__ import annotations

import re

import pytest

from berth.core.arrays import MAX_ARRAY_TASKS
from berth.service.commands import CancelArray
from berth.service.handlers.arrays import parse_array
from berth.service.model import JobState, RequestError
from tests.support.live import engine, request, submit_whole_array


@pytest.mark.parametrize(
    ("spec", "tasks"),
    [
        ("0-4", (0, 1, 2, 3, 4)),
        ("1,3,5-7", (1, 3, 5, 6, 7)),
        ("0-9:4", (0, 4, 8)),
        ("3,1,3", (1, 3)),  # in order, each once
    ],
)
def test_task_indices_are_read_as_slurm_writes_them(spec: str, tasks: tuple[int, ...]) -> None:
    assert parse_array(spec) == (tasks, None)


@pytest.mark.parametrize(("spec", "limit"), [("0-9%2", 2), ("1,3%1", 1), ("0-99:4%10", 10)])
def test_a_limit_on_running_tasks_is_read(spec: str, limit: int) -> None:
    assert parse_array(spec)[1] == limit


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("0-9%0", "%N must be a whole number of tasks, at least 1"),
        ("0-9%", "%N must be a whole number of tasks, at least 1"),
        ("0-9%x", "%N must be a whole number of tasks, at least 1"),
        ("9-0", "must run upwards"),
        ("0-9:0", "step of at least 1"),
        ("a-b", "expected N, N-M or N-M:STEP"),
        (f"0-{MAX_ARRAY_TASKS}", f"more than {MAX_ARRAY_TASKS} tasks"),
    ],
)
def test_a_bad_array_is_refused_naming_the_field(spec: str, says: str) -> None:
    with pytest.raises(RequestError, match=re.escape(says)) as refused:
        parse_array(spec)
    assert refused.value.field == "array"


def test_each_task_is_a_job_with_its_own_guarantee_and_the_array_cancels_whole() -> None:
    live = engine()
    sweep = request(cpus=32, limit=600, key="k")
    tasks, created = submit_whole_array(live, sweep, (0, 2, 4), 0)
    assert created
    assert [t.array_task_id for t in tasks] == [0, 2, 4]
    assert {t.array_job_id for t in tasks} == {tasks[0].id}
    assert all(t.guaranteed_start is not None for t in tasks)
    again, created = submit_whole_array(live, sweep, (0, 2, 4), 5)
    assert not created
    assert [t.id for t in again] == [t.id for t in tasks]  # the key names the array
    cancelled = CancelArray(tasks[0].id, "by alice").apply(live, 10)
    assert isinstance(cancelled, list)
    assert {t.state for t in cancelled} == {JobState.CANCELLED}
    assert len(cancelled) == 3
    with pytest.raises(RequestError, match="no array 999"):
        CancelArray(999, "by alice").apply(live, 10)
