"""The single writer: commands applied in order, committed in batches, then acknowledged.

Every change to live state goes through :meth:`Coordinator.call` with a typed command
(:mod:`berth.service.commands`). One task takes the queue in batches (group commit): it
applies the batch as one round of the engine's timeline (what is due by the clock's
``now``, the commands, one scheduling pass), renders each answer from the state the
batch left, saves the batch's changes in one store transaction, and only then sends the
batch's node intents (start, kill, ...), answers the callers and publishes the events.
So an answer never reports uncommitted state, a node never acts on uncommitted state,
and the store's write cost is shared by concurrent requests. A store whose commit is
awaited (PostgreSQL, on an asyncio connection) lets the loop go on meanwhile: the
commands that arrive are applied at once into the next group, which commits once the
one before has. SQLite commits on the loop itself (``Store.commits``): its commit is
shorter than any hop. Reads go through :meth:`Coordinator.read`: at once while
nothing applied is uncommitted, else once it has all committed, before anything more is
applied, so they too see committed state only.

If the store fails, the in-memory state can no longer be trusted to match it: nothing
of the batch is sent or answered (503), the coordinator stops taking commands
(``failed`` is set, health turns red) and the daemon must be restarted, which resumes
from what was committed.

Why one module of over 400 lines: batching, group commits, reads and the slices of
plan improvement are one protocol whose promise (no answer, effect or event before its
commit) is checked in one place; what publishes the committed events is its own part
(:mod:`berth.service.event_hub`), and what it takes, counts and answers when it cannot
apply is in :mod:`berth.service.writes`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, overload

from berth.service.archive import Archive
from berth.service.collector import collector_paused
from berth.service.commands import (
    MORE_TO_DO,
    Command,
    Improve,
    SubmitJob,
    Tick,
    is_prepared,
)
from berth.service.engine import Engine
from berth.service.event_hub import EventHub
from berth.service.model import Event, RequestError
from berth.service.nodes.intents import Intent
from berth.service.planning.budgets import (
    BATCH_SECONDS,
    IMPROVE_SECONDS,
    SLICE_SECONDS,
    TURNS_BETWEEN_SLICES,
)
from berth.service.ports import Changes, Clock, Store
from berth.service.rows import event_row
from berth.service.writes import (
    RESTART,
    Queued,
    Stats,
    StoreUnavailable,
    refuse,
    unavailable,
)

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("berth.coordinator")

#: Commands applied and committed together at most.
MAX_BATCH = 1024


class Coordinator:
    def __init__(self, engine: Engine, store: Store, clock: Clock, last_event_id: int = 0) -> None:
        self.engine = engine
        self.store = store
        self.clock = clock
        self.stats = Stats()
        #: What the store holds beyond the engine's memory, read off the loop.
        self.archive = Archive(store)
        self.failed: BaseException | None = None
        self.on_next_event: Callable[[int | None], None] | None = None
        #: Committed events, numbered on from what the store holds, to their listeners.
        self.events = EventHub(last_event_id)
        self._queue: asyncio.Queue[tuple[Queued, asyncio.Future[Any]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        #: The answers of the open group: applied, waiting for the commit before.
        self._open: list[tuple[asyncio.Future[Any], Any, BaseException | None]] | None = None
        #: The commits of the groups applied and not yet committed (at most two: one
        #: committing, one open), oldest first; each waits for the one before. Reads
        #: wait while there is any.
        self._commits: deque[asyncio.Task[None]] = deque()
        #: The writer has taken a batch it has not handed to a commit yet.
        self._holding = False
        self._stopping = False
        self._reads: list[tuple[Callable[[Engine], Any], asyncio.Future[Any]]] = []
        # Node commands leave only after their commit (the engine was restored holding
        # them, so the start-up catch-up's starts wait for the start-up commit too).
        engine.outbox.hold_intents = True
        # Compression after job ends runs in the writer's slices, between batches.
        engine.defer_improvements = True
        #: Commands taken from the queue that a batch over its time left for the next.
        self._carry: deque[tuple[Queued, asyncio.Future[Any]]] = deque()
        #: A command goes on from the last batch: its next part waits for the commit.
        self._going_on = False
        #: The next batch is a slice of plan improvement (one after each batch of
        #: commands while any is due, so that a steady flow of commands does not starve
        #: it, nor it them).
        self._improve_next = False
        #: A slice of improvement is queued by :meth:`_nudge` and not yet applied.
        self._nudged = False

    # ------------------------------------------------------------------ life cycle
    async def start(self) -> None:
        """Persist what restoring changed, then take commands."""
        engine = self.engine
        await self._commit(
            engine.take_changes(), engine.outbox.take_events(), engine.outbox.take_intents(), []
        )
        if self.failed is not None:
            raise StoreUnavailable("the store failed at start-up", self.failed)
        self._task = asyncio.create_task(self._writer(), name="berth-writer")

    async def stop(self) -> None:
        """Finish the batches applied (commit, send, answer), then stop taking commands."""
        if self._task is not None:
            self._stopping = True
            if not self._holding:
                self._task.cancel()  # waiting for a command: nothing in hand to finish
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        while self._commits:
            await self._commits[0]
        self._refuse_all([])  # (never to be applied: refused, not left waiting)
        self._serve_reads()
        self.events.close()

    # ------------------------------------------------------------------ commands
    @overload
    async def call(self, command: Command, *, by: str | None = None) -> Any: ...

    @overload
    async def call(
        self, command: Command, answer: Callable[[Any], R], *, by: str | None = None
    ) -> R: ...

    async def call(
        self,
        command: Command,
        answer: Callable[[Any], Any] | None = None,
        *,
        by: str | None = None,
    ) -> Any:
        """Apply ``command`` to the engine as the single writer; return once committed.

        ``answer`` turns the command's result into the caller's answer (say, a record into
        its JSON form) at the end of the command's batch, before any later batch can
        change the result: what the caller gets is exactly what was committed. ``by``:
        who asked (a person's name), recorded in every event the command causes.
        :class:`RequestError` from the command is raised here, after the batch it was
        part of committed (it changed nothing)."""
        if self.failed is not None:
            raise StoreUnavailable(RESTART, self.failed)
        if self._stopping:  # no writer will take it: refused now, not left waiting
            raise unavailable(None)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._queue.put((Queued(command, answer, by), future))
        return await future

    async def read(self, view: Callable[[Engine], T]) -> T:
        """``view(engine)`` on committed state: at once if nothing applied is uncommitted,
        else right after it has committed (before anything more is applied)."""
        if self.failed is not None:
            raise StoreUnavailable(RESTART, self.failed)
        if not self._commits:
            answer = view(self.engine)
            self._nudge()
            return answer
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._reads.append((view, future))
        answer = await future
        self._nudge()
        return answer

    def _nudge(self) -> None:
        """A read that left work for the writer (a forecast under way) wakes it if it
        waits for commands: one slice of improvement queued, not one per read."""
        if self.engine.improvement_due and not self._nudged and self._task is not None:
            self._nudged = True
            loop = asyncio.get_running_loop()
            self._queue.put_nowait((Queued(Improve(SLICE_SECONDS)), loop.create_future()))

    def _serve_reads(self) -> None:
        reads, self._reads = self._reads, []
        for view, future in reads:
            if future.done():
                continue
            if self.failed is not None:  # what is in memory was never committed
                future.set_exception(StoreUnavailable(RESTART, self.failed))
                continue
            try:
                future.set_result(view(self.engine))
            except Exception as error:  # the read's own refusal (404 ...) or a bug
                future.set_exception(error)

    async def tick(self) -> None:
        """Advance the engine to now (completions, kills, starts) and commit."""
        await self.call(Tick())

    async def _writer(self) -> None:
        """Apply batch after batch; commit them in groups. While a group commits, the
        commands that arrive are applied as they come and join the next group, which
        commits once the one before has: the loop does not sit idle waiting for the
        disk, and a group holds all that arrived meanwhile (the group commit). A group's
        answers and node intents leave only after its commit. A read waiting for
        committed state stops the writer from applying more until everything applied
        has committed."""
        queue = self._queue
        loop = asyncio.get_running_loop()
        while True:
            # Commands a batch over its time carried come first, on their own: no slice
            # before them, no command that arrived since beside them. Behind a slice and
            # the next full batch they waited three batches (all the submit latencies
            # over 100 ms at 1,024 nodes x 20,000 queued were carried commands).
            carried = bool(self._carry)
            improving = (
                self.engine.improvement_due
                and not carried
                and (self._improve_next or queue.empty())
            )
            if improving:
                # One more turn first, for the answers of the commands applied last: their
                # group commits (on the loop) in the turn the writer gave after them, but
                # their handlers wake in the next, so a slice begun in that turn held them
                # for its whole length (at 4,096 nodes x 50,000 queued, 12 of a
                # submission's 18 ms in the daemon at the median; 3 with this turn).
                await asyncio.sleep(0)
                batch = [(Queued(Improve(SLICE_SECONDS)), loop.create_future())]
            elif carried:
                batch = [self._carry.popleft() for _ in range(min(len(self._carry), MAX_BATCH))]
                while self._going_on and len(batch) < MAX_BATCH and not queue.empty():
                    batch.append(queue.get_nowait())  # (not held back by a long command)
            else:
                batch = [await queue.get()]
            self._improve_next = not improving
            self._nudged = False  # whatever the batch holds, improvement runs after it
            self._holding = True
            try:
                if self._reads or self._going_on:  # reads see committed state only
                    await self._drain()
                if self.failed is not None or self._stopping:
                    self._refuse_batch(batch)
                    return
                if not improving and not carried:
                    await self._gather(batch)
                await self.archive.recall_keys(
                    self.engine, [q.command for q, _ in batch if isinstance(q.command, SubmitJob)]
                )
                if is_prepared(batch[0][0].command):
                    self._join(await self._prepared(batch))
                else:
                    self._join(self._apply(batch))
            finally:
                self._holding = False
            for _ in range(TURNS_BETWEEN_SLICES if improving else 1):
                await asyncio.sleep(0)  # let the group's commit, and requests, move on

    def _join(self, outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
        """What a batch applied joins the group waiting to commit, or opens one."""
        if self._open is not None:
            self._open.extend(outcomes)
        else:
            self._open = outcomes
            previous = self._commits[-1] if self._commits else None
            self._commits.append(asyncio.create_task(self._commit_after(previous)))

    async def _prepared(
        self, batch: list[tuple[Queued, asyncio.Future[Any]]]
    ) -> list[tuple[asyncio.Future[Any], Any, BaseException | None]]:
        """A :class:`Prepared` command, alone (the rest of its batch waits for the next):
        what is due by now applied and committed first; then its long part runs in a
        thread on that quiet, committed state, reads answered meanwhile (a drain's
        replan over 4,096 nodes held every read for seconds); then the command, at the
        same ``now``. Nothing is applied in between, so what it prepared still holds."""
        self._carry.extendleft(reversed(batch[1:]))
        del batch[1:]
        now = self.clock.now()
        self._join(self._apply([], now))
        await self._drain()
        if self.failed is not None:
            self._refuse_batch(batch)
            return []
        (queued, future) = batch[0]
        assert is_prepared(queued.command)
        try:
            prepared = await asyncio.to_thread(queued.command.prepare, self.engine, now)
        except RequestError as refusal:  # (it changed nothing: answered with the next group)
            return [(future, None, refusal)]
        except Exception as bug:
            log.exception("command failed")
            return [(future, None, bug)]
        return self._apply(batch, now, (prepared,))

    async def _gather(self, batch: list[tuple[Queued, asyncio.Future[Any]]]) -> None:
        """Add to ``batch`` the commands queued, and those of the requests that have
        arrived meanwhile, for as long as more come (up to ``MAX_BATCH``).

        Two turns of the loop bring an arrived request to the queue: one reads what the
        sockets hold and starts each request's handler, the next runs the handlers up
        to their command. So the writer gives the loop two turns, and again while that
        brought more. A group commit pays the commit once for all of them: with SQLite
        committing on the loop, its fsync is most of a batch's cost that is not CPU.
        The turns cost microseconds when nothing came. A store whose commit is awaited or
        runs in a thread gathers its group while the commit before runs instead (see
        :meth:`_writer`); lingering there too showed no clear gain on PostgreSQL (0.98x,
        1.06x, 1.18x in three pairs)."""
        queue = self._queue
        while True:
            while len(batch) < MAX_BATCH and not queue.empty():
                batch.append(queue.get_nowait())
            if len(batch) >= MAX_BATCH or self.store.commits != "loop":
                return
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if queue.empty():
                return

    async def _drain(self) -> None:
        """Until every group applied has committed."""
        while self._commits:
            await self._commits[0]

    def _refuse_batch(self, batch: list[tuple[Queued, asyncio.Future[Any]]]) -> None:
        """A batch taken but never applied: the store failed, or the daemon stops."""
        refuse((future for _, future in batch), unavailable(self.failed))

    def _apply(
        self,
        batch: list[tuple[Queued, asyncio.Future[Any]]],
        at_time: int | None = None,
        prepared: tuple[Any] | None = None,
    ) -> list[tuple[asyncio.Future[Any], Any, BaseException | None]]:
        """One round of the timeline at the clock's ``now`` (or ``at_time``): what is
        due, the batch's commands, then one scheduling pass (the order the emulator
        follows at every instant); each command's answer rendered from the state the
        batch left. ``prepared``: what the first command, a :class:`Prepared` one,
        prepared; a :class:`Prepared` command later in the batch waits for the next, and
        one that answers ``MORE_TO_DO`` goes on first in the next (after a commit)."""
        now = self.clock.now() if at_time is None else at_time
        began = time.perf_counter()
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        results: list[tuple[Queued, asyncio.Future[Any], Any]] = []
        going_on: list[tuple[Queued, asyncio.Future[Any]]] = []  # (first in the next batch)
        due_before = self.engine.improvement_due
        # (No cyclic collection during a batch: see berth.service.collector.)
        with self.engine.batch(now), collector_paused():
            self.engine.advance(now)
            if self.engine.improvement_due and not due_before:
                # One slice first for what this batch's ends made due: a compression
                # that fits in it is done before any arrival of the batch is planned, as
                # in the emulator. A longer one goes on in the slices between batches,
                # not in the batches of commands, which it would only make slower.
                Improve(IMPROVE_SECONDS).apply(self.engine, now)
            for at, (queued, future) in enumerate(batch):
                if at and (
                    time.perf_counter() - began > BATCH_SECONDS or is_prepared(queued.command)
                ):
                    self._carry.extendleft(reversed(batch[at:]))  # first in the next batch
                    break
                self.engine.outbox.actor = queued.by
                try:
                    if prepared is not None and at == 0:
                        assert is_prepared(queued.command)
                        applied = queued.command.apply_prepared(self.engine, now, prepared[0])
                    else:
                        applied = queued.command.apply(self.engine, now)
                    if applied is MORE_TO_DO:
                        going_on.append((queued, future))
                    else:
                        results.append((queued, future, applied))
                except RequestError as refusal:
                    outcomes.append((future, None, refusal))
                except Exception as bug:  # answer 500, keep serving
                    log.exception("command failed")
                    outcomes.append((future, None, bug))
                finally:
                    self.engine.outbox.actor = None
        self._carry.extendleft(reversed(going_on))
        self._going_on = bool(going_on)
        for queued, future, result in results:
            try:
                outcomes.append((future, queued.render(result), None))
            except Exception as bug:
                log.exception("answer failed")
                outcomes.append((future, None, bug))
        passed = time.perf_counter() - began
        self.stats.batches += 1
        self.stats.commands += len(outcomes)
        self.stats.last_pass_seconds = passed
        self.stats.pass_seconds_total += passed
        return outcomes

    async def _commit_after(self, previous: asyncio.Task[None] | None) -> None:
        """Once the group before (``previous``) has committed: close the open group
        (what is applied from now on joins the next) and :meth:`_commit` it, or refuse
        it if the store failed; once nothing applied is left uncommitted, serve the
        reads that waited for it."""
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        try:
            if previous is not None:
                await asyncio.wait([previous])  # its own failure is in ``self.failed``
            outcomes = self._open or []
            self._open = None
            engine = self.engine
            changes, events, intents = (
                engine.take_changes(),
                engine.outbox.take_events(),
                engine.outbox.take_intents(),
            )
            if self.failed is not None:
                self._refuse_all(outcomes)
            else:
                await self._commit(changes, events, intents, outcomes)
        except Exception as bug:  # not the store's failure (that is handled): still stop
            log.exception("committing a group failed")
            self.failed = self.failed or bug
            self._refuse_all(outcomes)
        finally:
            self._commits.popleft()
        if not self._commits:
            self._serve_reads()
        if self.failed is not None:
            self._refuse_all([])

    async def _commit(
        self,
        changes: Changes,
        events: list[Event],
        intents: list[Intent],
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]],
    ) -> None:
        """Save (with the batch's events, numbered), then (only if the save succeeded)
        send intents, answer and publish."""
        numbered = self.events.number(events, self.engine.jobs)
        wall = time.time()
        changes.events = [event_row(r.id, r.event, r.user, wall) for r in numbered]
        try:
            await self._save(changes)
        except Exception as error:
            log.exception("store failed; refusing further commands")
            self.failed = error
            self._refuse_all(outcomes)
            return
        for intent in intents:
            try:
                intent.send(self.engine.backend)
            except Exception:  # a node that cannot be told reports back as a node fault
                log.exception("sending %s failed", intent)
        for future, result, refusal in outcomes:
            if future.done():
                continue
            if refusal is not None:
                future.set_exception(refusal)
            else:
                future.set_result(result)
        self.events.publish(numbered)
        if self.on_next_event is not None:
            self.on_next_event(self.engine.next_event())

    def _refuse_all(self, outcomes: list[tuple[asyncio.Future[Any], Any, Any]]) -> None:
        """After a store failure (or at a stop: ``failed`` unset), every command applied
        and not answered, carried or queued gets 503."""
        error = unavailable(self.failed)
        refuse((future for future, _, _ in outcomes), error)
        refuse((future for _, future in self._carry), error)
        self._carry.clear()
        while not self._queue.empty():
            self._queue.get_nowait()[1].set_exception(error)

    async def _save(self, changes: Changes) -> None:
        if changes:
            began = time.perf_counter()
            commits = self.store.commits
            if commits == "loop":
                self.store.save(changes)
            elif commits == "async":
                await self.store.save_async(changes)
            else:
                await asyncio.to_thread(self.store.save, changes)
            took = time.perf_counter() - began
            self.stats.commit_seconds_total += took
            self.stats.commits += 1
