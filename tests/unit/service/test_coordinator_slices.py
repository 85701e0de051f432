"""The single writer's long work in slices: a compression after an early end and a
forecast go on between batches, reads answer meanwhile from the last commit, and commands
carried over a batch go next, before any slice, and are never starved."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from berth.dispatch.emulated import EmulatedNodes
from berth.service.commands import MoreToDo, SubmitJob
from berth.service.coordinator import Coordinator
from berth.service.engine import Engine
from berth.service.model import JobRecord
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine
from berth.store.memory import MemoryStore
from tests.support.live import ManualClock, nodes, request
from tests.unit.service.coordinator_harness import (
    GatedStore,
    RecordingNodes,
    coordinator_setup,
)


def test_a_long_compression_runs_in_slices_and_reads_answer_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job ending early gives room back to a deep queue: the compression that follows
    runs in slices between batches (here one question each), the command that ended
    the job and reads answer before it is done, and once it is done the plan is the one
    the engine makes when it compresses at once."""
    from berth.service import coordinator as module

    monkeypatch.setattr(module, "IMPROVE_SECONDS", 0.0)
    monkeypatch.setattr(module, "SLICE_SECONDS", 0.0)

    def commands(clock: ManualClock) -> list[Any]:
        first = [SubmitJob(request(32, limit=1000, runtime=10))]  # the whole cluster
        return first + [SubmitJob(request(8 * (i % 4 + 1), limit=50 + i)) for i in range(30)]

    async def scenario() -> tuple[dict[int, int | None], int]:
        coordinator, _, _, clock = coordinator_setup(4)
        await coordinator.start()
        for command in commands(clock):
            await coordinator.call(command)
        clock.advance(10)
        before = coordinator.stats.batches
        await coordinator.tick()  # job 1 ends early: compression is due
        for _ in range(2000):  # slices run while the writer has nothing else to do
            if not coordinator.engine.improvement_due:
                break
            await asyncio.sleep(0.001)
        planned = {i: r.planned_start for i, r in coordinator.engine.pending.items()}
        planned |= {i: r.start_time for i, r in coordinator.engine.running.items()}
        batches = coordinator.stats.batches - before
        await coordinator.stop()
        return planned, batches

    planned, batches = asyncio.run(scenario())
    assert batches >= 3  # the tick's own batch and slices after it, one question each

    clock = ManualClock(1000)
    at_once = restore_engine(Snapshot(), EmulatedNodes(), clock.now(), nodes(4), "conservative", {})
    for command in commands(clock):
        with at_once.batch(clock.now()):
            at_once.advance(clock.now())
            command.apply(at_once, clock.now())
    clock.advance(10)
    with at_once.batch(clock.now()):
        at_once.advance(clock.now())
    expected = {i: r.planned_start for i, r in at_once.pending.items()}
    expected |= {i: r.start_time for i, r in at_once.running.items()}
    assert planned == expected
    assert expected[2] == 1010  # the queue did move up


def test_a_long_forecast_goes_on_in_slices_and_reads_answer_from_the_last_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under EASY, predicted starts come from a copy of the policy run forward. A read
    does not wait for a run longer than its slice (here none at all): it answers from
    the last finished run, and the writer finishes the run in slices; the predictions
    are then those of the whole run made at once."""
    from berth.core.forecast import forecast
    from berth.service.planning import forecasts

    monkeypatch.setattr(forecasts, "FORECAST_SLICE", 0.0)

    async def scenario() -> tuple[dict[int, int], dict[int, int], dict[int, int], bool]:
        store = GatedStore()
        clock = ManualClock(1000)
        engine = restore_engine(
            Snapshot(), RecordingNodes(store), clock.now(), nodes(2), "easy", {}
        )
        coordinator = Coordinator(engine, store, clock)
        await coordinator.start()
        for i in range(12):
            await coordinator.call(SubmitJob(request(8 * (i % 2 + 1), limit=100 + i)))
        first = await coordinator.read(lambda e: e.forecasts.predictions(clock.now())[1])
        underway = coordinator.engine.improvement_due
        expected = forecast(coordinator.engine.policy, clock.now())
        for _ in range(2000):
            if not coordinator.engine.improvement_due:
                break
            await asyncio.sleep(0.001)
        later = await coordinator.read(lambda e: e.forecasts.predictions(clock.now())[1])
        await coordinator.stop()
        return first, later, expected, underway

    first, later, expected, underway = asyncio.run(scenario())
    assert underway
    assert first == {}  # no run had finished: nothing to answer from yet
    assert later == expected
    assert len(expected) >= 8


def test_commands_carried_to_the_next_batch_are_not_starved_by_a_long_compression(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch over its time carries its other commands to the next batch; plan
    improvement that is due must not keep the writer from them. Here every batch
    applies one command, and the improvement never ends (a compression longer than the
    test): the writer must still alternate."""
    from berth.service import coordinator as module

    monkeypatch.setattr(module, "BATCH_SECONDS", 0.0)
    monkeypatch.setattr(Engine, "improvement_due", property(lambda self: True))
    monkeypatch.setattr(Engine, "improve", lambda self, now, stop: False)

    async def scenario() -> list[int]:
        coordinator, _, _, _ = coordinator_setup(4)
        await coordinator.start()
        submits = [SubmitJob(request(1, limit=5)) for _ in range(6)]
        ids = await asyncio.wait_for(
            asyncio.gather(*(coordinator.call(s, lambda made: made[0].id) for s in submits)), 5
        )
        await coordinator.stop()
        return list(ids)

    assert asyncio.run(scenario()) == list(range(1, 7))  # all six applied, in order


def test_commands_carried_over_a_batch_go_next_before_any_slice_and_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch over its time carries its other commands; they are applied next, before
    the slice of plan improvement that is due and without the commands that arrived
    since (a store that commits on the loop would otherwise linger and take those too):
    behind a slice and a full batch, a carried submission waited three batches."""
    from berth.service import coordinator as module

    monkeypatch.setattr(module, "BATCH_SECONDS", 0.0)  # each batch applies one command
    monkeypatch.setattr(Engine, "improvement_due", property(lambda self: True))
    happened: list[str] = []

    def endless_slice(self: Engine, now: int, stop: object) -> bool:
        happened.append("slice")
        return False  # a compression longer than the test

    monkeypatch.setattr(Engine, "improve", endless_slice)
    submit = SubmitJob.apply

    async def scenario() -> list[int]:
        store = MemoryStore()  # commits on the loop, as SQLite does
        clock = ManualClock(1000)
        engine = restore_engine(
            Snapshot(), EmulatedNodes(), clock.now(), nodes(4), "conservative", {}
        )
        coordinator = Coordinator(engine, store, clock)
        later: list[asyncio.Task[int]] = []

        def recorded(self: SubmitJob, engine: Engine, now: int) -> tuple[JobRecord, bool]:
            made = submit(self, engine, now)
            assert not isinstance(made, MoreToDo)
            happened.append(f"submit {made[0].id}")
            if not later:  # one more arrives while the first batch is applied
                later.append(
                    asyncio.ensure_future(coordinator.call(SubmitJob(request(1)), first_id))
                )
            return made

        def first_id(made: tuple[JobRecord, bool]) -> int:
            return made[0].id

        monkeypatch.setattr(SubmitJob, "apply", recorded)
        await coordinator.start()
        first = [SubmitJob(request(1, limit=5)) for _ in range(3)]
        ids = await asyncio.wait_for(
            asyncio.gather(*(coordinator.call(s, first_id) for s in first)), 5
        )
        ids.append(await asyncio.wait_for(later[0], 5))
        await coordinator.stop()
        return list(ids)

    assert asyncio.run(scenario()) == [1, 2, 3, 4]
    commands = [event for event in happened if event != "slice"]
    assert commands == ["submit 1", "submit 2", "submit 3", "submit 4"]
    first, third = happened.index("submit 1"), happened.index("submit 3")
    assert happened[first : third + 1] == commands[:3]  # the carried two at once
    assert "slice" in happened[third : happened.index("submit 4")]  # not with them
