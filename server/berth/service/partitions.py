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
partition). A part of :class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.core.policies import policy_problem
from berth.service.cluster import Cluster
from berth.service.engine_base import EngineBase
from berth.service.gang import GangPartition, GangSpec
from berth.service.model import JobRecord, RequestError
from berth.service.partition_specs import DEFAULT_PARTITION, BackfillSpec


class PartitionCommands(EngineBase):
    """The engine's partitions: lookups and operator commands (a mixin)."""

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

    def _missing(self, name: str, kind: str = "") -> RequestError:
        known = ", ".join([DEFAULT_PARTITION, *sorted([*self.gang, *self.backfill])])
        return RequestError("not_found", f"no {kind}partition {name!r} (known: {known})", "name")

    def partition(self, name: str) -> GangPartition:
        """A gang partition by name."""
        part = self.gang.get(name)
        if part is None:
            raise self._missing(name, "gang " if name in self.backfill else "")
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

    def _unfinished(self, name: str) -> list[int]:
        return [i for i, r in self.jobs.items() if r.partition == name and not r.final]

    # ------------------------------------------------------------------ operator commands
    def create_partition(
        self, spec: GangSpec | BackfillSpec, now: int, force: bool = False
    ) -> GangPartition | BackfillSpec:
        """A partition over nodes taken from the default partition."""
        name = spec.name
        if name == DEFAULT_PARTITION or name in self.gang or name in self.backfill:
            raise RequestError("conflict", f"partition {name!r} already exists", "name")
        self._check_nodes(spec)
        made: GangPartition | BackfillSpec
        if isinstance(spec, GangSpec):
            made = self.gang[name] = GangPartition(spec, self.cluster.nodes)
        else:
            made = self.backfill[name] = spec
        try:
            replan = self.replan(self.policy_name, self.policy_options, now, keep_plan=True)
            own = None
            if isinstance(spec, BackfillSpec):
                own = self.replan(spec.policy, spec.options, now, False, partition=name)
        except (ValueError, TypeError) as error:
            self._forget(name)
            if isinstance(spec, BackfillSpec) and self.pool().nodes:
                raise RequestError("invalid", str(error), "options") from None
            raise RequestError(
                "conflict",
                "the default partition would have no node left for its waiting jobs",
                "nodes",
            ) from None
        if replan.broken and not force:
            self._forget(name)
            raise RequestError(
                "conflict",
                f"taking these nodes from the default partition would break "
                f"{len(replan.broken)} guarantee(s): "
                + "; ".join(replan.broken[:10])
                + " (force=true does it anyway)",
                "nodes",
            )
        self.outbox.config_changed()
        self.install(replan, now)
        if own is not None:
            self.install(own, now, partition=name)
        self.outbox.emit("partition.created", now, partition=spec.as_dict())
        self.schedule_pass(now)
        return made

    def _check_nodes(self, spec: GangSpec | BackfillSpec) -> None:
        if isinstance(spec, GangSpec):
            problem = GangPartition.problem(spec, self.cluster.nodes)
            if problem is not None:
                raise RequestError("invalid", problem[1], problem[0])
        else:
            policy = policy_problem(spec.policy, spec.options)
            if policy is not None:
                option, message = policy
                raise RequestError("invalid", message, "policy" if option is None else "options")
            unknown = [n for n in spec.nodes if n not in self.cluster.nodes]
            if not spec.nodes or unknown:
                raise RequestError(
                    "invalid", f"no node {unknown[0]!r}" if unknown else "no nodes", "nodes"
                )
        for node in spec.nodes:
            owner = self.partition_of_node(node)
            if owner != DEFAULT_PARTITION:
                raise RequestError(
                    "conflict", f"node {node!r} already belongs to partition {owner!r}", "nodes"
                )
            busy = sorted(i for i, r in self.running.items() if node in r.allocation)
            if busy:
                raise RequestError(
                    "conflict",
                    f"node {node!r} runs job(s) {', '.join(map(str, busy[:10]))} of the "
                    "default partition; drain it and let them end first",
                    "nodes",
                    {"job_ids": busy},
                )

    def _forget(self, name: str) -> None:
        self.gang.pop(name, None)
        self.backfill.pop(name, None)
        self.planner.drop(name)

    def change_partition(
        self,
        name: str,
        now: int,
        scheme: str | None = None,
        slot_seconds: int | None = None,
        max_rows: int | None = None,
        clear_max_rows: bool = False,
    ) -> GangPartition:
        """A gang partition's new slot length or row limit (from the next boundary); a
        new scheme only while it has no job."""
        part = self.partition(name)
        spec = GangSpec(
            name,
            list(part.spec.nodes),
            scheme or part.spec.scheme,
            slot_seconds or part.spec.slot_seconds,
            None if clear_max_rows else (max_rows or part.spec.max_rows),
            part.spec.drained,
        )
        problem = GangPartition.problem(spec, self.cluster.nodes)
        if problem is not None:
            raise RequestError("invalid", problem[1], problem[0])
        if spec.scheme != part.spec.scheme:
            jobs = self._unfinished(name)
            if jobs:
                raise RequestError(
                    "conflict",
                    f"the scheme of partition {name!r} can only change while it has no job; "
                    f"{len(jobs)} are queued or running (drain it and let them end)",
                    "scheme",
                )
            part = self.gang[name] = GangPartition(spec, self.cluster.nodes)
        else:
            part.spec = spec
            part.rotation.scheduler.max_rows = spec.max_rows
        self.outbox.config_changed()
        self.outbox.emit("partition.changed", now, partition=spec.as_dict())
        return part

    def drain_partition(self, name: str, drained: bool, now: int) -> GangPartition | BackfillSpec:
        """A drained partition refuses new jobs; those it has go on."""
        made: GangPartition | BackfillSpec
        if name in self.backfill:
            made = self.backfill[name]
            made.drained = drained
        else:
            made = self.partition(name)
            made.spec.drained = drained
        self.outbox.config_changed()
        self.outbox.emit(
            "partition.drained" if drained else "partition.resumed", now, partition=name
        )
        return made

    def delete_partition(self, name: str, now: int) -> None:
        """An empty partition goes; its nodes return to the default partition."""
        if name not in self.backfill and name not in self.gang:
            raise self._missing(name)
        jobs = self._unfinished(name)
        if jobs:
            raise RequestError(
                "conflict",
                f"partition {name!r} still has {len(jobs)} job(s) queued or running "
                f"({', '.join(map(str, jobs[:10]))}); drain it and let them end",
                "name",
                {"job_ids": jobs},
            )
        nodes = (self.backfill[name] if name in self.backfill else self.gang[name].spec).nodes
        self._forget(name)
        self.outbox.config_changed()
        self.install(self.replan(self.policy_name, self.policy_options, now, True), now)
        self.outbox.emit("partition.deleted", now, partition=name, nodes=list(nodes))
        self.schedule_pass(now)
