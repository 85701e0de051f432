"""One-call node, policy and partition changes for tests that drive an engine without
the single writer: each is the typed command (:mod:`berth.service.commands`) applied at once, as
the writer applies it (prepare, then apply, at the same ``now``)."""

from __future__ import annotations

from berth.service.cluster_commands import (
    AddNode,
    ChangeNodes,
    ChangePartition,
    ChangePolicy,
    CreatePartition,
    DeletePartition,
    MarkNodesDown,
)
from berth.service.engine import Engine
from berth.service.handlers import node_commands
from berth.service.model import NodeRecord
from berth.service.partitions.gang import GangSpec
from berth.service.partitions.specs import BackfillSpec


def drain(live: Engine, name: str, reason: str, now: int, force: bool = False) -> NodeRecord:
    (node,) = drain_nodes(live, [name], reason, now, force)
    return node


def drain_nodes(
    live: Engine, names: list[str], reason: str, now: int, force: bool = False
) -> list[NodeRecord]:
    return ChangeNodes("drain", tuple(names), reason, force).apply(live, now)


def resume_node(live: Engine, name: str, now: int) -> NodeRecord:
    (node,) = ChangeNodes("resume", (name,)).apply(live, now)
    return node


def mark_down(live: Engine, name: str, reason: str, now: int) -> NodeRecord:
    (node,) = mark_nodes_down(live, [name], reason, now)
    return node


def mark_nodes_down(live: Engine, names: list[str], reason: str, now: int) -> list[NodeRecord]:
    return MarkNodesDown(tuple(names), reason).apply(live, now)


def change_policy(
    live: Engine,
    name: str,
    options: dict[str, object],
    now: int,
    force: bool = False,
    partition: str | None = None,
) -> None:
    """The default partition's policy, or (``partition``) a backfilling partition's."""
    if partition is None:
        ChangePolicy(name, options, force).apply(live, now)
    else:
        ChangePartition(partition, policy=name, options=options, force=force).apply(live, now)


def create_partition(
    live: Engine, spec: GangSpec | BackfillSpec, now: int, force: bool = False
) -> dict[str, object]:
    return CreatePartition(spec, force).apply(live, now)


def delete_partition(live: Engine, name: str, now: int) -> None:
    DeletePartition(name).apply(live, now)


def add_node(live: Engine, name: str, resources: dict[str, int], now: int) -> NodeRecord:
    return AddNode(name, resources).apply(live, now)


def resize_node(live: Engine, name: str, resources: dict[str, int], now: int) -> NodeRecord:
    """Node ``name`` with other resources, as an agent's registration and the change
    that follows it (:class:`~berth.service.commands.ResizeAgents`) leave it."""
    resized = node_commands.plan_resize(live, {name: resources}, now)
    (node,) = node_commands.apply_resize(live, resized, now)
    return node
