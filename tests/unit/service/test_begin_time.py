"""A begin time (sbatch ``--begin``): the job starts no earlier, under every policy that
plans on nodes; it is its guarantee's floor, which its dependencies never lower; it
survives a restart; a deadline it cannot meet from there is refused; gang partitions,
which start jobs at their slot boundaries, refuse it."""

from __future__ import annotations

import dataclasses

import pytest

from berth.service.handlers.job_commands import submit
from berth.service.handlers.policy_commands import plan_policy_change
from berth.service.model import JobRequest, JobState, RequestError
from berth.service.ports import Snapshot
from berth.service.rows import job_from_row, job_row
from tests.support.live import engine, request
from tests.unit.service.test_gang_partition import gang_engine, gang_job


def begin(req: JobRequest, at: int, **more: object) -> JobRequest:
    return dataclasses.replace(req, begin_time=at, **more)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", ["conservative", "slack", "qops", "msb", "mrt"])
def test_a_job_starts_no_earlier_than_its_begin_time_on_an_idle_cluster(policy: str) -> None:
    live = engine(policy)
    later, _ = submit(live, begin(request(cpus=8, limit=100, runtime=100), 600), 0)
    now, _ = submit(live, request(cpus=8, limit=100, runtime=100), 0)
    assert later.state is JobState.PENDING
    assert now.state is JobState.RUNNING
    assert later.guaranteed_start is not None
    assert later.guaranteed_start >= 600
    live.advance(599)
    assert later.state is JobState.PENDING
    live.advance(600)
    assert later.state is JobState.RUNNING
    assert later.start_time == 600


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_a_policy_that_reserves_only_the_head_refuses_a_begin_time(policy: str) -> None:
    live = engine(policy)
    with pytest.raises(RequestError, match=f"reserves every waiting job .*runs {policy}") as no:
        submit(live, begin(request(cpus=8), 600), 0)
    assert no.value.field == "begin_time"
    past, _ = submit(live, begin(request(cpus=8, limit=100), 0), 5)  # (nothing to keep)
    assert past.state is JobState.RUNNING


def test_a_switch_to_easy_with_a_begin_time_waiting_is_refused_unless_forced() -> None:
    """Its guarantee would break (easy promises nothing), so the switch is refused as any
    such switch is; forced, the begin time is no longer kept."""
    live = engine()
    waiting, _ = submit(live, begin(request(cpus=8, limit=100), 600), 0)
    with pytest.raises(RequestError, match=f"job {waiting.id} .* would lose its guarantee"):
        plan_policy_change(live, "easy", {}, 0)
    assert plan_policy_change(live, "easy", {}, 0, force=True).name == "easy"


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
