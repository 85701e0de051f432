"""Leaving counting: a counted plan of identical nodes becomes a plan that names them.

A :class:`~berth.core.whole_nodes.CountedPlan` is exact while every job takes whole
identical nodes. When a job that would share a node arrives, the policy's plan becomes a
:class:`~berth.core.nodes.NodePlan`: running jobs keep the nodes they hold, and every
reservation keeps its start, on the nodes of the counted plan's colouring. Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.core.nodes import NodePlan
from berth.core.whole_nodes import CountedPlan

if TYPE_CHECKING:
    from berth.core.policies.nodes import NodeBackfill

_DAWN = -(1 << 62)


def name_nodes(policy: NodeBackfill, now: int) -> None:
    """Leave counting for a plan that names every node: a job that shares nodes
    arrives. Every reservation keeps its start, on the nodes of the colouring."""
    counted = policy.plan
    assert isinstance(counted, CountedPlan)
    colours = counted.colouring()
    plan = NodePlan(policy.space, counted.capacities, _DAWN)
    for entry in policy.running.values():
        assert entry.start is not None
        left = entry.start + entry.job.estimate - now
        if entry.held and left > 0:
            plan.reserve(entry.held, now, left)
    policy.plan = plan
    policy._room_logs.clear()  # kept per summed profile: this plan's from now on
    for entry in policy.waiting.values():
        entry.need = plan.need(entry.shape, entry.demand)
        entry.log = policy._log_of(entry)
        entry.checked = -1  # asked of the counted plan, not of this one
        if entry.held is None or entry.start is None:
            continue
        nodes = colours[id(entry.held)]
        entry.placement = counted.named_placement(nodes, entry.shape, entry.demand)
        entry.held = plan.held(entry.placement, entry.demand, entry.shape.exclusive)
        plan.reserve(entry.held, entry.start, entry.job.estimate)
