"""Replanning: a policy rebuilt from the live records, and the guarantees it would break.

The engine replans whenever the schedulable nodes or the policy change, and on restart:
a fresh policy over the nodes that are up adopts every running job with what it holds,
then every waiting job in arrival order (keeping its planned start where still
feasible). The result says, job by job, what the new policy decided and which promises
it cannot keep, so the caller can refuse the change or apply it and announce new times.
No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from berth.core.decisions import Reject, Reserve
from berth.core.policies.base import LivePolicy
from berth.core.policies.empty import NoNodes
from berth.core.policies.node_registry import make_node_policy
from berth.service.model import JobRecord, NodeState, moment
from berth.service.nodes.cluster import Cluster

#: The node a policy is checked on while a cluster has none.
STAND_IN = "(no node yet)"


#: The most broken guarantees a refusal names one by one.
BROKEN_NAMED = 10


@dataclass(slots=True)
class Replan:
    """A candidate policy built from the records, and the decision for each waiting job."""

    policy: LivePolicy
    decisions: dict[int, Reserve | Reject | None]
    broken: list[str]

    def refusal(self, change: str, forced: str = "goes ahead") -> str:
        """Why ``change`` is refused: the guarantees it would break (the first ten
        named) and how to force it, from the command line or the API."""
        named = "; ".join(self.broken[:BROKEN_NAMED])
        more = "" if len(self.broken) <= BROKEN_NAMED else "; ..."
        return (
            f"{change} would break {len(self.broken)} guarantee(s): {named}{more} "
            f"(forced, it {forced} anyway: --force, or force: true in the API)"
        )


def build_policy(cluster: Cluster, name: str, options: dict[str, object]) -> LivePolicy:
    """The policy over the nodes that are up (every policy plans on named nodes);
    ValueError for a bad policy or option."""
    # With no node at all, jobs wait (unplanned, with a reason) for nodes to come; the
    # policy is still checked (on a stand-in node: its constructor checks the options'
    # values), or a daemon waiting for its first agent would keep a misspelt one.
    everything = {n.name: n.resources for n in cluster.nodes.values()}
    if not everything:
        make_node_policy(name, {STAND_IN: {"cpus": 1}}, None, **options)
        return NoNodes()
    up = {n.name: n.resources for n in cluster.nodes.values() if n.state is NodeState.UP}
    return make_node_policy(name, up, everything, **options)


def replan(
    cluster: Cluster,
    running: Iterable[JobRecord],
    pending: Iterable[JobRecord],
    name: str,
    options: dict[str, object],
    now: int,
    keep_plan: bool,
    tighten: bool = True,
    defer: bool = False,
) -> Replan:
    """A policy rebuilt from the records; raises ValueError for an empty pool or bad
    options. With ``keep_plan`` the waiting jobs keep their planned starts where feasible;
    with ``tighten`` the plan is then tightened (compressed) for what changed. A restart
    does not tighten: the plan it resumes was the live one, and compressing it again
    could move a job that the live compression, one pass in arrival order, had left
    where it was (a restart changes no planned start). With ``defer`` (the daemon's) the
    tightening is left to the slices of deferred improvement after the policy is
    installed: half of a replan's time on 4,096 nodes, during which no command is
    applied; a reservation only ever moves earlier, so no promise waits on it."""
    policy = build_policy(cluster, name, options)
    space = policy.space
    for record in sorted(running, key=lambda r: (r.start_time or 0, r.id)):
        assert record.start_time is not None
        held = cluster.held_in_pool(record.allocation)
        held = {n: a for n, a in held.items() if n in space.capacity}
        policy.adopt_running(
            record.as_job(), record.start_time, now, held, placement=record.allocation
        )
    decisions: dict[int, Reserve | Reject | None] = {}
    broken: list[str] = []
    pending = list(pending)
    if keep_plan:  # each back on the nodes it was planned on, where they are still free
        policy.remember_nodes({r.id: r.planned_nodes for r in pending if r.planned_nodes})
    for record in pending:
        decision = policy.adopt_waiting(
            record.as_job(),
            now,
            record.planned_start if keep_plan else None,
            record.guaranteed_start,
        )
        decisions[record.id] = decision
        problem = _broken(record, decision)
        if problem is not None:
            broken.append(problem)
    policy.deferred = defer
    policy.settle(now, tighten)
    return Replan(policy, decisions, broken)


def _broken(record: JobRecord, decision: Reserve | Reject | None) -> str | None:
    """How ``decision`` breaks the job's guarantee, if it does."""
    promised = record.guaranteed_start
    if promised is None:
        return None
    if isinstance(decision, Reject):
        return f"job {record.id} would be rejected: {decision.reason}"
    if decision is None or decision.guarantee is None:
        # (no start at all: what its user was promised under deadline admission is the end)
        missed = (
            "" if record.deadline is None else f" to end by its deadline {moment(record.deadline)}"
        )
        return f"job {record.id} (guaranteed start {moment(promised)}) would lose its guarantee{missed}"
    if decision.guarantee > promised:
        # (A deadline job's guarantee is its latest start: say what the user was promised.)
        missed = ""
        if record.deadline is not None and decision.guarantee + record.time_limit > record.deadline:
            missed = f": it would end after its deadline {moment(record.deadline)}"
        return (
            f"job {record.id} (guaranteed start {moment(promised)}) could only be promised "
            f"{moment(decision.guarantee)}, {decision.guarantee - promised} s later{missed}"
        )
    return None
