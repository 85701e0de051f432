"""The handlers of the operator's partition commands: create, change, drain, delete.

A partition is made from nodes of the default partition that run nothing of it
(refused, unless forced, if a guarantee of the default partition would break); a gang
partition's slot length and row limit change at once, its scheme only while it is
empty; a drained partition takes no new jobs; an empty one can be deleted, its nodes
returning to the default partition. Functions of the engine, working through its core
steps (``replan``, ``install``, ``schedule_pass``); the typed commands call them. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from berth.core.policies import policy_problem
from berth.service.model import RequestError
from berth.service.partitions.gang import GangPartition, GangSpec
from berth.service.partitions.specs import DEFAULT_PARTITION, BackfillSpec

if TYPE_CHECKING:
    from berth.service.engine import Engine
    from berth.service.planning.replan import Replan


def _unfinished(engine: Engine, name: str) -> list[int]:
    return [i for i, r in engine.jobs.items() if r.partition == name and not r.final]


@dataclass(frozen=True, slots=True)
class PartitionMade:
    """A partition about to be made: the partition itself, the default partition's
    replan without its nodes and, for a backfilling partition, its own plan."""

    made: GangPartition | BackfillSpec
    default: Replan
    own: Replan | None


def plan_partition(
    engine: Engine, spec: GangSpec | BackfillSpec, now: int, force: bool = False
) -> PartitionMade:
    """What creating a partition over nodes taken from the default partition will do,
    reading the engine only (the single writer runs it off the event loop: the default
    partition's replan over a large cluster takes seconds); refused here with the field
    at fault, or the guarantees it would break unless ``force``."""
    name = spec.name
    if name == DEFAULT_PARTITION or name in engine.gang or name in engine.backfill:
        raise RequestError("conflict", f"partition {name!r} already exists", "name")
    _check_nodes(engine, spec)
    left = engine.partitions.default_pool_if({*engine.partitions.named_nodes(), *spec.nodes})
    policy, options = engine.partitions.policy_name, engine.partitions.policy_options
    try:
        replan = engine.replan(policy, options, now, keep_plan=True, pool=left)
        own = None
        if isinstance(spec, BackfillSpec):
            nodes = engine.partitions.pool_of(spec.nodes)
            own = engine.replan(spec.policy, spec.options, now, False, partition=name, pool=nodes)
    except (ValueError, TypeError) as error:
        if isinstance(spec, BackfillSpec) and left.nodes:
            raise RequestError("invalid", str(error), "options") from None
        raise RequestError(
            "conflict",
            "the default partition would have no node left for its waiting jobs",
            "nodes",
        ) from None
    if replan.broken and not force:
        raise RequestError(
            "conflict",
            replan.refusal("taking these nodes from the default partition"),
            "nodes",
        )
    made = GangPartition(spec, engine.cluster.nodes) if isinstance(spec, GangSpec) else spec
    return PartitionMade(made, replan, own)


def apply_partition(engine: Engine, change: PartitionMade, now: int) -> None:
    """Make the partition :func:`plan_partition` planned, at the same instant."""
    made = change.made
    if isinstance(made, GangPartition):
        engine.gang[made.spec.name] = made
        spec: GangSpec | BackfillSpec = made.spec
    else:
        spec = engine.backfill[made.name] = made
    engine.outbox.config_changed()
    engine.life.install(change.default, now)
    if change.own is not None:
        engine.life.install(change.own, now, partition=spec.name)
    engine.outbox.emit("partition.created", now, partition=spec.as_dict())
    engine.schedule_pass(now)


def _check_nodes(engine: Engine, spec: GangSpec | BackfillSpec) -> None:
    if isinstance(spec, GangSpec):
        problem = GangPartition.problem(spec, engine.cluster.nodes)
        if problem is not None:
            raise RequestError("invalid", problem[1], problem[0])
    else:
        policy = policy_problem(spec.policy, spec.options)
        if policy is not None:
            option, message = policy
            raise RequestError("invalid", message, "policy" if option is None else "options")
        unknown = [n for n in spec.nodes if n not in engine.cluster.nodes]
        if not spec.nodes or unknown:
            raise RequestError(
                "invalid", f"no node {unknown[0]!r}" if unknown else "no nodes", "nodes"
            )
    for node in spec.nodes:
        owner = engine.partitions.partition_of_node(node)
        if owner != DEFAULT_PARTITION:
            raise RequestError(
                "conflict", f"node {node!r} already belongs to partition {owner!r}", "nodes"
            )
        busy = sorted(i for i, r in engine.running.items() if node in r.allocation)
        if busy:
            raise RequestError(
                "conflict",
                f"node {node!r} runs job(s) {', '.join(map(str, busy[:10]))} of the "
                "default partition; drain it and let them end first",
                "nodes",
                {"job_ids": busy},
            )


def change_partition(
    engine: Engine,
    name: str,
    now: int,
    scheme: str | None = None,
    slot_seconds: int | None = None,
    max_rows: int | None = None,
    clear_max_rows: bool = False,
) -> GangPartition:
    """A gang partition's new slot length or row limit (from the next boundary); a
    new scheme only while it has no job."""
    part = engine.partitions.partition(name)
    spec = GangSpec(
        name,
        list(part.spec.nodes),
        scheme or part.spec.scheme,
        slot_seconds or part.spec.slot_seconds,
        None if clear_max_rows else (max_rows or part.spec.max_rows),
        part.spec.drained,
    )
    problem = GangPartition.problem(spec, engine.cluster.nodes)
    if problem is not None:
        raise RequestError("invalid", problem[1], problem[0])
    if spec.scheme != part.spec.scheme:
        jobs = _unfinished(engine, name)
        if jobs:
            raise RequestError(
                "conflict",
                f"the scheme of partition {name!r} can only change while it has no job; "
                f"{len(jobs)} are queued or running (drain it and let them end)",
                "scheme",
            )
        part = engine.gang[name] = GangPartition(spec, engine.cluster.nodes)
    else:
        part.spec = spec
        part.rotation.scheduler.max_rows = spec.max_rows
    engine.outbox.config_changed()
    engine.outbox.emit("partition.changed", now, partition=spec.as_dict())
    return part


def drain_partition(
    engine: Engine, name: str, drained: bool, now: int
) -> GangPartition | BackfillSpec:
    """A drained partition refuses new jobs; those it has go on."""
    made: GangPartition | BackfillSpec
    if name in engine.backfill:
        made = engine.backfill[name]
        made.drained = drained
    else:
        made = engine.partitions.partition(name)
        made.spec.drained = drained
    engine.outbox.config_changed()
    engine.outbox.emit("partition.drained" if drained else "partition.resumed", now, partition=name)
    return made


@dataclass(frozen=True, slots=True)
class PartitionGone:
    """A partition about to be deleted: its nodes, and the default partition's replan
    with them."""

    name: str
    nodes: list[str]
    default: Replan


def plan_delete(engine: Engine, name: str, now: int) -> PartitionGone:
    """What deleting an empty partition will do, reading the engine only (its nodes
    return to the default partition: a replan, made off the event loop)."""
    if name not in engine.backfill and name not in engine.gang:
        raise engine.partitions.missing_partition(name)
    jobs = _unfinished(engine, name)
    if jobs:
        raise RequestError(
            "conflict",
            f"partition {name!r} still has {len(jobs)} job(s) queued or running "
            f"({', '.join(map(str, jobs[:10]))}); drain it and let them end",
            "name",
            {"job_ids": jobs},
        )
    nodes = (engine.backfill[name] if name in engine.backfill else engine.gang[name].spec).nodes
    partitions = engine.partitions
    pool = partitions.default_pool_if(partitions.named_nodes() - set(nodes))
    replan = engine.replan(partitions.policy_name, partitions.policy_options, now, True, pool=pool)
    return PartitionGone(name, list(nodes), replan)


def apply_delete(engine: Engine, gone: PartitionGone, now: int) -> None:
    """Delete the partition :func:`plan_delete` planned for, at the same instant."""
    engine.gang.pop(gone.name, None)
    engine.backfill.pop(gone.name, None)
    engine.planner.drop(gone.name)
    engine.outbox.config_changed()
    engine.life.install(gone.default, now)
    engine.outbox.emit("partition.deleted", now, partition=gone.name, nodes=gone.nodes)
    engine.schedule_pass(now)
