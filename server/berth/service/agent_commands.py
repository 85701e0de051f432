"""The typed commands of node agents: a register or sync, and the changes the daemon's
watch of its agents makes (nodes of silent agents down, resized, back up).

Each of the last three is a :class:`~berth.service.commands.Prepared` command that
handles every node it concerns at once, with one replan made off the event loop (a
rack's agents one by one were a replan each on the loop, seconds apiece on 4,096 nodes).
No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from berth.service.commands import PrepareThenApply
from berth.service.handlers import node_commands
from berth.service.handlers.agents import SILENT, AgentNodes, AgentReport, Synced, apply_report
from berth.service.handlers.node_commands import NodeChange, NodesDown, NodesResized

if TYPE_CHECKING:
    from berth.service.engine import Engine


@dataclass(frozen=True, slots=True)
class AgentSync:
    """A node agent's register or sync request (``seen_at``: wall time it arrived)."""

    agents: AgentNodes = field(compare=False)
    report: AgentReport
    seen_at: float

    def apply(self, engine: Engine, now: int) -> Synced:
        return apply_report(engine, self.agents, self.report, now, self.seen_at)


@dataclass(frozen=True, slots=True)
class ExpireAgents(PrepareThenApply[NodesDown | None, list[str]]):
    """Take down the nodes whose agent has been silent past the timeout; the result is
    their names. A :class:`Prepared` command, as :class:`MarkNodesDown`."""

    agents: AgentNodes = field(compare=False)
    seen_at: float

    def prepare(self, engine: Engine, now: int) -> NodesDown | None:
        # All at once: one replan (a rack's agents falling silent together were a replan
        # each, seconds apiece on a large cluster, all on the event loop). The agents'
        # links change only in the writer's commands, so reading them here is safe.
        reasons = {
            name: f"{SILENT} for {quiet:.0f} s"
            for name, quiet in self.agents.silent(engine, self.seen_at)
        }
        if not reasons:
            return None
        return node_commands.plan_nodes_down(engine, list(reasons), reasons, now)

    def apply_prepared(self, engine: Engine, now: int, prepared: NodesDown | None) -> list[str]:
        if prepared is None:
            return []
        return [node.name for node in node_commands.apply_nodes_down(engine, prepared, now)]


@dataclass(frozen=True, slots=True)
class ReturnAgents(PrepareThenApply[tuple[list[str], NodeChange | None], list[str]]):
    """Bring up the nodes down for a silent agent whose agent talks again, and the new
    ones whose agent registered (joining), in one replan (:class:`Prepared`, made off
    the event loop); the result is their names."""

    agents: AgentNodes = field(compare=False)
    seen_at: float

    def prepare(self, engine: Engine, now: int) -> tuple[list[str], NodeChange | None]:
        # (``returning`` changes only in the writer's commands: safe to read here)
        names = self.agents.returned(engine, self.seen_at)
        if not names:
            return names, None
        return names, node_commands.plan_node_change(engine, "resume", names, "", now)

    def apply_prepared(
        self, engine: Engine, now: int, prepared: tuple[list[str], NodeChange | None]
    ) -> list[str]:
        names, change = prepared
        self.agents.returning.clear()  # (those not up are down for another reason)
        if change is not None:
            node_commands.apply_node_change(engine, change, now)
        return names


@dataclass(frozen=True, slots=True)
class ResizeAgents(PrepareThenApply[NodesResized | None, list[str]]):
    """Resize the nodes whose agents registered with other resources, all at once: one
    replan per partition, made off the event loop (:class:`Prepared`); the result is
    their names."""

    agents: AgentNodes = field(compare=False)
    seen_at: float

    def prepare(self, engine: Engine, now: int) -> NodesResized | None:
        # (``resizing`` changes only in the writer's commands: safe to read here)
        resized = self.agents.resized(engine, self.seen_at)
        return node_commands.plan_resize(engine, resized, now) if resized else None

    def apply_prepared(self, engine: Engine, now: int, prepared: NodesResized | None) -> list[str]:
        self.agents.resizing.clear()  # (those not resized are as their agent said already)
        if prepared is None:
            return []
        return [node.name for node in node_commands.apply_resize(engine, prepared, now)]
