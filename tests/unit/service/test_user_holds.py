"""Holds as Slurm users know them: a user holds and releases their own pending job
(``scontrol hold`` / ``release``) or submits it held (``sbatch --hold``); a hold by an
operator or the account's coordinator only they may release, and it takes the place of
the user's own. Who holds a job is stored with it, and means something only while it is
held."""

from __future__ import annotations

import dataclasses

import pytest

from berth.service.commands import MORE_TO_DO, SubmitArray
from berth.service.handlers.arrays import parse_array
from berth.service.handlers.job_commands import cancel, hold, release, submit
from berth.service.jobs import array_fill
from berth.service.model import HELD_AT_SUBMISSION, JobRequest, JobState, RequestError
from berth.service.ports import Snapshot
from berth.service.rows import job_from_row, job_row
from berth.store.memory import MemoryStore
from tests.support.live import engine, request, submit_whole_array


def held(req: JobRequest) -> JobRequest:
    return dataclasses.replace(req, hold=True)


def test_a_user_holds_and_releases_their_own_job() -> None:
    live = engine(count=1)
    running, _ = submit(live, request(cpus=8, limit=100), 0)
    waiting, _ = submit(live, request(cpus=8, limit=100), 0)
    assert running.state is JobState.RUNNING
    hold(live, waiting.id, 1, "held by alice", "user")
    assert (waiting.state, waiting.hold) == (JobState.HELD, "user")
    assert waiting.guaranteed_start is None
    release(live, waiting.id, 2, admin=False)
    assert (waiting.state, waiting.hold) == (JobState.PENDING, None)
    assert waiting.guaranteed_start == 100


def test_a_user_cannot_release_an_operators_hold_and_it_replaces_their_own() -> None:
    live = engine(count=1)
    submit(live, request(cpus=8, limit=100), 0)
    waiting, _ = submit(live, request(cpus=8, limit=100), 0)
    hold(live, waiting.id, 1, "held by alice", "user")
    hold(live, waiting.id, 2, "held by root: maintenance")  # (an admin hold over it)
    assert (waiting.hold, waiting.state_reason) == ("admin", "held by root: maintenance")
    with pytest.raises(RequestError) as refused:
        release(live, waiting.id, 3, admin=False)
    assert refused.value.code == "forbidden"
    assert refused.value.field == "job_id"
    assert refused.value.message == (
        f"job {waiting.id} is held (held by root: maintenance): only an operator or its "
        "account's coordinator can release it"
    )
    assert waiting.state is JobState.HELD
    with pytest.raises(RequestError) as again:  # (a user's hold cannot add to it)
        hold(live, waiting.id, 4, "held by alice", "user")
    assert again.value.code == "conflict"
    release(live, waiting.id, 5)  # (an operator may)
    assert (waiting.state, waiting.hold) == (JobState.PENDING, None)


def test_a_job_submitted_held_waits_without_a_decision_until_released() -> None:
    live = engine(count=1)
    first, _ = submit(live, held(request(cpus=8, limit=100)), 0)
    assert (first.state, first.hold, first.state_reason) == (
        JobState.HELD,
        "user",
        HELD_AT_SUBMISSION,
    )
    assert first.guaranteed_start is None
    later, _ = submit(live, request(cpus=8, limit=100), 0)
    assert later.state is JobState.RUNNING  # (the held job holds nothing back)
    release(live, first.id, 10, admin=False)
    assert first.state is JobState.PENDING
    assert first.guaranteed_start == 100
    assert live.counters["accepted"] == 2  # (one decision each: at release for the held)


def test_who_holds_a_job_survives_a_restart_and_is_forgotten_once_it_is_not_held() -> None:
    live = engine(count=1)
    submit(live, request(cpus=8, limit=100), 0)
    mine, _ = submit(live, held(request(cpus=8, limit=100)), 0)
    theirs, _ = submit(live, request(cpus=8, limit=100), 0)
    hold(live, theirs.id, 1, "held by root")
    stored = [job_from_row(job_row(record)) for record in live.jobs.values()]
    nodes = list(live.cluster.nodes.values())
    again = engine(snapshot=Snapshot(nodes=nodes, jobs=stored, last_job_id=3), now=2)
    assert (again.jobs[mine.id].hold, again.jobs[theirs.id].hold) == ("user", "admin")
    with pytest.raises(RequestError):
        release(again, theirs.id, 3, admin=False)
    cancel(again, mine.id, 4, "no longer")
    assert again.jobs[mine.id].hold is None
    assert job_row(again.jobs[mine.id])["hold"] is None


def test_every_task_of_an_array_submitted_held_is_held_even_one_entered_after_a_restart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large array goes in in parts, and a restart admits the rest from its first
    task's stored request: those tasks are held too."""
    monkeypatch.setattr(array_fill, "TASKS_PER_BATCH", 2)
    store = MemoryStore()
    live = engine(count=1)
    store.save(live.take_changes())
    assert (
        SubmitArray(held(request(cpus=1)), parse_array("0-4")[0], None).apply(live, 0) is MORE_TO_DO
    )
    store.save(live.take_changes())  # the first part committed; then the daemon stops
    restored = engine(count=1, snapshot=store.load(), now=20)
    tasks = restored.book.array_tasks(1)
    assert [t.array_task_id for t in tasks] == [0, 1, 2, 3, 4]
    assert [(t.state, t.hold) for t in tasks] == [(JobState.HELD, "user")] * 5
    whole, _ = submit_whole_array(engine(count=1), held(request(cpus=1)), parse_array("0-2")[0], 0)
    assert [(t.state, t.hold) for t in whole] == [(JobState.HELD, "user")] * 3
