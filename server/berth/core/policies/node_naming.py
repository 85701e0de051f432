"""Node names in the node planner: placements by name, leaving counting, placements kept.

* A :class:`~berth.core.whole_nodes.CountedPlan` is exact while every job takes whole
  identical nodes. When a job that would share a node arrives, the policy's plan becomes
  a :class:`~berth.core.nodes.NodePlan` (:func:`name_nodes`): running jobs keep the nodes
  they hold, and every reservation keeps its start, on the nodes of the colouring.
* :func:`describe` says a placement by node name (what a ``Start`` carries).
* A restart puts each waiting job back on the nodes it was planned on
  (:func:`kept_placement`), by name: another placement at the same start could take
  nodes that a job adopted later was promised. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from berth.core.nodes import NodePlan, Placement
from berth.core.whole_nodes import CountedPlan

if TYPE_CHECKING:
    from berth.core.policies.nodes import NodeBackfill, Planned

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
        policy._replanned.add(entry.job.id)  # its nodes are named from now on
        entry.placement = counted.named_placement(nodes, entry.shape, entry.demand)
        entry.held = plan.held(entry.placement, entry.demand, entry.shape.exclusive)
        plan.reserve(entry.held, entry.start, entry.job.estimate)


def kept_placement(
    policy: NodeBackfill, entry: Planned, nodes: Mapping[str, int], start: int
) -> Placement | None:
    """The placement of ``nodes`` (slots per node name) if every one of those nodes is
    in the plan and has room for what the job holds there from ``start`` for its
    estimate; ``None`` otherwise, or on a counted plan (which names no reservation:
    counting is exact without names)."""
    plan = policy.plan
    if not isinstance(plan, NodePlan) or not nodes:
        return None
    index = policy.node_index
    placement: Placement = {}
    for name, slots in nodes.items():
        at = index.get(name)
        if at is None or slots < 1:
            return None
        placement[at] = slots
    if sum(placement.values()) < entry.shape.count and not entry.shape.exclusive:
        return None
    held = plan.held(placement, entry.demand, entry.shape.exclusive)
    profiles = plan.profiles
    if all(
        profiles[i].fits_during(amount, start, entry.job.estimate) for i, amount in held.items()
    ):
        return placement
    return None


def describe(policy: NodeBackfill, entry: Planned) -> dict[str, Mapping[str, int]]:
    """A placement as node name -> resources held there. Nodes holding the same
    amount share one mapping, read-only by its type (a job on 64 one-cpu nodes has
    64 alike; a what-if copy of the policy copies it like any other state)."""
    assert entry.held is not None
    out: dict[str, Mapping[str, int]] = {}
    unpacked = policy._unpacked
    names = policy.node_names
    for index, amount in policy.plan.names(entry.held).items():
        known = unpacked.get(amount)
        if known is None:
            known = unpacked[amount] = {n: a for n, a in policy.space.unpack(amount).items() if a}
        out[names[index]] = known
    return out
