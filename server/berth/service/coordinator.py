"""The single writer: commands applied in order, committed in batches, then acknowledged.

Every change to live state goes through :meth:`Coordinator.call`, which queues a
function of ``(engine, now)``. One task takes the queue in batches (group commit): it
advances the engine to the clock's ``now`` (completions, kills, starts), applies each
command of the batch, saves the batch's changes in one store transaction, and only
then answers the callers and publishes the events. So an acknowledged command is
always committed, and the store's write cost is shared by concurrent requests. Reads
go straight to the engine's records from the event loop, between batches.

If the store fails, the in-memory state can no longer be trusted to match it: the
coordinator stops taking commands (``failed`` is set, health turns red) and the daemon
must be restarted, which resumes from what was committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from berth.service.engine import Engine
from berth.service.model import Event, RequestError
from berth.service.ports import Changes, Clock, Store

T = TypeVar("T")

log = logging.getLogger("berth.coordinator")

#: Commands applied and committed together at most.
MAX_BATCH = 1024
#: Events a slow event-stream subscriber may fall behind before it is dropped.
SUBSCRIBER_BACKLOG = 10_000


def _nothing(_engine: Engine, _now: int) -> None:
    """A command that only lets the batch advance the engine."""


class StoreUnavailable(RuntimeError):
    """The store failed; the daemon must restart to resume from committed state."""


@dataclass(slots=True)
class Stats:
    batches: int = 0
    commands: int = 0
    last_pass_seconds: float = 0.0
    pass_seconds_total: float = 0.0
    commit_seconds_total: float = 0.0
    by_kind: dict[str, int] = field(default_factory=dict)


class Coordinator:
    def __init__(self, engine: Engine, store: Store, clock: Clock) -> None:
        self.engine = engine
        self.store = store
        self.clock = clock
        self.stats = Stats()
        self.failed: BaseException | None = None
        self.on_next_event: Callable[[int | None], None] | None = None
        self._queue: asyncio.Queue[tuple[Callable[[Engine, int], Any], asyncio.Future[Any]]] = (
            asyncio.Queue()
        )
        self._subscribers: set[asyncio.Queue[tuple[int, Event] | None]] = set()
        self._event_seq = 0
        self._task: asyncio.Task[None] | None = None
        self._committing: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ life cycle
    async def start(self) -> None:
        """Persist what restoring changed, then take commands."""
        engine = self.engine
        await self._commit(engine.take_changes(), engine.take_events(), engine.next_event(), [])
        if self.failed is not None:
            raise StoreUnavailable(f"the store failed at start-up: {self.failed}")
        self._task = asyncio.create_task(self._writer(), name="berth-writer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._committing is not None:
            await self._committing  # answer what was applied before stopping
        for queue in list(self._subscribers):
            queue.put_nowait(None)

    # ------------------------------------------------------------------ commands
    async def call(self, command: Callable[[Engine, int], T]) -> T:
        """Apply ``command(engine, now)`` as the single writer; return once committed.

        :class:`RequestError` from the command is raised here, after the batch it was
        part of committed (it changed nothing)."""
        if self.failed is not None:
            raise StoreUnavailable(f"the store failed ({self.failed}); restart the daemon")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._queue.put((command, future))
        return await future

    async def tick(self) -> None:
        """Advance the engine to now (completions, kills, starts) and commit."""
        await self.call(_nothing)

    async def _writer(self) -> None:
        """Apply batch after batch. A batch's commit runs in a thread while the next batch
        is applied in memory; commits stay in order (each waits for the one before), and
        a batch is answered only once its own commit is done. Requests that arrive during
        a commit form the next batch: that is the group commit."""
        queue = self._queue
        while True:
            batch = [await queue.get()]
            while len(batch) < MAX_BATCH and not queue.empty():
                batch.append(queue.get_nowait())
            now = self.clock.now()
            began = time.perf_counter()
            outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
            # One round of the timeline: what is due by now, the batch's commands, then
            # one scheduling pass (the order the emulator follows at every instant).
            with self.engine.batch(now):
                self.engine.advance(now)
                for command, future in batch:
                    try:
                        outcomes.append((future, command(self.engine, now), None))
                    except RequestError as refusal:
                        outcomes.append((future, None, refusal))
                    except Exception as bug:  # answer 500, keep serving
                        log.exception("command failed")
                        outcomes.append((future, None, bug))
            passed = time.perf_counter() - began
            self.stats.batches += 1
            self.stats.commands += len(batch)
            self.stats.last_pass_seconds = passed
            self.stats.pass_seconds_total += passed
            changes = self.engine.take_changes()
            events = self.engine.take_events()
            next_event = self.engine.next_event()
            if self._committing is not None:
                await self._committing
            if self.failed is not None:
                self._refuse_all(outcomes)
                return
            self._committing = asyncio.create_task(
                self._commit(changes, events, next_event, outcomes)
            )

    async def _commit(
        self,
        changes: Changes,
        events: list[Event],
        next_event: int | None,
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]],
    ) -> None:
        try:
            await self._save(changes)
        except Exception as error:
            log.exception("store failed; refusing further commands")
            self.failed = error
            self._refuse_all(outcomes)
            return
        for future, result, refusal in outcomes:
            if future.done():
                continue
            if refusal is not None:
                future.set_exception(refusal)
            else:
                future.set_result(result)
        for event in events:
            self._publish(event)
        if self.on_next_event is not None:
            self.on_next_event(next_event)

    def _refuse_all(
        self, outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]]
    ) -> None:
        """After a store failure: every pending and queued command gets 503."""
        error = StoreUnavailable(f"the store failed ({self.failed}); restart the daemon")
        for future, _, _ in outcomes:
            if not future.done():
                future.set_exception(error)
        while not self._queue.empty():
            _, future = self._queue.get_nowait()
            future.set_exception(error)

    async def _save(self, changes: Changes) -> None:
        if changes:
            began = time.perf_counter()
            await asyncio.to_thread(self.store.save, changes)
            took = time.perf_counter() - began
            self.stats.commit_seconds_total += took

    # ------------------------------------------------------------------ events
    def _publish(self, event: Event) -> None:
        self._event_seq += 1
        self.stats.by_kind[event.kind] = self.stats.by_kind.get(event.kind, 0) + 1
        for queue in list(self._subscribers):
            if queue.qsize() >= SUBSCRIBER_BACKLOG:
                self._subscribers.discard(queue)
                queue.put_nowait(None)  # tell it it was dropped
            else:
                queue.put_nowait((self._event_seq, event))

    def subscribe(self) -> asyncio.Queue[tuple[int, Event] | None]:
        """A queue of ``(sequence number, event)``; ``None`` means the stream ended."""
        queue: asyncio.Queue[tuple[int, Event] | None] = asyncio.Queue()
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[tuple[int, Event] | None]) -> None:
        self._subscribers.discard(queue)
