"""Node agents' endpoints: register, the level-triggered sync (a long poll), and status.

Only ``node`` tokens may call register and sync, each for its own node. A sync answer
is rendered at the end of the batch that took the report and sent once it committed;
when it tells the agent nothing new, it is held (up to the agent's ``wait``) until
something for that node commits: a start, a kill, a suspend or a resume.
"""

from __future__ import annotations

import statistics
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from berth.api.agent_schemas import AgentIn, AgentOut, AgentsOut, AgentStatus
from berth.api.deps import Daemon, DaemonDep, NodeOrAnyone, OperatorDep, PageDep
from berth.api.principals import Principal, Role
from berth.api.waiters import Waiters
from berth.service.agent_commands import AgentSync
from berth.service.engine import Engine
from berth.service.handlers.agents import AgentNodes, Synced, quiet, render_wish
from berth.service.model import RequestError

router = APIRouter(prefix="/v1/agents", tags=["agents"])


async def _node_principal(principal: NodeOrAnyone) -> Principal:
    if principal.role is not Role.NODE:
        raise RequestError(
            "forbidden",
            "only node tokens may call /v1/agents (an operator makes one with "
            "`berth admin node-token NAME`)",
        )
    return principal


NodeDep = Annotated[Principal, Depends(_node_principal)]


def _agents(daemon: Daemon) -> tuple[AgentNodes, Waiters]:
    if daemon.agents is None or daemon.waiters is None:
        raise RequestError(
            "conflict",
            "this daemon runs emulated nodes; start it with `berth serve --agents`",
            "path",
        )
    return daemon.agents, daemon.waiters


async def _exchange(daemon: Daemon, who: Principal, body: AgentIn, register: bool) -> AgentOut:
    if who.user != body.name:
        raise RequestError(
            "forbidden", f"this token belongs to node {who.user!r}, not {body.name!r}", "name"
        )
    agents, waiters = _agents(daemon)
    since = waiters.version(body.name)

    def render(synced: Synced) -> tuple[Synced, dict[str, Any]]:
        return synced, render_wish(daemon.engine, agents, synced)

    command = AgentSync(agents, body.report(register), time.monotonic())
    synced, answer = await daemon.coordinator.call(command, render)
    if body.wait > 0 and quiet(answer, synced):
        await waiters.wait(body.name, since, body.wait)
        if waiters.version(body.name) != since:
            answer = await daemon.coordinator.read(
                lambda engine: render_wish(engine, agents, synced)
            )
    return AgentOut.model_validate(answer)


@router.post(
    "/register",
    response_model=AgentOut,
    summary="An agent (re)starts: its node, resources, boot id and the jobs it holds",
)
async def register(body: AgentIn, daemon: DaemonDep, who: NodeDep) -> AgentOut:
    return await _exchange(daemon, who, body, register=True)


@router.post(
    "/sync",
    response_model=AgentOut,
    summary="The node's truth in, the daemon's wish out; held open while nothing changes",
)
async def sync(body: AgentIn, daemon: DaemonDep, who: NodeDep) -> AgentOut:
    return await _exchange(daemon, who, body, register=False)


def _percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


@router.get("", response_model=AgentsOut, summary="Each node's agent, and launch delays")
async def status(daemon: DaemonDep, _: OperatorDep, page: PageDep) -> AgentsOut:
    agents, _waiters = _agents(daemon)
    seen = time.monotonic()

    def view(engine: Engine) -> AgentsOut:
        rows = []
        nodes = sorted(engine.cluster.nodes.items())
        for name, node in page.of(nodes):
            link = agents.links.get(name)
            rows.append(
                AgentStatus(
                    name=name,
                    state=node.state.value,
                    reason=node.reason,
                    boot_id=link.boot_id if link is not None else "",
                    seconds_since_heard=None if link is None else round(seen - link.last_seen, 3),
                    running_jobs=sum(1 for r in engine.running.values() if name in r.allocation),
                    confinement=link.confinement if link is not None else "",
                )
            )
        delays = sorted(agents.launch_delays)
        summary: dict[str, float | int] = {"count": len(delays)}
        if delays:
            summary.update(
                p50=statistics.median(delays),
                p99=_percentile(delays, 0.99),
                max=delays[-1],
            )
        return AgentsOut(agents=rows, total=len(nodes), launch_delay_seconds=summary)

    return await daemon.coordinator.read(view)
