"""A cancel by filter of many jobs goes on batch after batch: each part commits, and
reads are answered between parts, so thousands of cancels never hold reads for seconds."""

from __future__ import annotations

import asyncio

import pytest

from berth.service import commands
from berth.service.commands import CancelArray, CancelJob, CancelMatching, SubmitArray, SubmitJob
from berth.service.handlers.job_commands import cancel, submit
from berth.service.ports import JobFilter
from tests.support.live import engine, request
from tests.unit.service.coordinator_harness import coordinator_setup, held_in_commit

PENDING = JobFilter(states=frozenset({"PENDING"}), user="alice")


def test_a_cancel_goes_on_in_parts_and_reads_see_each_part_committed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(commands, "CANCELS_PER_BATCH", 2)

    async def scenario() -> tuple[list[str], list[int], int, list[int]]:
        coordinator, store, _, _ = coordinator_setup()  # one node of 8 cpus
        await coordinator.start()
        for user in ("alice", "alice", "bob", "alice", "alice", "alice"):
            await coordinator.call(SubmitJob(request(8, 100, user=user)))
        saves = store.saves
        # The first part (jobs 2 and 4) is held in its commit: a read waits for it.
        cancel = await held_in_commit(store, coordinator.call(CancelMatching(PENDING, None, "x")))
        read = asyncio.ensure_future(
            coordinator.read(lambda e: [e.jobs[i].state.value for i in sorted(e.jobs)])
        )
        store.gate.set()
        states = await read  # answered between the first part and the next
        cancelled = [record.id for record in await cancel]
        parts = store.saves - saves
        after = await coordinator.read(lambda e: sorted(i for i, r in e.jobs.items() if r.final))
        await coordinator.stop()
        return states, cancelled, parts, after

    states, cancelled, parts, after = asyncio.run(scenario())
    assert states == ["RUNNING", "CANCELLED", "PENDING", "CANCELLED", "PENDING", "PENDING"]
    assert cancelled == [2, 4, 5, 6]  # every chosen job, in the one answer
    assert parts == 2  # two parts, each its own commit
    assert after == [2, 4, 5, 6]  # bob's job 3 and the running job 1 untouched


def test_jobs_are_chosen_once_and_one_ended_meanwhile_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(commands, "CANCELS_PER_BATCH", 1)

    async def scenario() -> tuple[list[int], list[str]]:
        coordinator, _, _, _ = coordinator_setup()
        await coordinator.start()
        for _ in range(4):
            await coordinator.call(SubmitJob(request(8, 100)))
        # Job 4 is cancelled on its own while the cancel by filter goes on; job 5 comes
        # after the jobs were chosen. Both calls join the first part's batch.
        answers = await asyncio.gather(
            coordinator.call(CancelMatching(PENDING, None, "by filter")),
            coordinator.call(CancelJob(4, "alone")),
            coordinator.call(SubmitJob(request(8, 100))),
        )
        reasons = await coordinator.read(
            lambda e: [e.jobs[i].state_reason for i in sorted(e.jobs) if e.jobs[i].final]
        )
        await coordinator.stop()
        return [record.id for record in answers[0]], reasons

    cancelled, reasons = asyncio.run(scenario())
    assert cancelled == [2, 3]  # not job 4 (cancelled meanwhile), not job 5 (came after)
    assert reasons == ["by filter", "by filter", "alone"]


def test_an_array_is_cancelled_in_parts_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commands, "CANCELS_PER_BATCH", 2)

    async def scenario() -> tuple[list[int], int]:
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        made, _ = await coordinator.call(SubmitArray(request(8, 100), (0, 1, 2, 3, 4)))
        saves = store.saves
        cancelled = await coordinator.call(CancelArray(made[0].id, "by alice"))
        parts = store.saves - saves
        await coordinator.stop()
        return [record.id for record in cancelled], parts

    cancelled, parts = asyncio.run(scenario())
    assert cancelled == [1, 2, 3, 4, 5]  # the running task too
    assert parts == 3


def test_commands_sent_meanwhile_are_applied_between_the_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(commands, "CANCELS_PER_BATCH", 1)

    async def scenario() -> tuple[bool, int, list[int]]:
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        for _ in range(5):
            await coordinator.call(SubmitJob(request(8, 100)))
        cancel = await held_in_commit(store, coordinator.call(CancelMatching(PENDING, None, "x")))
        submit = asyncio.ensure_future(coordinator.call(SubmitJob(request(8, 100, user="bob"))))
        await asyncio.sleep(0.01)
        store.gate.set()
        made = await submit
        cancelling = not cancel.done()  # the submit did not wait for every part
        cancelled = [record.id for record in await cancel]
        await coordinator.stop()
        return cancelling, made[0].id, cancelled

    cancelling, made, cancelled = asyncio.run(scenario())
    assert cancelling
    assert made == 6
    assert cancelled == [2, 3, 4, 5]


def test_a_chosen_job_let_go_from_memory_meanwhile_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chosen job that ends between two parts may be let go from the engine's memory
    (finished jobs are kept only so long) before its part: it is left out, not a 404."""
    monkeypatch.setattr(commands, "CANCELS_PER_BATCH", 1)
    live = engine(count=1)
    for _ in range(3):
        submit(live, request(8, 100), 0)
    command = CancelMatching(PENDING, None, "x")
    assert command.apply(live, 1) is commands.MORE_TO_DO  # job 2 cancelled
    cancel(live, 3, 2, "alone")
    del live.book.jobs[3]  # (as JobMemory lets a finished job go)
    assert [record.id for record in command.apply(live, 3)] == [2]  # type: ignore[union-attr]
