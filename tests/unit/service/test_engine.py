"""The live engine: admission, starts, completions, kills, cancels, holds, nodes, policy."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from berth.core.shapes import Shape
from berth.dispatch.emulated import EmulatedNodes
from berth.service.engine import Engine
from berth.service.handlers.job_commands import cancel, hold, release, submit
from berth.service.model import (
    JobRequest,
    JobState,
    NodeRecord,
    NodeState,
    RequestError,
    readable,
)
from berth.service.ports import Snapshot
from berth.service.queries.answers import what_if
from berth.service.restore import restore_engine
from berth.service.rows import job_row
from berth.store.memory import MemoryStore
from tests.support.live import engine, request
from tests.support.node_changes import (
    add_node,
    change_policy,
    drain,
    mark_down,
    resize_node,
    resume_node,
)


def test_jobs_start_complete_and_free_their_nodes() -> None:
    live = engine()
    first, created = submit(live, request(cpus=32, limit=100, runtime=60), now=0)
    assert created
    assert first.state is JobState.RUNNING
    assert first.start_time == 0
    assert sum(a["cpus"] for a in first.allocation.values()) == 32
    second, _ = submit(live, request(cpus=16, limit=50), now=10)
    assert second.state is JobState.PENDING
    assert second.guaranteed_start == 100  # the first job's time limit
    live.advance(60)  # the first job really ends at 60: compression moves the second up
    assert first.state is JobState.COMPLETED
    assert first.end_time == 60
    assert second.state is JobState.RUNNING
    assert second.start_time == 60
    assert all(not any(node.used.values()) or node.name in second.allocation
               for node in live.cluster.nodes.values())  # fmt: skip


def test_a_job_is_killed_at_its_time_limit() -> None:
    live = engine()
    job, _ = submit(live, request(cpus=8, limit=100, runtime=500), now=0)
    assert live.next_event() == 100
    live.advance(100)
    assert job.state is JobState.TIMEOUT
    assert job.end_time == 100
    assert "time limit of 100 s" in job.state_reason


def test_a_late_advance_still_kills_at_the_limit_not_at_the_real_end() -> None:
    live = engine()
    job, _ = submit(live, request(cpus=8, limit=100, runtime=150), now=0)
    live.advance(400)  # the daemon was asleep past both times
    assert job.state is JobState.TIMEOUT
    assert job.end_time == 100


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"cpus": 33}, "resources.cpus", "the cluster has only 32"),
        ({"gpus": 1}, "resources.gpus", "unknown resource 'gpus'"),
        ({"cpus": 0}, "resources", "positive amount"),
    ],
)
def test_requests_that_can_never_run_are_refused_with_the_field(
    changes: dict[str, Any], field: str, fragment: str
) -> None:
    live = engine()
    req = request(cpus=changes.pop("cpus", 0), **changes)
    with pytest.raises(RequestError) as caught:
        submit(live, req, now=0)
    assert caught.value.field == field
    assert fragment in caught.value.message
    assert not live.jobs


def test_deadlines_in_the_past_or_shorter_than_the_limit_are_refused() -> None:
    live = engine()
    with pytest.raises(RequestError, match="in the past"):
        submit(live, request(deadline=5), now=10)
    with pytest.raises(RequestError, match="sooner than now") as caught:
        submit(live, request(limit=100, deadline=50), now=0)
    assert caught.value.field == "deadline"


def test_conservative_accepts_a_deadline_only_if_its_guarantee_meets_it() -> None:
    live = engine()
    submit(live, request(cpus=32, limit=1000), now=0)
    late, _ = submit(live, request(cpus=32, limit=100, deadline=500), now=0)
    assert late.state is JobState.REJECTED
    assert "earliest guaranteed completion is t=1100" in late.state_reason
    kept, _ = submit(live, request(cpus=32, limit=100, deadline=1100), now=0)
    assert kept.state is JobState.PENDING
    assert kept.guaranteed_end == 1100
    # the rejected job left no reservation behind: the kept one got the earliest slot
    assert kept.guaranteed_start == 1000


@pytest.mark.parametrize("policy", ["conservative", "easy"])
def test_a_what_if_refuses_a_deadline_as_the_submission_would(policy: str) -> None:
    """A policy that does not admit by deadline keeps one only if its guarantee does:
    the what-if answers that refusal too (it answered "accepted" before)."""
    live = engine(policy)
    submit(live, request(cpus=32, limit=1000), now=0)
    asked = what_if(live, request(cpus=32, limit=100, deadline=500), 0)
    late, _ = submit(live, request(cpus=32, limit=100, deadline=500), now=0)
    assert late.state is JobState.REJECTED
    assert asked == {"accepted": False, "reason": late.state_reason}
    if policy == "conservative":
        kept = what_if(live, request(cpus=32, limit=100, deadline=1100), 0)
        assert kept["accepted"] is True
        assert kept["guaranteed_end"] == 1100


def test_easy_makes_no_promise_so_it_refuses_deadline_jobs() -> None:
    live = engine("easy")
    job, _ = submit(live, request(deadline=10_000), now=0)
    assert job.state is JobState.REJECTED
    assert "makes no promises" in job.state_reason


def test_qops_admits_deadline_jobs_with_a_guaranteed_completion() -> None:
    live = engine("qops")
    submit(live, request(cpus=32, limit=1000), now=0)
    job, _ = submit(live, request(cpus=32, limit=100, deadline=2000), now=0)
    assert job.state is JobState.PENDING
    assert job.guaranteed_end == 2000
    impossible, _ = submit(live, request(cpus=32, limit=100, deadline=900), now=0)
    assert impossible.state is JobState.REJECTED
    assert "deadline t=900" in impossible.state_reason


def test_idempotency_key_returns_the_same_job() -> None:
    live = engine()
    first, created = submit(live, request(key="abc"), now=0)
    again, created_again = submit(live, request(key="abc"), now=5)
    other_user, _ = submit(live, request(key="abc", user="bob"), now=5)
    assert created
    assert not created_again
    assert again is first
    assert other_user.id != first.id


def test_cancel_pending_and_running_jobs() -> None:
    live = engine()
    running, _ = submit(live, request(cpus=32, limit=100), now=0)
    waiting, _ = submit(live, request(cpus=32, limit=100), now=0)
    cancel(live, waiting.id, 10, "by test")
    assert waiting.state is JobState.CANCELLED
    assert waiting.id not in live.pending
    cancel(live, running.id, 20, "by test")
    assert running.state is JobState.CANCELLED
    assert running.end_time == 20
    assert not any(any(n.used.values()) for n in live.cluster.nodes.values())
    with pytest.raises(RequestError, match="already ended") as caught:
        cancel(live, running.id, 30, "again")
    assert caught.value.code == "conflict"


def test_hold_drops_the_guarantee_and_release_readmits_at_the_back() -> None:
    live = engine()
    running, _ = submit(live, request(cpus=32, limit=100), now=0)
    held, _ = submit(live, request(cpus=32, limit=100), now=0)
    behind, _ = submit(live, request(cpus=32, limit=100), now=0)
    hold(live, held.id, 10, "maintenance")
    assert held.state is JobState.HELD
    assert held.guaranteed_start is None
    assert behind.guaranteed_start == 200
    assert behind.planned_start == 100
    release(live, held.id, 20)
    assert held.state is JobState.PENDING
    assert held.guaranteed_start == 200
    with pytest.raises(RequestError, match="only a pending job"):
        hold(live, running.id, 20, "x")


def test_draining_refuses_to_break_a_guarantee_unless_forced() -> None:
    live = engine()
    submit(live, request(cpus=32, limit=100), now=0)
    waiting, _ = submit(live, request(cpus=32, limit=100), now=0)
    assert waiting.guaranteed_start == 100
    with pytest.raises(
        RequestError, match=rf"job {waiting.id} .* would lose its guarantee"
    ) as caught:
        drain(live, "node001", "disk", 10)
    assert caught.value.code == "conflict"
    assert live.cluster.nodes["node001"].state is NodeState.UP
    drain(live, "node001", "disk", 10, force=True)
    assert live.cluster.nodes["node001"].state is NodeState.DRAINED
    # 32 cpus no longer exist for new starts: the job waits for the node, it is not refused
    assert waiting.state is JobState.PENDING
    assert waiting.guaranteed_start is None
    assert waiting.state_reason.startswith("waits for nodes that are drained or down")
    resume_node(live, "node001", 20)
    assert waiting.guaranteed_start == 100  # planned again once the node is back


def test_a_job_only_a_drained_node_can_hold_waits_for_it() -> None:
    """Draining the only GPU node: a GPU job waits with a reason, it is not refused."""
    live = restore_engine(
        Snapshot(), EmulatedNodes(), 0,
        [NodeRecord("cpu1", {"cpus": 8}), NodeRecord("gpu1", {"cpus": 8, "gpus": 2})],
        "conservative", {},
    )  # fmt: skip
    drain(live, "gpu1", "driver update", 0)
    asked = what_if(live, request(cpus=2, gpus=1), 5)
    job, _ = submit(live, request(cpus=2, gpus=1), now=5)
    assert job.state is JobState.PENDING
    assert "waits for nodes that are drained or down" in job.state_reason
    assert asked["reason"] == job.state_reason  # the what-if says why it would wait too
    assert asked["accepted"] is True
    assert asked["predicted_start"] is None
    resume_node(live, "gpu1", 10)
    live.advance(10)
    assert job.state is JobState.RUNNING
    assert job.allocation == {"gpu1": {"cpus": 2, "gpus": 1}}  # one node: cpus and GPU together


def test_a_job_is_placed_whole_on_nodes_never_split_by_resource() -> None:
    """cpus and memory of one slot land on one node (the old pool split put the cpus of a
    job on one node and its memory on another)."""
    live = engine(count=2)  # 2 x cpus=8,mem_gb=32
    submit(live, request(cpus=6, mem_gb=2), now=0)  # node001: 6 cpus, 12 GB
    job, _ = submit(live, request(cpus=2, mem_gb=40), now=0)  # 2 slots of 1 cpu + 20 GB
    for node, held in job.allocation.items():
        assert held["mem_gb"] == 20 * held["cpus"], (node, held)
    assert sum(held["cpus"] for held in job.allocation.values()) == 2


def test_draining_keeps_guarantees_that_still_hold_and_running_jobs_go_on() -> None:
    live = engine()
    running, _ = submit(live, request(cpus=16, limit=100), now=0)
    waiting, _ = submit(live, request(cpus=16, limit=100), now=0)
    later, _ = submit(live, request(cpus=24, limit=100), now=0)
    assert later.guaranteed_start == 100
    drain(live, "node004", "swap a disk", 10)
    assert running.state is JobState.RUNNING
    assert waiting.state is JobState.RUNNING
    assert later.guaranteed_start == 100
    live.advance(100)
    assert later.state is JobState.RUNNING
    assert "node004" not in later.allocation


def test_a_node_going_down_kills_its_jobs_and_reissues_guarantees() -> None:
    live = engine()
    victim, _ = submit(live, request(cpus=8, limit=1000), now=0)
    other, _ = submit(live, request(cpus=24, limit=1000), now=0)
    waiting, _ = submit(live, request(cpus=16, limit=100), now=0)
    assert waiting.guaranteed_start == 1000
    node = next(iter(victim.allocation))
    mark_down(live, node, "power supply", 50)
    assert victim.state is JobState.NODE_FAIL
    assert "power supply" in victim.state_reason
    events = [e.kind for e in live.outbox.take_events()]
    assert "job.node_fail" in events
    assert "node.down" in events
    assert other.state is JobState.RUNNING or other.state is JobState.NODE_FAIL
    assert live.cluster.schedulable_capacity()["cpus"] == 24


def test_policy_change_keeps_guarantees_or_refuses_naming_them() -> None:
    live = engine()
    submit(live, request(cpus=32, limit=100), now=0)
    waiting, _ = submit(live, request(cpus=32, limit=100), now=0)
    with pytest.raises(RequestError, match=rf"job {waiting.id} .* would lose its guarantee"):
        change_policy(live, "easy", {}, 10)
    assert live.partitions.policy_name == "conservative"
    change_policy(live, "conservative", {"selection": "bb"}, 10)
    assert live.partitions.policy_options == {"selection": "bb"}
    assert waiting.guaranteed_start == 100
    with pytest.raises(RequestError) as caught:
        change_policy(live, "conservative", {"nonsense": 1}, 10)
    assert caught.value.field == "options"
    change_policy(live, "easy", {}, 10, force=True)
    assert waiting.guaranteed_start is None


@pytest.mark.parametrize("policy", ["qops", "slack"])
def test_switching_policy_keeps_slot_jobs_on_named_nodes(policy: str) -> None:
    """QoPS and slack plan on the nodes: a waiting slot job keeps a placement of its
    slots. QoPS promises its artificial deadline, later than conservative's start, so
    that switch is forced; slack keeps the promise given as the job's bound."""
    live = engine()
    submit(live, request(cpus=32, limit=100), now=0)
    shaped = JobRequest("t", "alice", {"cpus": 8}, 100, shape=Shape(2, {"cpus": 4}, 2))
    waiting, _ = submit(live, shaped, now=0)
    if policy == "qops":
        with pytest.raises(RequestError, match="could only be promised"):
            change_policy(live, policy, {}, 10)
    change_policy(live, policy, {}, 10, force=policy == "qops")
    assert live.partitions.policy_name == policy
    assert live.policy.places_on_nodes
    nodes = live.policy.planned_nodes(waiting.id)
    assert nodes is not None
    assert len(nodes) == 2
    assert all(held == {"cpus": 4} for held in nodes.values())


def test_a_late_wake_up_with_held_intents_still_ends_emulated_jobs_on_time() -> None:
    """The daemon holds node commands until their commit; emulated nodes are told at
    once (nothing leaves the process), so a job started during a catch-up still ends
    by itself, not at its limit."""
    live = engine(count=4)
    live.outbox.hold_intents = True
    jobs = [submit(live, request(cpus=8, limit=10), 0)[0] for _ in range(5)]
    live.advance(30)  # one late wake-up: the fifth starts at 10 during the catch-up
    assert [j.state for j in jobs] == [JobState.COMPLETED] * 5
    assert (jobs[4].start_time, jobs[4].end_time) == (10, 20)
    assert live.outbox.take_intents() == []  # nothing is held for emulated nodes


def test_a_reason_shows_the_cores_times_as_dates_and_offsets_as_they_are() -> None:
    tonight = 1_795_554_000  # 2026-11-24 21:00:00 UTC
    live = engine("easy", count=4, now=tonight)  # four nodes of 8 cpus
    submit(live, request(cpus=24, limit=3600), now=tonight)
    head, _ = submit(live, request(cpus=32, limit=600), now=tonight)
    small, _ = submit(live, request(cpus=8, limit=60), now=tonight)
    assert head.state is JobState.PENDING
    assert small.state is JobState.RUNNING
    assert small.state_reason == (
        "backfilled beside the head's reservation at 2026-11-24 22:00:00 UTC"
    )
    assert readable("deadline t=5 is before now (t=0)") == "deadline t=5 is before now (t=0)"
    assert readable("shadow time t=1795554000, not at=3") == (
        "shadow time 2026-11-24 21:00:00 UTC, not at=3"
    )


def test_requests_are_checked_against_the_nodes_as_they_are_after_a_change() -> None:
    """What requests are checked against is derived once per change of the nodes: a
    node resized or added must count at once."""
    live = engine()  # four nodes of 8 cpus
    one_big_slot = dataclasses.replace(request(cpus=12), shape=Shape(1, {"cpus": 12}, None, False))
    with pytest.raises(RequestError, match="no node can hold one slot"):
        submit(live, one_big_slot, now=0)
    resize_node(live, "node001", {"cpus": 16, "mem_gb": 32}, now=0)
    assert submit(live, one_big_slot, now=0)[0].state is JobState.RUNNING
    with pytest.raises(RequestError, match="unknown resource 'gpus'"):
        submit(live, request(cpus=1, gpus=1), now=0)
    add_node(live, "gpu01", {"cpus": 8, "gpus": 2}, now=0)
    assert submit(live, request(cpus=1, gpus=1), now=0)[0].state is JobState.RUNNING


def test_a_drain_that_would_break_a_deadline_promise_is_refused_naming_the_job() -> None:
    """QoPS on two nodes: two admitted jobs are promised completion by 160 on one node
    each once the running job ends at 100; draining either node would leave one of them
    ending at 200, so the drain is refused, naming it, unless forced."""
    live = engine("qops", count=2)
    submit(live, request(cpus=16, limit=100), now=0)
    first, _ = submit(live, request(cpus=8, limit=50, deadline=160), now=0)
    second, _ = submit(live, request(cpus=8, limit=50, deadline=160), now=0)
    assert (first.guaranteed_start, second.guaranteed_start) == (110, 110)
    nodes = {next(iter(live.policy.planned_nodes(j.id) or {})) for j in (first, second)}
    assert nodes == {"node001", "node002"}
    with pytest.raises(RequestError, match=r"could only be promised .*, 40 s later") as caught:
        drain(live, "node002", "disk", 10)
    assert "40 s later: it would end after its deadline t=160 (force" in str(caught.value)
    assert caught.value.code == "conflict"
    assert live.cluster.nodes["node002"].state is NodeState.UP
    live.advance(100)
    assert {first.start_time, second.start_time} == {100}


def test_a_drain_that_leaves_a_deadline_job_no_start_names_its_deadline() -> None:
    """QoPS on two nodes of 8 cpus: a job of 16 cpus needs both; with one drained it has
    no start at all, and the refusal names the end its user was promised."""
    live = engine("qops", count=2)
    submit(live, request(cpus=16, limit=100), now=0)
    whole, _ = submit(live, request(cpus=16, limit=50, deadline=400), now=0)
    assert whole.guaranteed_start is not None
    with pytest.raises(RequestError, match="would lose its guarantee") as caught:
        drain(live, "node002", "disk", 10)
    assert "would lose its guarantee to end by its deadline t=400 (force" in str(caught.value)


def _budget_always_spent(monkeypatch: pytest.MonkeyPatch, policy: str) -> Engine:
    """The daemon's engine (improvements deferred) on a machine far too slow: every
    slice's clock reads as run out at once."""
    import berth.service.engine as engine_module

    monkeypatch.setattr(engine_module, "within", lambda seconds: lambda: True)
    live = engine(policy)
    live.defer_improvements = True
    return live


def test_a_late_wake_up_with_its_budget_spent_leaves_easy_passes_to_its_own_instant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    live = _budget_always_spent(monkeypatch, "easy")
    submit(live, request(cpus=32, limit=100, runtime=10), now=0)
    second, _ = submit(live, request(cpus=32, limit=100, runtime=10), now=0)
    live.advance(100)  # asleep past the first job's end at 10
    assert second.state is JobState.RUNNING
    assert second.start_time == 100  # EASY promised nothing: it starts at the wake-up


def test_a_late_wake_up_with_its_budget_spent_still_starts_reservations_on_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    live = _budget_always_spent(monkeypatch, "conservative")
    submit(live, request(cpus=32, limit=100, runtime=100), now=0)
    second, _ = submit(live, request(cpus=32, limit=50, runtime=50), now=0)
    third, _ = submit(live, request(cpus=32, limit=50, runtime=50), now=0)
    assert (second.guaranteed_start, third.guaranteed_start) == (100, 150)
    live.advance(400)
    assert (second.start_time, third.start_time) == (100, 150)  # each at its own instant
    assert third.state is JobState.COMPLETED


def test_a_replan_saves_the_rows_it_changed_and_every_row_stays_the_record() -> None:
    """A replan on 4,096 nodes kept most of 3,900 plans and rewrote every row (on the
    event loop): rows are saved when their plan, guarantee or reason changed, and the
    store still holds each record as it is."""
    store = MemoryStore()
    live = engine("conservative", count=4)
    for cpus in (8, 8, 8, 8, 8, 8, 32):  # four run; two wait for 100, one for 200
        submit(live, request(cpus=cpus, limit=100, runtime=100), 0)
    wide = max(live.pending.values(), key=lambda j: j.resources["cpus"])
    store.save(live.take_changes())

    def said() -> dict[int, tuple[Any, ...]]:
        return {
            j.id: (j.state_reason, j.planned_start, j.planned_nodes, j.guaranteed_start)
            for j in live.pending.values()
        }

    for node, left in (("node004", 24), ("node003", 16)):
        before = said()
        drain(live, node, "disk", 0, force=True)
        changed = {i for i, now in said().items() if before[i] != now}
        saved = set(live.outbox.jobs)
        store.save(live.take_changes())
        assert changed <= saved
        assert set(live.pending) - saved  # (a plan the replan kept is not written again)
        assert store.jobs == {i: job_row(record) for i, record in live.jobs.items()}
        assert wide.planned_start is None  # (only its reason changes the second time)
        assert wide.state_reason.endswith(f"the nodes hold at most {left})")
