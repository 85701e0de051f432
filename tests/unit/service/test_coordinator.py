"""The single writer: group commit, order, answers and node commands only after commit,
a store that fails, shutdown with work queued, and reads that never see uncommitted
state."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest

from berth.dispatch.emulated import EmulatedNodes
from berth.service.commands import CancelJob, SubmitJob
from berth.service.coordinator import Coordinator
from berth.service.ports import Changes, CommitMode, Snapshot
from berth.service.restore import restore_engine
from berth.service.writes import StoreUnavailable
from berth.store.memory import MemoryStore
from tests.support.live import ManualClock, nodes, request
from tests.unit.service.coordinator_harness import (
    GatedStore,
    RecordingNodes,
    coordinator_setup,
    held_in_commit,
    state_of,
)


def test_concurrent_commands_share_commits_and_keep_their_order() -> None:
    async def scenario() -> tuple[list[int], int, int]:
        coordinator, store, _, _ = coordinator_setup()
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
        coordinator, _, backend, _ = coordinator_setup()
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
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        await coordinator.call(SubmitJob(request(8, 100)))  # job 1 runs
        submit = await held_in_commit(
            store, coordinator.call(SubmitJob(request(8, 100)), lambda made: state_of(made[0]))
        )
        cancel = asyncio.ensure_future(coordinator.call(CancelJob(1, "test"), state_of))
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
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        submit = await held_in_commit(store, coordinator.call(SubmitJob(request(8, 100))))
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
        coordinator, store, backend, _ = coordinator_setup()
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
        coordinator, store, backend, _ = coordinator_setup()
        await coordinator.start()
        first = await held_in_commit(store, coordinator.call(SubmitJob(request(1))))
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
        coordinator, _, _, _ = coordinator_setup()
        await coordinator.start()
        await coordinator.stop()
        await asyncio.wait_for(coordinator.call(SubmitJob(request(1))), timeout=5)

    with pytest.raises(StoreUnavailable, match="shutting down"):
        asyncio.run(scenario())


def test_a_kill_is_sent_after_the_cancel_commits() -> None:
    async def scenario() -> list[tuple[str, int, object]]:
        coordinator, _, backend, _ = coordinator_setup()
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
        coordinator, store, _, _ = coordinator_setup()
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
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        first = await held_in_commit(store, coordinator.call(SubmitJob(request(1))))
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
        coordinator, store, backend, _ = coordinator_setup()
        await coordinator.start()
        store.fail = True
        first = await held_in_commit(store, coordinator.call(SubmitJob(request(8, 100))))
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
        coordinator, store, backend, _ = coordinator_setup()
        await coordinator.start()
        submit = await held_in_commit(store, coordinator.call(SubmitJob(request(8, 100))))
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
        coordinator, store, _, _ = coordinator_setup()
        await coordinator.start()
        first = await held_in_commit(store, coordinator.call(SubmitJob(request(1))))
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


class _SeesTheCollector:
    """A command that notes whether the cyclic collector could run while it applied."""

    def apply(self, engine: object, now: int) -> bool:
        return gc.isenabled()


def test_a_batch_is_applied_with_the_collector_paused_and_it_runs_again_after() -> None:
    """A batch (a QoPS decision: some 30,000 tuples and dicts) is applied with no cyclic
    collection; the collector runs again once it is applied."""

    async def scenario() -> tuple[bool, bool]:
        coordinator, _, _, _ = coordinator_setup()
        await coordinator.start()
        during = await coordinator.call(_SeesTheCollector())
        after = gc.isenabled()
        await coordinator.stop()
        return during, after

    assert gc.isenabled()
    assert asyncio.run(scenario()) == (False, True)
