"""A coordinator on a store whose commits the test holds and nodes that record what they
were sent and what the store held then, for the single writer's unit tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import TypeVar

from berth.dispatch.emulated import EmulatedNodes
from berth.service.coordinator import Coordinator
from berth.service.model import JobRecord
from berth.service.ports import Changes, CommitMode, Snapshot
from berth.service.restore import restore_engine
from berth.store.memory import MemoryStore
from tests.support.live import ManualClock, nodes

T = TypeVar("T")


class GatedStore(MemoryStore):
    """A store whose saves wait for the test to open the gate, and can be made to fail.
    Its saves run in a worker thread (as PostgreSQL's do), so the loop goes on meanwhile."""

    commits: CommitMode = "thread"

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.fail = False
        self.waiting = threading.Event()
        #: Each job's committed states, in commit order.
        self.committed_states: dict[int, list[object]] = {}

    def save(self, changes: Changes) -> None:
        self.waiting.set()
        self.gate.wait(timeout=10)
        if self.fail:
            raise OSError("disk on fire")
        super().save(changes)
        for job_id, row in changes.jobs.items():
            self.committed_states.setdefault(job_id, []).append(row["state"])


class RecordingNodes(EmulatedNodes):
    """Emulated nodes that note each command and what the store held when it came,
    standing for nodes with effects outside the daemon (agents): intents wait for their
    commit."""

    in_process = False

    def __init__(self, store: MemoryStore) -> None:
        super().__init__()
        self.store = store
        self.sent: list[tuple[str, int, object]] = []
        #: Each started job's own state in the command, as its batch left it.
        self.started_as: list[tuple[int, str]] = []

    def start(self, job: JobRecord, now: int) -> None:
        committed = self.store.jobs.get(job.id, {}).get("state")
        self.sent.append(("start", job.id, committed))
        self.started_as.append((job.id, job.state.value))
        super().start(job, now)

    def kill(self, job_id: int, now: int) -> None:
        self.sent.append(("kill", job_id, self.store.jobs.get(job_id, {}).get("state")))
        super().kill(job_id, now)


def coordinator_setup(
    count: int = 1,
) -> tuple[Coordinator, GatedStore, RecordingNodes, ManualClock]:
    store = GatedStore()
    backend = RecordingNodes(store)
    clock = ManualClock(1000)
    engine = restore_engine(Snapshot(), backend, clock.now(), nodes(count), "conservative", {})
    return Coordinator(engine, store, clock), store, backend, clock


def state_of(record: JobRecord) -> str:
    return record.state.value


async def wait_for(event: threading.Event) -> None:
    for _ in range(500):
        if event.is_set():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the store was never called")


async def held_in_commit(store: GatedStore, call: Awaitable[T]) -> asyncio.Future[T]:
    """Send ``call`` and return once its batch is being committed, the store's gate
    closed behind it (the test opens it)."""
    store.gate.clear()
    store.waiting.clear()
    future = asyncio.ensure_future(call)
    await wait_for(store.waiting)
    return future
