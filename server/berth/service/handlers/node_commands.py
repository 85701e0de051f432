"""The handlers of the commands on nodes: add, resize, drain, resume, mark down, and
agents' tokens.

A node change rebuilds the policy over the nodes that are up (a replan) and applies it:
operator commands that would break a guarantee are refused unless forced; a node
failure applies it and announces the new times. Each handler takes the engine and works
through its core steps (``replan``, ``install``, ``end_job``, ``schedule_pass``); the
typed commands (:mod:`berth.service.commands`) and agents' reports call them. No I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from berth.service.model import JobRecord, JobState, NodeRecord, NodeState, RequestError
from berth.service.nodes.cluster import Cluster
from berth.service.nodes.intents import Kill
from berth.service.planning.replan import Replan

if TYPE_CHECKING:
    from berth.service.engine import Engine


#: Why nodes change: one reason for all of them, or each node's own.
Reason = str | Mapping[str, str]


def _reason_of(reason: Reason, name: str) -> str:
    return reason if isinstance(reason, str) else reason[name]


def _check_new(engine: Engine, name: str, resources: dict[str, int]) -> NodeRecord:
    if name in engine.cluster.nodes:
        raise RequestError("conflict", f"node {name!r} already exists", "name")
    check_resources(resources)
    return NodeRecord(name, dict(resources))


@dataclass(frozen=True, slots=True)
class NodeAdded:
    """A node an operator adds, up, and the default partition's replan with it."""

    node: NodeRecord
    replan: Replan


def plan_add_node(engine: Engine, name: str, resources: dict[str, int], now: int) -> NodeAdded:
    """What adding a node will do, reading the engine only (the replan is made off the
    event loop); the record is made here and joins the cluster in :func:`apply_add_node`."""
    node = _check_new(engine, name, resources)
    grown = Cluster([*engine.partitions.pool().nodes.values(), node])
    policy, options = engine.partitions.policy_name, engine.partitions.policy_options
    return NodeAdded(node, engine.replan(policy, options, now, True, pool=grown))


def apply_add_node(engine: Engine, added: NodeAdded, now: int) -> NodeRecord:
    """Add the node :func:`plan_add_node` planned for, at the same instant."""
    node = added.node
    engine.cluster.add(node)
    engine.outbox.node_changed(node.name)
    engine.life.install(added.replan, now)
    engine.outbox.emit("node.added", now, node=node.name, resources=dict(node.resources))
    engine.schedule_pass(now)
    return node


def add_joining_node(
    engine: Engine, name: str, resources: dict[str, int], now: int, joining: str
) -> NodeRecord:
    """A node whose agent registers: down (``joining``, the reason) until a resume
    brings it up with others in one replan (a replan each was quadratic in a center's
    bring-up), the default partition's policy counting it meanwhile among the nodes a
    job may wait for (or rebuilt, if it cannot)."""
    node = _check_new(engine, name, resources)
    node.state, node.reason = NodeState.DOWN, joining
    engine.cluster.add(node)
    engine.outbox.node_changed(name)
    if not engine.planner.policy_of(None).configure(resources):
        policy, options = engine.partitions.policy_name, engine.partitions.policy_options
        engine.life.install(engine.replan(policy, options, now, True), now)
    engine.outbox.emit("node.added", now, node=name, resources=dict(resources))
    engine.schedule_pass(now)
    return node


def check_resources(resources: Mapping[str, int]) -> None:
    """Refuse (422 naming the field) a node with no resource or an amount not above 0."""
    if not resources or any(a <= 0 for a in resources.values()):
        raise RequestError(
            "invalid", "a node needs a positive amount of each resource", "resources"
        )


@dataclass(frozen=True, slots=True)
class NodesResized:
    """Nodes whose capacity changed (their agents report other resources): each one's
    new resources, and the replan of each backfilling partition they are in (``None``:
    the default one) with them."""

    resources: dict[str, dict[str, int]]
    replans: dict[str | None, Replan]


def plan_resize(engine: Engine, resources: Mapping[str, dict[str, int]], now: int) -> NodesResized:
    """What resizing nodes will do, reading the engine only (the replans are made off the
    event loop, one per partition for every node resized meanwhile: on 4,096 nodes a
    resize was a replan of 1.5-10 s on the loop, and a center's agents restarted with
    another configuration were one each); the records change in :func:`apply_resize`."""
    for amounts in resources.values():
        check_resources(amounts)
    changed = {
        name: replace(engine.cluster.node(name), resources=dict(amounts))
        for name, amounts in resources.items()
    }
    replans: dict[str | None, Replan] = {}
    for lane in _by_lane(engine, changed.values()):
        policy, options = engine.partitions.policy_spec(lane)
        pool = _pool_as_changed(engine, lane, changed)
        replans[lane] = engine.replan(policy, options, now, True, lane, pool=pool)
    return NodesResized({name: dict(amounts) for name, amounts in resources.items()}, replans)


def _by_lane(engine: Engine, nodes: Iterable[NodeRecord]) -> dict[str | None, list[NodeRecord]]:
    """``nodes`` by the backfilling partition a change to them replans (``None``: the
    default one)."""
    lanes: dict[str | None, list[NodeRecord]] = {}
    for node in nodes:
        lanes.setdefault(engine.partitions.lane_of_node(node.name), []).append(node)
    return lanes


def _pool_as_changed(
    engine: Engine, lane: str | None, changed: Mapping[str, NodeRecord]
) -> Cluster:
    """Partition ``lane``'s nodes, those in ``changed`` as a change will leave them."""
    return Cluster(
        changed.get(name, node) for name, node in engine.partitions.pool(lane).nodes.items()
    )


def apply_resize(engine: Engine, resized: NodesResized, now: int) -> list[NodeRecord]:
    """Resize the nodes :func:`plan_resize` planned for, at the same instant."""
    nodes = []
    for name, resources in resized.resources.items():
        node = engine.cluster.node(name)
        before = node.resources
        engine.cluster.resize(node, resources)
        engine.outbox.node_changed(name)
        engine.outbox.emit("node.resized", now, node=name, before=before, resources=dict(resources))
        nodes.append(node)
    for lane, replan in resized.replans.items():
        engine.life.install(replan, now, partition=lane)
    engine.schedule_pass(now)
    return nodes


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


@dataclass(frozen=True, slots=True)
class NodesDown:
    """Nodes failing: the running jobs they end (in the order they end) and the node
    change, its replans made as if those had ended and been queued again."""

    ended: list[JobRecord]
    change: NodeChange


def plan_nodes_down(engine: Engine, names: list[str], reason: Reason, now: int) -> NodesDown:
    """What a node failure will do, reading the engine only (the single writer
    runs it off the event loop: a replan over 4,096 nodes held every read for 6 s): the
    jobs on the nodes, and the replans without them, those that asked to be queued
    again after a node failure joining the waiting ones as :func:`apply_nodes_down`
    will queue them (copies here)."""
    # (every step that ends jobs queues them again before it returns: none wait here)
    assert not engine.life.to_requeue, "jobs ended by an earlier step wait to be queued"
    down = set(names)
    ended = [record for record in engine.running.values() if down & record.allocation.keys()]
    requeued = [copy.copy(record) for record in ended if record.requeue]
    for record in requeued:
        record.clear_run()
    change = plan_node_change(
        engine, "down", names, reason, now, ended={r.id for r in ended}, requeued=requeued
    )
    return NodesDown(ended, change)


def apply_nodes_down(engine: Engine, down: NodesDown, now: int) -> list[NodeRecord]:
    """Kill and end the jobs on the failed nodes, queue again those that asked for it,
    and apply the change :func:`plan_nodes_down` made (on the engine as it was then)."""
    names = {node.name for node in down.change.nodes}
    for record in down.ended:
        failed = sorted(names & record.allocation.keys())[0]
        why = f"node {failed} went down: {_reason_of(down.change.reason, failed)}"
        engine.outbox.intend(Kill(record.id, now))
        engine.life.end_job(record, JobState.NODE_FAIL, now, why)
    engine.life.requeue_ended(now, decide=False)  # (the replans decide for them)
    return apply_node_change(engine, down.change, now)


#: Per action: the state it sets and the event it makes.
_ACTIONS = {
    "drain": (NodeState.DRAINED, "node.drained"),
    "resume": (NodeState.UP, "node.resumed"),
    "down": (NodeState.DOWN, "node.down"),
}


@dataclass(frozen=True, slots=True)
class NodeChange:
    """Nodes to set to ``state`` and each partition's replan over them: what
    :func:`plan_node_change` found (reading the engine only) and
    :func:`apply_node_change` makes so."""

    nodes: list[NodeRecord]
    state: NodeState
    reason: Reason
    event: str
    replans: list[tuple[str | None, Replan]]


def plan_node_change(
    engine: Engine,
    action: str,
    names: list[str],
    reason: Reason,
    now: int,
    force: bool = True,
    ended: Collection[int] = (),
    requeued: Sequence[JobRecord] = (),
) -> NodeChange:
    """The nodes' new state and each partition's replan over it, or the refusal: a node
    unknown or already so, a partition left with nothing to schedule, or (a drain,
    unless ``force``) a guarantee it would break. Reads the engine and changes nothing,
    so the single writer runs it off the event loop while reads go on (seconds on a
    large cluster: a replan rebuilds every waiting job's reservation). ``ended`` and
    ``requeued``: jobs the change ends, and queues again (see :meth:`Engine.replan`)."""
    nodes = _nodes(engine, names, action)
    state, event = _ACTIONS[action]
    changed = {
        node.name: replace(node, state=state, reason=_reason_of(reason, node.name))
        for node in nodes
    }
    field = "name" if len(nodes) == 1 else "names"
    replans = []
    for lane, members in _by_lane(engine, nodes).items():
        policy, options = engine.partitions.policy_spec(lane)
        as_changed = _pool_as_changed(engine, lane, changed)
        which = _which(members)
        try:
            replan = engine.replan(
                policy, options, now, True, lane, pool=as_changed, ended=ended, requeued=requeued
            )
        except ValueError:
            last = "the last one up" if len(members) == 1 else "the last ones up"
            raise RequestError(
                "conflict",
                f"{which} {'is' if len(members) == 1 else 'are'} {last} with some resource; "
                "the cluster would have nothing to schedule",
                field,
            ) from None
        if replan.broken and not force:
            raise RequestError("conflict", replan.refusal(f"taking {which} out"), field)
        replans.append((lane, replan))
    return NodeChange(nodes, state, reason, event, replans)


def apply_node_change(engine: Engine, change: NodeChange, now: int) -> list[NodeRecord]:
    """Set the nodes' state and install the replans :func:`plan_node_change` made (on the
    engine as it was then: the single writer applies nothing in between)."""
    for node in change.nodes:
        node.state, node.reason = change.state, _reason_of(change.reason, node.name)
        engine.outbox.node_changed(node.name)
    for lane, replan in change.replans:
        engine.life.install(replan, now, partition=lane)
    for node in change.nodes:
        engine.outbox.emit(change.event, now, node=node.name, reason=node.reason)
    engine.schedule_pass(now)
    return change.nodes


def _nodes(engine: Engine, names: list[str], action: str) -> list[NodeRecord]:
    """The nodes named (each once), or a refusal naming every one unknown (404) or in a
    state ``action`` does not change (409)."""
    if not names:
        raise RequestError("invalid", "name at least one node", "names")
    nodes = [engine.cluster.node(name) for name in dict.fromkeys(names)]  # (404 naming it)
    if action == "drain":
        said = [
            f"node {n.name!r} is {n.state}, not up" for n in nodes if n.state is not NodeState.UP
        ]
    else:
        target = _ACTIONS[action][0]
        said = [f"node {n.name!r} is already {n.state}" for n in nodes if n.state is target]
    if said:
        raise RequestError("conflict", "; ".join(said), "name" if len(names) == 1 else "names")
    return nodes


def _which(nodes: list[NodeRecord]) -> str:
    """``node 'node001'``, or ``2 nodes (node001, node002)`` (the first ten named)."""
    if len(nodes) == 1:
        return f"node {nodes[0].name!r}"
    named = ", ".join(node.name for node in nodes[:10])
    return f"{len(nodes)} nodes ({named}{', ...' if len(nodes) > 10 else ''})"
