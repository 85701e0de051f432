"""The node planner by policy name: every policy of the registry on named nodes.

``make_node_policy("qops", nodes)`` builds the node planner for a policy (the deadline
policies and slack are :class:`~berth.core.policies.nodes.NodeBackfill` with their own
admission), checking the policy's name and options as the pool registry does. No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from berth.core.policies import policy_problem
from berth.core.policies.node_schedule import NODE_POLICIES
from berth.core.policies.nodes import NodeBackfill


def make_node_policy(
    name: str,
    nodes: Mapping[str, Mapping[str, int]],
    configured: Mapping[str, Mapping[str, int]] | None = None,
    **options: object,
) -> NodeBackfill:
    """The node planner for policy ``name`` over ``nodes`` (those up; ``configured``:
    all of them) with the policy's options; ``ValueError`` names what is not offered
    or a bad option (as the pool policies' constructors do)."""
    problem = policy_problem(name, options)
    if problem is not None:
        raise ValueError(problem[1])
    assert name in NODE_POLICIES, "every registered policy plans on nodes"
    if name == "slack":
        from berth.core.policies.node_slack import NodeSlack

        return NodeSlack(nodes, configured, **options)  # type: ignore[arg-type]
    if NODE_POLICIES[name] is None and name != "conservative":
        from berth.core.policies.node_deadline import NodeDeadline

        return NodeDeadline(name, nodes, configured, **options)  # type: ignore[arg-type]
    return NodeBackfill(name, nodes, configured, **options)  # type: ignore[arg-type]
