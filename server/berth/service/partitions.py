"""Partitions: named sets of nodes with their own policy, and gang partitions in time.

Every node belongs to one partition. The *default* partition holds every node no other
partition names and runs the daemon's backfilling policy (``PUT /v1/admin/policy``).
Operators create gang partitions from nodes that run nothing of the default partition
(taking nodes out of it is refused, unless forced, if a guarantee would break), change
their scheme (only while empty), slot length and row limit, drain them (no new jobs;
those queued go on), and delete them once empty (their nodes return to the default
partition). At each slot boundary a gang partition's matrix moves on, and the jobs of
the outgoing row are suspended, those of the incoming row resumed or started, through
the same intents as every other node command. A part of
:class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.service.cluster import Cluster
from berth.service.engine_base import EngineBase
from berth.service.gang import GangPartition, GangSpec
from berth.service.intents import Resume, StartOn, Suspend
from berth.service.model import JobRecord, JobState, RequestError

#: The partition of every job that names none, and of every node no partition names.
DEFAULT_PARTITION = "default"


class PartitionCommands(EngineBase):
    """The engine's partition commands and slot boundaries (a mixin)."""

    # ------------------------------------------------------------------ lookups
    def pool(self) -> Cluster:
        """The default partition's nodes (the records are the cluster's own)."""
        if not self.gang:
            return self.cluster
        taken = {node for part in self.gang.values() for node in part.spec.nodes}
        return Cluster(r for n, r in self.cluster.nodes.items() if n not in taken)

    def partition_of_node(self, name: str) -> str:
        for part in self.gang.values():
            if name in part.spec.nodes:
                return part.spec.name
        return DEFAULT_PARTITION

    def gang_of(self, record: JobRecord) -> GangPartition | None:
        return None if record.partition is None else self.gang.get(record.partition)

    def partition(self, name: str) -> GangPartition:
        part = self.gang.get(name)
        if part is None:
            known = ", ".join([DEFAULT_PARTITION, *sorted(self.gang)])
            raise RequestError("not_found", f"no gang partition {name!r} (known: {known})", "name")
        return part

    def _unfinished(self, name: str) -> list[int]:
        return [i for i, r in self.jobs.items() if r.partition == name and not r.final]

    # ------------------------------------------------------------------ operator commands
    def create_partition(self, spec: GangSpec, now: int, force: bool = False) -> GangPartition:
        """A gang partition over nodes taken from the default partition."""
        if spec.name == DEFAULT_PARTITION or spec.name in self.gang:
            raise RequestError("conflict", f"partition {spec.name!r} already exists", "name")
        problem = GangPartition.problem(spec, self.cluster.nodes)
        if problem is not None:
            raise RequestError("invalid", problem[1], problem[0])
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
        part = GangPartition(spec, self.cluster.nodes)
        self.gang[spec.name] = part
        try:
            replan = self._replan(self.policy_name, self.policy_options, now, keep_plan=True)
        except ValueError:
            del self.gang[spec.name]
            raise RequestError(
                "conflict",
                "the default partition would have no node left for its waiting jobs",
                "nodes",
            ) from None
        if replan.broken and not force:
            del self.gang[spec.name]
            raise RequestError(
                "conflict",
                f"taking these nodes from the default partition would break "
                f"{len(replan.broken)} guarantee(s): "
                + "; ".join(replan.broken[:10])
                + " (force=true does it anyway)",
                "nodes",
            )
        self._config_dirty = True
        self._install(replan, now)
        self._emit("partition.created", now, partition=spec.as_dict())
        self._pass(now)
        return part

    def change_partition(
        self,
        name: str,
        now: int,
        scheme: str | None = None,
        slot_seconds: int | None = None,
        max_rows: int | None = None,
        clear_max_rows: bool = False,
    ) -> GangPartition:
        """New slot length or row limit (from the next boundary); a new scheme only while
        the partition has no job."""
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
        self._config_dirty = True
        self._emit("partition.changed", now, partition=spec.as_dict())
        return part

    def drain_partition(self, name: str, drained: bool, now: int) -> GangPartition:
        """A drained partition refuses new jobs; those it has go on."""
        part = self.partition(name)
        part.spec.drained = drained
        self._config_dirty = True
        self._emit("partition.drained" if drained else "partition.resumed", now, partition=name)
        return part

    def delete_partition(self, name: str, now: int) -> None:
        """An empty partition goes; its nodes return to the default partition."""
        part = self.partition(name)
        jobs = self._unfinished(name)
        if jobs:
            raise RequestError(
                "conflict",
                f"partition {name!r} still has {len(jobs)} job(s) queued or running "
                f"({', '.join(map(str, jobs[:10]))}); drain it and let them end",
                "name",
                {"job_ids": jobs},
            )
        del self.gang[name]
        self._config_dirty = True
        self._install(self._replan(self.policy_name, self.policy_options, now, True), now)
        self._emit("partition.deleted", now, partition=name, nodes=list(part.spec.nodes))
        self._pass(now)

    # ------------------------------------------------------------------ jobs
    def gang_request_problem(self, part: GangPartition, record: JobRecord) -> RequestError | None:
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
        problem = part.request_problem(record.resources)
        if problem is not None:
            return RequestError("invalid", problem[1], problem[0])
        return None

    def _gang_reason(self, part: GangPartition, record: JobRecord, now: int) -> None:
        """A waiting gang job's reason and forecast start."""
        name = part.spec.name
        planned = part.next_run(record.id, now)
        if planned is not None:
            rows = part.rows_of(record.id)
            record.state_reason = (
                f"placed in row {rows[0]} of gang partition {name!r}; starts when that row runs"
            )
        elif record.id in part.rotation.scheduler.matrix.jobs:
            record.state_reason = f"placed in gang partition {name!r} on a node that is not up"
        elif any(j == record.id for j, _ in part.rotation.scheduler.waiting):
            limit = part.spec.max_rows
            record.state_reason = (
                f"waits in order in gang partition {name!r}: "
                + (f"its {limit} rows are full, or " if limit is not None else "")
                + "its nodes lack the memory or GPUs it holds while suspended"
            )
        else:
            planned = part.due()
            record.state_reason = f"joins gang partition {name!r} at the next slot boundary"
        if planned != record.planned_start:
            record.planned_start = planned
        self._touch(record)

    # ------------------------------------------------------------------ time
    def gang_next_event(self) -> int | None:
        return min((d for p in self.gang.values() if (d := p.due()) is not None), default=None)

    def _gang_boundaries(self, now: int) -> None:
        for part in self.gang.values():
            due = part.due()
            if due is not None and due <= now:
                self._boundary(part, now)

    def _boundary(self, part: GangPartition, now: int) -> None:
        """One slot boundary: the outgoing row stops, the incoming one runs."""
        change = part.boundary(now)
        name = part.spec.name
        for job_id in change.suspend:
            record = self.running[job_id]
            record.suspended_at = now
            self._intend(Suspend(job_id, now))
            self._touch(record)
            self._emit("job.suspended", now, job_id, partition=name)
        for job_id in change.resume:
            record = self.running[job_id]
            assert record.suspended_at is not None
            record.suspended_for += now - record.suspended_at
            record.suspended_at = None
            self._intend(Resume(job_id, now))
            self._touch(record)
            self._emit("job.resumed", now, job_id, partition=name)
        for job_id in change.start:
            record = self.pending.pop(job_id)
            record.allocation = part.allocation(job_id)
            record.gang_offset = part.offset_of(job_id)
            self.cluster.bind(record.allocation)
            record.start_time = record.planned_start = now
            rows = len(part.rotation.scheduler.matrix.rows)
            self._set_state(
                record, JobState.RUNNING, f"gang partition {name!r}: sharing cpus in {rows} row(s)"
            )
            self.running[job_id] = record
            self._intend(StartOn(record, now))
            self.counters["started"] += 1
            self._emit("job.started", now, job_id, nodes=sorted(record.allocation))
        for job_id in part.jobs():
            waiting = self.pending.get(job_id)
            if waiting is not None:
                self._gang_reason(part, waiting, now)
