"""Dependencies in the engine: planned from predecessors' guarantees, settled as they
end, refused when they cannot be waited for, rebuilt after a restart."""

from __future__ import annotations

import dataclasses
import re

import pytest

from berth.service.handlers.job_commands import cancel, hold, release, submit
from berth.service.jobs.settling import plan_again
from berth.service.model import JobRecord, JobRequest, JobState, RequestError
from berth.service.ports import Snapshot
from berth.service.queries.answers import what_if
from tests.support.live import engine, request, submit_whole_array
from tests.support.node_changes import mark_down, resume_node

# 4 nodes of 8 cpus: a 32-cpu job fills the cluster.
FULL = 32


def after(req: JobRequest, dependency: str, **more: object) -> JobRequest:
    return dataclasses.replace(req, dependency=dependency, **more)  # type: ignore[arg-type]


def promised_end(record: JobRecord) -> int:
    assert record.guaranteed_start is not None
    return record.guaranteed_start + record.time_limit


def test_a_dependent_is_guaranteed_after_its_predecessors_guaranteed_ends() -> None:
    live = engine()
    first, _ = submit(live, request(cpus=8, limit=100, runtime=100), 0)
    second, _ = submit(live, request(cpus=8, limit=300, runtime=300), 0)
    both, _ = submit(live, after(request(cpus=8, limit=50), "afterok:1:2"), 0)
    assert first.state is second.state is JobState.RUNNING
    # The cluster has room now: only what it waits for holds it back.
    assert both.guaranteed_start == max(promised_end(first), promised_end(second)) == 300
    assert both.state is JobState.PENDING
    assert both.needs == "afterok:1,afterok:2"


def test_afterok_starts_after_success_and_moves_up_when_predecessors_end_early() -> None:
    live = engine()
    submit(live, request(cpus=8, limit=100, runtime=10), 0)
    waiting, _ = submit(live, after(request(cpus=8, limit=50), "afterok:1"), 0)
    assert waiting.guaranteed_start == 100
    live.advance(10)  # job 1 completes early
    assert live.jobs[1].state is JobState.COMPLETED
    assert waiting.state is JobState.RUNNING
    assert waiting.start_time == 10
    assert waiting.needs is None


def test_afterok_on_a_failure_cancels_and_afternotok_runs() -> None:
    live = engine()
    submit(live, request(cpus=8, limit=10, runtime=50), 0)  # killed at its limit: TIMEOUT
    ok, _ = submit(live, after(request(cpus=8), "afterok:1"), 0)
    not_ok, _ = submit(live, after(request(cpus=8), "afternotok:1"), 0)
    chained, _ = submit(live, after(request(cpus=8), f"afterok:{ok.id}"), 0)
    live.advance(10)
    assert live.jobs[1].state is JobState.TIMEOUT
    assert ok.state is JobState.CANCELLED
    assert ok.state_reason == "its dependency afterok:1 can never be satisfied: job 1 is timeout"
    assert not_ok.state is JobState.RUNNING
    assert not_ok.start_time == 10
    assert chained.state is JobState.CANCELLED  # the cancel carries on down the chain


def test_kill_on_invalid_dep_off_holds_the_job_and_release_runs_it() -> None:
    live = engine()
    submit(live, request(cpus=8, limit=10, runtime=50), 0)
    kept, _ = submit(live, after(request(cpus=8), "afterok:1", kill_on_invalid_dep=False), 0)
    live.advance(10)
    assert kept.state is JobState.HELD
    assert "can never be satisfied" in kept.state_reason
    release(live, kept.id, 12)
    assert kept.state is JobState.RUNNING


def test_after_waits_for_the_start_only() -> None:
    live = engine()
    submit(live, request(cpus=FULL, limit=100, runtime=100), 0)
    queued, _ = submit(live, request(cpus=FULL, limit=100, runtime=100), 0)
    alongside, _ = submit(live, after(request(cpus=1, limit=10), f"after:{queued.id}"), 0)
    assert queued.guaranteed_start == 100
    # It is guaranteed from its predecessor's guaranteed start, room permitting (the
    # predecessor fills the cluster until 200).
    assert alongside.guaranteed_start == 200


def test_a_held_predecessor_takes_the_dependents_plan_away_until_released() -> None:
    live = engine()
    submit(live, request(cpus=FULL, limit=100, runtime=100), 0)
    queued, _ = submit(live, request(cpus=8, limit=100), 0)
    waiting, _ = submit(live, after(request(cpus=8, limit=10), f"afterany:{queued.id}"), 0)
    assert waiting.guaranteed_start == 200
    hold(live, queued.id, 1, "by alice")
    assert waiting.state is JobState.PENDING
    assert waiting.guaranteed_start is None
    assert waiting.state_reason == f"waits for job {queued.id} (afterany), which is held"
    release(live, queued.id, 2)
    assert queued.guaranteed_start == 100
    assert waiting.guaranteed_start == 200


def test_under_easy_a_dependent_waits_outside_the_queue_until_its_predecessor_ends() -> None:
    live = engine("easy")
    submit(live, request(cpus=8, limit=100, runtime=30), 0)
    waiting, _ = submit(live, after(request(cpus=8, limit=10), "afterany:1"), 0)
    assert waiting.state is JobState.PENDING
    assert waiting.guaranteed_start is None
    assert "waits for job 1 (afterany)" in waiting.state_reason
    live.advance(30)
    assert waiting.state is JobState.RUNNING


def test_singleton_waits_for_the_earlier_jobs_of_its_name() -> None:
    live = engine()
    first, _ = submit(live, request(cpus=8, limit=100, runtime=100), 0)
    other_name, _ = submit(live, dataclasses.replace(request(cpus=8, limit=100), name="x"), 0)
    single, _ = submit(live, after(request(cpus=8, limit=10), "singleton"), 0)
    assert single.needs == f"afterany:{first.id}"
    assert other_name.state is JobState.RUNNING
    assert single.guaranteed_start == 100


@pytest.mark.parametrize(
    ("dependency", "says", "job_id"),
    [
        ("afterok:99", "dependency on job 99: no such job", 99),
        ("afterok:2", "dependency on job 2: that is this submission", 2),
        ("afterok:1", "dependency on job 1: it belongs to another user", 1),
        ("afterok:1_0", "dependency on task 0 of array 1: no such job", 1),
        ("afterfoo:1", "the kind must be one of after, afterany", None),
        ("afterok:1?afterok:1", "'?' (any one of the dependencies) is not supported", None),
        ("afterok:x", "'x' is not a job id", None),
    ],
)
def test_a_dependency_that_cannot_be_waited_for_is_refused_naming_the_id(
    dependency: str, says: str, job_id: int | None
) -> None:
    live = engine()
    submit(live, request(cpus=8, user="bob"), 0)
    with pytest.raises(RequestError, match=re.escape(says)) as refused:
        submit(live, after(request(cpus=8), dependency), 0)
    assert refused.value.field == "dependency"
    assert refused.value.extra.get("job_id") == job_id
    assert len(live.jobs) == 1  # nothing was created


def test_an_array_id_names_all_its_tasks_and_a_task_by_its_index() -> None:
    live = engine()
    tasks, _ = submit_whole_array(live, request(cpus=8, limit=100, runtime=100), (0, 1, 2), 0)
    reduce_all, _ = submit(live, after(request(cpus=8), f"afterok:{tasks[0].id}"), 0)
    one, _ = submit(live, after(request(cpus=8), f"afterok:{tasks[0].id}_2"), 0)
    assert reduce_all.needs == ",".join(f"afterok:{t.id}" for t in tasks)
    assert one.needs == f"afterok:{tasks[2].id}"


def test_an_array_limit_runs_at_most_n_tasks_and_plans_the_rest_in_lanes() -> None:
    live = engine()
    tasks, _ = submit_whole_array(
        live, request(cpus=1, limit=100, runtime=100), tuple(range(6)), 0, 2
    )
    running = [t for t in tasks if t.state is JobState.RUNNING]
    assert len(running) == 2
    assert [t.guaranteed_start for t in tasks] == [0, 0, 100, 100, 200, 200]
    cancel(live, tasks[2].id, 1, "by alice")  # a lane's next task goes: its lane carries on
    assert tasks[4].needs == f"throttle:{tasks[0].id}"
    live.advance(100)
    running_tasks = [t.array_task_id for t in tasks if t.state is JobState.RUNNING]
    assert None not in running_tasks
    assert sorted(i for i in running_tasks if i is not None) == [3, 4]


def test_a_restart_rebuilds_who_waits_for_whom() -> None:
    live = engine()
    submit(live, request(cpus=FULL, limit=100, runtime=100), 0)
    submit(live, request(cpus=8, limit=100, runtime=100), 0)
    waiting, _ = submit(live, after(request(cpus=8, limit=10), "afterok:2"), 0)
    snapshot = Snapshot(
        nodes=list(live.cluster.nodes.values()),
        jobs=[dataclasses.replace(r, not_before=None) for r in live.jobs.values()],
        last_job_id=3,
    )
    again = engine(snapshot=snapshot, now=5)
    restored = again.jobs[waiting.id]
    assert restored.guaranteed_start == 200
    assert again.deps.waits.graph.needs(waiting.id)
    again.advance(200)
    assert restored.state is JobState.RUNNING


def test_a_predecessor_requeued_after_a_node_failure_takes_its_dependents_along() -> None:
    live = engine(count=1)
    first, _ = submit(live, dataclasses.replace(request(cpus=8, limit=100), requeue=True), 0)
    waiting, _ = submit(live, after(request(cpus=8, limit=10), f"afterok:{first.id}"), 0)
    assert waiting.guaranteed_start == 100
    mark_down(live, next(iter(live.cluster.nodes)), "power", 50)
    assert first.state is JobState.PENDING  # queued again, not ended for good
    assert waiting.state is JobState.PENDING  # so afterok is not doomed
    assert waiting.guaranteed_start is None  # no node up: neither has a promise now
    resume_node(live, next(iter(live.cluster.nodes)), 60)
    assert first.state is JobState.RUNNING
    assert first.start_time == 60
    assert waiting.guaranteed_start == 160  # after its predecessor's new end
    live.advance(160)
    assert waiting.state is JobState.RUNNING


def test_what_if_plans_a_dependency_as_a_submission_would() -> None:
    live = engine()
    submit(live, request(cpus=8, limit=100, runtime=100), 0)
    answer = what_if(live, after(request(cpus=8, limit=10), "afterok:1"), 0)
    assert answer["guaranteed_start"] == 100
    hold(live, submit(live, request(cpus=FULL, limit=10), 0)[0].id, 1, "by alice")
    waiting = what_if(live, after(request(cpus=8, limit=10), "afterok:2"), 1)
    assert waiting["guaranteed_start"] is None
    assert "job 2 has no promise yet" in str(waiting["reason"])


def test_a_dependent_planned_again_keeps_its_place_in_the_queue() -> None:
    live = engine(count=1)
    first, _ = submit(live, request(cpus=8, limit=100, runtime=100), 0)
    waiting, _ = submit(live, after(request(cpus=8, limit=10), f"afterok:{first.id}"), 0)
    later, _ = submit(live, request(cpus=8, limit=10), 0)
    assert list(live.pending) == [waiting.id, later.id]
    # What a promise lost (a replan that moves its predecessor later) does to it:
    assert plan_again(live.life, waiting, 5)
    assert list(live.pending) == [waiting.id, later.id]
    assert waiting.guaranteed_start == 110  # after its predecessor, and after later now


def test_what_a_job_still_waits_for_is_kept_even_when_its_plan_does_not_move() -> None:
    live = engine()
    submit(live, request(cpus=8, limit=100, runtime=100), 0)  # ends at its limit: 100
    submit(live, request(cpus=8, limit=100, runtime=10), 0)  # ends early, at 10
    both, _ = submit(live, after(request(cpus=8, limit=10), "afterany:1,afternotok:2"), 0)
    assert both.guaranteed_start == 100
    live.advance(10)  # job 2 completed: afternotok on it can never be met
    assert both.state is JobState.CANCELLED
    keeps, _ = submit(live, after(request(cpus=8, limit=10), "afterany:1,afterany:3"), 11)
    # Job 3 (cancelled) is met at once; its plan still waits for job 1 and does not
    # move, but what it waits for is written down (a restart rebuilds from it).
    assert keeps.guaranteed_start == 100
    assert keeps.needs == "afterany:1"
