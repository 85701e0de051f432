"""The handlers of the operator's partition commands: create, change, drain, delete.

A partition is made from nodes of the default partition that run nothing of it
(refused, unless forced, if a guarantee of the default partition would break); a gang
partition's slot length and row limit change at once, its scheme only while it is
empty; a drained partition takes no new jobs; an empty one can be deleted, its nodes
returning to the default partition. Functions of the engine, working through its core
steps (``replan``, ``install``, ``schedule_pass``); the typed commands call them. No I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.core.policies import policy_problem
from berth.service.model import RequestError
from berth.service.partitions.gang import GangPartition, GangSpec
from berth.service.partitions.specs import DEFAULT_PARTITION, BackfillSpec

if TYPE_CHECKING:
    from berth.service.engine import Engine


def _unfinished(engine: Engine, name: str) -> list[int]:
    return [i for i, r in engine.jobs.items() if r.partition == name and not r.final]


def create_partition(
    engine: Engine, spec: GangSpec | BackfillSpec, now: int, force: bool = False
) -> GangPartition | BackfillSpec:
    """A partition over nodes taken from the default partition."""
    name = spec.name
    if name == DEFAULT_PARTITION or name in engine.gang or name in engine.backfill:
        raise RequestError("conflict", f"partition {name!r} already exists", "name")
    _check_nodes(engine, spec)
    made: GangPartition | BackfillSpec
    if isinstance(spec, GangSpec):
        made = engine.gang[name] = GangPartition(spec, engine.cluster.nodes)
    else:
        made = engine.backfill[name] = spec
    try:
        replan = engine.replan(
            engine.partitions.policy_name, engine.partitions.policy_options, now, keep_plan=True
        )
        own = None
        if isinstance(spec, BackfillSpec):
            own = engine.replan(spec.policy, spec.options, now, False, partition=name)
    except (ValueError, TypeError) as error:
        _forget(engine, name)
        if isinstance(spec, BackfillSpec) and engine.partitions.pool().nodes:
            raise RequestError("invalid", str(error), "options") from None
        raise RequestError(
            "conflict",
            "the default partition would have no node left for its waiting jobs",
            "nodes",
        ) from None
    if replan.broken and not force:
        _forget(engine, name)
        raise RequestError(
            "conflict",
            replan.refusal("taking these nodes from the default partition"),
            "nodes",
        )
    engine.outbox.config_changed()
    engine.life.install(replan, now)
    if own is not None:
        engine.life.install(own, now, partition=name)
    engine.outbox.emit("partition.created", now, partition=spec.as_dict())
    engine.schedule_pass(now)
    return made


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


def _forget(engine: Engine, name: str) -> None:
    engine.gang.pop(name, None)
    engine.backfill.pop(name, None)
    engine.planner.drop(name)


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


def delete_partition(engine: Engine, name: str, now: int) -> None:
    """An empty partition goes; its nodes return to the default partition."""
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
    _forget(engine, name)
    engine.outbox.config_changed()
    engine.life.install(
        engine.replan(engine.partitions.policy_name, engine.partitions.policy_options, now, True),
        now,
    )
    engine.outbox.emit("partition.deleted", now, partition=name, nodes=list(nodes))
    engine.schedule_pass(now)
