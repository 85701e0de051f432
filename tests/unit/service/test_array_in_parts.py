"""A large array goes in a part a batch: each part commits and reads are answered
between parts; its job numbers are set aside, commands that depend on it wait until it
is whole, and a daemon that stops between parts admits the rest when it starts again."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from berth.core.shapes import Shape
from berth.service.commands import (
    MORE_TO_DO,
    CancelArray,
    CancelMatching,
    SubmitArray,
    SubmitJob,
)
from berth.service.handlers import arrays
from berth.service.handlers.job_commands import cancel
from berth.service.jobs import array_fill
from berth.service.jobs.array_fill import ArrayFill, runs_of, tasks_of
from berth.service.model import JobRecord, JobRequest
from berth.service.ports import JobFilter
from berth.service.rows import job_from_row, job_row
from berth.store.memory import MemoryStore
from tests.support.live import engine, request, submit_whole_array
from tests.unit.service.coordinator_harness import coordinator_setup, held_in_commit

TASKS = (0, 2, 4, 6, 8)


def _described(records: list[JobRecord]) -> list[tuple[object, ...]]:
    """What an array's tasks are, whichever way they went in."""
    return [
        (r.id, r.array_job_id, r.array_task_id, r.needs, r.command, r.resources, r.name)
        for r in records
    ]


def test_an_array_goes_in_in_parts_and_a_read_sees_each_part_committed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 2)

    async def scenario() -> tuple[list[int], list[int], int, list[int]]:
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        saves = store.saves
        submitted = await held_in_commit(store, coordinator.call(SubmitArray(request(), TASKS)))
        read = asyncio.ensure_future(coordinator.read(lambda e: sorted(e.jobs)))
        store.gate.set()
        seen = await read  # answered between the first part and the next
        records, _ = await submitted
        parts = store.saves - saves
        stored = sorted(store.jobs)
        await coordinator.stop()
        return seen, [r.id for r in records], parts, stored

    seen, answered, parts, stored = asyncio.run(scenario())
    assert seen == [1, 2]  # the first part only
    assert answered == [1, 2, 3, 4, 5]  # the whole array, in the one answer
    assert parts == 3  # three parts, each its own commit
    assert stored == [1, 2, 3, 4, 5]


def test_a_part_ends_once_it_has_taken_a_batchs_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrays, "PART_SECONDS", 0.0)  # (each task takes all of it)

    async def scenario() -> tuple[list[int], int]:
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        saves = store.saves
        records, _ = await coordinator.call(SubmitArray(request(), TASKS))
        parts = store.saves - saves
        await coordinator.stop()
        return [r.id for r in records], parts

    assert asyncio.run(scenario()) == ([1, 2, 3, 4, 5], 5)


def test_a_submission_meanwhile_is_numbered_after_the_array_and_answered_before_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 1)

    async def scenario() -> tuple[list[int], int, list[str]]:
        coordinator, _, _, _ = coordinator_setup()
        await coordinator.start()
        answered: list[str] = []
        array = asyncio.ensure_future(coordinator.call(SubmitArray(request(), TASKS)))
        job = asyncio.ensure_future(coordinator.call(SubmitJob(request())))
        array.add_done_callback(lambda _: answered.append("array"))
        job.add_done_callback(lambda _: answered.append("job"))
        (records, _), (record, _) = await asyncio.gather(array, job)
        await coordinator.stop()
        return [r.id for r in records], record.id, answered

    tasks, job, answered = asyncio.run(scenario())
    assert tasks == [1, 2, 3, 4, 5]  # task i is job 1 + i, whatever came meanwhile
    assert job == 6
    assert answered == ["job", "array"]  # it joined the first part's batch


def test_a_dependency_on_the_array_and_cancels_of_it_wait_until_it_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 1)
    after_array = JobRequest(
        name="after", user="alice", resources={"cpus": 1}, time_limit=10, dependency="afterok:1"
    )

    async def scenario(cancel: CancelArray | CancelMatching) -> tuple[str | None, list[int]]:
        coordinator, _, _, _ = coordinator_setup()
        await coordinator.start()
        _, (job, _), cancelled = await asyncio.gather(
            coordinator.call(SubmitArray(request(), TASKS)),
            coordinator.call(SubmitJob(after_array)),
            coordinator.call(cancel),
        )
        await coordinator.stop()
        return job.needs, [r.id for r in cancelled]

    needs, cancelled = asyncio.run(scenario(CancelArray(1, "no more")))
    assert needs == ",".join(f"afterok:{task}" for task in range(1, 6))  # every task
    assert cancelled == [1, 2, 3, 4, 5]  # every task (none had ended), the later parts too
    _, cancelled = asyncio.run(scenario(CancelMatching(JobFilter(user="alice"), "t", "x")))
    assert cancelled == [1, 2, 3, 4, 5]  # (alice's jobs named "t": the tasks)


def test_a_restart_between_parts_admits_the_rest_as_if_it_had_not_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected, _ = submit_whole_array(engine(count=1), request(runtime=50), TASKS, 0, limit=2)
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 2)
    store = MemoryStore()
    live = engine(count=1)
    store.save(live.take_changes())  # (the daemon's start-up commit)
    assert SubmitArray(request(runtime=50), TASKS, limit=2).apply(live, 0) is MORE_TO_DO
    store.save(live.take_changes())  # the first part committed; then the daemon stops
    assert sorted(store.jobs) == [1, 2]
    kept = store.config["arrays_in_parts"]
    assert isinstance(kept, list)
    assert [(k["array_id"], k["done"], k["limit"]) for k in kept] == [(1, 2, 2)]

    restored = engine(count=1, snapshot=store.load(), now=20)
    assert _described(restored.book.array_tasks(1)) == _described(expected)
    assert restored.book.filling == {}
    assert restored.book.next_id == 6
    assert restored.take_changes().config["arrays_in_parts"] == []  # stored as whole


def test_a_retry_of_an_array_going_in_waits_for_the_whole_array(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 1)

    async def scenario() -> tuple[list[int], list[int], bool]:
        coordinator, _, _, _ = coordinator_setup()
        await coordinator.start()
        first, again = await asyncio.gather(
            coordinator.call(SubmitArray(request(key="k"), TASKS)),
            coordinator.call(SubmitArray(request(key="k"), TASKS)),
        )
        await coordinator.stop()
        return [r.id for r in first[0]], [r.id for r in again[0]], again[1]

    first, again, created = asyncio.run(scenario())
    assert first == again == [1, 2, 3, 4, 5]
    assert not created


def test_task_indices_are_stored_as_runs() -> None:
    for tasks in [(0,), tuple(range(10_000)), (1, 3, 5, 9, 10, 11), (0, 2, 4, 5, 7, 100)]:
        assert tasks_of(runs_of(tasks)) == tasks
    assert runs_of(tuple(range(0, 10_000, 4))) == [[0, 2500, 4]]
    fill = ArrayFill(7, (0, 2, 4), 3, {"id": 7}, done=1)
    assert ArrayFill.from_dict(fill.as_dict()) == fill


def test_a_request_comes_back_whole_from_its_jobs_stored_row() -> None:
    """An array's later tasks are made from its first task's row (after a restart too):
    every field of the request must come back, so a field added to one and not the
    other fails here."""
    full = JobRequest(
        name="sweep", user="alice", resources={"cpus": 4, "mem_gb": 8}, time_limit=600,
        deadline=5000, priority=2.5, command=None, emulated_runtime=300,
        idempotency_key="k", shape=Shape(2, {"cpus": 2, "mem_gb": 4}, 2), script="#!/bin/sh\n",
        argv=("a", "b"), chdir="/tmp", output="o-%A_%a", error="e-%a", requeue=True,
        partition="batch", account="physics", dependency="afterok:3",
        kill_on_invalid_dep=False, begin_time=4000, hold=True,
    )  # fmt: skip
    unset = [f.name for f in dataclasses.fields(full) if getattr(full, f.name) == f.default]
    assert unset == ["command", "array_job_id", "array_task_id"]  # (each other one is set)
    row = job_row(JobRecord.from_request(7, full, 100))
    assert job_from_row(row).as_request() == full


def test_the_answer_holds_every_task_even_one_let_go_from_memory_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 2)
    live = engine(count=1)
    command = SubmitArray(request(), TASKS)
    assert command.apply(live, 0) is MORE_TO_DO
    cancel(live, 1, 1, "ended")
    del live.book.jobs[1]  # (as JobMemory lets a finished job go)
    while (made := command.apply(live, 2)) is MORE_TO_DO:
        pass
    assert isinstance(made, tuple)
    assert [r.id for r in made[0]] == [1, 2, 3, 4, 5]


def test_a_part_that_fails_leaves_the_tasks_in_and_nothing_waiting_for_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug in a later part answers the array's request 500; the commands that waited
    for the array to be whole go on."""
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 2)
    live = engine(count=1)
    command = SubmitArray(request(), TASKS)
    assert command.apply(live, 0) is MORE_TO_DO

    def broken(*_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(arrays, "_enter_part", broken)
    with pytest.raises(RuntimeError):
        command.apply(live, 1)
    assert live.book.filling == {}
    after = JobRequest("after", "alice", {"cpus": 1}, 10, dependency="afterany:1")
    made = SubmitJob(after).apply(live, 2)
    assert isinstance(made, tuple)
    assert sorted(live.jobs) == [1, 2, 6]  # (the array's numbers 3-5 stay unused)
