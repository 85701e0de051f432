"""A restarted daemon's engine: the plan and every guarantee kept, what fell due while it
was down handled at its own time, and the catch-up's compressions left to the writer's
slices as they would have been live."""

from __future__ import annotations

import pytest

from berth.dispatch.emulated import EmulatedNodes
from berth.service.handlers.job_commands import submit
from berth.service.model import JobState
from berth.service.ports import Changes
from berth.service.restore import restore_engine
from berth.store.memory import MemoryStore
from tests.support.live import engine, request


def _three_jobs() -> tuple[MemoryStore, dict[int, int | None]]:
    store = MemoryStore()
    live = engine()
    submit(live, request(cpus=32, limit=100, runtime=100), now=0)
    submit(live, request(cpus=32, limit=100, runtime=40), now=0)
    submit(live, request(cpus=16, limit=300), now=0)
    store.save(live.take_changes())
    return store, {j.id: j.guaranteed_start for j in live.jobs.values()}


def test_restart_keeps_the_plan_and_every_guarantee() -> None:
    store, promised = _three_jobs()
    restored = engine(snapshot=store.load(), now=50)
    assert {i: j.guaranteed_start for i, j in restored.jobs.items()} == promised
    assert {i: j.planned_start for i, j in restored.jobs.items()} == {1: 0, 2: 100, 3: 200}
    assert restored.jobs[1].state is JobState.RUNNING
    restored.advance(100)
    assert restored.jobs[1].state is JobState.COMPLETED
    assert restored.jobs[2].start_time == 100


def test_restart_after_downtime_handles_what_was_due_and_keeps_the_promises_on_record() -> None:
    store, promised = _three_jobs()
    # down from 10 to 150: job 1 ended at 100 and job 2 should have started then
    restored = engine(snapshot=store.load(), now=150)
    jobs = restored.jobs
    assert jobs[1].state is JobState.COMPLETED
    assert jobs[1].end_time == 100
    assert jobs[2].state is JobState.RUNNING
    assert jobs[2].start_time == 150
    assert {i: j.guaranteed_start for i, j in jobs.items()} == promised
    missed = [e for e in restored.outbox.take_events() if e.kind == "job.guarantee_missed"]
    assert [e.job_id for e in missed] == [2, 3]
    changes = restored.take_changes()
    assert isinstance(changes, Changes)
    assert set(changes.jobs) == {1, 2, 3}


@pytest.mark.parametrize("deferred", [False, True])
def test_a_daemon_restart_compresses_after_its_catch_up_as_live(deferred: bool) -> None:
    """Job 1 ended early (at 40) while the daemon was down (10 to 60); job 2, planned at
    its limit's end (100), moves up to start now. A daemon restores with ``deferred``:
    that compression waits for the writer's first slice (made in the catch-up, it held a
    4,096-node daemon's start 15 s), and ends where it would have been made at once."""
    store = MemoryStore()
    live = engine()
    submit(live, request(cpus=32, limit=100, runtime=40), now=0)
    submit(live, request(cpus=32, limit=100), now=0)
    store.save(live.take_changes())
    restored = restore_engine(
        store.load(), EmulatedNodes(), 60, [], "conservative", {}, deferred=deferred
    )
    second = restored.jobs[2]
    assert restored.jobs[1].end_time == 40
    assert restored.improvement_due is deferred
    assert second.state is (JobState.PENDING if deferred else JobState.RUNNING)
    if deferred:
        assert second.planned_start == 100  # (until the writer's slice)
        with restored.batch(60):
            assert restored.improve(60, lambda: False)
    assert (second.state, second.start_time) == (JobState.RUNNING, 60)
