"""Applying what jobs did to the jobs that wait for them (Slurm's ``--dependency``).

The dependencies (:mod:`berth.service.jobs.dependencies`) and :mod:`berth.core.waits` settle
what the jobs that moved mean for their waiters, as steps; :func:`settle_waits` applies
them through the lifecycle (:mod:`berth.service.jobs.lifecycle`): a need that can never be
satisfied dooms its job (cancelled, or held with ``kill_on_invalid_dep`` off), a
predecessor that ends earlier relaxes its waiter's earliest start, a promise lost (a
node failure, a hold) plans the waiter again or gates it out of the plan. The engine
runs it in every pass, before the partitions' passes. No I/O.
"""

from __future__ import annotations

from berth.core.decisions import Reject
from berth.core.dependencies import Bound, Need, format_needs
from berth.core.waits import Doom, Gate, Plan, Relax
from berth.service.jobs.lifecycle import JobLifecycle
from berth.service.model import JobRecord, JobState


def settle_waits(life: JobLifecycle, now: int) -> bool:
    """Apply what the jobs that moved mean for those waiting for them; whether a job
    was planned (the pass should run again)."""
    planned = False
    while steps := life.waits.settle(life.deps.outcome, life.deps.promised, life.deps.plans_ahead):
        for step in steps:
            record = life.jobs.get(step.job_id)
            if record is None or record.final:
                continue
            if isinstance(step, Doom):
                _doom(life, record, step.need, now)
            elif isinstance(step, Relax):
                _relax(life, record, step.not_before, now)
            elif isinstance(step, Plan):
                planned = plan_again(life, record, now) or planned
            elif isinstance(step, Gate):
                _gate(life, record, step.bound, now)
    for job_id in life.waits.take_changed():
        record = life.jobs.get(job_id)
        if record is not None and not record.final:
            _keep_needs(life, record)
    return planned


def _keep_needs(life: JobLifecycle, record: JobRecord) -> None:
    """Record what the job still waits for (a restart rebuilds from it): every job
    whose needs changed, whether or not that changed its plan."""
    needs = format_needs(life.waits.graph.needs(record.id))
    if needs != record.needs:
        record.needs = needs
        life.outbox.job_changed(record)


def _doom(life: JobLifecycle, record: JobRecord, need: Need, now: int) -> None:
    other = life.jobs.get(need.job_id)
    how = "ended" if other is None else f"is {other.state.value.lower()}"
    reason = f"its dependency {need} can never be satisfied: job {need.job_id} {how}"
    if record.kill_on_invalid_dep:
        life.cancel_job(record.id, now, reason)
        return
    if record.state is JobState.PENDING:
        life.withdraw(record, now)
        record.drop_plan()
        life.outbox.emit("job.held", now, record.id, reason=reason)
    life.set_state(record, JobState.HELD, reason)


def _relax(life: JobLifecycle, record: JobRecord, not_before: int | None, now: int) -> None:
    record.not_before = not_before
    lane = life.planner.lanes.get(record.partition)
    if lane is not None and life.partitions.gang_of(record) is None:
        lane.policy.relax(record.id, record.earliest_start(), now)  # (never before its begin)


def plan_again(life: JobLifecycle, record: JobRecord, now: int) -> bool:
    """Plan a pending job afresh (it was held back, or a promise it counted on was
    lost); whether it is in the plan now."""
    if record.state is not JobState.PENDING:
        return False
    previous = record.guaranteed_start
    if record.guaranteed_start is not None or record.planned_start is not None:
        # Only its plan goes: it keeps its place in the queue (a planning lane had it).
        life.planner.policy_of(record.partition).withdraw(record.id, now)
        record.drop_plan()
    decision = life.decide(record, now)
    if isinstance(decision, Reject):
        _withdraw_unplanned(life, record)
        life.set_state(record, JobState.REJECTED, decision.reason)
        record.end_time = now
        life.outbox.emit("job.rejected", now, record.id, reason=record.state_reason)
        return False
    life.note_plan(record, decision, now)
    if record.guaranteed_start != previous:
        life.outbox.emit(
            "job.guarantee_changed",
            now,
            record.id,
            previous=previous,
            guaranteed_start=record.guaranteed_start,
            guaranteed_end=record.guaranteed_end,
            reason="what it waits for moved",
        )
    return True


def _gate(life: JobLifecycle, record: JobRecord, bound: Bound, now: int) -> None:
    if record.state is not JobState.PENDING:
        return
    previous = record.guaranteed_start
    # Held back already (so not through withdraw): only a planning lane had it.
    life.planner.policy_of(record.partition).withdraw(record.id, now)
    record.drop_plan()
    life.set_state(record, JobState.PENDING, life.deps.waiting_reason(bound))
    if previous is not None:
        life.outbox.emit(
            "job.guarantee_changed",
            now,
            record.id,
            previous=previous,
            guaranteed_start=None,
            guaranteed_end=None,
            reason=record.state_reason,
        )


def _withdraw_unplanned(life: JobLifecycle, record: JobRecord) -> None:
    life.pending.pop(record.id, None)
