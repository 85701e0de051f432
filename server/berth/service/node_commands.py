"""Commands on nodes: add, resize, drain, resume, mark down, and agents' tokens.

A node change rebuilds the policy over the nodes that are up (a replan) and applies it:
operator commands that would break a guarantee are refused unless forced; a node
failure applies it and announces the new times. A part of :class:`~berth.service.engine.
Engine`, kept apart so the engine's file stays about jobs. No I/O.
"""

from __future__ import annotations

from berth.service.engine_base import EngineBase
from berth.service.intents import Kill
from berth.service.model import JobState, NodeRecord, NodeState, RequestError


class NodeCommands(EngineBase):
    """The engine's node commands (mixed into :class:`~berth.service.engine.Engine`)."""

    def add_node(self, name: str, resources: dict[str, int], now: int) -> NodeRecord:
        if name in self.cluster.nodes:
            raise RequestError("conflict", f"node {name!r} already exists", "name")
        if not resources or any(a <= 0 for a in resources.values()):
            raise RequestError(
                "invalid", "a node needs a positive amount of each resource", "resources"
            )
        node = NodeRecord(name, dict(resources))
        self.cluster.add(node)
        self.outbox.node_changed(name)
        self._install(self._replan(self.policy_name, self.policy_options, now, True), now)
        self.outbox.emit("node.added", now, node=name, resources=dict(resources))
        self._pass(now)
        return node

    def resize_node(self, name: str, resources: dict[str, int], now: int) -> NodeRecord:
        """A node's capacity changed (its agent reports other resources): replan on it."""
        node = self.node(name)
        if not resources or any(a <= 0 for a in resources.values()):
            raise RequestError(
                "invalid", "a node needs a positive amount of each resource", "resources"
            )
        before = node.resources
        self.cluster.resize(node, resources)
        self.outbox.node_changed(name)
        lane = self.lane_of_node(name)
        policy, options = self.policy_spec(lane)
        self._install(self._replan(policy, options, now, True, lane), now, partition=lane)
        self.outbox.emit("node.resized", now, node=name, before=before, resources=dict(resources))
        self._pass(now)
        return node

    def set_node_token(self, name: str, token_digest: str, now: int) -> None:
        """The digest of node ``name``'s new token; the node's older token stops working."""
        for old in [d for d, n in self.node_tokens.items() if n == name]:
            del self.node_tokens[old]  # in place: the token table reads this very dict
        self.node_tokens[token_digest] = name
        self.outbox.config_changed()
        self.outbox.emit("node.token_issued", now, node=name)

    def drain(self, name: str, reason: str, now: int, force: bool = False) -> NodeRecord:
        """Stop placing jobs on a node; its running jobs go on. Refused (unless forced)
        when the smaller pool would break a guarantee."""
        node = self.node(name)
        if node.state is not NodeState.UP:
            raise RequestError("conflict", f"node {name!r} is {node.state}, not up", "name")
        return self._set_node(node, NodeState.DRAINED, reason, now, force, "node.drained")

    def resume_node(self, name: str, now: int) -> NodeRecord:
        node = self.node(name)
        if node.state is NodeState.UP:
            raise RequestError("conflict", f"node {name!r} is already up", "name")
        return self._set_node(node, NodeState.UP, "", now, True, "node.resumed")

    def mark_down(self, name: str, reason: str, now: int) -> NodeRecord:
        """A node failed: its jobs are killed, and guarantees are re-made as needed."""
        node = self.node(name)
        if node.state is NodeState.DOWN:
            raise RequestError("conflict", f"node {name!r} is already down", "name")
        for record in list(self.running.values()):
            if name in record.allocation:
                self.outbox.intend(Kill(record.id, now))
                self._end(record, JobState.NODE_FAIL, now, f"node {name} went down: {reason}")
        self._requeue(now, decide=False)  # the replan below decides for them
        return self._set_node(node, NodeState.DOWN, reason, now, True, "node.down")

    def _set_node(
        self, node: NodeRecord, state: NodeState, reason: str, now: int, force: bool, event: str
    ) -> NodeRecord:
        before = (node.state, node.reason)
        node.state, node.reason = state, reason
        lane = self.lane_of_node(node.name)
        policy, options = self.policy_spec(lane)
        try:
            replan = self._replan(policy, options, now, True, partition=lane)
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
                f"taking node {node.name!r} out would break {len(replan.broken)} guarantee(s): "
                + "; ".join(replan.broken[:10])
                + " (force=true does it anyway)",
                "name",
            )
        self.outbox.node_changed(node.name)
        self._install(replan, now, partition=lane)
        self.outbox.emit(event, now, node=node.name, reason=reason)
        self._pass(now)
        return node
