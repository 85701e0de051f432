"""The emulator's event loop: one policy, one workload, a virtual clock.

The order of events at one instant is the core's :class:`~berth.core.timeline.Timeline`
(completions, arrivals in (submit time, job id) order, one scheduling pass), the same the
daemon's engine follows. Emulated nodes hold a started job for ``min(runtime, estimate)``
seconds: a job that reaches its estimate is killed. The next instant is the earliest of
the next arrival, the next completion and the policy's own wake-up (a reservation's
start). Deterministic: no clock, no randomness.

With ``compression_budget`` the node planner improves its plan in slices, as the daemon
does, instead of whole at every end: after the ends of each instant it asks at most that
many questions (:class:`~berth.core.question_budget.QuestionBudget`) and goes on at the
next instant. A deep queue on a large cluster replays in a fraction of the time; a
reservation may stay later than whole compression would make it until its turn comes
(a guarantee is an upper bound, so none is broken). With a budget no slice reaches, the
replay is the whole one.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from berth.core.decisions import Reject, Reserve
from berth.core.policies.base import LivePolicy, Policy
from berth.core.question_budget import QuestionBudget
from berth.core.timeline import Timeline
from berth.emulate.dependents import Dependents
from berth.emulate.records import JobRecord
from berth.emulate.workload import TraceJob
from berth.service.collector import collector_paused


def replay(
    jobs: Sequence[TraceJob],
    policy: Policy,
    progress: Callable[[int], None] | None = None,
    running_ends: Sequence[tuple[int, int]] = (),
    running: Mapping[int, tuple[int, int, bool]] | None = None,
    compression_budget: int | None = None,
) -> list[JobRecord]:
    """Replay ``jobs`` (sorted by submit, id) through ``policy``; one record per job.

    ``progress`` is called with the number of newly submitted jobs, now and then.
    ``running_ends`` lists ``(end time, job id)`` of jobs the policy already runs (a
    dry run of live state): they end then, and have no record of their own; for jobs
    that wait for them, ``running`` gives each one's start, estimate and whether it
    will end successfully. ``compression_budget``: questions per instant for the plan's
    improvements (see above; ``None``: whole at every end; the policy is left set to
    defer them). The cyclic collector is paused meanwhile
    (:mod:`berth.service.collector`).
    """
    sliced = None
    if compression_budget is not None:
        QuestionBudget(compression_budget)  # refuses a budget under 1 now, not at an end
        sliced = cast(LivePolicy, policy)
        sliced.deferred = True
    with collector_paused():
        return _replay(jobs, policy, progress, running_ends, running or {}, sliced,
                       compression_budget or 0)  # fmt: skip


def _replay(
    jobs: Sequence[TraceJob],
    policy: Policy,
    progress: Callable[[int], None] | None,
    running_ends: Sequence[tuple[int, int]],
    running: Mapping[int, tuple[int, int, bool]],
    sliced: LivePolicy | None,
    questions: int,
) -> list[JobRecord]:
    records: dict[int, JobRecord] = {}
    ends: list[tuple[int, int]] = list(running_ends)  # (end time, job id)
    heapq.heapify(ends)
    total = len(jobs)
    cursor = 0
    reported = 0
    timeline = Timeline(policy)
    dependents = None
    if any(t.needs for t in jobs):
        before = {job_id: (start, estimate) for job_id, (start, estimate, _) in running.items()}
        dependents = Dependents(timeline, records, _decided, before)
    while True:
        next_arrival = jobs[cursor].job.submit if cursor < total else None
        instant = timeline.next_instant((next_arrival, ends[0][0] if ends else None))
        if instant is None:
            break
        now = instant

        finished: list[int] = []
        while ends and ends[0][0] == now:
            finished.append(heapq.heappop(ends)[1])
        if dependents is not None:
            # As the daemon does: what the ends mean for waiting jobs first, so that the
            # policy's compression at the ends sees the new bounds.
            for job_id in finished:
                if job_id in records:
                    dependents.finished(job_id, records[job_id].status == "completed")
                elif job_id in running:
                    dependents.finished(job_id, running[job_id][2])
            dependents.settle(now)
        timeline.end(finished, now)
        if sliced is not None and sliced.improvement_due:
            # Where whole compression runs (after the ends, before the arrivals), so a
            # budget no slice reaches gives the whole replay.
            sliced.improve(now, QuestionBudget(questions))

        while cursor < total and jobs[cursor].job.submit == now:
            trace_job = jobs[cursor]
            cursor += 1
            job = trace_job.job
            record = JobRecord(job.id, job.submit, None, None, job.resources, job.estimate,
                               trace_job.runtime, None, "queued", "", trace_job.swf_line,
                               job.deadline, None, job.priority)  # fmt: skip
            records[job.id] = record
            if dependents is not None:
                dependents.arrive(trace_job, record, now)
            else:
                _decided(record, timeline.arrive(job, now))

        _start(timeline, records, ends, now, dependents)

        if progress is not None and cursor - reported >= 512:
            progress(cursor - reported)
            reported = cursor
    if progress is not None and cursor > reported:
        progress(cursor - reported)
    return [records[t.job.id] for t in jobs]


def _decided(record: JobRecord, decision: Reserve | Reject | None) -> None:
    """Record a policy's admission decision."""
    if isinstance(decision, Reject):
        record.status = "rejected"
        record.reason = decision.reason
    elif isinstance(decision, Reserve):
        record.guarantee = decision.guarantee
        record.promised_completion = decision.completion
    # None: queued without a promise (fcfs, easy)


def _start(
    timeline: Timeline[Policy],
    records: dict[int, JobRecord],
    ends: list[tuple[int, int]],
    now: int,
    dependents: Dependents | None,
) -> None:
    """The scheduling pass at ``now``, after what the jobs that moved mean for those
    waiting for them; again while it starts jobs others wait for."""
    if dependents is None:
        _close(timeline, records, ends, now, dependents)
        return
    while True:
        offered = dependents.settle(now)
        if not _close(timeline, records, ends, now, dependents) and not offered:
            return


def _close(
    timeline: Timeline[Policy],
    records: dict[int, JobRecord],
    ends: list[tuple[int, int]],
    now: int,
    dependents: Dependents | None,
) -> bool:
    """The scheduling pass: whether it started any job."""
    started = timeline.close(now)
    for start in started:
        record = records[start.job_id]
        held = min(record.runtime, record.estimate)
        record.start = now
        record.end = now + held
        record.nodes = start.placement
        if record.runtime > record.estimate:
            record.status = "killed"
            record.reason = (
                f"{start.reason}; killed at its estimate of {record.estimate} s "
                f"(runtime {record.runtime} s)"
            )
        else:
            record.status = "completed"
            record.reason = start.reason
        heapq.heappush(ends, (record.end, start.job_id))
        if dependents is not None:
            dependents.started(start.job_id)
    return bool(started)
