"""Partitions: named sets of nodes, each with its own policy.

Every node belongs to one partition. The *default* partition holds every node no other
partition names and runs the daemon's policy (``PUT /v1/admin/policy``). Operators make
other partitions from nodes of the default partition that run nothing of it (refused,
unless forced, if a guarantee of the default partition would break): a *backfilling*
partition runs any policy Berth has, over its own nodes, with its own guarantees; a
*gang* partition keeps Zhou's matrix (:mod:`berth.service.gang_slots`). Operators change
a partition's policy (backfilling: refused if a guarantee would break, unless forced;
gang: slot length and row limit at once, the scheme only while empty), drain it (no new
jobs; those it has go on) and delete it once empty (its nodes return to the default
partition): those commands are handlers in :mod:`berth.service.partition_commands`.
This module is what the engine looks up about partitions: each one's nodes (its pool)
and policy, which partition owns a node, a job's gang partition, a summary for the API.
A mixin of :class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.service.cluster import Cluster
from berth.service.engine_base import EngineBase
from berth.service.gang import GangPartition
from berth.service.model import JobRecord, RequestError
from berth.service.partition_specs import DEFAULT_PARTITION


class PartitionLookups(EngineBase):
    """The engine's partitions: which nodes and policy each has, which owns a node (a
    mixin; the operator commands are handlers in :mod:`berth.service.partition_commands`)."""

    # ------------------------------------------------------------------ lookups
    def _named_nodes(self) -> set[str]:
        taken = {node for part in self.gang.values() for node in part.spec.nodes}
        taken.update(node for spec in self.backfill.values() for node in spec.nodes)
        return taken

    def pool(self, partition: str | None = None) -> Cluster:
        """A backfilling partition's nodes, the default one's unless named (the records
        are the cluster's own)."""
        if partition is not None:
            nodes = self.cluster.nodes
            return Cluster(nodes[n] for n in self.backfill[partition].nodes if n in nodes)
        if not self.gang and not self.backfill:
            return self.cluster
        taken = self._named_nodes()
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

    def missing_partition(self, name: str, kind: str = "") -> RequestError:
        """404 naming ``name`` and the partitions there are."""
        known = ", ".join([DEFAULT_PARTITION, *sorted([*self.gang, *self.backfill])])
        return RequestError("not_found", f"no {kind}partition {name!r} (known: {known})", "name")

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
