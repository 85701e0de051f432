"""A command whose long part only reads the engine (a drain's replan: seconds on a large
cluster) runs it off the event loop: reads are answered meanwhile, nothing is applied
in between, and the command then applies what it prepared at the same instant."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from berth.service.agent_commands import ResizeAgents
from berth.service.cluster_commands import (
    AddNode,
    ChangeNodes,
    ChangePartition,
    ChangePolicy,
    CreatePartition,
    DeletePartition,
    MarkNodesDown,
)
from berth.service.commands import SubmitJob, is_prepared
from berth.service.engine import Engine
from berth.service.handlers.agents import AgentNodes, AgentSettings
from berth.service.model import JobState, NodeState, RequestError
from berth.service.partitions.specs import BackfillSpec
from tests.support.live import request
from tests.unit.service.coordinator_harness import coordinator_setup


@dataclass(frozen=True)
class Held:
    """A :class:`Prepared` command whose preparation, once made, waits for the test to
    open ``gate`` (reads meanwhile see the engine as it left it), noting its thread."""

    inner: Any
    gate: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    threads: list[int] = field(default_factory=list)

    def prepare(self, engine: Engine, now: int) -> Any:
        self.threads.append(threading.get_ident())
        prepared = self.inner.prepare(engine, now)  # (a read from now on sees what it left)
        self.started.set()
        assert self.gate.wait(timeout=10)
        return prepared

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


def test_a_partition_is_made_and_deleted_with_its_replans_prepared_off_the_loop() -> None:
    """Taking nodes from the default partition, and giving them back, replans it: made
    in the worker thread while reads see the partitions as they were; a refusal found
    there changes nothing."""

    async def scenario() -> None:
        coordinator, _, _, _ = coordinator_setup(count=3)
        await coordinator.start()
        job_id = await coordinator.call(SubmitJob(request(8)), lambda made: made[0].id)
        (busy,) = await coordinator.read(lambda e: list(e.jobs[job_id].allocation))
        with pytest.raises(RequestError) as refused:
            await coordinator.call(CreatePartition(BackfillSpec("q", [busy], "easy")))
        assert "drain it and let them end first" in refused.value.message
        free = next(n for n in ("node001", "node002", "node003") if n != busy)

        def partition_of(engine: Engine) -> tuple[str, bool]:
            return engine.partitions.partition_of_node(free), free in engine.partitions.pool().nodes

        make = Held(CreatePartition(BackfillSpec("p", [free], "conservative")))
        assert is_prepared(make.inner)
        making = asyncio.create_task(coordinator.call(make, lambda made: made["name"]))
        assert await asyncio.to_thread(make.started.wait, 10)
        assert make.threads != [threading.get_ident()]
        assert await coordinator.read(partition_of) == ("default", True)  # (not yet made)
        make.gate.set()
        assert await making == "p"
        assert await coordinator.read(partition_of) == ("p", False)
        delete = Held(DeletePartition("p"))
        deleting = asyncio.create_task(coordinator.call(delete))
        assert await asyncio.to_thread(delete.started.wait, 10)
        assert await coordinator.read(partition_of) == ("p", False)  # (not yet deleted)
        delete.gate.set()
        await deleting
        assert await coordinator.read(partition_of) == ("default", True)
        await coordinator.stop()

    asyncio.run(scenario())


def test_a_node_added_by_hand_is_planned_off_the_loop_and_then_takes_the_waiting_job() -> None:
    async def scenario() -> None:
        coordinator, _, _, _ = coordinator_setup(count=1)
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8)))  # the only node
        waiting = await coordinator.call(SubmitJob(request(8)), lambda made: made[0].id)
        add = Held(AddNode("node009", {"cpus": 8, "mem_gb": 32}))
        assert is_prepared(add.inner)
        adding = asyncio.create_task(coordinator.call(add, lambda node: node.state))
        assert await asyncio.to_thread(add.started.wait, 10)

        def seen(engine: Engine) -> tuple[bool, JobState]:
            return "node009" in engine.cluster.nodes, engine.jobs[waiting].state

        assert await coordinator.read(seen) == (False, JobState.PENDING)  # (not yet added)
        add.gate.set()
        assert await adding is NodeState.UP
        assert await coordinator.read(seen) == (True, JobState.RUNNING)
        assert await coordinator.read(lambda e: list(e.jobs[waiting].allocation)) == ["node009"]
        await coordinator.stop()

    asyncio.run(scenario())


def test_nodes_resized_for_their_agents_are_planned_off_the_loop_then_take_the_waiting_job() -> (
    None
):
    async def scenario() -> None:
        coordinator, _, _, _ = coordinator_setup(count=1)
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8)))  # the only node, whole
        waiting = await coordinator.call(SubmitJob(request(8)), lambda made: made[0].id)
        agents = AgentNodes(AgentSettings(), wall=lambda: 0.0)
        agents.note_resizing("node001", {"cpus": 16, "mem_gb": 64})
        resize = Held(ResizeAgents(agents, 0.0))
        assert is_prepared(resize.inner)
        resizing = asyncio.create_task(coordinator.call(resize))
        assert await asyncio.to_thread(resize.started.wait, 10)

        def seen(engine: Engine) -> tuple[int, JobState]:
            return engine.cluster.nodes["node001"].resources["cpus"], engine.jobs[waiting].state

        assert await coordinator.read(seen) == (8, JobState.PENDING)  # (not yet resized)
        resize.gate.set()
        assert await resizing == ["node001"]
        assert await coordinator.read(seen) == (16, JobState.RUNNING)
        assert agents.resizing == {}
        await coordinator.stop()

    asyncio.run(scenario())
