"""Node agents as seen by the daemon: the node backend they form, and their sync.

An agent reports the whole truth of its node (every job attempt it holds, running or
ended); the daemon answers the whole wish (every job that should run there). This module
turns a report into engine changes and renders the wish:

* a report naming a job the daemon never placed on that node is refused as a whole
  (409 listing the attempts; nothing changes) and the agent cancels those;
* an end reported for the attempt that runs is handed to the engine (``COMPLETED``,
  ``FAILED`` with its exit status, ``TIMEOUT``, ``CANCELLED``, ``NODE_FAIL``); every
  end the daemon holds as final is acknowledged, so the agent may forget it;
* a job the agent once reported running and no longer holds is lost (``NODE_FAIL``):
  this is how a host restart shows, and nothing is ever started twice;
* a node whose agent is silent for ``node_timeout`` goes down (its jobs end
  ``NODE_FAIL``, requeued if they asked); after a daemon restart every node gets
  ``startup_grace`` to report before that. When its agent talks again the node is
  noted in ``returning`` and comes back up with the others that talked meanwhile, in
  one replan made off the event loop (:class:`~berth.service.agent_commands.ReturnAgents`):
  a rack's agents coming back one replan each held the loop about a second apiece on
  4,096 nodes. A new node's agent registering adds it ``down`` (``JOINING``) and notes
  it the same way: 4,096 agents registering one replan each took 72 s. An agent that
  registers with other resources (restarted with another configuration) is noted in
  ``resizing``, and its node resized with the others noted meanwhile, in one replan off
  the loop (:class:`~berth.service.agent_commands.ResizeAgents`).

:class:`AgentNodes` is the engine's node backend: intents only wake the long polls of
the nodes they concern, because what a node should run is read from the committed jobs.
No I/O here: wall time comes in from the caller (``seen_at``) or an injected clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from berth.service.handlers import node_commands
from berth.service.model import JobRecord, JobState, NodeState, RequestError
from berth.service.ports import Ended

if TYPE_CHECKING:
    from berth.service.engine import Engine

#: The reason a node went down for a silent agent (such a node comes back by itself when
#: its agent registers again; a node an operator marked down does not).
SILENT = "its agent was silent"
#: The reason of a new node whose agent registered, until it joins the plan (with the
#: other nodes that registered meanwhile: one replan for a rack's, not one each).
JOINING = "joining: its agent registered"
#: States an agent may report for a job attempt it holds.
HELD_STATES = frozenset({"RUNNING", "SUSPENDED"})
END_STATES = {
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
    "TIMEOUT": JobState.TIMEOUT,
    "CANCELLED": JobState.CANCELLED,
    "NODE_FAIL": JobState.NODE_FAIL,
    "OUT_OF_MEMORY": JobState.OUT_OF_MEMORY,
}


@dataclass(frozen=True, slots=True)
class AgentSettings:
    sync_wait: float = 10.0  # longest a sync is held open when nothing changes
    node_timeout: float = 60.0  # a silent agent's node goes down after this
    startup_grace: float = 300.0  # after a daemon start, before silence counts
    fence_seconds: float = 1800.0  # an agent cut off this long cancels its jobs
    kill_grace: float = 30.0  # SIGTERM to SIGKILL

    def for_agents(self) -> dict[str, float]:
        return {
            "sync_wait": self.sync_wait,
            "fence_seconds": self.fence_seconds,
            "kill_grace": self.kill_grace,
        }


@dataclass(frozen=True, slots=True)
class JobReport:
    job_id: int
    attempt: int
    state: str
    reason: str = ""
    exit_code: int | None = None
    signal: int | None = None
    started_at: float | None = None
    usage: dict[str, float] | None = None

    @property
    def key(self) -> str:
        return f"{self.job_id}.{self.attempt}"


@dataclass(frozen=True, slots=True)
class AgentReport:
    """One register or sync request, checked for shape by the API layer."""

    name: str
    boot_id: str
    resources: dict[str, int]
    jobs: tuple[JobReport, ...]
    register: bool = False
    #: How the agent confines jobs (``cgroup v1: cpuset, memory, ...``, ``unconfined: ...``).
    confinement: str = ""
    #: The shares of jobs run by another node that it holds (key -> suspended); None
    #: from an agent that does not report them.
    shares: dict[str, bool] | None = None


@dataclass(slots=True)
class AgentLink:
    """What the daemon knows of one node's agent."""

    boot_id: str  # "" until an agent registers after a daemon start
    last_seen: float
    confinement: str = ""


@dataclass(slots=True)
class AgentNodes:
    """The node backend of a cluster run by agents (a :class:`NodeBackend`)."""

    settings: AgentSettings
    wall: Callable[[], float]
    #: Agents run real processes: intents wait for their commit.
    in_process: ClassVar[bool] = False
    links: dict[str, AgentLink] = field(default_factory=dict)
    #: Ends reported by agents, for the engine's next step.
    ended: list[Ended] = field(default_factory=list)
    #: Called with the nodes whose wish changed, once their intents are committed.
    on_change: Callable[[Iterable[str]], None] | None = None
    #: When each start was committed (wall time), until the agent reports it running.
    dispatched: dict[int, float] = field(default_factory=dict)
    #: Seconds from a start's commit to its process running, newest last.
    launch_delays: deque[float] = field(default_factory=lambda: deque(maxlen=100_000))
    #: Attempts placed on each node by this daemon run (a requeued job's old node may
    #: still report its old attempt).
    placed: dict[str, set[str]] = field(default_factory=dict)
    #: Nodes down for a silent agent whose agent talks again, or new ones joining, to
    #: bring up; ``on_return`` is called when one is noted (the shell's wake-up).
    returning: set[str] = field(default_factory=set)
    #: Nodes whose agent registered with other resources, to resize (the newest
    #: resources each); ``on_return`` is called when one is noted, as for ``returning``.
    resizing: dict[str, dict[str, int]] = field(default_factory=dict)
    on_return: Callable[[], None] | None = None
    _nodes_of: dict[int, list[str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ NodeBackend
    def _changed(self, nodes: Iterable[str]) -> None:
        if self.on_change is not None:
            self.on_change(nodes)

    def start(self, job: JobRecord, now: int) -> None:
        self._nodes_of[job.id] = list(job.allocation)
        self.dispatched[job.id] = self.wall()
        for node in job.allocation:
            self.placed.setdefault(node, set()).add(f"{job.id}.{job.requeued}")
        self._changed(job.allocation)

    def adopt(self, job: JobRecord, now: int) -> None:
        self._nodes_of[job.id] = list(job.allocation)

    def _signal(self, job_id: int) -> None:
        self._changed(self._nodes_of.get(job_id, ()))

    def kill(self, job_id: int, now: int) -> None:
        self._signal(job_id)
        self.dispatched.pop(job_id, None)

    def suspend(self, job_id: int, now: int) -> None:
        self._signal(job_id)

    def resume(self, job_id: int, now: int) -> None:
        self._signal(job_id)

    def finished(self, now: int) -> list[Ended]:
        ended, self.ended = self.ended, []
        return ended

    def next_event(self) -> int | None:
        return None  # agents report ends; the daemon never predicts them

    # ------------------------------------------------------------------ liveness
    def restarted(self, nodes: Iterable[str], seen_at: float) -> None:
        """After a daemon start: every known node has ``startup_grace`` to report."""
        first_check = seen_at + self.settings.startup_grace - self.settings.node_timeout
        for node in nodes:
            self.links[node] = AgentLink("", first_check)

    def note_returning(self, name: str) -> None:
        self.returning.add(name)
        if self.on_return is not None:
            self.on_return()

    def note_resizing(self, name: str, resources: dict[str, int]) -> None:
        self.resizing[name] = dict(resources)
        if self.on_return is not None:
            self.on_return()

    def resized(self, engine: Engine, seen_at: float) -> dict[str, dict[str, int]]:
        """Of ``resizing``, the nodes that still exist and whose resources still differ,
        with their new resources (``seen_at``: unused, as the other checks take it)."""
        nodes = engine.cluster.nodes
        return {
            name: resources
            for name, resources in sorted(self.resizing.items())
            if name in nodes and nodes[name].resources != resources
        }

    def returned(self, engine: Engine, seen_at: float) -> list[str]:
        """Of ``returning``, the nodes still down for a silent agent (or joining) whose
        agent has talked within the timeout (in order of name)."""
        found = []
        for name in sorted(self.returning):
            node, link = engine.cluster.nodes.get(name), self.links.get(name)
            if node is None or link is None or node.state is not NodeState.DOWN:
                continue
            talked = seen_at - link.last_seen < self.settings.node_timeout
            if talked and node.reason.startswith((SILENT, JOINING)):
                found.append(name)
        return found

    def silent(self, engine: Engine, seen_at: float) -> list[tuple[str, float]]:
        """Nodes still up whose agent has been silent past the timeout, with for how long."""
        found = []
        for name, link in self.links.items():
            node = engine.cluster.nodes.get(name)
            quiet = seen_at - link.last_seen
            up = node is not None and node.state is not NodeState.DOWN
            if up and quiet > self.settings.node_timeout:
                found.append((name, quiet))
        return found


# ---------------------------------------------------------------------- the sync
@dataclass(frozen=True, slots=True)
class Synced:
    """What a sync changed, for rendering the answer at the end of its batch."""

    node: str
    reported: dict[str, JobReport]
    #: The shares the agent holds (key -> suspended), None if it does not say.
    shares: dict[str, bool] | None = None


def first_node(record: JobRecord) -> str | None:
    """The node that runs the batch command (the first of the allocation)."""
    return next(iter(record.allocation), None)


def _unknown(engine: Engine, agents: AgentNodes, report: AgentReport) -> list[str]:
    """Attempts the report names that the daemon never placed on this node."""
    placed_here = agents.placed.get(report.name, set())
    unknown = []
    for job in report.jobs:
        record = engine.jobs.get(job.job_id)
        if record is None:
            unknown.append(job.key)
        elif job.key in placed_here:
            continue
        elif job.attempt != record.requeued or report.name not in record.allocation:
            unknown.append(job.key)
    return unknown


def _count_launch(agents: AgentNodes, job_id: int, started_at: float | None) -> None:
    """The launch delay of a job the daemon sent, once its agent reports when it started:
    in a report of it running, or of its end when it started and ended between two syncs
    (counting only the first kind would drop the slowest launches of short jobs)."""
    if started_at is not None and job_id in agents.dispatched:
        sent = agents.dispatched.pop(job_id)
        agents.launch_delays.append(max(started_at - sent, 0.0))


def _check_agent(engine: Engine, agents: AgentNodes, report: AgentReport, seen_at: float) -> None:
    link = agents.links.get(report.name)
    if not report.register:
        if link is None or link.boot_id != report.boot_id:
            raise RequestError(
                "conflict",
                f"node {report.name!r} is not registered with this daemon; register",
                "name",
                {"register": True},
            )
        return
    if link is None or link.boot_id in ("", report.boot_id):
        return
    node = engine.cluster.nodes.get(report.name)
    quiet = seen_at - link.last_seen
    if (
        node is not None
        and node.state is not NodeState.DOWN
        and quiet < agents.settings.node_timeout
    ):
        raise RequestError(
            "conflict",
            f"node {report.name!r} is served by another agent (boot id {link.boot_id}, "
            f"heard {quiet:.0f} s ago); a new one is accepted once that one has been silent "
            f"for {agents.settings.node_timeout:.0f} s",
            "boot_id",
        )


def _register_node(engine: Engine, agents: AgentNodes, report: AgentReport, now: int) -> None:
    """The node as the agent describes it: added, noted for a resize, or back from
    silence. A resize is made with the others noted meanwhile, in one replan off the
    event loop (:class:`~berth.service.agent_commands.ResizeAgents`); until then the node is
    planned with the resources it had."""
    node = engine.cluster.nodes.get(report.name)
    if node is None:  # (brought up with the others registering meanwhile: one replan)
        node_commands.add_joining_node(engine, report.name, report.resources, now, JOINING)
        return
    if node.resources != report.resources:
        node_commands.check_resources(report.resources)
        agents.note_resizing(report.name, report.resources)
    else:
        agents.resizing.pop(report.name, None)  # (back as it was: nothing to resize)


def apply_report(
    engine: Engine, agents: AgentNodes, report: AgentReport, now: int, seen_at: float
) -> Synced:
    """Take one register or sync request into the engine (see the module docstring)."""
    unknown = _unknown(engine, agents, report)
    if unknown:
        raise RequestError(
            "conflict",
            f"node {report.name!r} reports job attempts this daemon never placed there: "
            + ", ".join(unknown[:20]),
            "jobs",
            {"unknown_jobs": unknown},
        )
    _check_agent(engine, agents, report, seen_at)
    if report.register:
        _register_node(engine, agents, report, now)
    node = engine.cluster.nodes[report.name]
    if node.state is NodeState.DOWN and node.reason.startswith((SILENT, JOINING)):
        agents.note_returning(report.name)  # its agent talks: up with the next change
    agents.links[report.name] = AgentLink(report.boot_id, seen_at, report.confinement)
    reported = {job.key: job for job in report.jobs}
    for record in list(engine.running.values()):
        if first_node(record) != report.name:
            continue
        job = reported.get(f"{record.id}.{record.requeued}")
        if job is None:
            if record.launched_at is not None:
                agents.ended.append(
                    Ended(
                        record.id,
                        now,
                        JobState.NODE_FAIL,
                        f"lost: the agent on {report.name} no longer holds it (host restart?)",
                    )
                )
            continue
        _count_launch(agents, record.id, job.started_at)
        if job.state in HELD_STATES:
            if record.launched_at is None:
                record.launched_at = job.started_at or agents.wall()
                engine.outbox.job_changed(record)
        else:
            agents.dispatched.pop(record.id, None)
            agents.ended.append(
                Ended(
                    record.id,
                    now,
                    END_STATES[job.state],
                    job.reason or job.state.lower(),
                    job.exit_code,
                    job.signal,
                    job.usage,
                )
            )
    if agents.ended:
        engine.advance(now)
    return Synced(report.name, reported, report.shares)


def render_wish(engine: Engine, agents: AgentNodes, synced: Synced) -> dict[str, Any]:
    """The answer: every job that should be on the node, acknowledged ends, settings."""
    node = synced.node
    orders = []
    for record in engine.running.values():
        share = record.allocation.get(node)
        if share is None:
            continue
        runs_here = first_node(record) == node
        order = {
            "job_id": record.id,
            "attempt": record.requeued,
            "run": runs_here,
            "suspended": record.suspended_at is not None,
            "name": record.name,
            "user": record.user,
            "command": record.command,
            "time_limit": record.time_limit,
            "submit_time": record.submit_time,
            "nodes": list(record.allocation),
            "cpus": share.get("cpus", 0),
            "mem_gb": share.get("mem_gb", 0),
            "gpus": share.get("gpus", 0),
            "chdir": record.chdir,
            "output": record.output,
            "error": record.error,
        }
        if record.array_job_id is not None:
            order["array_job_id"] = record.array_job_id
            order["array_task_id"] = record.array_task_id
        if record.script is not None and runs_here:
            order["argv"] = list(record.argv or ())
            # The script only until the agent holds the job (every answer repeats the
            # whole wish; a script can be 64 KiB).
            if f"{record.id}.{record.requeued}" not in synced.reported:
                order["script"] = record.script
        orders.append(order)
    acknowledged = []
    for key, job in synced.reported.items():
        if job.state in HELD_STATES:
            continue
        held = engine.jobs.get(job.job_id)
        if held is None or held.state is not JobState.RUNNING or held.requeued != job.attempt:
            acknowledged.append(key)
            # Done with it here (a repeat after a lost answer is still recognised by the
            # job's own allocation), so the memory of placements does not grow forever.
            agents.placed.get(node, set()).discard(key)
    return {
        "node": node,
        "jobs": orders,
        "acknowledged": acknowledged,
        "settings": agents.settings.for_agents(),
    }


def quiet(answer: dict[str, Any], synced: Synced) -> bool:
    """Whether the answer tells the agent nothing it does not already do: the jobs it
    runs and the shares it holds (the other nodes of a job's allocation) are the ones
    wished for, suspended as wished."""
    if answer["acknowledged"]:
        return False
    held = {k: j.state == "SUSPENDED" for k, j in synced.reported.items() if j.state in HELD_STATES}
    wanted: dict[str, bool] = {}
    shared: dict[str, bool] = {}
    for order in answer["jobs"]:
        key = f"{order['job_id']}.{order['attempt']}"
        (wanted if order["run"] else shared)[key] = order["suspended"]
    return held == wanted and (synced.shares is None or synced.shares == shared)
