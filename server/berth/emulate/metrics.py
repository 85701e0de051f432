"""The standard metrics of a replay (``docs/semantics.md`` defines each one).

Over the jobs that ran (completed or killed): wait = start - submit, response = end -
submit, run = end - start, bounded slowdown = max(1, response / max(run, 10)); the
weighted average response time weighs each job by its resource share times its run
(Leinberger et al. 1999), normalised by the total weight. Utilization per resource is
the resource-seconds used over capacity x makespan, where makespan runs from the first
submit to the last end.

When jobs carry deadlines or promised completions (deadline admission), the report adds
admitted jobs, the share of resource-seconds rejected (as ``min(runtime, estimate)``
times the request), deadline jobs and how many were rejected, *misses* (admitted jobs
that ended after their deadline, or after their promised completion: both must be 0),
and the wait, response and bounded slowdown of the jobs without a deadline. When jobs
carry priorities, ``priority_classes`` gives the jobs and average wait of each class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from berth.emulate.records import JobRecord

#: Bounded slowdown's threshold in seconds (Feitelson & Mu'alem Weil 1998, section 3.1).
SLOWDOWN_THRESHOLD = 10

#: Report keys in the order the text table prints them.
REPORT_KEYS = (
    "jobs",
    "rejected",
    "killed",
    "avg_wait",
    "median_wait",
    "max_wait",
    "avg_response",
    "avg_bounded_slowdown",
    "weighted_avg_response",
    "utilization",
    "makespan",
    "admitted",
    "rejected_resource_seconds",
    "deadline_rejected_resource_seconds",
    "deadline_jobs",
    "deadline_rejected",
    "deadline_misses",
    "promise_misses",
    "non_deadline_jobs",
    "non_deadline_avg_wait",
    "non_deadline_avg_response",
    "non_deadline_avg_bounded_slowdown",
    "priority_classes",
)


def bounded_slowdown(response: int, run: int) -> float:
    """max(1, response / max(run, 10))."""
    return max(1.0, response / max(run, SLOWDOWN_THRESHOLD))


def summarize(records: Sequence[JobRecord], capacity: Mapping[str, int]) -> dict[str, object]:
    """The report for one replay: the keys of :data:`REPORT_KEYS`."""
    ran = [r for r in records if r.start is not None and r.end is not None]
    waits = [r.start - r.submit for r in ran if r.start is not None]
    responses = [r.end - r.submit for r in ran if r.end is not None]
    runs = [r.ran for r in ran]
    count = len(ran)
    used = dict.fromkeys(capacity, 0)
    total_weight = 0.0
    weighted = 0.0
    for record, response, run in zip(ran, responses, runs, strict=True):
        share = 0.0
        for name, amount in record.resources.items():
            used[name] = used.get(name, 0) + amount * run
            share += amount / capacity[name] if capacity.get(name) else 0.0
        weight = share * run
        total_weight += weight
        weighted += weight * response
    if ran:
        first = min(r.submit for r in records)
        last = max(r.end for r in ran if r.end is not None)
        makespan = last - first
    else:
        makespan = 0
    utilization = {
        name: (used[name] / (capacity[name] * makespan) if makespan else 0.0) for name in capacity
    }
    report: dict[str, object] = {
        "jobs": len(records),
        "rejected": sum(1 for r in records if r.status == "rejected"),
        "killed": sum(1 for r in records if r.status == "killed"),
        "avg_wait": sum(waits) / count if count else 0.0,
        "median_wait": _median(waits),
        "max_wait": max(waits, default=0),
        "avg_response": sum(responses) / count if count else 0.0,
        "avg_bounded_slowdown": (
            sum(bounded_slowdown(x, y) for x, y in zip(responses, runs, strict=True)) / count
            if count
            else 0.0
        ),
        "weighted_avg_response": weighted / total_weight if total_weight else 0.0,
        "utilization": utilization,
        "makespan": makespan,
    }
    if any(r.deadline is not None or r.promised_completion is not None for r in records):
        report.update(_deadline_report(records, capacity))
    if any(r.priority for r in records):
        report["priority_classes"] = _priority_report(ran)
    return report


def priority_class(priority: Mapping[str, float]) -> str:
    """A job's priority class label, e.g. ``"political=1,user=1"`` (``"none"`` if unset)."""
    return ",".join(f"{k}={v:g}" for k, v in sorted(priority.items())) or "none"


def _priority_report(ran: Sequence[JobRecord]) -> dict[str, dict[str, float]]:
    """Jobs and average wait per priority class (Talby & Feitelson's hi/lo-pri columns)."""
    classes: dict[str, list[int]] = {}
    for record in ran:
        assert record.start is not None
        classes.setdefault(priority_class(record.priority), []).append(record.start - record.submit)
    return {
        label: {"jobs": len(waits), "avg_wait": sum(waits) / len(waits)}
        for label, waits in sorted(classes.items())
    }


def _deadline_report(
    records: Sequence[JobRecord], capacity: Mapping[str, int]
) -> dict[str, object]:
    rejected_work = dict.fromkeys(capacity, 0)
    total_work = dict.fromkeys(capacity, 0)
    # The same, over the jobs with deadlines only (mixed workloads: the paper's measure).
    timed_rejected_work = dict.fromkeys(capacity, 0)
    timed_work = dict.fromkeys(capacity, 0)
    for record in records:
        held = min(record.runtime, record.estimate)
        for name, amount in record.resources.items():
            if name in total_work:
                total_work[name] += amount * held
                rejected = amount * held if record.status == "rejected" else 0
                rejected_work[name] += rejected
                if record.deadline is not None:
                    timed_work[name] += amount * held
                    timed_rejected_work[name] += rejected
    admitted = [r for r in records if r.status != "rejected"]
    timed = [r for r in records if r.deadline is not None]
    free = [r for r in admitted if r.deadline is None and r.start is not None and r.end is not None]
    waits = [r.start - r.submit for r in free if r.start is not None]
    responses = [r.end - r.submit for r in free if r.end is not None]
    count = len(free)
    return {
        "admitted": len(admitted),
        "rejected_resource_seconds": {
            name: rejected_work[name] / total_work[name] if total_work[name] else 0.0
            for name in capacity
        },
        "deadline_rejected_resource_seconds": {
            name: timed_rejected_work[name] / timed_work[name] if timed_work[name] else 0.0
            for name in capacity
        },
        "deadline_jobs": len(timed),
        "deadline_rejected": sum(1 for r in timed if r.status == "rejected"),
        "deadline_misses": sum(
            1
            for r in admitted
            if r.deadline is not None and r.end is not None and r.end > r.deadline
        ),
        "promise_misses": sum(
            1
            for r in admitted
            if r.promised_completion is not None
            and r.end is not None
            and r.end > r.promised_completion
        ),
        "non_deadline_jobs": count,
        "non_deadline_avg_wait": sum(waits) / count if count else 0.0,
        "non_deadline_avg_response": sum(responses) / count if count else 0.0,
        "non_deadline_avg_bounded_slowdown": (
            sum(bounded_slowdown(x, r.ran) for x, r in zip(responses, free, strict=True)) / count
            if count
            else 0.0
        ),
    }


def _median(values: Sequence[float]) -> float:
    """The median (the mean of the middle two for an even count); 0 for no values.
    Written here because :mod:`statistics` costs a replay's start-up more than it does."""
    if not values:
        return 0.0
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2
