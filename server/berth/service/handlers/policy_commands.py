"""Switching a backfilling partition's policy, keeping every guarantee given.

The new policy is rebuilt from the records (a replan) on the nodes, as every policy
plans on named nodes; a switch that would break a guarantee is refused naming the jobs
unless forced. The handler of :class:`~berth.service.cluster_commands.ChangePolicy` (and of a
partition's policy change, :class:`~berth.service.cluster_commands.ChangePartition`): it takes
the engine and works through its core steps. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from berth.core.policies import policy_problem
from berth.service.jobs.settling import plan_again
from berth.service.model import RequestError

if TYPE_CHECKING:
    from berth.service.engine import Engine
    from berth.service.planning.replan import Replan


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """A backfilling partition's new policy (the default one's unless ``partition``
    names another) and the replan under it, as :func:`plan_policy_change` found it."""

    name: str
    options: dict[str, object]
    partition: str | None
    replan: Replan


def plan_policy_change(
    engine: Engine,
    name: str,
    options: dict[str, object],
    now: int,
    force: bool = False,
    partition: str | None = None,
) -> PolicyChange:
    """The new policy rebuilt from the records, or the refusal (a bad policy or option,
    or a guarantee it would break unless ``force``). Reads the engine and changes
    nothing, so the single writer runs it off the event loop (a
    :class:`~berth.service.commands.Prepared` command)."""
    if partition is not None and partition not in engine.backfill:
        raise RequestError("not_found", f"no backfilling partition {partition!r}", "name")
    problem = policy_problem(name, options)
    if problem is not None:
        option, message = problem
        raise RequestError("invalid", message, "policy" if option is None else "options")
    try:
        replan = engine.replan(name, options, now, keep_plan=False, partition=partition)
    except (ValueError, TypeError) as error:
        raise RequestError("invalid", str(error), "options") from None
    if replan.broken and not force:
        raise RequestError(
            "conflict",
            replan.refusal(f"switching to {name}", forced="switches"),
            "policy",
        )
    return PolicyChange(name, dict(options), partition, replan)


def apply_policy_change(engine: Engine, change: PolicyChange, now: int) -> None:
    """Put the policy :func:`plan_policy_change` rebuilt in force."""
    name, options, partition = change.name, change.options, change.partition
    if partition is None:
        engine.partitions.policy_name, engine.partitions.policy_options = name, dict(options)
    else:
        engine.backfill[partition].policy = name
        engine.backfill[partition].options = dict(options)
    engine.outbox.config_changed()
    engine.life.install(change.replan, now, partition=partition)
    for job_id in engine.deps.plannable_begins(partition):  # (it plans ahead: reserved now)
        plan_again(engine.life, engine.jobs[job_id], now)
    engine.outbox.emit(
        "policy.changed", now, policy=name, options=dict(options), partition=partition
    )
    engine.schedule_pass(now)
