"""A command whose long part only reads the engine (a drain's replan: seconds on a large
cluster) runs it off the event loop: reads are answered meanwhile, nothing is applied
in between, and the command then applies what it prepared at the same instant."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from berth.service.commands import (
    ChangeNodes,
    ChangePartition,
    ChangePolicy,
    CreatePartition,
    MarkNodesDown,
    SubmitJob,
    is_prepared,
)
from berth.service.engine import Engine
from berth.service.model import JobState, NodeState, RequestError
from berth.service.partitions.specs import BackfillSpec
from tests.support.live import request
from tests.unit.service.coordinator_harness import coordinator_setup


@dataclass(frozen=True)
class Held:
    """A :class:`Prepared` command whose preparation waits for the test to open ``gate``,
    noting the thread it ran in."""

    inner: Any
    gate: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    threads: list[int] = field(default_factory=list)

    def prepare(self, engine: Engine, now: int) -> Any:
        self.threads.append(threading.get_ident())
        self.started.set()
        assert self.gate.wait(timeout=10)
        return self.inner.prepare(engine, now)

    def apply_prepared(self, engine: Engine, now: int, prepared: Any) -> Any:
        return self.inner.apply_prepared(engine, now, prepared)

    def apply(self, engine: Engine, now: int) -> Any:
        return self.inner.apply(engine, now)


def test_reads_are_answered_while_a_drain_is_prepared_and_commands_wait() -> None:
    async def scenario() -> None:
        coordinator, _, _, _ = coordinator_setup(count=2)
        await coordinator.start()
        drain = Held(ChangeNodes("drain", ("node001",), "disk"))
        assert is_prepared(drain)
        assert not is_prepared(SubmitJob(request(8)))
        draining = asyncio.create_task(
            coordinator.call(drain, lambda nodes: [(n.name, n.state) for n in nodes])
        )
        assert await asyncio.to_thread(drain.started.wait, 10)
        assert drain.threads != [threading.get_ident()]  # (not the event loop's thread)
        # Answered now, from the state as it was: the drain is not applied yet.
        state = await asyncio.wait_for(
            coordinator.read(lambda e: e.cluster.nodes["node001"].state), timeout=5
        )
        assert state is NodeState.UP
        submitted = asyncio.create_task(
            coordinator.call(SubmitJob(request(8)), lambda made: made[0].id)
        )
        for _ in range(20):
            await asyncio.sleep(0)
        assert not submitted.done()  # (nothing is applied while the drain is prepared)
        assert not draining.done()
        drain.gate.set()
        assert await draining == [("node001", NodeState.DRAINED)]
        job_id = await submitted
        # The job came after the drain: it was placed on the node left up.
        placed = await coordinator.read(lambda e: e.jobs[job_id].allocation)
        assert list(placed) == ["node002"]
        await coordinator.stop()

    asyncio.run(scenario())


def test_a_refusal_found_while_preparing_changes_nothing() -> None:
    async def scenario() -> None:
        coordinator, store, _, _ = coordinator_setup(count=1)
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8)))  # the only node, then one waiting
        await coordinator.call(SubmitJob(request(8)))
        saves = store.saves
        with pytest.raises(RequestError) as refused:
            await coordinator.call(ChangeNodes("drain", ("node001",), "disk"))
        assert refused.value.field == "name"
        assert refused.value.message.startswith("taking node 'node001' out would break 1 ")
        assert await coordinator.read(lambda e: e.cluster.nodes["node001"].state) is NodeState.UP
        assert store.saves - saves <= 1  # (at most the advance before it; nothing of it)
        await coordinator.stop()

    asyncio.run(scenario())


def test_a_policy_change_is_prepared_off_the_loop_too() -> None:
    async def scenario() -> None:
        coordinator, _, _, _ = coordinator_setup(count=2)
        await coordinator.start()
        change = Held(ChangePolicy("easy", {}))
        assert is_prepared(change)
        changing = asyncio.create_task(
            coordinator.call(change, lambda engine: engine.partitions.policy_name)
        )
        assert await asyncio.to_thread(change.started.wait, 10)
        policy = await coordinator.read(lambda e: e.partitions.policy_name)
        assert policy == "conservative"  # (read while the new plan is made)
        change.gate.set()
        assert await changing == "easy"
        await coordinator.stop()

    asyncio.run(scenario())


def test_a_node_failure_is_prepared_off_the_loop_and_kills_only_when_applied() -> None:
    """Its replan is made as if the node's jobs had ended; they are killed (the kill
    sent once the state that ends them is committed) only when it is applied."""

    async def scenario() -> None:
        coordinator, _, backend, _ = coordinator_setup(count=2)
        await coordinator.start()
        job_id = await coordinator.call(SubmitJob(request(8)), lambda made: made[0].id)
        (node,) = await coordinator.read(lambda e: list(e.jobs[job_id].allocation))
        down = Held(MarkNodesDown((node,), "psu"))
        assert is_prepared(down)
        failing = asyncio.create_task(coordinator.call(down, lambda nodes: nodes[0].state))
        assert await asyncio.to_thread(down.started.wait, 10)
        seen = await coordinator.read(lambda e: (e.jobs[job_id].state, e.cluster.nodes[node].state))
        assert seen == (JobState.RUNNING, NodeState.UP)  # (read while its replan is made)
        assert ("kill", job_id, "RUNNING") not in backend.sent
        down.gate.set()
        assert await failing is NodeState.DOWN
        assert await coordinator.read(lambda e: e.jobs[job_id].state) is JobState.NODE_FAIL
        assert ("kill", job_id, "NODE_FAIL") in backend.sent
        await coordinator.stop()

    asyncio.run(scenario())


def test_a_partitions_policy_change_is_prepared_off_the_loop_too() -> None:
    async def scenario() -> None:
        coordinator, _, _, _ = coordinator_setup(count=2)
        await coordinator.start()
        await coordinator.call(CreatePartition(BackfillSpec("p", ["node002"], "conservative")))
        change = Held(ChangePartition("p", policy="easy"))
        changing = asyncio.create_task(coordinator.call(change, lambda made: made["policy"]))
        assert await asyncio.to_thread(change.started.wait, 10)
        policy = await coordinator.read(lambda e: e.backfill["p"].policy)
        assert policy == "conservative"  # (read while the partition's new plan is made)
        change.gate.set()
        assert await changing == "easy"
        await coordinator.stop()

    asyncio.run(scenario())
