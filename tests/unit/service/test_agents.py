"""The sync protocol on the daemon's side, without HTTP: registration, the wish, ends,
lost jobs, requeue, silence and bad reports."""

from __future__ import annotations

from typing import Any

import pytest

from berth.service.agent_commands import AgentSync, ExpireAgents, ResizeAgents, ReturnAgents
from berth.service.engine import Engine
from berth.service.handlers import job_commands
from berth.service.handlers.agents import (
    JOINING,
    SILENT,
    AgentNodes,
    AgentReport,
    AgentSettings,
    JobReport,
    quiet,
    render_wish,
)
from berth.service.model import JobRequest, JobState, RequestError
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine

NODE = {"cpus": 2, "mem_gb": 4}


class Wall:
    def __init__(self) -> None:
        self.time = 1000.0

    def __call__(self) -> float:
        return self.time


def setup(count: int = 2) -> tuple[Engine, AgentNodes, Wall]:
    wall = Wall()
    agents = AgentNodes(AgentSettings(node_timeout=60.0), wall=wall)
    engine = restore_engine(Snapshot(), agents, 0, [], "conservative", {})
    for number in range(count):
        sync(engine, agents, f"n{number + 1}", register=True)
    with engine.batch(0):  # (new nodes join together: one replan, off the loop in a daemon)
        ReturnAgents(agents, 0.0).apply(engine, 0)
    return engine, agents, wall


def sync(
    engine: Engine,
    agents: AgentNodes,
    name: str,
    *jobs: JobReport,
    register: bool = False,
    now: int = 0,
    seen: float = 0.0,
    boot: str = "boot",
) -> dict[str, Any]:
    report = AgentReport(name, boot, dict(NODE), tuple(jobs), register)
    with engine.batch(now):
        synced = AgentSync(agents, report, seen).apply(engine, now)
    engine.outbox.dispatch()
    return render_wish(engine, agents, synced)


def counted_replans(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The replans ``engine`` makes from now on (their arguments), as they are made."""
    replans: list[object] = []
    original = engine.replan

    def counted(*args: Any, **named: Any) -> Any:
        replans.append(args)
        return original(*args, **named)

    monkeypatch.setattr(engine, "replan", counted)
    return replans


def submit(engine: Engine, cpus: int = 1, requeue: bool = False, now: int = 0) -> int:
    request = JobRequest("t", "alice", {"cpus": cpus, "mem_gb": cpus}, 100, command="true",
                         requeue=requeue)  # fmt: skip
    record, _ = job_commands.submit(engine, request, now)
    engine.outbox.dispatch()
    return record.id


def test_registration_adds_nodes_and_a_job_is_wished_on_its_first_node_only() -> None:
    engine, agents, _ = setup()
    assert sorted(engine.cluster.nodes) == ["n1", "n2"]
    job = submit(engine, cpus=4)  # both nodes, whole
    record = engine.jobs[job]
    assert record.state is JobState.RUNNING
    first, other = list(record.allocation)
    wish = sync(engine, agents, first)
    (order,) = wish["jobs"]
    assert order["run"] is True
    assert order["nodes"] == [first, other]
    assert order["cpus"] == 2
    (held,) = sync(engine, agents, other)["jobs"]
    assert held["run"] is False


def test_a_share_not_yet_held_or_no_longer_wished_ends_the_long_poll() -> None:
    """The other node of a multi-node job holds its share: its long poll is answered at
    once while the share it reports is not the one wished for, and held when it is."""
    engine, agents, _ = setup()
    job = submit(engine, cpus=4)  # both nodes, whole
    _first, other = list(engine.jobs[job].allocation)

    def answer(shares: dict[str, bool] | None, now: int = 0) -> bool:
        report = AgentReport(other, "boot", dict(NODE), (), shares=shares)
        with engine.batch(now):
            synced = AgentSync(agents, report, 0).apply(engine, now)
        return quiet(render_wish(engine, agents, synced), synced)

    assert not answer({})  # the share is not held yet: answer now
    assert answer({f"{job}.0": False})
    assert not answer({f"{job}.0": True})  # held suspended, wished running
    assert answer(None)  # an agent that does not report shares: as before
    with engine.batch(1):
        job_commands.cancel(engine, job, 1, "cancelled by alice")
    engine.outbox.dispatch()
    assert not answer({f"{job}.0": False}, now=1)  # held, no longer wished: release it
    assert answer({}, now=1)


def test_ends_are_recorded_and_acknowledged_and_running_reports_date_the_launch() -> None:
    engine, agents, wall = setup(1)
    job = submit(engine)
    wall.time = 1000.25
    sync(engine, agents, "n1", JobReport(job, 0, "RUNNING", started_at=1000.1))
    assert engine.jobs[job].launched_at == 1000.1
    assert list(agents.launch_delays) == [pytest.approx(0.1)]
    wish = sync(engine, agents, "n1", JobReport(job, 0, "FAILED", "exited with status 2", 2),
                now=5)  # fmt: skip
    record = engine.jobs[job]
    assert record.state is JobState.FAILED
    assert record.exit_code == 2
    assert record.end_time == 5
    assert wish["acknowledged"] == [f"{job}.0"]
    assert wish["jobs"] == []


def test_a_launched_job_the_agent_no_longer_holds_is_lost_and_requeued() -> None:
    engine, agents, _ = setup(1)
    plain, again = submit(engine), submit(engine, requeue=True)
    running = (JobReport(plain, 0, "RUNNING", started_at=1.0),
               JobReport(again, 0, "RUNNING", started_at=1.0))  # fmt: skip
    sync(engine, agents, "n1", *running)
    sync(engine, agents, "n1", register=True, boot="after-reboot", seen=100.0, now=10)
    assert engine.jobs[plain].state is JobState.NODE_FAIL
    requeued = engine.jobs[again]
    assert requeued.requeued == 1
    assert requeued.state is JobState.RUNNING  # the node is free again: attempt 1 runs
    (order,) = sync(engine, agents, "n1", boot="after-reboot", now=10)["jobs"]
    assert (order["job_id"], order["attempt"]) == (again, 1)


def test_a_job_not_yet_seen_running_is_not_lost() -> None:
    engine, agents, _ = setup(1)
    job = submit(engine)
    wish = sync(engine, agents, "n1")  # the agent has not started it yet
    assert engine.jobs[job].state is JobState.RUNNING
    assert not quiet(wish, AgentSync(agents, AgentReport("n1", "boot", NODE, ()), 0).apply(
        engine, 0))  # fmt: skip


def test_reports_of_jobs_never_placed_there_are_refused_whole() -> None:
    engine, agents, _ = setup(2)
    job = submit(engine)
    (node,) = engine.jobs[job].allocation
    elsewhere = "n2" if node == "n1" else "n1"
    with pytest.raises(RequestError) as refused:
        sync(
            engine, agents, elsewhere, JobReport(job, 0, "COMPLETED"), JobReport(999, 0, "RUNNING")
        )
    assert refused.value.code == "conflict"
    assert refused.value.extra["unknown_jobs"] == [f"{job}.0", "999.0"]
    assert engine.jobs[job].state is JobState.RUNNING


def test_an_unregistered_agent_must_register_and_another_boot_id_is_refused() -> None:
    engine, agents, _ = setup(1)
    with pytest.raises(RequestError) as unknown:
        sync(engine, agents, "n1", boot="other")
    assert unknown.value.extra == {"register": True}
    with pytest.raises(RequestError) as taken:
        sync(engine, agents, "n1", register=True, boot="other", seen=10.0)
    assert "served by another agent" in taken.value.message
    # Once the first agent has been silent past the timeout, the new one takes over.
    sync(engine, agents, "n1", register=True, boot="other", seen=61.0)
    assert agents.links["n1"].boot_id == "other"


def test_silence_takes_the_node_down_and_talking_brings_it_back() -> None:
    engine, agents, _ = setup(2)
    job = submit(engine, requeue=True)
    (node,) = engine.jobs[job].allocation
    sync(engine, agents, node, JobReport(job, 0, "RUNNING", started_at=1.0), seen=0.0)
    other = "n2" if node == "n1" else "n1"
    sync(engine, agents, other, seen=59.0)
    with engine.batch(60):
        downed = ExpireAgents(agents, 61.0).apply(engine, 60)
    assert downed == [node]
    assert engine.cluster.nodes[node].reason.startswith(SILENT)
    assert engine.jobs[job].requeued == 1
    assert engine.jobs[job].allocation == {other: {"cpus": 1, "mem_gb": 1}}
    # The silent agent talks again: its node comes back (with the next check of the
    # agents, in one change with any others back by then); its old attempt is not wished for.
    wish = sync(engine, agents, node, JobReport(job, 0, "RUNNING"), seen=70.0, now=70)
    assert wish["jobs"] == []
    assert wish["acknowledged"] == []  # still running there: the agent cancels, then reports
    assert agents.returning == {node}
    with engine.batch(72):
        assert ReturnAgents(agents, 72.0).apply(engine, 72) == [node]
    assert engine.cluster.nodes[node].state.value == "up"
    assert agents.returning == set()


def test_agents_silent_together_take_their_nodes_down_in_one_replan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rack's agents falling silent together: one replan, not one per node (seconds
    each on a large cluster, on the event loop); each node says how long its agent was
    silent."""
    engine, agents, _ = setup(3)
    for name, seen in (("n1", 0.0), ("n2", 10.0), ("n3", 59.0)):
        sync(engine, agents, name, seen=seen)
    replans = counted_replans(engine, monkeypatch)
    with engine.batch(70):
        downed = ExpireAgents(agents, 71.0).apply(engine, 70)
    assert downed == ["n1", "n2"]
    assert len(replans) == 1
    reasons = [engine.cluster.nodes[name].reason for name in ("n1", "n2", "n3")]
    assert reasons == [f"{SILENT} for 71 s", f"{SILENT} for 61 s", ""]


def test_agents_talking_again_bring_their_nodes_back_in_one_replan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rack's agents coming back: one replan off the event loop, not one per sync on
    it (ten returning agents on 4,096 nodes: 9.1 s of the loop one by one, 0.56 s
    together); a node whose agent fell silent again meanwhile stays down."""
    engine, agents, _ = setup(4)
    with engine.batch(70):
        ExpireAgents(agents, 71.0).apply(engine, 70)
    replans = counted_replans(engine, monkeypatch)
    for name, seen in (("n1", 80.0), ("n2", 80.0), ("n3", 81.0), ("n4", 81.0)):
        sync(engine, agents, name, seen=seen, now=80)
    assert agents.returning == {"n1", "n2", "n3", "n4"}
    assert engine.cluster.nodes["n1"].state.value == "down"  # (until the check)
    assert not replans  # (a sync, in the writer on the loop, replans nothing)
    with engine.batch(140):  # n1, n2 last talked 60 s ago: silent again
        assert ReturnAgents(agents, 140.0).apply(engine, 140) == ["n3", "n4"]
    assert len(replans) == 1
    states = [engine.cluster.nodes[name].state.value for name in ("n1", "n2", "n3", "n4")]
    assert states == ["down", "down", "up", "up"]
    assert agents.returning == set()


def test_new_agents_registering_join_the_plan_together_in_one_replan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A center's bring-up: each registration used to replan on the loop, and a
    replan's cost grows with the nodes (4,096 registering one by one: 72 s). They are
    added down, joining, and come up together."""
    engine, agents, _ = setup(1)
    replans = counted_replans(engine, monkeypatch)
    woken: list[bool] = []
    agents.on_return = lambda: woken.append(True)
    for name in ("n2", "n3", "n4"):
        sync(engine, agents, name, register=True, seen=5.0, now=5)
    assert not replans
    assert woken == [True, True, True]  # (the daemon's watch runs the change at once)
    joining = {engine.cluster.nodes[name].reason for name in ("n2", "n3", "n4")}
    assert joining == {JOINING}
    with engine.batch(5):
        assert ReturnAgents(agents, 5.0).apply(engine, 5) == ["n2", "n3", "n4"]
    assert len(replans) == 1
    assert {node.state.value for node in engine.cluster.nodes.values()} == {"up"}
    wide = submit(engine, cpus=8, now=5)  # every node's two cpus
    assert engine.jobs[wide].state is JobState.RUNNING


def test_agents_registering_with_other_resources_resize_their_nodes_in_one_replan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A center's agents restarted with another configuration: each registration used
    to resize its node with a replan on the loop (1.5-10 s apiece on 4,096 nodes). They
    are noted, the nodes planned as they were meanwhile, and resized together in one
    replan off the loop; an agent back to its node's resources before then drops its
    note."""
    engine, agents, _ = setup(3)
    replans = counted_replans(engine, monkeypatch)
    woken: list[bool] = []
    agents.on_return = lambda: woken.append(True)
    larger = {"cpus": 8, "mem_gb": 16}
    for name, resources in (("n1", larger), ("n2", larger), ("n3", larger), ("n3", NODE)):
        with engine.batch(5):
            AgentSync(agents, AgentReport(name, "boot", resources, (), True), 5.0).apply(engine, 5)
    assert not replans  # (a registration, in the writer on the loop, replans nothing)
    assert woken == [True, True, True]  # (the daemon's watch runs the change at once)
    assert agents.resizing == {"n1": larger, "n2": larger}
    assert engine.cluster.nodes["n1"].resources == NODE  # (until the change)
    engine.outbox.take_events()
    with engine.batch(6):
        assert ResizeAgents(agents, 6.0).apply(engine, 6) == ["n1", "n2"]
    assert len(replans) == 1
    assert agents.resizing == {}
    sizes = [engine.cluster.nodes[name].resources for name in ("n1", "n2", "n3")]
    assert sizes == [larger, larger, NODE]
    resized = [(e.node, e.detail["before"]) for e in engine.outbox.take_events()
               if e.kind == "node.resized"]  # fmt: skip
    assert resized == [("n1", NODE), ("n2", NODE)]
    wide = submit(engine, cpus=18, now=6)  # (every cpu of the three: 8 + 8 + 2)
    assert engine.jobs[wide].state is JobState.RUNNING
    with engine.batch(7):  # (nothing noted since: nothing to do)
        assert ResizeAgents(agents, 7.0).apply(engine, 7) == []
    assert len(replans) == 1


def test_a_registration_with_no_resource_is_refused_and_changes_nothing() -> None:
    engine, agents, _ = setup(1)
    for resources in ({}, {"cpus": 0, "mem_gb": 4}):
        report = AgentReport("n1", "boot", resources, (), True)
        refused = pytest.raises(RequestError, match="positive amount of each resource")
        with refused, engine.batch(1):
            AgentSync(agents, report, 1.0).apply(engine, 1)
    assert agents.resizing == {}
    assert engine.cluster.nodes["n1"].resources == NODE


@pytest.mark.parametrize("resources", [{"cpus": 2, "mem_gb": 4}, {"cpus": 2, "gpus": 1}])
def test_a_job_only_joining_nodes_could_hold_waits_for_them(resources: dict[str, int]) -> None:
    """Between a registration and the change that brings the node up, a job that only
    the joining node makes possible waits for it (counted by the policy, or the policy
    rebuilt when the node has a resource it did not know): it is not refused."""
    engine, agents, _ = setup(1)
    report = AgentReport("n2", "boot", resources, (), True)
    with engine.batch(1):
        AgentSync(agents, report, 1.0).apply(engine, 1)
    needs = {"cpus": 4} if "gpus" not in resources else {"cpus": 1, "gpus": 1}
    request = JobRequest("t", "alice", needs, 100, command="true")
    record, _ = job_commands.submit(engine, request, 1)
    assert record.state is JobState.PENDING
    assert record.state_reason.startswith("waits for nodes that are drained or down")
    with engine.batch(2):
        assert ReturnAgents(agents, 2.0).apply(engine, 2) == ["n2"]
    assert record.state is JobState.RUNNING


def test_a_job_that_started_and_ended_between_two_syncs_still_counts_its_launch() -> None:
    engine, agents, wall = setup(1)
    job = submit(engine)
    wall.time = 1002.0
    sync(engine, agents, "n1", JobReport(job, 0, "COMPLETED", "", 0, started_at=1000.4), now=2)
    assert engine.jobs[job].state is JobState.COMPLETED
    assert list(agents.launch_delays) == [pytest.approx(0.4)]
