"""A begin time (sbatch ``--begin``): the job starts no earlier, under every policy that
plans on nodes; it is its guarantee's floor, which its dependencies never lower; it
survives a restart; a deadline it cannot meet from there is refused. Under easy and
fcfs, which reserve only the head of the queue, the job waits outside the plan until its
begin time. Gang partitions, which start jobs at their slot boundaries, refuse it."""

from __future__ import annotations

import dataclasses

import pytest

from berth.service.engine import Engine
from berth.service.handlers.job_commands import cancel, hold, release, submit
from berth.service.handlers.policy_commands import apply_policy_change, plan_policy_change
from berth.service.model import JobRecord, JobRequest, JobState, RequestError
from berth.service.ports import Snapshot
from berth.service.queries.answers import what_if
from berth.service.rows import job_from_row, job_row
from tests.support.live import engine, request
from tests.unit.service.test_gang_partition import gang_engine, gang_job


def begin(req: JobRequest, at: int, **more: object) -> JobRequest:
    return dataclasses.replace(req, begin_time=at, **more)  # type: ignore[arg-type]


def starts_at(live: Engine, job: JobRecord, at: int) -> None:
    """``job`` still waits a second before ``at``, and starts at ``at``."""
    live.advance(at - 1)
    assert job.state is JobState.PENDING
    live.advance(at)
    assert job.state is JobState.RUNNING
    assert job.start_time == at


@pytest.mark.parametrize("policy", ["conservative", "slack", "qops", "msb", "mrt"])
def test_a_job_starts_no_earlier_than_its_begin_time_on_an_idle_cluster(policy: str) -> None:
    live = engine(policy)
    later, _ = submit(live, begin(request(cpus=8, limit=100, runtime=100), 600), 0)
    now, _ = submit(live, request(cpus=8, limit=100, runtime=100), 0)
    assert later.state is JobState.PENDING
    assert now.state is JobState.RUNNING
    assert later.guaranteed_start is not None
    assert later.guaranteed_start >= 600
    starts_at(live, later, 600)


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_under_a_policy_that_reserves_only_the_head_it_waits_outside_the_plan(
    policy: str,
) -> None:
    """Nothing in easy's or fcfs's plan would keep the job from starting earlier: it waits
    outside the plan (blocking no one, even under fcfs), the engine wakes up at its begin
    time, and it joins the queue then."""
    live = engine(policy, count=1)
    later, _ = submit(live, begin(request(cpus=8, limit=100), 600), 0)
    assert later.state is JobState.PENDING
    assert later.state_reason.startswith("waits for its begin time (")
    assert later.guaranteed_start is None
    behind, _ = submit(live, request(cpus=8, limit=100, runtime=50), 5)
    assert behind.state is JobState.RUNNING  # not held up behind it
    assert live.next_event() == 55  # (behind's end; then the begin time)
    live.advance(55)
    assert live.next_event() == 600
    starts_at(live, later, 600)
    past, _ = submit(live, begin(request(cpus=8, limit=100), 0), 605)  # (nothing to keep)
    assert past.state is JobState.PENDING
    assert not past.state_reason.startswith("waits for its begin time")


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_held_to_its_begin_time_it_survives_a_restart_a_hold_and_a_cancel(policy: str) -> None:
    live = engine(policy, count=1)
    waiting, _ = submit(live, begin(request(cpus=8, limit=100), 500), 0)
    doomed, _ = submit(live, begin(request(cpus=8, limit=100), 400), 0)
    cancel(live, doomed.id, 1, "no longer")
    assert doomed.state is JobState.CANCELLED
    hold(live, waiting.id, 2, "for now")
    release(live, waiting.id, 3)
    assert waiting.state_reason.startswith("waits for its begin time (")
    stored = [job_from_row(job_row(record)) for record in live.jobs.values()]
    nodes = list(live.cluster.nodes.values())
    again = engine(policy, snapshot=Snapshot(nodes=nodes, jobs=stored, last_job_id=2), now=5)
    restored = again.jobs[waiting.id]
    assert restored.state_reason.startswith("waits for its begin time (")
    assert again.next_event() == 500
    starts_at(again, restored, 500)


def test_under_easy_a_deadline_cannot_be_guaranteed_from_a_begin_time() -> None:
    live = engine("easy")
    asked = what_if(live, begin(request(cpus=8, limit=100), 600, deadline=5000), 0)
    late, _ = submit(live, begin(request(cpus=8, limit=100), 600, deadline=5000), 0)
    assert late.state is JobState.REJECTED
    assert "waits for its begin time" in late.state_reason
    assert asked["accepted"] is False
    assert asked["reason"] == late.state_reason  # (the what-if says as the submission)
    asked = what_if(live, begin(request(cpus=8, limit=100), 600), 0)
    assert asked["accepted"] is True
    assert asked["predicted_start"] is None
    assert "until its begin time" in str(asked["reason"])
    assert sorted(live.jobs) == [late.id]  # (a what-if submits nothing)


def test_a_switch_to_easy_with_a_begin_time_waiting_is_refused_unless_forced() -> None:
    """Its guarantee would break (easy promises nothing), so the switch is refused as any
    such switch is; forced, the job waits outside easy's plan until its begin time."""
    live = engine()
    waiting, _ = submit(live, begin(request(cpus=8, limit=100), 600), 0)
    with pytest.raises(RequestError, match=f"job {waiting.id} .* would lose its guarantee"):
        plan_policy_change(live, "easy", {}, 0)
    apply_policy_change(live, plan_policy_change(live, "easy", {}, 1, force=True), 1)
    assert waiting.state_reason.startswith("waits for its begin time (")
    assert waiting.guaranteed_start is None
    starts_at(live, waiting, 600)


def test_a_switch_from_easy_reserves_a_job_held_to_its_begin_time_at_once() -> None:
    live = engine("easy")
    waiting, _ = submit(live, begin(request(cpus=8, limit=100), 600), 0)
    assert waiting.guaranteed_start is None
    apply_policy_change(live, plan_policy_change(live, "conservative", {}, 1), 1)
    assert waiting.guaranteed_start == 600  # its reservation, from its begin time
    assert waiting.id not in live.deps.waits.gated
    live.advance(600)
    assert waiting.start_time == 600


def test_dependencies_never_lower_the_start_below_the_begin_time() -> None:
    live = engine()
    submit(live, request(cpus=8, limit=100, runtime=10), 0)
    waiting, _ = submit(live, begin(request(cpus=8, limit=50), 300, dependency="afterok:1"), 0)
    assert waiting.guaranteed_start == 300  # job 1's promised end (100) is earlier
    live.advance(10)  # job 1 completes early: the dependency no longer holds it back
    assert live.jobs[1].state is JobState.COMPLETED
    assert waiting.state is JobState.PENDING
    assert waiting.guaranteed_start == 300
    live.advance(300)
    assert waiting.start_time == 300


def test_the_begin_time_survives_a_restart() -> None:
    live = engine()
    waiting, _ = submit(live, begin(request(cpus=8, limit=100), 500), 0)
    stored = [job_from_row(job_row(record)) for record in live.jobs.values()]
    again = engine(
        snapshot=Snapshot(nodes=list(live.cluster.nodes.values()), jobs=stored, last_job_id=1),
        now=5,
    )
    restored = again.jobs[waiting.id]
    assert restored.begin_time == 500
    assert restored.guaranteed_start == 500
    again.advance(100)
    assert restored.state is JobState.PENDING


def test_a_deadline_it_cannot_meet_from_its_begin_time_is_refused() -> None:
    live = engine("qops")
    late, _ = submit(live, begin(request(cpus=8, limit=100), 1000, deadline=1050), 0)
    assert late.state is JobState.REJECTED
    kept, _ = submit(live, begin(request(cpus=8, limit=100), 1000, deadline=1200), 0)
    assert kept.state is JobState.PENDING
    assert kept.guaranteed_start is not None
    assert kept.guaranteed_start >= 1000


def test_a_gang_partition_refuses_a_begin_time() -> None:
    live = gang_engine()
    with pytest.raises(RequestError, match="a begin time is not supported there") as refused:
        submit(live, begin(gang_job(16, 30), 100), 0)
    assert refused.value.field == "begin_time"
