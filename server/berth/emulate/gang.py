"""Replay a workload through a gang partition slot by slot, and measure it as Zhou et al.

A job's work is its real runtime in slots (rounded up, at least one); it joins the
matrix at the first slot boundary at or after its submission, and its turnaround runs
from submission to the end of the slot in which its last unit of work is done. The
report has the paper's measures: ``r_a`` (processor active ratio: busy processor-slots
over processors times the slots from the first arrival to the last completion), ``n_a``
(time-average rows over the same span, empty stretches counting zero), ``n_l`` (most
rows) and average turnarounds, all in slots, overall and for small (1-12 slots), medium
(13-60) and large (more than 60) jobs. The scheduler never sees a job's work: only this
emulator counts it down, as a real job would simply end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from berth.core.gang import GangScheduler, Rotation
from berth.emulate.workload import TraceJob

#: Size classes by work in slots (the paper's section 4.3).
SMALL_MAX, MEDIUM_MAX = 12, 60


@dataclass(frozen=True, slots=True)
class GangRecord:
    """One job's gang replay: when it came, its size and work, when it ended."""

    id: int
    submit: int
    processors: int
    work: int
    end: int
    turnaround: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(slots=True)
class GangReplay:
    records: list[GangRecord]
    report: dict[str, object]


def work_in_slots(runtime: int, slot_seconds: int) -> int:
    return max(1, math.ceil(runtime / slot_seconds))


def replay_gang(
    jobs: Sequence[TraceJob],
    processors: int,
    scheme: str,
    slot_seconds: int,
    tick: Callable[[int], None] | None = None,
    max_rows: int | None = None,
) -> GangReplay:
    """Run ``jobs`` (sorted by submission) on ``processors`` under ``scheme``, with at
    most ``max_rows`` rows (jobs beyond wait in order) if given."""
    if slot_seconds < 1:
        raise ValueError(f"--slot-seconds must be >= 1, got {slot_seconds}")
    if max_rows is not None and max_rows < 1:
        raise ValueError(f"--max-rows must be >= 1, got {max_rows}")
    scheduler = GangScheduler(processors, scheme, max_rows)
    rotation = Rotation(scheduler)
    pending = []
    for trace_job in jobs:
        size = trace_job.job.resources.get("cpus", 0)
        if not 1 <= size <= processors:
            raise ValueError(
                f"job {trace_job.job.id} asks for {size} processors; the gang partition "
                f"has {processors} (a job needs 1 to {processors})"
            )
        work = work_in_slots(trace_job.runtime, slot_seconds)
        pending.append((-(-trace_job.job.submit // slot_seconds), trace_job, size, work))
    pending.sort(key=lambda item: (item[0], item[1].job.submit, item[1].job.id))
    remaining: dict[int, int] = {}
    by_id = {trace_job.job.id: (trace_job, size, work) for _, trace_job, size, work in pending}
    records: list[GangRecord] = []
    first_slot = pending[0][0] if pending else 0
    slot, index = first_slot, 0
    row_slots = active_slots = 0
    largest = most_waiting = 0
    ended: list[int] = []
    while index < len(pending) or remaining:
        if not remaining and not ended and pending[index][0] > slot:
            slot = pending[index][0]  # an empty machine: jump to the next arrival
        arrivals = []
        while index < len(pending) and pending[index][0] == slot:
            _, trace_job, size, work = pending[index]
            arrivals.append((trace_job.job.id, size))
            remaining[trace_job.job.id] = work
            index += 1
        report = rotation.step(ended, arrivals)
        ended = []
        row_slots += report.rows
        active_slots += report.active
        largest = max(largest, report.rows)
        most_waiting = max(most_waiting, len(scheduler.waiting))
        for job_id in report.running:
            left = remaining[job_id] - 1
            if left:
                remaining[job_id] = left
                continue
            del remaining[job_id]
            ended.append(job_id)
            trace_job, size, work = by_id[job_id]
            end = (slot + 1) * slot_seconds
            submit = trace_job.job.submit
            records.append(
                GangRecord(job_id, submit, size, work, end, (end - submit) / slot_seconds)
            )
        if tick is not None and ended:
            tick(len(ended))
        slot += 1
    span = slot - first_slot  # to the end of the slot in which the last job ended
    report_dict = summarize_gang(records, processors, span, row_slots, active_slots, largest)
    report_dict.update(scheme=scheme, slot_seconds=slot_seconds)
    if max_rows is not None:
        report_dict.update(max_rows=max_rows, most_waiting=most_waiting)
    records.sort(key=lambda record: record.id)
    return GangReplay(records, report_dict)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarize_gang(
    records: Sequence[GangRecord],
    processors: int,
    span: int,
    row_slots: int,
    active_slots: int,
    largest: int,
) -> dict[str, object]:
    """The paper's measures for one replay (turnarounds in slots)."""
    small = [r.turnaround for r in records if r.work <= SMALL_MAX]
    medium = [r.turnaround for r in records if SMALL_MAX < r.work <= MEDIUM_MAX]
    large = [r.turnaround for r in records if r.work > MEDIUM_MAX]
    return {
        "jobs": len(records),
        "processors": processors,
        "slots": span,
        "r_a": active_slots / (processors * span) if span else 0.0,
        "n_a": row_slots / span if span else 0.0,
        "n_l": largest,
        "avg_turnaround": _mean([r.turnaround for r in records]),
        "avg_turnaround_small": _mean(small),
        "avg_turnaround_medium": _mean(medium),
        "avg_turnaround_large": _mean(large),
        "small_jobs": len(small),
        "medium_jobs": len(medium),
        "large_jobs": len(large),
    }
