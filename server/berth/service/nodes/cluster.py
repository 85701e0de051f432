"""The cluster's nodes: schedulable capacity and the placement of jobs on nodes.

Policies that plan on named nodes (fcfs, easy, conservative: the node planner) place a
started job themselves and the engine only binds that placement. The others schedule
the cluster as one pool of K resources (the papers' model): the pool is the sum of the
nodes that are ``up``, and a started job is split over those nodes, resource by
resource, first fit in node-name order. Because such a policy only starts a job that
fits in the pool, and the pool's free amount equals the sum of the up nodes' free
amounts, the split always succeeds. No I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from berth.core.resources import ResourceSpace
from berth.service.model import JobRecord, NodeRecord, NodeState, RequestError


class Cluster:
    """The nodes by name. Add a node or change its resources through :meth:`add` and
    :meth:`resize`: what every request is checked against is derived from them once
    per change, not once per request."""

    def __init__(self, nodes: Iterable[NodeRecord] = ()) -> None:
        self.nodes: dict[str, NodeRecord] = {node.name: node for node in nodes}
        self._configured: tuple[dict[str, int], ResourceSpace | None, dict[int, int]] | None = None

    def node(self, name: str) -> NodeRecord:
        """A node by name (404 naming the field if there is none)."""
        node = self.nodes.get(name)
        if node is None:
            raise RequestError("not_found", f"no node {name!r}", "name")
        return node

    def add(self, node: NodeRecord) -> None:
        self.nodes[node.name] = node
        self._configured = None

    def resize(self, node: NodeRecord, resources: dict[str, int]) -> None:
        node.resources = dict(resources)
        self._configured = None

    def configured(self) -> tuple[dict[str, int], ResourceSpace | None, dict[int, int]]:
        """Every node whatever its state: the totals (:meth:`configured_capacity`), and
        how many nodes have each capacity, packed in the space of those totals (``None``:
        no resources at all). Kept until a node is added or resized; do not change it.
        (Counted here, once: counting 4,096 nodes' capacities for every submission was
        a sixth of a large daemon's time.)"""
        if self._configured is None:
            capacity = self.configured_capacity()
            space = ResourceSpace(capacity) if capacity else None
            counts = (
                {}
                if space is None
                else Counter(space.pack(n.resources) for n in self.nodes.values())
            )
            self._configured = (capacity, space, dict(counts))
        return self._configured

    def schedulable_capacity(self) -> dict[str, int]:
        """Total of every resource over the up nodes (resources with none left omitted)."""
        total: dict[str, int] = {}
        for node in self.nodes.values():
            if node.state is NodeState.UP:
                for name, amount in node.resources.items():
                    total[name] = total.get(name, 0) + amount
        return {name: amount for name, amount in total.items() if amount > 0}

    def configured_capacity(self) -> dict[str, int]:
        """Total of every resource over every node, whatever its state."""
        total: dict[str, int] = {}
        for node in self.nodes.values():
            for name, amount in node.resources.items():
                total[name] = total.get(name, 0) + amount
        return total

    def full_capacity(self) -> dict[str, int]:
        """Total of every resource over the nodes that are not down."""
        total: dict[str, int] = {}
        for node in self.nodes.values():
            if node.state is not NodeState.DOWN:
                for name, amount in node.resources.items():
                    total[name] = total.get(name, 0) + amount
        return total

    def allocate(self, job: JobRecord) -> dict[str, dict[str, int]]:
        """Split ``job.resources`` over the up nodes and mark them used."""
        up = sorted(
            (node for node in self.nodes.values() if node.state is NodeState.UP),
            key=lambda node: node.name,
        )
        allocation: dict[str, dict[str, int]] = {}
        for resource, wanted in job.resources.items():
            remaining = wanted
            for node in up:
                if remaining == 0:
                    break
                take = min(node.free(resource), remaining)
                if take > 0:
                    allocation.setdefault(node.name, {})[resource] = take
                    remaining -= take
            if remaining:
                raise AssertionError(f"job {job.id}: {remaining} {resource} could not be placed")
        self.bind(allocation)
        return allocation

    def bind(self, allocation: dict[str, dict[str, int]]) -> None:
        for name, amounts in allocation.items():
            node = self.nodes.get(name)
            if node is not None:
                for resource, amount in amounts.items():
                    node.used[resource] = node.used.get(resource, 0) + amount

    def unbind(self, allocation: dict[str, dict[str, int]]) -> None:
        for name, amounts in allocation.items():
            node = self.nodes.get(name)
            if node is not None:
                for resource, amount in amounts.items():
                    node.used[resource] = node.used.get(resource, 0) - amount

    def held_in_pool(self, allocation: dict[str, dict[str, int]]) -> dict[str, int]:
        """The part of an allocation that sits on up nodes (what the pool must count)."""
        held: dict[str, int] = {}
        for name, amounts in allocation.items():
            node = self.nodes.get(name)
            if node is not None and node.state is NodeState.UP:
                for resource, amount in amounts.items():
                    held[resource] = held.get(resource, 0) + amount
        return held
