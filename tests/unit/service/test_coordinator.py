"""The single writer: group commit, order, answers and node commands only after commit,
a store that fails, shutdown with work queued, and reads that never see uncommitted
state."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from berth.dispatch.emulated import EmulatedNodes
from berth.service.commands import CancelJob, SubmitJob
from berth.service.coordinator import Coordinator
from berth.service.engine import Engine
from berth.service.model import JobRecord
from berth.service.ports import Changes, CommitMode, Snapshot
from berth.service.restore import restore_engine
from berth.service.writes import StoreUnavailable
from berth.store.memory import MemoryStore
from tests.support.live import ManualClock, nodes, request

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


def _setup(count: int = 1) -> tuple[Coordinator, GatedStore, RecordingNodes, ManualClock]:
    store = GatedStore()
    backend = RecordingNodes(store)
    clock = ManualClock(1000)
    engine = restore_engine(Snapshot(), backend, clock.now(), nodes(count), "conservative", {})
    return Coordinator(engine, store, clock), store, backend, clock


def _state(record: JobRecord) -> str:
    return record.state.value


async def _wait_for(event: threading.Event) -> None:
    for _ in range(500):
        if event.is_set():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the store was never called")


async def _held_in_commit(store: GatedStore, call: Awaitable[T]) -> asyncio.Future[T]:
    """Send ``call`` and return once its batch is being committed, the store's gate
    closed behind it (the test opens it)."""
    store.gate.clear()
    store.waiting.clear()
    future = asyncio.ensure_future(call)
    await _wait_for(store.waiting)
    return future


def test_concurrent_commands_share_commits_and_keep_their_order() -> None:
    async def scenario() -> tuple[list[int], int, int]:
        coordinator, store, _, _ = _setup()
        await coordinator.start()
        saves_before = store.saves
        ids = await asyncio.gather(
            *(coordinator.call(SubmitJob(request(1)), lambda made: made[0].id) for _ in range(50))
        )
        await coordinator.stop()
        return list(ids), store.saves - saves_before, coordinator.stats.batches

    ids, saves, batches = asyncio.run(scenario())
    assert ids == list(range(1, 51))  # applied in the order they were called
    assert saves == batches < 50  # one transaction per batch, fewer batches than commands


def test_a_start_is_sent_only_after_the_running_state_is_committed() -> None:
    async def scenario() -> list[tuple[str, int, object]]:
        coordinator, _, backend, _ = _setup()
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8, runtime=50)))
        return backend.sent

    sent = asyncio.run(scenario())
    assert sent == [("start", 1, "RUNNING")]  # the store held RUNNING when the node was told


def test_the_answer_is_what_its_batch_committed_not_what_a_later_batch_made() -> None:
    """The RUNNING/PENDING race: job 2 waits behind job 1; while job 2's submit commits,
    job 1 is cancelled, which starts job 2 in the next batch. The submit's answer must
    say PENDING, as the database then said, never RUNNING."""

    async def scenario() -> tuple[str, str, list[object]]:
        coordinator, store, _, _ = _setup()
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8, 100)))  # job 1 runs
        submit = await _held_in_commit(
            store, coordinator.call(SubmitJob(request(8, 100)), lambda made: _state(made[0]))
        )
        cancel = asyncio.ensure_future(coordinator.call(CancelJob(1, "test"), _state))
        await asyncio.sleep(0.05)
        store.gate.set()
        answered = await submit
        cancelled = await cancel
        await coordinator.stop()
        return answered, cancelled, store.committed_states[2]

    answered, cancelled, committed = asyncio.run(scenario())
    assert committed == ["PENDING", "RUNNING"]  # the submit's batch, then the cancel's
    assert answered == "PENDING"  # what the submit's own commit held
    assert cancelled == "CANCELLED"


def test_reads_wait_for_the_commit_of_the_batch_in_flight() -> None:
    async def scenario() -> tuple[Any, Any]:
        coordinator, store, _, _ = _setup()
        await coordinator.start()
        submit = await _held_in_commit(store, coordinator.call(SubmitJob(request(8, 100))))
        read = asyncio.ensure_future(coordinator.read(lambda e: sorted(e.jobs)))
        await asyncio.sleep(0.05)
        early = read.done()
        store.gate.set()
        await submit
        seen = await read
        await coordinator.stop()
        return early, seen

    early, seen = asyncio.run(scenario())
    assert early is False  # it did not see the job before the job was committed
    assert seen == [1]


def test_a_failed_commit_sends_nothing_answers_unavailable_and_refuses_more() -> None:
    async def scenario() -> tuple[list[tuple[str, int, object]], list[str]]:
        coordinator, store, backend, _ = _setup()
        await coordinator.start()
        store.fail = True
        outcomes: list[str] = []
        try:
            await coordinator.call(SubmitJob(request(8, 100)))
        except StoreUnavailable:
            outcomes.append("submit: 503")
        for attempt in (
            coordinator.call(SubmitJob(request(1))),
            coordinator.read(lambda e: len(e.jobs)),
        ):
            try:
                await attempt
            except StoreUnavailable:
                outcomes.append("refused")
        await coordinator.stop()
        return backend.sent, outcomes

    sent, outcomes = asyncio.run(scenario())
    assert sent == []  # the node never heard of a start the database does not hold
    assert outcomes == ["submit: 503", "refused", "refused"]


def test_shutdown_with_work_queued_answers_every_caller() -> None:
    async def scenario() -> list[str]:
        coordinator, store, backend, _ = _setup()
        await coordinator.start()
        first = await _held_in_commit(store, coordinator.call(SubmitJob(request(1))))
        # Applied while the first commits, in the group that commits next.
        applied = [asyncio.ensure_future(coordinator.call(SubmitJob(request(1)))) for _ in range(3)]
        await asyncio.sleep(0.02)
        stopping = asyncio.ensure_future(coordinator.stop())
        await asyncio.sleep(0.01)
        # Queued once the writer has stopped taking commands: never applied.
        late = [asyncio.ensure_future(coordinator.call(SubmitJob(request(1)))) for _ in range(2)]
        await asyncio.sleep(0.01)
        store.gate.set()
        await stopping
        results: list[str] = []
        for future in [first, *applied, *late]:
            try:
                await asyncio.wait_for(future, timeout=5)
                results.append("done")
            except StoreUnavailable:
                results.append("refused")
            except asyncio.CancelledError:
                results.append("cancelled")
        assert [job_id for _, job_id, _ in backend.sent] == [1, 2, 3, 4]
        return results

    # The groups applied finish (committed, answered, started); what was queued behind
    # them was never applied and is told so; no caller is left hanging.
    assert asyncio.run(scenario()) == ["done"] * 4 + ["refused"] * 2


def test_a_command_after_shutdown_is_refused_not_left_waiting() -> None:
    async def scenario() -> None:
        coordinator, _, _, _ = _setup()
        await coordinator.start()
        await coordinator.stop()
        await asyncio.wait_for(coordinator.call(SubmitJob(request(1))), timeout=5)

    with pytest.raises(StoreUnavailable, match="shutting down"):
        asyncio.run(scenario())


def test_a_kill_is_sent_after_the_cancel_commits() -> None:
    async def scenario() -> list[tuple[str, int, object]]:
        coordinator, _, backend, _ = _setup()
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8, 100)))
        await coordinator.call(CancelJob(1, "test"))
        await coordinator.stop()
        return backend.sent

    assert asyncio.run(scenario()) == [("start", 1, "RUNNING"), ("kill", 1, "CANCELLED")]


def test_starts_caught_up_at_restart_wait_for_the_start_up_commit() -> None:
    """A job whose reservation fell in the downtime starts at restart: the node hears of
    it only once the start-up commit holds it RUNNING."""

    async def first_life() -> GatedStore:
        coordinator, store, _, _ = _setup()
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8, 100, runtime=50)))
        await coordinator.call(SubmitJob(request(8, 100)))  # waits
        await coordinator.stop()
        return store

    store = asyncio.run(first_life())
    backend = RecordingNodes(store)
    engine = restore_engine(
        store.load(), backend, 1500, nodes(1), "conservative", {}, hold_intents=True
    )
    assert engine.jobs[2].state.value == "RUNNING"  # caught up in memory ...
    assert backend.sent == []  # ... but not sent before it is committed

    async def second_life() -> list[tuple[str, int, object]]:
        coordinator = Coordinator(engine, store, ManualClock(1500))
        await coordinator.start()
        await coordinator.stop()
        return backend.sent

    assert asyncio.run(second_life()) == [("start", 2, "RUNNING")]


def test_the_next_batch_is_applied_while_one_commits_and_commits_after_it() -> None:
    async def scenario() -> tuple[bool, bool, bool, list[int]]:
        coordinator, store, _, _ = _setup()
        await coordinator.start()
        first = await _held_in_commit(store, coordinator.call(SubmitJob(request(1))))
        second = asyncio.ensure_future(coordinator.call(SubmitJob(request(1))))
        await asyncio.sleep(0.05)
        applied = 2 in coordinator.engine.jobs
        committed = 2 in store.jobs
        answered = second.done()
        store.gate.set()
        await first
        await second
        saved = list(store.committed_states)
        await coordinator.stop()
        return applied, committed, answered, saved

    applied, committed, answered, saved = asyncio.run(scenario())
    assert applied  # job 2 was applied while job 1's batch committed ...
    assert not committed  # ... but neither committed ...
    assert not answered  # ... nor answered then
    assert saved == [1, 2]  # commits in the order the batches were applied


def test_a_failed_commit_refuses_the_batch_applied_behind_it() -> None:
    async def scenario() -> tuple[list[str], list[tuple[str, int, object]], dict[int, object]]:
        coordinator, store, backend, _ = _setup()
        await coordinator.start()
        store.fail = True
        first = await _held_in_commit(store, coordinator.call(SubmitJob(request(8, 100))))
        second = asyncio.ensure_future(coordinator.call(SubmitJob(request(1))))
        await asyncio.sleep(0.05)
        assert 2 in coordinator.engine.jobs  # applied behind the failing commit
        store.gate.set()
        outcomes = []
        for future in (first, second):
            try:
                await asyncio.wait_for(future, timeout=5)
                outcomes.append("done")
            except StoreUnavailable:
                outcomes.append("503")
        await coordinator.stop()
        return outcomes, backend.sent, dict(store.jobs)

    outcomes, sent, stored = asyncio.run(scenario())
    assert outcomes == ["503", "503"]
    assert sent == []  # nothing of either batch reached a node ...
    assert stored == {}  # ... or the store


def test_a_start_carries_the_job_as_its_batch_left_it() -> None:
    """Job 1 starts in a batch that commits while the next batch, applied meanwhile,
    cancels it: the node is told to start it as it was (RUNNING), then to kill it."""

    async def scenario() -> tuple[list[tuple[str, int, object]], list[tuple[int, str]]]:
        coordinator, store, backend, _ = _setup()
        await coordinator.start()
        submit = await _held_in_commit(store, coordinator.call(SubmitJob(request(8, 100))))
        cancel = asyncio.ensure_future(coordinator.call(CancelJob(1, "test")))
        await asyncio.sleep(0.05)
        assert coordinator.engine.jobs[1].state.value == "CANCELLED"  # applied, not committed
        store.gate.set()
        await submit
        await cancel
        await coordinator.stop()
        return backend.sent, backend.started_as

    sent, started_as = asyncio.run(scenario())
    assert sent == [("start", 1, "RUNNING"), ("kill", 1, "CANCELLED")]
    assert started_as == [(1, "RUNNING")]


def test_a_read_waits_for_every_batch_applied_before_it() -> None:
    async def scenario() -> tuple[bool, list[int]]:
        coordinator, store, _, _ = _setup()
        await coordinator.start()
        first = await _held_in_commit(store, coordinator.call(SubmitJob(request(1))))
        second = asyncio.ensure_future(coordinator.call(SubmitJob(request(1))))
        await asyncio.sleep(0.02)  # job 2 applied behind job 1's commit
        read = asyncio.ensure_future(coordinator.read(lambda e: sorted(e.jobs)))
        await asyncio.sleep(0.05)
        early = read.done()
        store.gate.set()
        await first
        await second
        seen = await read
        await coordinator.stop()
        return early, seen

    early, seen = asyncio.run(scenario())
    assert early is False
    assert seen == [1, 2]  # it waited for both commits, and saw both jobs


@pytest.mark.parametrize("commits", ["loop", "async", "thread"])
def test_a_store_commits_where_it_says(commits: CommitMode) -> None:
    """SQLite commits on the loop (shorter than any hop); PostgreSQL is awaited on the
    loop (which goes on while the database answers); a blocking store in a thread."""

    class WhereStore(GatedStore):
        def __init__(self) -> None:
            super().__init__()
            self.commits = commits
            self.calls: set[tuple[str, int]] = set()

        def save(self, changes: Changes) -> None:
            self.calls.add(("save", threading.get_ident()))
            super().save(changes)

        async def save_async(self, changes: Changes) -> None:
            self.calls.add(("save_async", threading.get_ident()))
            MemoryStore.save(self, changes)

    async def scenario() -> tuple[set[tuple[str, int]], int]:
        store = WhereStore()
        clock = ManualClock(1000)
        engine = restore_engine(
            Snapshot(), EmulatedNodes(), clock.now(), nodes(1), "conservative", {}
        )
        coordinator = Coordinator(engine, store, clock)
        await coordinator.start()
        await asyncio.gather(*(coordinator.call(SubmitJob(request(1))) for _ in range(5)))
        await coordinator.stop()
        return store.calls, threading.get_ident()

    calls, loop = asyncio.run(scenario())
    assert calls  # it saved
    if commits == "loop":
        assert calls == {("save", loop)}
    elif commits == "async":
        assert calls == {("save_async", loop)}
    else:
        assert {how for how, _ in calls} == {"save"}
        assert loop not in {thread for _, thread in calls}


def test_a_command_that_arrives_while_the_batch_is_gathered_joins_it() -> None:
    """A store that commits on the loop: the writer gives the loop two turns before it
    applies a batch (what has arrived on the sockets reaches the queue in two), and
    again while more came; the commit is paid once for all of them."""

    async def scenario() -> tuple[int, int, list[int]]:
        store = MemoryStore()  # commits on the loop, as SQLite does
        clock = ManualClock(1000)
        engine = restore_engine(
            Snapshot(), EmulatedNodes(), clock.now(), nodes(1), "conservative", {}
        )
        coordinator = Coordinator(engine, store, clock)
        await coordinator.start()
        batches, saves = coordinator.stats.batches, store.saves

        async def after_turns(turns: int) -> int:
            for _ in range(turns):
                await asyncio.sleep(0)
            made = await coordinator.call(SubmitJob(request(1)))
            return int(made[0].id)

        ids = await asyncio.gather(after_turns(0), after_turns(1), after_turns(3))
        await coordinator.stop()
        return coordinator.stats.batches - batches, store.saves - saves, list(ids)

    batches, saves, ids = asyncio.run(scenario())
    assert ids == [1, 2, 3]
    assert batches == saves == 1  # the later two joined the first one's batch and commit


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
        coordinator, _, _, clock = _setup(4)
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
        coordinator, _, _, _ = _setup(4)
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
