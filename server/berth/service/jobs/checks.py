"""Request checks: refuse, naming the field and the limit, what no configuration could hold.

A request is refused only when no set of the configured nodes could ever hold it (down
and drained nodes included: a job they could hold waits for them), or when it is
malformed (no resource, negative amounts, a deadline already past). Slots are checked as
slots first; their totals follow from them. A pool policy cannot honour slots. No I/O.
"""

from __future__ import annotations

from berth.core.policies.base import LivePolicy
from berth.core.policies.empty import NO_NODES
from berth.core.resources import ResourceSpace
from berth.core.shapes import shape_of, shape_problem
from berth.service.model import JobRequest, RequestError, moment
from berth.service.nodes.cluster import Cluster


def check_request(
    request: JobRequest, cluster: Cluster, policy: LivePolicy, policy_name: str, now: int
) -> None:
    """Raise :class:`RequestError` for a request the cluster must refuse."""
    capacity, space, nodes = cluster.configured()
    if space is None:
        raise RequestError("conflict", NO_NODES, "resources")
    if request.shape is not None:
        _check_slots(request, space, nodes, policy, policy_name)
    _check_totals(request, capacity)
    if request.shape is None and policy.places_on_nodes:
        _check_slots(request, space, nodes, policy, policy_name)
    if request.deadline is not None:
        if request.deadline <= now:
            raise RequestError(
                "invalid",
                f"deadline {request.deadline} ({moment(request.deadline)}) is in the past "
                f"(now {moment(now)})",
                "deadline",
            )
        if request.deadline < now + request.time_limit:
            raise RequestError(
                "invalid",
                f"deadline {request.deadline} ({moment(request.deadline)}) is sooner than now "
                f"({moment(now)}) + time_limit ({request.time_limit} s)",
                "deadline",
            )


def _check_totals(request: JobRequest, capacity: dict[str, int]) -> None:
    if not request.resources:
        raise RequestError("invalid", "a job must request at least one resource", "resources")
    for name, amount in request.resources.items():
        field = f"resources.{name}"
        if name not in capacity:
            known = ", ".join(sorted(capacity))
            raise RequestError(
                "invalid", f"unknown resource {name!r} (this cluster has: {known})", field
            )
        if amount < 0:
            raise RequestError("invalid", f"{name} must not be negative, got {amount}", field)
        if amount > capacity[name]:
            raise RequestError(
                "invalid",
                f"requests {amount} {name} but the cluster has only {capacity[name]}",
                field,
            )
    if not any(request.resources.values()):
        raise RequestError("invalid", "a job must request a positive amount", "resources")


def _check_slots(
    request: JobRequest,
    space: ResourceSpace,
    nodes: dict[int, int],
    policy: LivePolicy,
    policy_name: str,
) -> None:
    """Whether some set of the configured nodes (``nodes``: how many have each capacity,
    packed in ``space``) could hold the request's slots (its totals as equal slots when
    it gave none); slots under a pool policy are refused."""
    if policy.places_on_nodes:
        shape = request.shape or shape_of(request.resources)
        problem = shape_problem(shape, space, nodes)
        if problem is not None:
            field = problem.split(":", 1)[0] if request.shape is not None else "resources"
            raise RequestError("invalid", f"no set of nodes can hold it: {problem}", field)
    elif request.shape is not None:
        raise RequestError(
            "invalid",
            f"policy {policy_name} plans on a pool, so it cannot honour slots; "
            "slots need fcfs, easy or conservative with first-fit selection",
            "slots",
        )
