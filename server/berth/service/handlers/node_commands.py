"""The handlers of the commands on nodes: add, resize, drain, resume, mark down, and
agents' tokens.

A node change rebuilds the policy over the nodes that are up (a replan) and applies it:
operator commands that would break a guarantee are refused unless forced; a node
failure applies it and announces the new times. Each handler takes the engine and works
through its core steps (``replan``, ``install``, ``end_job``, ``schedule_pass``); the
typed commands (:mod:`berth.service.commands`) and agents' reports call them. No I/O.
"""

from __future__ import annotations

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
    node = engine.cluster.node(name)
    if node.state is not NodeState.UP:
        raise RequestError("conflict", f"node {name!r} is {node.state}, not up", "name")
    return _set_node(engine, node, NodeState.DRAINED, reason, now, force, "node.drained")


def resume_node(engine: Engine, name: str, now: int) -> NodeRecord:
    node = engine.cluster.node(name)
    if node.state is NodeState.UP:
        raise RequestError("conflict", f"node {name!r} is already up", "name")
    return _set_node(engine, node, NodeState.UP, "", now, True, "node.resumed")


def mark_down(engine: Engine, name: str, reason: str, now: int) -> NodeRecord:
    """A node failed: its jobs are killed, and guarantees are re-made as needed."""
    node = engine.cluster.node(name)
    if node.state is NodeState.DOWN:
        raise RequestError("conflict", f"node {name!r} is already down", "name")
    for record in list(engine.running.values()):
        if name in record.allocation:
            engine.outbox.intend(Kill(record.id, now))
            engine.life.end_job(record, JobState.NODE_FAIL, now, f"node {name} went down: {reason}")
    engine.life.requeue_ended(now, decide=False)  # the replan below decides for them
    return _set_node(engine, node, NodeState.DOWN, reason, now, True, "node.down")


def _set_node(
    engine: Engine,
    node: NodeRecord,
    state: NodeState,
    reason: str,
    now: int,
    force: bool,
    event: str,
) -> NodeRecord:
    before = (node.state, node.reason)
    node.state, node.reason = state, reason
    lane = engine.partitions.lane_of_node(node.name)
    policy, options = engine.partitions.policy_spec(lane)
    try:
        replan = engine.replan(policy, options, now, True, partition=lane)
    except ValueError:
        node.state, node.reason = before
        raise RequestError(
            "conflict",
            f"node {node.name!r} is the last one up with some resource; "
            "the cluster would have nothing to schedule",
            "name",
        ) from None
    if replan.broken and not force:
        node.state, node.reason = before
        raise RequestError(
            "conflict",
            replan.refusal(f"taking node {node.name!r} out"),
            "name",
        )
    engine.outbox.node_changed(node.name)
    engine.life.install(replan, now, partition=lane)
    engine.outbox.emit(event, now, node=node.name, reason=reason)
    engine.schedule_pass(now)
    return node
