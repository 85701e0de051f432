"""Backfilling partitions beside the default one: each runs its own policy on its own
nodes, with its own guarantees, through node changes, policy switches and restarts."""

from __future__ import annotations

import pytest

from berth.dispatch.emulated import EmulatedNodes
from berth.service.engine import Engine
from berth.service.handlers.job_commands import submit
from berth.service.model import JobRequest, JobState, NodeRecord, RequestError
from berth.service.partitions.specs import BackfillSpec
from berth.service.ports import Snapshot
from berth.service.queries.answers import start_info, what_if
from berth.service.restore import restore_engine
from berth.store.memory import MemoryStore
from tests.support.node_changes import (
    change_policy,
    create_partition,
    delete_partition,
    drain,
    mark_down,
)


def two_partitions(policy: str = "easy") -> Engine:
    """node001-002 default (conservative), node003-004 partition ``p``, 8 cpus each."""
    nodes = [NodeRecord(f"node{i:03d}", {"cpus": 8}) for i in range(1, 5)]
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, nodes, "conservative", {})
    create_partition(live, BackfillSpec("p", ["node003", "node004"], policy), now=0)
    return live


def job(cpus: int, limit: int = 100, partition: str | None = None, **more: int) -> JobRequest:
    return JobRequest("j", "alice", {"cpus": cpus}, limit, emulated_runtime=limit,
                      partition=partition, **more)  # type: ignore[arg-type]  # fmt: skip


def test_each_partition_schedules_its_own_nodes_with_its_own_policy() -> None:
    live = two_partitions("easy")
    mine, _ = submit(live, job(16, partition="p"), 0)
    theirs, _ = submit(live, job(16), 0)
    assert set(mine.allocation) == {"node003", "node004"}
    assert set(theirs.allocation) == {"node001", "node002"}
    queued, _ = submit(live, job(8, partition="p"), 0)
    guaranteed, _ = submit(live, job(8), 0)
    assert queued.guaranteed_start is None  # easy promises nothing
    assert guaranteed.guaranteed_start == 100  # conservative does
    late, _ = submit(live, job(8, partition="p", deadline=500), 0)
    assert late.state is JobState.REJECTED
    assert "policy easy makes no promises" in late.state_reason
    live.advance(100)
    assert queued.state is JobState.RUNNING
    assert set(queued.allocation) <= {"node003", "node004"}
    assert guaranteed.state is JobState.RUNNING
    with pytest.raises(RequestError) as too_big:
        submit(live, job(24, partition="p"), 100)
    assert too_big.value.field == "resources.cpus"


def test_a_partitions_policy_changes_alone_and_keeps_its_promises() -> None:
    live = two_partitions("conservative")
    submit(live, job(16, partition="p"), 0)
    waiting, _ = submit(live, job(16, partition="p"), 0)
    assert waiting.guaranteed_start == 100
    with pytest.raises(RequestError) as breaks:
        drain(live, "node003", "maintenance", 10)  # the partition's own promise
    assert breaks.value.code == "conflict"
    assert "guarantee" in breaks.value.message
    drain(live, "node001", "maintenance", 10)  # the default partition promised nothing
    with pytest.raises(RequestError) as refused:
        change_policy(live, "easy", {}, 10, partition="p")
    assert "would lose its guarantee" in refused.value.message
    change_policy(live, "easy", {}, 10, force=True, partition="p")
    assert live.partitions.policy_name == "conservative"
    assert live.backfill["p"].policy == "easy"
    assert waiting.guaranteed_start is None
    drain(live, "node003", "maintenance", 10)
    with pytest.raises(RequestError) as unknown:
        change_policy(live, "easy", {}, 10, partition="nope")
    assert unknown.value.code == "not_found"


def test_taking_nodes_that_default_promised_away_is_refused_unless_forced() -> None:
    nodes = [NodeRecord(f"node{i:03d}", {"cpus": 8}) for i in range(1, 5)]
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, nodes, "conservative", {})
    submit(live, job(16), 0)
    wide, _ = submit(live, job(32), 0)  # waits for every node at 100
    assert wide.guaranteed_start == 100
    with pytest.raises(RequestError) as refused:
        create_partition(live, BackfillSpec("p", ["node003", "node004"], "easy"), 0)
    assert refused.value.code == "conflict"
    with pytest.raises(RequestError) as policy:
        create_partition(live, BackfillSpec("q", ["node004"], "nope"), 0)
    assert policy.value.field == "policy"


def test_partitions_survive_a_restart_and_go_when_deleted() -> None:
    store = MemoryStore()
    live = two_partitions("conservative")
    running, _ = submit(live, job(16, partition="p"), 0)
    waiting, _ = submit(live, job(8, partition="p"), 0)
    store.save(live.take_changes())
    again = restore_engine(store.load(), EmulatedNodes(), 50, [], "conservative", {})
    assert again.backfill["p"].policy == "conservative"
    assert again.jobs[waiting.id].guaranteed_start == 100
    again.advance(100)
    assert again.jobs[running.id].state is JobState.COMPLETED
    assert set(again.jobs[waiting.id].allocation) <= {"node003", "node004"}
    again.advance(200)
    delete_partition(again, "p", 200)
    assert sorted(again.partitions.pool().nodes) == ["node001", "node002", "node003", "node004"]
    assert submit(again, job(32), 200)[0].state is JobState.RUNNING


def test_the_start_answer_speaks_of_the_jobs_own_partition() -> None:
    live = two_partitions("conservative")
    change_policy(live, "easy", {}, 0)  # the default partition: no promises
    submit(live, job(16), 0)
    submit(live, job(8), 0)  # waits in the default partition
    submit(live, job(16, partition="p"), 0)
    waiting, _ = submit(live, job(8, partition="p"), 0)
    info = start_info(live, waiting.id, 0)
    assert info["guaranteed_start"] == info["predicted_start"] == 100
    assert "the reservation conservative holds" in str(info["based_on"])
    blocked = info["blocked_by"]
    assert isinstance(blocked, dict)
    assert blocked["jobs_ahead"] == 0  # the default partition's queue is not ahead
    assert blocked["running_jobs_to_end"] == [3]
    what = what_if(live, job(8, partition="p"), 0)
    assert what["guaranteed_start"] == 100


class RealNodes(EmulatedNodes):
    """Nodes with effects outside the daemon, as agents are."""

    in_process = False


def test_real_nodes_take_every_backfilling_policy() -> None:
    """Every policy plans on named nodes, so agents' nodes take each of them, with any
    selection, as the default partition's policy or a partition's."""
    nodes = [NodeRecord(f"node{i:03d}", {"cpus": 8}) for i in range(1, 5)]
    live = restore_engine(Snapshot(), RealNodes(), 0, nodes, "conservative", {})
    create_partition(live, BackfillSpec("p", ["node003"], "slack"), 0)
    change_policy(live, "conservative", {"selection": "bb"}, 0)
    change_policy(live, "mrt", {}, 0, partition="p")
    change_policy(live, "easy", {"selection": "bl"}, 0, partition="p")
    assert live.partitions.policy_spec("p") == ("easy", {"selection": "bl"})


def test_one_jobs_prediction_is_its_plan_or_the_forecast_of_its_partition() -> None:
    """Beside a conservative default, an EASY partition: a start-time answer (one job's
    prediction) gives a planned job its reservation and an EASY job its forecast, as
    the map of every job's prediction does."""
    live = two_partitions("easy")
    submit(live, job(16, partition="p"), 0)
    submit(live, job(16), 0)
    forecast_one, _ = submit(live, job(8, partition="p"), 0)
    planned_one, _ = submit(live, job(8), 0)
    at, predicted = live.forecasts.predictions(0)
    assert predicted == {forecast_one.id: 100, planned_one.id: 100}
    for record in (forecast_one, planned_one):
        assert live.forecasts.prediction(record.id, 0) == (at, predicted[record.id])
        assert start_info(live, record.id, 0)["predicted_start"] == 100


def test_a_job_queued_again_after_its_node_fails_is_planned_by_its_partitions_replan() -> None:
    """Not first admitted on the partition's policy of before the failure, where the
    failed node was still up: it was promised a start there, which the replan then broke."""
    live = two_partitions("conservative")
    again, _ = submit(live, job(8, partition="p", requeue=True), 0)
    submit(live, job(8, 50, partition="p"), 0)
    waiting, _ = submit(live, job(8, partition="p"), 0)
    assert waiting.guaranteed_start == 50
    failed = next(iter(again.allocation))
    mark_down(live, failed, "psu", 10)
    assert again.state is JobState.PENDING
    assert again.requeued == 1
    assert waiting.planned_start == 50  # its promise kept
    assert again.planned_start == 150
    assert again.guaranteed_start == 150
    assert live.counters["guarantee_broken"] == 0
    assert "job.guarantee_missed" not in [event.kind for event in live.outbox.take_events()]
