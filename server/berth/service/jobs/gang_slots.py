"""Gang partitions in time: the slot boundaries.

At each slot boundary a gang partition's matrix moves on (:mod:`berth.service.partitions.gang`),
and the jobs of the outgoing row are suspended, those of the incoming row resumed or
started, through the same intents as every other node command; the waiting jobs'
reasons follow. The engine runs :func:`gang_boundaries` at the end of every pass,
through the lifecycle's steps (:mod:`berth.service.jobs.lifecycle`). No I/O.
"""

from __future__ import annotations

from berth.service.jobs.lifecycle import JobLifecycle
from berth.service.model import JobState
from berth.service.nodes.intents import Resume, StartOn, Suspend
from berth.service.partitions.gang import GangPartition
from berth.service.partitions.registry import gang_reason


def gang_boundaries(life: JobLifecycle, now: int) -> None:
    """Every gang partition whose slot boundary is due by ``now`` moves on."""
    for part in life.partitions.gang.values():
        due = part.due()
        if due is not None and due <= now:
            _boundary(life, part, now)


def _boundary(life: JobLifecycle, part: GangPartition, now: int) -> None:
    """One slot boundary: the outgoing row stops, the incoming one runs."""
    change = part.boundary(now)
    name = part.spec.name
    outbox = life.outbox
    for job_id in change.suspend:
        record = life.running[job_id]
        record.suspended_at = now
        outbox.intend(Suspend(job_id, now))
        outbox.job_changed(record)
        outbox.emit("job.suspended", now, job_id, partition=name)
    for job_id in change.resume:
        record = life.running[job_id]
        assert record.suspended_at is not None
        record.suspended_for += now - record.suspended_at
        record.suspended_at = None
        life.book.watch_limit(record)  # its limit moved on by the time it was suspended
        outbox.intend(Resume(job_id, now))
        outbox.job_changed(record)
        outbox.emit("job.resumed", now, job_id, partition=name)
    for job_id in change.start:
        record = life.pending.pop(job_id)
        record.allocation = part.allocation(job_id)
        record.gang_offset = part.offset_of(job_id)
        life.cluster.bind(record.allocation)
        record.start_time = record.planned_start = now
        rows = len(part.rotation.scheduler.matrix.rows)
        life.set_state(
            record, JobState.RUNNING, f"gang partition {name!r}: sharing cpus in {rows} row(s)"
        )
        life.book.add_running(record)
        outbox.intend(StartOn.of(record, now))
        life.counters["started"] += 1
        outbox.emit("job.started", now, job_id, nodes=sorted(record.allocation))
    queued = {j for j, _ in part.rotation.scheduler.waiting}
    for job_id in part.jobs():
        waiting = life.pending.get(job_id)
        if waiting is not None and gang_reason(part, waiting, now, queued):
            outbox.job_changed(waiting)
