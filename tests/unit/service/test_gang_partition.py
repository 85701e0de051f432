"""Live gang partitions on emulated nodes: rows take turns, memory stays held, operators
create, change, drain and delete partitions, and a restarted engine carries on."""

from __future__ import annotations

from dataclasses import replace

import pytest

from berth.dispatch.emulated import EmulatedNodes
from berth.service.engine import Engine
from berth.service.handlers.job_commands import cancel, submit
from berth.service.handlers.partition_commands import change_partition, drain_partition
from berth.service.model import JobRecord, JobRequest, JobState, NodeRecord, RequestError
from berth.service.partitions.gang import GangSpec, share
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine
from berth.store.memory import MemoryStore
from tests.support.node_changes import add_node, create_partition, delete_partition


def gang_engine(scheme: str = "bc", slot: int = 10, memory: int = 32, **spec: object) -> Engine:
    """Four nodes of 8 cpus: node001-002 a gang partition ``g`` of 16 cpus, the rest default."""
    nodes = [NodeRecord(f"node{i:03d}", {"cpus": 8, "mem_gb": memory}) for i in range(1, 5)]
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, nodes, "conservative", {})
    create_partition(
        live,
        GangSpec("g", ["node001", "node002"], scheme, slot, **spec),  # type: ignore[arg-type]
        now=0,
    )
    return live


def gang_job(cpus: int, runtime: int, limit: int | None = None, **more: object) -> JobRequest:
    return JobRequest(
        name="g",
        user="alice",
        resources={"cpus": cpus, **more},  # type: ignore[dict-item]
        time_limit=limit or runtime,
        emulated_runtime=runtime,
        partition="g",
    )


def run_until(live: Engine, end: int) -> None:
    """Advance event by event (a virtual clock), as the daemon's scheduler would."""
    while (due := live.next_event()) is not None and due <= end:
        live.advance(due)
    live.advance(end)


def test_two_full_width_jobs_alternate_slot_by_slot() -> None:
    live = gang_engine()
    with live.batch(0):
        first, _ = submit(live, gang_job(16, 30, limit=40), 0)
        second, _ = submit(live, gang_job(16, 30, limit=40), 0)
    assert first.state is JobState.RUNNING
    assert second.state is JobState.PENDING
    assert second.planned_start == 10  # its row runs next
    assert len(live.gang["g"].rotation.scheduler.matrix.rows) == 2
    live.advance(10)
    assert first.suspended_at == 10
    assert second.state is JobState.RUNNING
    live.advance(20)
    assert first.suspended_at is None
    assert first.suspended_for == 10
    assert second.suspended_at == 20
    run_until(live, 100)
    # Each runs 30 s of its time: first 0-10, 20-30, 40-50; second 10-20, 30-40, 50-60.
    assert (first.state, first.end_time, first.suspended_for) == (JobState.COMPLETED, 50, 20)
    assert (second.state, second.end_time, second.suspended_for) == (JobState.COMPLETED, 60, 20)
    kinds = [e.kind for e in live.outbox.take_events()]
    assert kinds.count("job.suspended") == 4
    assert kinds.count("job.resumed") == 4


def test_the_time_limit_counts_run_time_only() -> None:
    live = gang_engine()
    with live.batch(0):
        first, _ = submit(live, gang_job(16, 100, limit=20), 0)
        submit(live, gang_job(16, 100, limit=100), 0)
    run_until(live, 25)
    assert first.state is JobState.RUNNING  # 25 s since its start, but 10 s suspended
    run_until(live, 100)
    assert first.state is JobState.TIMEOUT
    assert first.end_time == 30  # 20 s of run time: 0-10 and 20-30


def test_memory_stays_held_by_suspended_jobs_so_a_row_is_added_only_if_it_fits() -> None:
    live = gang_engine(memory=32)
    with live.batch(0):
        big, _ = submit(live, gang_job(16, 20, mem_gb=48), 0)  # 24 GB on each node
        other, _ = submit(live, gang_job(16, 20, mem_gb=48), 0)
    assert big.state is JobState.RUNNING
    assert other.state is JobState.PENDING
    assert "memory or GPUs" in other.state_reason
    assert len(live.gang["g"].rotation.scheduler.matrix.rows) == 1
    run_until(live, 100)
    assert big.end_time == 20
    assert other.start_time == 20
    assert other.end_time == 40


def test_small_jobs_share_a_row_and_never_share_a_processor() -> None:
    live = gang_engine(scheme="brmms")
    with live.batch(0):
        jobs = [submit(live, gang_job(cpus, 40), 0)[0] for cpus in (8, 4, 4, 8, 16)]
    grid = live.gang["g"].grid()
    for row in grid:
        assert len(row) == 16
    assert len(grid) == 3  # 8, 4 and 4 fill row 0; the second 8 and the 16 need a row each
    running = [j for j in jobs if j.state is JobState.RUNNING]
    assert sum(j.resources["cpus"] for j in running) <= 16
    for job in running:
        assert sum(a["cpus"] for a in job.allocation.values()) == job.resources["cpus"]


def test_requests_a_gang_partition_cannot_take_are_refused_naming_the_field() -> None:
    live = gang_engine()
    with pytest.raises(RequestError) as too_big:
        submit(live, gang_job(32, 10), 0)
    assert too_big.value.field == "resources.cpus"
    assert "16" in too_big.value.message
    with pytest.raises(RequestError) as memory:
        submit(live, gang_job(2, 10, mem_gb=40), 0)  # 2 cpus sit on one node of 32 GB
    assert memory.value.field == "resources.mem_gb"
    with pytest.raises(RequestError) as unknown:
        submit(live, replace(gang_job(2, 10), partition="nope"), 0)
    assert unknown.value.code == "not_found"
    assert "default, g" in unknown.value.message
    deadline, _ = submit(live, replace(gang_job(2, 10), deadline=100), 0)
    assert deadline.state is JobState.REJECTED
    assert "deadline" in deadline.state_reason
    drain_partition(live, "g", True, 0)
    with pytest.raises(RequestError) as drained:
        submit(live, gang_job(2, 10), 0)
    assert drained.value.code == "conflict"
    assert drained.value.field == "partition"


def test_partitions_are_checked_when_created_changed_and_deleted() -> None:
    live = gang_engine()
    with pytest.raises(RequestError) as odd:
        create_partition(live, GangSpec("h", ["node003", "node004", "node00x"]), 0)
    assert odd.value.field == "nodes"
    add_node(live, "node005", {"cpus": 8, "mem_gb": 32}, 0)
    with pytest.raises(RequestError) as not_pow2:
        create_partition(live, GangSpec("h", ["node003", "node004", "node005"]), 0)
    assert "power-of-two" in not_pow2.value.message
    with pytest.raises(RequestError) as taken:
        create_partition(live, GangSpec("h", ["node002", "node003"]), 0)
    assert "belongs to partition 'g'" in taken.value.message
    busy = submit(
        live, JobRequest("d", "alice", {"cpus": 16}, time_limit=100, emulated_runtime=100), 0
    )[0]
    assert busy.state is JobState.RUNNING
    assert set(busy.allocation) <= {
        "node003",
        "node004",
        "node005",
    }
    with pytest.raises(RequestError) as running:
        create_partition(live, GangSpec("h", sorted(busy.allocation)), 0)
    assert running.value.code == "conflict"
    assert "drain it" in running.value.message
    job, _ = submit(live, gang_job(8, 100), 0)
    with pytest.raises(RequestError) as scheme:
        change_partition(live, "g", 0, scheme="br")
    assert scheme.value.field == "scheme"
    change_partition(live, "g", 0, slot_seconds=5, max_rows=2)
    assert live.gang["g"].spec.slot_seconds == 5
    with pytest.raises(RequestError):
        delete_partition(live, "g", 0)
    cancel(live, job.id, 1, "done")
    delete_partition(live, "g", 1)
    assert "node001" in live.partitions.pool().nodes
    assert not live.gang


def test_a_cancelled_suspended_job_is_killed_and_leaves_the_matrix() -> None:
    live = gang_engine()
    with live.batch(0):
        first, _ = submit(live, gang_job(16, 100), 0)
        second, _ = submit(live, gang_job(16, 100), 0)
    live.advance(10)
    assert first.suspended_at == 10
    cancel(live, first.id, 12, "no longer needed")
    assert first.state is JobState.CANCELLED
    assert first.suspended_for == 2
    run_until(live, 30)
    assert len(live.gang["g"].rotation.scheduler.matrix.rows) == 1
    assert second.suspended_at is None  # alone now: it runs every slot


def test_a_restarted_engine_puts_gang_jobs_back_on_their_blocks() -> None:
    store = MemoryStore()
    live = gang_engine()
    with live.batch(0):
        first, _ = submit(live, gang_job(16, 30), 0)
        second, _ = submit(live, gang_job(16, 30), 0)
    run_until(live, 15)
    store.save(live.take_changes())
    nodes = [NodeRecord("x", {"cpus": 1})]  # ignored: the store has nodes
    again = restore_engine(store.load(), EmulatedNodes(), 15, nodes, "conservative", {})
    assert set(again.gang) == {"g"}
    assert again.jobs[first.id].suspended_at == 10
    run_until(again, 200)
    ends = {i: again.jobs[i].end_time for i in (first.id, second.id)}
    # Each still gets exactly 30 s of run time, whatever the rebuilt rows' order.
    for job_id in ends:
        record: JobRecord = again.jobs[job_id]
        assert record.state is JobState.COMPLETED
        assert record.end_time is not None
        assert record.start_time is not None
        assert record.end_time - record.start_time - record.suspended_for == 30


def test_share_splits_other_resources_in_proportion_to_cpus() -> None:
    cpus_of = [("a", 8), ("b", 8)]
    assert share(cpus_of, 4, {"cpus": 8, "mem_gb": 9, "gpus": 1}) == {
        "a": {"cpus": 4, "mem_gb": 5, "gpus": 1},
        "b": {"cpus": 4, "mem_gb": 4},
    }
