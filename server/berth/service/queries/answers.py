"""Answers about the future: when a job will start and why, and what a job would get.

These read the engine and never change it: :func:`start_info` explains a waiting job's
guarantee, prediction, its basis and what blocks it; :func:`what_if` runs a request's
admission on a trial copy of the policy (:func:`begin_what_if` leaves its forecast, if
any, to be driven in slices). No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from berth.core.decisions import Reject, Reserve
from berth.core.forecast import ForecastRun
from berth.service.engine import Engine
from berth.service.jobs.dependencies import begin_wait, dependency_answer
from berth.service.jobs.lifecycle import kept_deadline
from berth.service.model import JobRecord, JobRequest, JobState, moment, readable

if TYPE_CHECKING:
    from berth.service.partitions.gang import GangPartition

#: How many job ids a start-time answer lists as ahead of the job.
AHEAD_SHOWN = 20


#: Wall time a what-if's forecast may take (in slices) before its answer gives no start.
WHAT_IF_SECONDS = 2.0

#: What-ifs whose forecasts run at once; the others wait their turn (within
#: :data:`WHAT_IF_SECONDS`): each one running adds a slice to every turn of the loop.
WHAT_IF_FORECASTS = 2


class WhatIfForecast:
    """A what-if's answer whose start is a forecast still to run (EASY, FCFS): the
    caller drives it in slices with :meth:`advance`, between which the daemon goes on
    (the forecast runs on the trial copy, independent of the live policy), for at most
    :data:`WHAT_IF_SECONDS` (:meth:`give_up`). With 4,000 jobs queued on 256 nodes the
    forecast to the horizon took about 2 s, held in one read before; with 20,000 on
    1,024 nodes, in slices, 4-120 s."""

    __slots__ = ("_job_id", "_run", "answer")

    def __init__(self, answer: dict[str, object], run: ForecastRun, job_id: int) -> None:
        self.answer = answer
        self._run = run
        self._job_id = job_id

    def advance(self, stop: Callable[[], bool]) -> bool:
        """Drive the forecast until the job starts in it, its horizon or ``stop()``;
        whether the answer is complete (its ``predicted_start`` set; ``None``: beyond
        the horizon, as the start query answers)."""
        run, job_id = self._run, self._job_id
        finished = run.advance(lambda: job_id in run.predicted or stop())
        if not finished and job_id not in run.predicted:
            return False
        self.answer["predicted_start"] = run.predicted.get(job_id)
        return True

    def give_up(self, seconds: float) -> None:
        """No predicted start: the forecast did not reach the job within ``seconds``."""
        self._no_start(
            f"the forecast did not reach the job within {seconds:g} s (the queue is deep)"
        )

    def no_turn(self, seconds: float, at_once: int) -> None:
        """No predicted start: other what-ifs' forecasts (``at_once`` run at a time)
        held every turn for ``seconds``."""
        self._no_start(
            f"other what-ifs' forecasts held every turn for {seconds:g} s "
            f"({at_once} run at once); ask again"
        )

    def _no_start(self, why: str) -> None:
        self.answer["predicted_start"] = None
        self.answer["reason"] = f"{self.answer['reason']}; no predicted start: {why}"


def what_if(engine: Engine, request: JobRequest, now: int) -> dict[str, object]:
    """The decision and start ``request`` would get now, on a copy of the policy (its
    forecast, if any, driven at once: see :func:`begin_what_if` for slices)."""
    answer = begin_what_if(engine, request, now)
    if isinstance(answer, WhatIfForecast):
        answer.advance(lambda: False)
        return answer.answer
    return answer


def begin_what_if(
    engine: Engine, request: JobRequest, now: int
) -> dict[str, object] | WhatIfForecast:
    """The decision and start ``request`` would get now, on a trial copy of the
    policy; or, when its start is a forecast, the answer with that forecast to run."""
    engine.validate(request, now)
    if request.partition is not None and request.partition not in engine.planner.lanes:
        part = engine.partitions.partition(request.partition)
        if request.deadline is not None:
            return {"accepted": False, "reason": "a gang partition cannot guarantee a deadline"}
        boundary = part.next_boundary(now - 1 if part.last_boundary != now else now)
        return {
            "accepted": True,
            "reason": f"joins gang partition {part.spec.name!r} at the next slot boundary",
            "predicted_start": boundary,
            "guaranteed_start": None,
            "guaranteed_end": None,
        }
    twin = engine.planner.policy_of(request.partition).trial()
    begin = request.begin_time
    if begin is not None and begin > now and not twin.reserves_every_job:
        waits = begin_wait(begin)  # (as the submission says)
        if request.deadline is not None:
            return {"accepted": False, "reason": f"its deadline cannot be guaranteed: {waits}"}
        return {
            "accepted": True,
            "reason": f"it would wait outside the plan until its begin time ({moment(begin)})",
            "predicted_start": None,
            "guaranteed_start": None,
            "guaranteed_end": None,
        }
    record = JobRecord.from_request(engine.book.next_id, request, now)
    needs, singleton = engine.deps.needs_of(request, record.id)
    if singleton:
        needs = [*needs, *engine.deps.singleton_needs(record)]
    promises = [engine.deps.promised(need) for need in needs]
    unknown = [need for need, promised in zip(needs, promises, strict=True) if promised is None]
    if unknown or (needs and not twin.reserves_every_job):
        waits = (
            f"job {unknown[0].job_id} has no promise yet"
            if unknown
            else "its policy plans no job ahead"
        )
        return {
            "accepted": True,
            "reason": f"it would wait outside the plan until what it waits for allows: {waits}",
            "predicted_start": None,
            "guaranteed_start": None,
            "guaranteed_end": None,
        }
    record.not_before = max((p for p in promises if p is not None), default=None)
    job = record.as_job()
    policy_name = engine.partitions.policy_spec(request.partition)[0]
    decision = kept_deadline(record, twin.submit(job, now), policy_name)
    if isinstance(decision, Reject):
        return {"accepted": False, "reason": readable(decision.reason)}
    out: dict[str, object] = {
        "accepted": True,
        # (without a decision: why it waits, as the submission's state_reason says)
        "reason": readable(
            decision.reason if decision is not None else twin.wait_reason(job.id) or "queued"
        ),
        "predicted_start": None,
        "guaranteed_start": None,
        "guaranteed_end": None,
    }
    if isinstance(decision, Reserve):
        out["guaranteed_start"] = decision.guarantee
        out["guaranteed_end"] = decision.completion
    if twin.reserves_every_job:  # its reservation (what start_info answers), or now
        started = {s.job_id for s in twin.schedule(now)}
        reserved = decision.start if isinstance(decision, Reserve) else None
        out["predicted_start"] = now if job.id in started else reserved
        return out
    # A forecast of the trial, only until the job starts (its first pass, at ``now``,
    # is the pass a submission would get) or the start query's horizon.
    return WhatIfForecast(out, ForecastRun(twin, now, engine.forecasts.horizon), job.id)


def start_info(engine: Engine, job_id: int, now: int) -> dict[str, object]:
    """When will the job start: guarantee, prediction, its basis, what blocks it."""
    record = engine.book.job(job_id)
    info: dict[str, object] = {
        "job_id": job_id,
        "job_state": record.state.value,
        "guaranteed_start": record.guaranteed_start,
        "guaranteed_end": record.guaranteed_end,
        "start_time": record.start_time,
    }
    part = engine.partitions.gang_of(record)
    if part is not None and record.state in (JobState.PENDING, JobState.RUNNING):
        return gang_start_info(part, record, info, now)
    if record.state is not JobState.PENDING:
        info.update(
            predicted_start=record.start_time,
            based_on=f"the job is {record.state}",
            computed_at=now,
            blocked_by=None,
        )
        return info
    if engine.deps.waits.graph.needs(job_id):
        info.update(dependency_answer(engine.deps, record))
    held_back = engine.deps.waits.gated.get(job_id)
    if held_back is not None:
        info.update(
            predicted_start=None,
            based_on=f"no plan yet: it {engine.deps.waiting_reason(held_back)}",
            computed_at=now,
            blocked_by=None,
        )
        return info
    computed_at, start = engine.forecasts.prediction(job_id, now)
    policy = engine.planner.policy_of(record.partition)
    policy_name = engine.partitions.policy_spec(record.partition)[0]
    if policy.reserves_every_job:
        basis = (
            f"the reservation {policy_name} holds for the job: it never moves later "
            "than the guarantee, and moves earlier when jobs end early"
        )
    else:
        basis = (
            f"a forecast of {policy_name}, assuming every running job runs to its time "
            "limit and no job arrives; not a promise"
        )
        if start is None and engine.forecasts.beyond_horizon(job_id):
            basis += (
                f"; the job is beyond its horizon (it predicts the first "
                f"{engine.forecasts.horizon:,} starts)"
            )
    space = policy.space
    known = {n: a for n, a in record.resources.items() if n in space.capacity}
    short = space.blocking(policy.free, space.pack(known))
    partition = record.partition
    if start is None:
        ahead_ids: list[int] = []
    elif policy.reserves_every_job:
        ahead_ids = [
            i
            for i, r in engine.pending.items()
            if r.planned_start is not None
            and r.planned_start <= start
            and r.partition == partition
            and i != job_id
        ]
    else:
        ahead_ids = []
        for i, r in engine.pending.items():  # one pass: the queue can hold 10,000 jobs
            if i == job_id:
                break
            if r.partition == partition:
                ahead_ids.append(i)
    waits_for = sorted(
        (
            r
            for r in engine.running.values()
            if r.partition == record.partition
            and start is not None
            and r.start_time is not None
            and r.start_time + r.time_limit <= start
        ),
        key=lambda r: (r.start_time or 0) + r.time_limit,
    )
    info.update(
        predicted_start=start,
        based_on=basis,
        computed_at=computed_at,
        blocked_by={
            "resources": {
                n: {
                    "requested": record.resources[n],
                    "free_now": space.amount(policy.free, n),
                }
                for n in short
            },
            "jobs_ahead": len(ahead_ids),
            "jobs_ahead_ids": ahead_ids[:AHEAD_SHOWN],
            "running_jobs_to_end": [r.id for r in waits_for][:AHEAD_SHOWN],
        },
    )
    return info


def gang_start_info(
    part: GangPartition, record: JobRecord, info: dict[str, object], now: int
) -> dict[str, object]:
    """What a gang partition can honestly say: the job's rows and the next slot it runs
    in, and a completion forecast under the current number of rows. Nothing is
    guaranteed: arrivals add rows and ends remove them."""
    rows = part.rows_of(record.id)
    count = len(part.rotation.scheduler.matrix.rows)
    next_run = part.next_run(record.id, now)
    completion = None
    if rows and next_run is not None:
        ran = 0
        if record.start_time is not None:
            stopped = record.suspended_at if record.suspended_at is not None else now
            ran = stopped - record.start_time - record.suspended_for
        left = max(record.time_limit - ran, 0)
        completion = next_run + -(-left * count // len(rows))
    info.update(
        predicted_start=record.start_time if record.start_time is not None else next_run,
        based_on=(
            f"gang partition {part.spec.name!r} ({part.spec.scheme}, "
            f"{part.spec.slot_seconds}-s slots): a forecast if the matrix keeps its rows; "
            "gang scheduling makes no promises"
        ),
        computed_at=now,
        blocked_by=None,
        gang={
            "partition": part.spec.name,
            "rows": rows,
            "row_count": count,
            "slot_seconds": part.spec.slot_seconds,
            "running_now": record.id in part.active,
            "next_slot": next_run,
            "completion_forecast": completion,
            "completion_basis": (
                f"runs {len(rows)} slot(s) in every {count} until its time limit of "
                f"{record.time_limit} s is used; a forecast, not a promise"
                if completion is not None
                else "not in the matrix yet: it waits for a slot boundary, rows or memory"
            ),
        },
    )
    return info
