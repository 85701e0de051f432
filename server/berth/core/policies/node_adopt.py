"""A node policy taking jobs over (a restart, a replan), and a waiting job let start earlier.

:func:`adopt_running` puts a running job back on the nodes it holds; :func:`adopt_waiting`
queues a waiting job at its old start and nodes where they are still free (else at its
earliest placement), keeping its guarantee when the start is no later. :func:`relax`
lets a waiting job start earlier than before (what it waits for came earlier: see
:mod:`berth.core.waits`) and moves it up if it can. A restart puts each waiting job
back on the nodes it was planned on (:func:`kept_placement`), by name: another
placement at the same start could take nodes that a job adopted later was promised.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.nodes import NodePlan, Placement
from berth.core.policies.base import push_starts
from berth.core.policies.node_schedule import NodeSchedule, Planned
from berth.core.shapes import shape_of
from berth.core.whole_nodes import CountedPlan


def adopt_running(
    policy: NodeSchedule,
    job: Job,
    start: int,
    now: int,
    placement: Mapping[str, Mapping[str, int]] | None,
) -> None:
    """Take over a running job with what it holds per node (``placement``); what it
    holds on nodes this plan does not cover (draining) is not counted."""
    index = policy.node_index
    capacity = policy.space.capacity
    kept = {
        index[name]: policy.space.pack({n: a for n, a in amounts.items() if n in capacity})
        for name, amounts in (placement or {}).items()
        if name in index
    }
    entry = Planned(job, job.shape or shape_of(job.resources), 0, start, None, kept)
    end = start + job.estimate
    plan = policy.plan
    if isinstance(plan, CountedPlan) and any(a != plan.node_capacity for a in kept.values()):
        policy._name_nodes(now)  # it shares a node: nodes can no longer be counted
    if end > now and kept:
        policy.plan.reserve(kept, now, end - now)
    policy.running[job.id] = entry
    policy.used += sum(kept.values())


def adopt_waiting(
    policy: NodeSchedule, job: Job, now: int, start: int | None, guarantee: int | None
) -> Reserve | Reject | None:
    """Queue a job in arrival order; under conservative at its old start and a
    placement there if one is free (and the job may start then), else at its earliest;
    the old guarantee is kept when the start is no later."""
    entry = policy._admit(job, now)
    if isinstance(entry, Reject):
        return entry
    if policy.depth is not None or job.id in policy.parked:
        return None
    placement = None
    if start is not None and start >= job.ready(now):
        nodes = policy.kept_nodes.get(job.id)
        placement = None if nodes is None else kept_placement(policy, entry, nodes, start)
        if placement is None:
            placement = policy.plan.place(entry.shape, entry.demand, start, job.estimate)
    if start is None or placement is None:
        policy._reserve_earliest(entry, now)
    else:
        policy._hold(entry, start, placement)
        push_starts(policy._starts, [(start, job.id)], policy.waiting, policy._arrival)
    assert entry.start is not None
    kept = guarantee is not None and entry.start <= guarantee
    entry.guarantee = guarantee if kept else entry.start
    return Reserve(job.id, entry.start, entry.guarantee, "taken over with its reservation")


def relax(policy: NodeSchedule, job_id: int, not_before: int | None, now: int) -> None:
    """A waiting job may start from ``not_before`` (earlier than before): asked again at
    the next compression, and moved up now if it can."""
    entry = policy.waiting.get(job_id)
    if entry is None:
        return
    entry.job = replace(entry.job, not_before=not_before)
    entry.checked = -1
    old = entry.start
    if old is None or entry.held is None:
        return
    first: int | None = entry.job.ready(now)
    if entry.need is not None and first is not None and first < old:
        summed, total = entry.need  # as compression asks (a counted plan needs it)
        first = summed.earliest_start(total, entry.job.estimate, first, old)
    if first is not None and first < old:
        policy._move_earlier(entry, first)


def kept_placement(
    policy: NodeSchedule, entry: Planned, nodes: Mapping[str, int], start: int
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
