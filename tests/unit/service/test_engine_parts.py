"""The engine's parts on their own: the outbox (what the shell commits and sends), the
memory of finished jobs and the planner (the partitions' timelines)."""

from __future__ import annotations

from berth.core.model import Job
from berth.core.policies.base import LivePolicy
from berth.dispatch.emulated import EmulatedNodes
from berth.service.agents import AgentNodes, AgentSettings
from berth.service.cluster import Cluster
from berth.service.intents import StartOn
from berth.service.job_memory import JobMemory
from berth.service.model import JobRecord, JobRequest, JobState, NodeRecord, NodeState
from berth.service.outbox import Outbox
from berth.service.planner import Planner
from berth.service.replan import build_policy


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
