"""The engine's parts on their own: the outbox (what the shell commits and sends), the
memory of finished jobs, the planner (the partitions' timelines), the job book, the
partitions, the dependencies and the lifecycle, each built from its own inputs."""

from __future__ import annotations

import pytest

from berth.core.model import Job
from berth.core.policies.base import LivePolicy
from berth.dispatch.emulated import EmulatedNodes
from berth.service.handlers.agents import AgentNodes, AgentSettings
from berth.service.jobs.book import JobBook
from berth.service.jobs.dependencies import Dependencies
from berth.service.jobs.lifecycle import JobLifecycle
from berth.service.jobs.memory import JobMemory
from berth.service.model import (
    JobRecord,
    JobRequest,
    JobState,
    NodeRecord,
    NodeState,
    RequestError,
)
from berth.service.nodes.cluster import Cluster
from berth.service.nodes.intents import StartOn
from berth.service.outbox import Outbox
from berth.service.partitions.registry import Partitions
from berth.service.partitions.specs import BackfillSpec
from berth.service.planning.planner import Planner
from berth.service.planning.replan import build_policy


def _job(job_id: int, key: str | None = None, state: JobState = JobState.PENDING) -> JobRecord:
    request = JobRequest("t", "alice", {"cpus": 1}, 60, command="true", idempotency_key=key)
    record = JobRecord.from_request(job_id, request, 0)
    record.state = state
    record.allocation = {"n1": {"cpus": 1}}
    return record


def test_held_intents_leave_only_when_the_shell_takes_them() -> None:
    agents = AgentNodes(AgentSettings(), wall=lambda: 0.0)
    outbox = Outbox(agents)
    outbox.hold_intents = True
    start = StartOn.of(_job(1), 0)
    outbox.intend(start)
    assert agents.dispatched == {}  # not before the commit
    assert outbox.take_intents() == [start]
    assert outbox.take_intents() == []
    outbox.intend(StartOn.of(_job(2), 0))
    outbox.dispatch()
    assert list(agents.dispatched) == [2]


def test_an_in_process_backend_is_told_at_once_even_when_held() -> None:
    emulated = EmulatedNodes()
    outbox = Outbox(emulated)
    outbox.hold_intents = True
    outbox.intend(StartOn.of(_job(1), 0))
    assert outbox.take_intents() == []
    assert emulated.next_event() == 60  # running until its time limit


def test_changes_are_the_rows_of_what_changed_once() -> None:
    outbox = Outbox(EmulatedNodes())
    jobs = {1: _job(1), 2: _job(2)}
    nodes = {"n1": NodeRecord("n1", {"cpus": 4}, NodeState.UP)}
    version = outbox.version
    outbox.job_changed(jobs[2])
    outbox.node_changed("n1")
    outbox.emit("job.started", 5, 2, nodes=["n1"])
    assert outbox.version == version + 1
    changes = outbox.take_changes(jobs, nodes, lambda: {"policy": "easy"})
    assert list(changes.jobs) == [2]
    assert list(changes.nodes) == ["n1"]
    assert changes.config == {}  # the configuration did not change
    outbox.config_changed()
    again = outbox.take_changes(jobs, nodes, lambda: {"policy": "easy"})
    assert (again.jobs, again.nodes, again.config) == ({}, {}, {"policy": "easy"})
    assert [(e.kind, e.job_id) for e in outbox.take_events()] == [("job.started", 2)]
    assert outbox.take_events() == []


def test_the_oldest_finished_jobs_are_let_go_with_their_keys() -> None:
    jobs = {i: _job(i, key=f"k{i}", state=JobState.COMPLETED) for i in (1, 2, 3)}
    memory = JobMemory(jobs, keep=2)
    for job_id in jobs:
        memory.note_key(jobs[job_id])
        memory.finished(job_id)
    memory.let_go()
    assert sorted(jobs) == [2, 3]
    assert memory.job_with_key("alice", "k1") is None
    assert memory.job_with_key("alice", "k3") == 3
    let_go = _job(1, key="k1", state=JobState.COMPLETED)
    memory.remember(let_go)  # its key came again: the store's record is held again
    assert jobs[1] is let_go
    assert memory.knows_key("alice", "k1")


def test_a_job_requeued_after_finishing_is_not_let_go() -> None:
    jobs = {1: _job(1, state=JobState.NODE_FAIL), 2: _job(2, state=JobState.COMPLETED)}
    memory = JobMemory(jobs, keep=0)
    memory.finished(1)
    memory.finished(2)
    jobs[1].state = JobState.PENDING  # queued again: live
    memory.let_go()
    assert list(jobs) == [1]


def _policy(name: str = "conservative") -> LivePolicy:
    nodes = [NodeRecord(f"n{i}", {"cpus": 4}, NodeState.UP) for i in (1, 2)]
    return build_policy(Cluster(nodes), name, {})


def test_the_planner_defers_improvements_on_every_partition_it_installs() -> None:
    planner = Planner(_policy())
    planner.deferred = True
    short = _policy("easy")
    planner.install("short", short)
    assert short.deferred  # a partition made later defers too
    assert planner.default.policy.deferred
    replacement = _policy()
    planner.install(None, replacement)
    assert planner.default.policy is replacement
    assert replacement.deferred
    planner.drop("short")
    assert list(planner.lanes) == [None]


def test_the_planner_wakes_at_the_earliest_reservation_of_any_partition() -> None:
    planner = Planner(_policy())
    planner.install("other", _policy())
    assert planner.next_wakeup() is None
    planner.lanes[None].policy.submit(Job(1, 0, 100, {"cpus": 8}), 0)  # both nodes, now
    planner.lanes[None].policy.schedule(0)
    planner.lanes["other"].policy.submit(Job(2, 0, 50, {"cpus": 8}), 0)
    planner.lanes["other"].policy.schedule(0)
    planner.lanes["other"].policy.submit(Job(3, 0, 50, {"cpus": 8}), 0)  # reserved at 50
    assert planner.next_wakeup() == 50


def _parts(policy: str = "conservative") -> JobLifecycle:
    """The parts a lifecycle works over, on two 4-cpu nodes, wired by hand."""
    cluster = Cluster([NodeRecord(f"n{i}", {"cpus": 4}) for i in (1, 2)])
    book = JobBook()
    partitions = Partitions(cluster, book.jobs, policy, {})
    planner = Planner(build_policy(partitions.pool(), policy, {}))
    deps = Dependencies(book, partitions, planner)
    outbox = Outbox(EmulatedNodes())
    return JobLifecycle(book, cluster, partitions, deps, planner, outbox, JobMemory(book.jobs))


def _request(user: str = "alice", **fields: object) -> JobRequest:
    return JobRequest("t", user, {"cpus": 4}, 60, command="true", **fields)  # type: ignore[arg-type]


def test_the_book_finds_a_job_or_names_the_missing_id() -> None:
    book = JobBook()
    for job_id, task in ((7, 2), (5, 0), (6, 1)):
        book.jobs[job_id] = record = _job(job_id)
        record.array_job_id, record.array_task_id = 5, task
    assert book.job(6).id == 6
    assert [r.array_task_id for r in book.array_tasks(5)] == [0, 1, 2]
    with pytest.raises(RequestError) as missing:
        book.job(8)
    assert (missing.value.field, missing.value.message) == ("job_id", "no job 8")


def test_partitions_own_their_nodes_and_name_the_known_ones() -> None:
    cluster = Cluster([NodeRecord(f"n{i}", {"cpus": 4}) for i in (1, 2, 3)])
    partitions = Partitions(cluster, {}, "easy", {"selection": "bb"})
    partitions.backfill["p"] = BackfillSpec("p", ["n3"], "conservative")
    assert sorted(partitions.pool().nodes) == ["n1", "n2"]
    assert list(partitions.pool("p").nodes) == ["n3"]
    assert partitions.partition_of_node("n3") == "p"
    assert partitions.lane_of_node("n1") is None
    assert partitions.policy_spec(None) == ("easy", {"selection": "bb"})
    with pytest.raises(RequestError) as missing:
        partitions.partition("q")
    assert "known: default, p" in missing.value.message


def test_the_lifecycle_admits_plans_and_ends_a_job_through_the_parts() -> None:
    life = _parts()
    first = life.enter_job(_request(), 0)
    second = life.enter_job(_request(), 0)
    third = life.enter_job(_request(), 0)
    assert [r.id for r in (first, second, third)] == [1, 2, 3]
    assert list(life.pending) == [1, 2, 3]
    assert third.guaranteed_start == 60  # two 4-cpu nodes: the third waits for one
    assert life.counters["accepted"] == 3
    life.cancel_job(third.id, 1, "by alice")
    assert third.state is JobState.CANCELLED
    assert third.id not in life.pending
    kinds = [event.kind for event in life.outbox.take_events()]
    assert kinds.count("job.accepted") == 3
    assert kinds[-1] == "job.cancelled"


def test_the_lifecycle_never_accepts_a_deadline_its_policy_cannot_promise() -> None:
    life = _parts("easy")
    refused = life.enter_job(_request(deadline=600), 0)
    assert refused.state is JobState.REJECTED
    assert "policy easy makes no promises" in refused.state_reason


def test_dependencies_resolve_needs_and_refuse_another_users_job() -> None:
    life = _parts()
    first = life.enter_job(_request(), 0)
    needs, singleton = life.deps.needs_of(_request(dependency=f"afterok:{first.id}"), 2)
    assert [(n.kind, n.job_id) for n in needs] == [("afterok", first.id)]
    assert not singleton
    with pytest.raises(RequestError) as refused:
        life.deps.needs_of(_request("bob", dependency=f"afterok:{first.id}"), 2)
    assert "belongs to another user" in refused.value.message
    assert refused.value.field == "dependency"
