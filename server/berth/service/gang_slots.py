"""Gang partitions in time: requests they take, waiting jobs' reasons, slot boundaries.

At each slot boundary a gang partition's matrix moves on (:mod:`berth.service.gang`),
and the jobs of the outgoing row are suspended, those of the incoming row resumed or
started, through the same intents as every other node command. A part of
:class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.service.engine_base import EngineBase
from berth.service.gang import GangPartition
from berth.service.intents import Resume, StartOn, Suspend
from berth.service.model import JobRecord, JobState, RequestError


class GangSlots(EngineBase):
    """The engine's gang partitions at work (a mixin)."""

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

    def _gang_reason(
        self,
        part: GangPartition,
        record: JobRecord,
        now: int,
        queued: set[int] | None = None,
    ) -> None:
        """A waiting gang job's reason and forecast start (the record is marked changed
        only if they changed); ``queued``: the jobs waiting in the scheduler, if known."""
        name = part.spec.name
        planned = part.next_run(record.id, now)
        if queued is None:
            queued = {j for j, _ in part.rotation.scheduler.waiting}
        if planned is not None:
            rows = part.rows_of(record.id)
            reason = (
                f"placed in row {rows[0]} of gang partition {name!r}; starts when that row runs"
            )
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
        if (reason, planned) != (record.state_reason, record.planned_start):
            record.state_reason, record.planned_start = reason, planned
            self.outbox.job_changed(record)

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
            self.outbox.intend(Suspend(job_id, now))
            self.outbox.job_changed(record)
            self.outbox.emit("job.suspended", now, job_id, partition=name)
        for job_id in change.resume:
            record = self.running[job_id]
            assert record.suspended_at is not None
            record.suspended_for += now - record.suspended_at
            record.suspended_at = None
            self.outbox.intend(Resume(job_id, now))
            self.outbox.job_changed(record)
            self.outbox.emit("job.resumed", now, job_id, partition=name)
        for job_id in change.start:
            record = self.pending.pop(job_id)
            record.allocation = part.allocation(job_id)
            record.gang_offset = part.offset_of(job_id)
            self.cluster.bind(record.allocation)
            record.start_time = record.planned_start = now
            rows = len(part.rotation.scheduler.matrix.rows)
            self.set_state(
                record, JobState.RUNNING, f"gang partition {name!r}: sharing cpus in {rows} row(s)"
            )
            self.running[job_id] = record
            self.outbox.intend(StartOn.of(record, now))
            self.counters["started"] += 1
            self.outbox.emit("job.started", now, job_id, nodes=sorted(record.allocation))
        queued = {j for j, _ in part.rotation.scheduler.waiting}
        for job_id in part.jobs():
            waiting = self.pending.get(job_id)
            if waiting is not None:
                self._gang_reason(part, waiting, now, queued)
