"""The handlers of the commands on nodes: add, resize, drain, resume, mark down, and
agents' tokens.

A node change rebuilds the policy over the nodes that are up (a replan) and applies it:
operator commands that would break a guarantee are refused unless forced; a node
failure applies it and announces the new times. Each handler takes the engine and works
through its core steps (``replan``, ``install``, ``end_job``, ``schedule_pass``); the
typed commands (:mod:`berth.service.commands`) and agents' reports call them. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from berth.service.model import JobState, NodeRecord, NodeState, RequestError
from berth.service.nodes.intents import Kill

if TYPE_CHECKING:
    from berth.service.engine import Engine


def add_node(engine: Engine, name: str, resources: dict[str, int], now: int) -> NodeRecord:
    if name in engine.cluster.nodes:
        raise RequestError("conflict", f"node {name!r} already exists", "name")
    if not resources or any(a <= 0 for a in resources.values()):
        raise RequestError(
            "invalid", "a node needs a positive amount of each resource", "resources"
        )
    node = NodeRecord(name, dict(resources))
    engine.cluster.add(node)
    engine.outbox.node_changed(name)
    engine.life.install(
        engine.replan(engine.partitions.policy_name, engine.partitions.policy_options, now, True),
        now,
    )
    engine.outbox.emit("node.added", now, node=name, resources=dict(resources))
    engine.schedule_pass(now)
    return node


def resize_node(engine: Engine, name: str, resources: dict[str, int], now: int) -> NodeRecord:
    """A node's capacity changed (its agent reports other resources): replan on it."""
    node = engine.cluster.node(name)
    if not resources or any(a <= 0 for a in resources.values()):
        raise RequestError(
            "invalid", "a node needs a positive amount of each resource", "resources"
        )
    before = node.resources
    engine.cluster.resize(node, resources)
    engine.outbox.node_changed(name)
    lane = engine.partitions.lane_of_node(name)
    policy, options = engine.partitions.policy_spec(lane)
    engine.life.install(engine.replan(policy, options, now, True, lane), now, partition=lane)
    engine.outbox.emit("node.resized", now, node=name, before=before, resources=dict(resources))
    engine.schedule_pass(now)
    return node


def set_node_token(
    engine: Engine, name: str, token_digest: str | None, now: int, token_id: str | None = None
) -> None:
    """Node ``name`` has a new token: the digest of a static one, or (``token_digest``
    ``None``) a signed one, ``token_id``, kept in the token register. Its older static
    token stops working either way."""
    for old in [d for d, n in engine.node_tokens.items() if n == name]:
        del engine.node_tokens[old]  # in place: the token table reads this very dict
    if token_digest is not None:
        engine.node_tokens[token_digest] = name
    engine.outbox.config_changed()
    engine.outbox.emit("node.token_issued", now, node=name, token_id=token_id)


def drain(engine: Engine, name: str, reason: str, now: int, force: bool = False) -> NodeRecord:
    """Stop placing jobs on a node; its running jobs go on. Refused (unless forced)
    when the smaller pool would break a guarantee."""
    (node,) = drain_nodes(engine, [name], reason, now, force)
    return node


def resume_node(engine: Engine, name: str, now: int) -> NodeRecord:
    (node,) = resume_nodes(engine, [name], now)
    return node


def mark_down(engine: Engine, name: str, reason: str, now: int) -> NodeRecord:
    """A node failed: its jobs are killed, and guarantees are re-made as needed."""
    (node,) = mark_nodes_down(engine, [name], reason, now)
    return node


def drain_nodes(
    engine: Engine, names: list[str], reason: str, now: int, force: bool = False
) -> list[NodeRecord]:
    """:func:`drain` for several nodes at once: one replan for all of them (a rack's
    drain was a replan per node, seconds each on a large cluster), refused as a whole."""
    nodes = _nodes(engine, names, lambda node: node.state is not NodeState.UP, "not up")
    return _set_nodes(engine, nodes, NodeState.DRAINED, reason, now, force, "node.drained")


def resume_nodes(engine: Engine, names: list[str], now: int) -> list[NodeRecord]:
    """Put drained or down nodes back up, with one replan for all of them."""
    nodes = _nodes(engine, names, lambda node: node.state is NodeState.UP, "already up")
    return _set_nodes(engine, nodes, NodeState.UP, "", now, True, "node.resumed")


def mark_nodes_down(engine: Engine, names: list[str], reason: str, now: int) -> list[NodeRecord]:
    """Nodes failed (a rack, say): their jobs are killed, one replan re-makes guarantees."""
    nodes = _nodes(engine, names, lambda node: node.state is NodeState.DOWN, "already down")
    down = {node.name for node in nodes}
    for record in list(engine.running.values()):
        if down & record.allocation.keys():
            failed = sorted(down & record.allocation.keys())[0]
            engine.outbox.intend(Kill(record.id, now))
            engine.life.end_job(
                record, JobState.NODE_FAIL, now, f"node {failed} went down: {reason}"
            )
    engine.life.requeue_ended(now, decide=False)  # the replan below decides for them
    return _set_nodes(engine, nodes, NodeState.DOWN, reason, now, True, "node.down")


def _nodes(
    engine: Engine, names: list[str], unchanged: Callable[[NodeRecord], bool], why: str
) -> list[NodeRecord]:
    """The nodes named (each once), or a refusal naming those unknown or ``unchanged``
    (``why``: "node 'x' is already up"; the state they are in for "not up")."""
    if not names:
        raise RequestError("invalid", "name at least one node", "names")
    nodes = [engine.cluster.node(name) for name in dict.fromkeys(names)]  # (404 naming it)
    stuck = [node for node in nodes if unchanged(node)]
    if stuck:
        said = [
            f"node {node.name!r} is {node.state}, not up" if why == "not up"
            else f"node {node.name!r} is {why}"
            for node in stuck
        ]  # fmt: skip
        raise RequestError("conflict", "; ".join(said), "name" if len(names) == 1 else "names")
    return nodes


def _set_nodes(
    engine: Engine,
    nodes: list[NodeRecord],
    state: NodeState,
    reason: str,
    now: int,
    force: bool,
    event: str,
) -> list[NodeRecord]:
    """Set the nodes' state and replan each partition they are in, once; a replan that
    would break a guarantee (unless ``force``) or leave a partition with nothing to
    schedule puts every node back as it was and refuses."""
    before = {node.name: (node.state, node.reason) for node in nodes}
    for node in nodes:
        node.state, node.reason = state, reason
    lanes: dict[str | None, list[NodeRecord]] = {}
    for node in nodes:
        lanes.setdefault(engine.partitions.lane_of_node(node.name), []).append(node)
    field = "name" if len(nodes) == 1 else "names"
    replans = []
    for lane, members in lanes.items():
        policy, options = engine.partitions.policy_spec(lane)
        which = _which(members)
        try:
            replan = engine.replan(policy, options, now, True, partition=lane)
        except ValueError:
            _put_back(nodes, before)
            last = "the last one up" if len(members) == 1 else "the last ones up"
            raise RequestError(
                "conflict",
                f"{which} {'is' if len(members) == 1 else 'are'} {last} with some resource; "
                "the cluster would have nothing to schedule",
                field,
            ) from None
        if replan.broken and not force:
            _put_back(nodes, before)
            raise RequestError("conflict", replan.refusal(f"taking {which} out"), field)
        replans.append((lane, replan))
    for node in nodes:
        engine.outbox.node_changed(node.name)
    for lane, replan in replans:
        engine.life.install(replan, now, partition=lane)
    for node in nodes:
        engine.outbox.emit(event, now, node=node.name, reason=reason)
    engine.schedule_pass(now)
    return nodes


def _which(nodes: list[NodeRecord]) -> str:
    """``node 'node001'``, or ``nodes node001, node002, ...`` (the first ten named)."""
    if len(nodes) == 1:
        return f"node {nodes[0].name!r}"
    named = ", ".join(node.name for node in nodes[:10])
    return f"{len(nodes)} nodes ({named}{', ...' if len(nodes) > 10 else ''})"


def _put_back(nodes: list[NodeRecord], before: dict[str, tuple[NodeState, str]]) -> None:
    for node in nodes:
        node.state, node.reason = before[node.name]
