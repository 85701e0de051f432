"""Partitions: named sets of nodes, each with its own policy.

Every node belongs to one partition. The *default* partition holds every node no other
partition names and runs the daemon's policy (``PUT /v1/admin/policy``). Operators make
other partitions from nodes of the default partition that run nothing of it (refused,
unless forced, if a guarantee of the default partition would break): a *backfilling*
partition runs any policy Berth has, over its own nodes, with its own guarantees; a
*gang* partition keeps Zhou's matrix (:mod:`berth.service.jobs.gang_slots`). Operators change
a partition's policy (backfilling: refused if a guarantee would break, unless forced;
gang: slot length and row limit at once, the scheme only while empty), drain it (no new
jobs; those it has go on) and delete it once empty (its nodes return to the default
partition): those commands are handlers in :mod:`berth.service.handlers.partition_commands`.
This module is the part of :class:`~berth.service.engine.Engine` that holds the
partitions and answers what the engine looks up about them: each one's nodes (its pool)
and policy, which partition owns a node, a job's gang partition, whether a gang
partition takes a request, a waiting gang job's reason, a summary for the API. No I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from berth.service.model import JobRecord, RequestError
from berth.service.nodes.cluster import Cluster
from berth.service.partitions.gang import GangPartition
from berth.service.partitions.specs import DEFAULT_PARTITION, BackfillSpec


class Partitions:
    """The partitions of ``cluster``: which nodes and policy each has, which owns a node
    (the operator commands are handlers in :mod:`berth.service.handlers.partition_commands`);
    ``jobs``: the engine's job table, for the summaries."""

    def __init__(
        self,
        cluster: Cluster,
        jobs: dict[int, JobRecord],
        policy_name: str,
        policy_options: dict[str, object],
    ) -> None:
        self.cluster = cluster
        self.jobs = jobs
        #: The default partition's policy (``PUT /v1/admin/policy`` changes it).
        self.policy_name = policy_name
        self.policy_options = dict(policy_options)
        #: Gang partitions, and backfilling partitions besides the default one, by name
        #: (every node no partition names is in the default partition).
        self.gang: dict[str, GangPartition] = {}
        self.backfill: dict[str, BackfillSpec] = {}

    def named_nodes(self) -> set[str]:
        taken = {node for part in self.gang.values() for node in part.spec.nodes}
        taken.update(node for spec in self.backfill.values() for node in spec.nodes)
        return taken

    def pool(self, partition: str | None = None) -> Cluster:
        """A backfilling partition's nodes, the default one's unless named (the records
        are the cluster's own)."""
        if partition is not None:
            return self.pool_of(self.backfill[partition].nodes)
        return self.default_pool_if(self.named_nodes())

    def pool_of(self, names: Iterable[str]) -> Cluster:
        """The cluster's nodes ``names`` (those it has), as a partition of them plans on
        them (the records are the cluster's own)."""
        nodes = self.cluster.nodes
        return Cluster(nodes[n] for n in names if n in nodes)

    def default_pool_if(self, taken: Collection[str]) -> Cluster:
        """The default partition's nodes were the other partitions' nodes ``taken`` (a
        partition made or deleted: its replan is prepared before the change is made)."""
        if not taken:
            return self.cluster
        return Cluster(r for n, r in self.cluster.nodes.items() if n not in taken)

    def policy_spec(self, partition: str | None) -> tuple[str, dict[str, object]]:
        """A backfilling partition's policy name and options."""
        if partition is None:
            return self.policy_name, self.policy_options
        spec = self.backfill[partition]
        return spec.policy, spec.options

    def partition_of_node(self, name: str) -> str:
        for part in self.gang.values():
            if name in part.spec.nodes:
                return part.spec.name
        for spec in self.backfill.values():
            if name in spec.nodes:
                return spec.name
        return DEFAULT_PARTITION

    def lane_of_node(self, name: str) -> str | None:
        """The backfilling partition to replan when node ``name`` changes (a gang
        partition's node: the default one, which it does not change)."""
        owner = self.partition_of_node(name)
        return owner if owner in self.backfill else None

    def gang_of(self, record: JobRecord) -> GangPartition | None:
        return None if record.partition is None else self.gang.get(record.partition)

    def missing_partition(self, name: str, kind: str = "", field: str = "name") -> RequestError:
        """404 naming ``name`` and the partitions there are; ``field``: where the request
        named it (a partition route's ``name``, a query's ``partition``)."""
        known = ", ".join([DEFAULT_PARTITION, *sorted([*self.gang, *self.backfill])])
        return RequestError("not_found", f"no {kind}partition {name!r} (known: {known})", field)

    def partition(self, name: str) -> GangPartition:
        """A gang partition by name."""
        part = self.gang.get(name)
        if part is None:
            raise self.missing_partition(name, "gang " if name in self.backfill else "")
        return part

    def check_open(self, partition: str | None) -> None:
        """Refuse a job for a drained backfilling partition."""
        if partition is not None and self.backfill[partition].drained:
            raise RequestError(
                "conflict", f"partition {partition!r} is drained: it takes no new jobs", "partition"
            )

    def partition_summary(self, name: str) -> dict[str, object]:
        """One partition as the API shows it: policy, options, nodes, jobs by state."""
        lane: str | None = None if name == DEFAULT_PARTITION else name
        jobs = [r for r in self.jobs.values() if r.partition == lane and not r.final]
        summary: dict[str, object] = {
            "name": name,
            "pending": sum(1 for r in jobs if r.start_time is None),
            "running": sum(1 for r in jobs if r.start_time is not None),
            "suspended": sum(1 for r in jobs if r.suspended_at is not None),
            "processors": None,
            "rows": None,
        }
        if lane is None or lane in self.backfill:
            policy, options = self.policy_spec(lane)
            drained = lane is not None and self.backfill[lane].drained
            nodes = sorted(self.pool(lane).nodes) if lane is None else self.backfill[lane].nodes
            summary.update(policy=policy, options=dict(options), nodes=list(nodes),
                           drained=drained)  # fmt: skip
            return summary
        part = self.partition(name)
        spec = part.spec.as_dict()
        summary.update(policy="gang", options=spec["options"], nodes=list(part.spec.nodes),
                       drained=part.spec.drained, processors=part.processors,
                       rows=len(part.rotation.scheduler.matrix.rows))  # fmt: skip
        return summary

    def partition_names(self) -> list[str]:
        return [DEFAULT_PARTITION, *sorted([*self.gang, *self.backfill])]

    # ------------------------------------------------------------------ gang partitions
    def gang_request_problem(self, part: GangPartition, record: JobRecord) -> RequestError | None:
        """Why gang partition ``part`` cannot take ``record`` (``None``: it can)."""
        name = part.spec.name
        if part.spec.drained:
            return RequestError(
                "conflict", f"partition {name!r} is drained: it takes no new jobs", "partition"
            )
        if record.shape is not None:
            return RequestError(
                "invalid",
                f"gang partition {name!r} places jobs by cpus; slots are not supported there",
                "slots",
            )
        if record.begin_time is not None:
            return RequestError(
                "invalid",
                f"gang partition {name!r} starts jobs at its slot boundaries; "
                "a begin time is not supported there",
                "begin_time",
            )
        problem = part.request_problem(record.resources)
        if problem is not None:
            return RequestError("invalid", problem[1], problem[0])
        return None

    def next_gang_boundary(self) -> int | None:
        """The next slot boundary of any gang partition."""
        return min((d for p in self.gang.values() if (d := p.due()) is not None), default=None)


def gang_reason(
    part: GangPartition, record: JobRecord, now: int, queued: set[int] | None = None
) -> bool:
    """Set a waiting gang job's reason and forecast start; whether they changed.
    ``queued``: the jobs waiting in the partition's scheduler, if known."""
    name = part.spec.name
    planned = part.next_run(record.id, now)
    if queued is None:
        queued = {j for j, _ in part.rotation.scheduler.waiting}
    if planned is not None:
        rows = part.rows_of(record.id)
        reason = f"placed in row {rows[0]} of gang partition {name!r}; starts when that row runs"
    elif record.id in part.rotation.scheduler.matrix.jobs:
        reason = f"placed in gang partition {name!r} on a node that is not up"
    elif record.id in queued:
        limit = part.spec.max_rows
        reason = (
            f"waits in order in gang partition {name!r}: "
            + (f"its {limit} rows are full, or " if limit is not None else "")
            + "its nodes lack the memory or GPUs it holds while suspended"
        )
    else:
        planned = part.due()
        reason = f"joins gang partition {name!r} at the next slot boundary"
    if (reason, planned) == (record.state_reason, record.planned_start):
        return False
    record.state_reason, record.planned_start = reason, planned
    return True
