"""Jobs that wait for other jobs, in the engine: Slurm's ``--dependency`` and array limits.

A submission's ``dependency`` (``afterok:12:13,afterany:14,singleton``) is resolved to
needs on jobs the engine knows (an array's id names all its tasks, ``A_T`` one task;
``singleton``: every earlier job of the user with the same name that has not ended) and
refused (422 naming the id) for an unknown job, another user's, or the job itself. An
array's ``%N`` becomes ``throttle`` needs between its tasks. The needs live in the
engine's :class:`~berth.core.waits.Waits`; what they mean for the plan is settled there,
and applied here: a dependent is planned from its predecessors' promised ends (their
guarantees; once running, their time limits), moved up when those come earlier, planned
again when one is lost (a node failure, a hold), and cancelled (or held, with
``kill_on_invalid_dep`` off) when a need can never be satisfied. A mixin of
:class:`~berth.service.engine.Engine`; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.arrays import throttle
from berth.core.decisions import Reject
from berth.core.dependencies import (
    Bound,
    Need,
    format_needs,
    parse_dependency,
    parse_needs,
)
from berth.core.waits import Doom, Gate, Plan, Relax
from berth.service.engine_base import EngineBase
from berth.service.model import JobRecord, JobRequest, JobState, RequestError


class DependentJobs(EngineBase):
    """Needs between jobs, resolved at submission and settled as jobs move."""

    # ------------------------------------------------------------------ submission
    def needs_of(
        self, request: JobRequest, first_id: int, count: int = 1
    ) -> tuple[list[Need], bool]:
        """The needs ``request.dependency`` names for jobs ``first_id`` on (``count`` of
        them: an array's tasks), and whether it asks for ``singleton``; 422 naming the
        job id that cannot be waited for."""
        if request.dependency is None:
            return [], False
        try:
            pairs, singleton = parse_dependency(request.dependency)
        except ValueError as error:
            raise RequestError("invalid", f"dependency: {error}", "dependency") from None
        needs: list[Need] = []
        for kind, reference in pairs:
            ids = self._referenced(reference, request.user, first_id, count)
            needs.extend(Need(kind, job_id) for job_id in ids)
        return list(dict.fromkeys(needs)), singleton

    def _referenced(self, reference: str, user: str, first_id: int, count: int) -> list[int]:
        """The job ids a dependency's reference names (``N``, an array's ``N``, ``A_T``)."""
        array_text, _, task_text = reference.partition("_")
        job_id = int(array_text)
        if first_id <= job_id < first_id + count:
            raise RequestError(
                "invalid",
                f"dependency on job {job_id}: that is this submission, and a job cannot wait "
                "for itself (a cycle)",
                "dependency",
                {"job_id": job_id},
            )
        if task_text:
            ids = [r.id for r in self.array_tasks(job_id) if r.array_task_id == int(task_text)]
            named = f"task {task_text} of array {job_id}"
        else:
            record = self.jobs.get(job_id)
            is_array = record is not None and record.array_job_id == job_id
            ids = [r.id for r in self.array_tasks(job_id)] if is_array else [job_id]
            named = f"job {job_id}"
        records = [self.jobs[i] for i in ids if i in self.jobs]
        if not records:
            raise RequestError(
                "invalid",
                f"dependency on {named}: no such job (or it ended long ago)",
                "dependency",
                {"job_id": job_id},
            )
        if any(r.user != user for r in records):
            raise RequestError(
                "invalid",
                f"dependency on {named}: it belongs to another user",
                "dependency",
                {"job_id": job_id},
            )
        return [r.id for r in records]

    def singleton_needs(self, record: JobRecord) -> list[Need]:
        """``singleton``: after every earlier job of the user with the same name that
        has not ended."""
        return [
            Need("afterany", other.id)
            for other in self.jobs.values()
            if other.id < record.id
            and not other.final
            and other.user == record.user
            and other.name == record.name
        ]

    def array_needs(
        self, request: JobRequest, tasks: Sequence[int], limit: int | None
    ) -> list[list[Need]]:
        """Each task's needs: the array's dependency, and its lane under ``%N``
        (``singleton`` on an array: a lane of one, after the earlier jobs of its name)."""
        first_id = self.next_id
        needs, singleton = self.needs_of(request, first_id, len(tasks))
        ids = list(range(first_id, first_id + len(tasks)))
        if singleton:
            probe = JobRecord.from_request(first_id, request, 0)
            needs = [*needs, *self.singleton_needs(probe)]
            limit = 1 if limit is None else min(limit, 1)
        lanes = throttle(ids, limit)
        return [[*needs, lanes[i]] if i in lanes else list(needs) for i in ids]

    def wait_for(self, record: JobRecord, needs: Sequence[Need]) -> None:
        """A new job waits for ``needs`` (settled at the next pass)."""
        if not needs:
            return
        self.waits.add(record.id, needs, self._outcome)
        record.needs = format_needs(needs)

    # ------------------------------------------------------------------ admission
    def _held_back(self, record: JobRecord) -> Bound | None:
        """Whether a queued job must wait outside the plan (what holds it), else set the
        earliest start its predecessors' promises allow."""
        bound = self.waits.admit(record.id, self._promised, self._plans_ahead(record.id))
        record.not_before = None if bound is not None else self.waits.not_before(record.id)
        return bound

    def waiting_reason(self, bound: Bound) -> str:
        """Why a job waits outside the plan, for a person."""
        need = bound.by
        assert need is not None
        other = self.jobs.get(need.job_id)
        kind = "its array's limit" if need.kind == "throttle" else need.kind
        if other is None:
            return f"waits for job {need.job_id} ({kind})"
        if other.state is JobState.HELD:
            why = "which is held"
        elif not self._plans_ahead(record_id=other.id) and other.state is JobState.PENDING:
            why = "which has no guaranteed start yet"
        else:
            why = f"which is {other.state.value.lower()}"
        return f"waits for job {need.job_id} ({kind}), {why}"

    # ------------------------------------------------------------------ settling
    def _settle_waits(self, now: int) -> bool:
        """Apply what the jobs that moved mean for those waiting for them; whether a job
        was planned (the pass should run again)."""
        planned = False
        while steps := self.waits.settle(self._outcome, self._promised, self._plans_ahead):
            for step in steps:
                record = self.jobs.get(step.job_id)
                if record is None or record.final:
                    continue
                if isinstance(step, Doom):
                    self._doom(record, step.need, now)
                elif isinstance(step, Relax):
                    self._relax(record, step.not_before, now)
                elif isinstance(step, Plan):
                    planned = self._plan_again(record, now) or planned
                elif isinstance(step, Gate):
                    self._gate(record, step.bound, now)
        for job_id in self.waits.take_changed():
            record = self.jobs.get(job_id)
            if record is not None and not record.final:
                self._keep_needs(record)
        return planned

    def _keep_needs(self, record: JobRecord) -> None:
        """Record what the job still waits for (a restart rebuilds from it): every job
        whose needs changed, whether or not that changed its plan."""
        needs = format_needs(self.waits.graph.needs(record.id))
        if needs != record.needs:
            record.needs = needs
            self.outbox.job_changed(record)

    def _doom(self, record: JobRecord, need: Need, now: int) -> None:
        other = self.jobs.get(need.job_id)
        how = "ended" if other is None else f"is {other.state.value.lower()}"
        reason = f"its dependency {need} can never be satisfied: job {need.job_id} {how}"
        if record.kill_on_invalid_dep:
            self.cancel_job(record.id, now, reason)
            return
        if record.state is JobState.PENDING:
            self.withdraw(record, now)
            record.drop_plan()
            self.outbox.emit("job.held", now, record.id, reason=reason)
        self.set_state(record, JobState.HELD, reason)

    def _relax(self, record: JobRecord, not_before: int | None, now: int) -> None:
        record.not_before = not_before
        lane = self.planner.lanes.get(record.partition)
        if lane is not None and self.gang_of(record) is None:
            lane.policy.relax(record.id, not_before, now)

    def _plan_again(self, record: JobRecord, now: int) -> bool:
        """Plan a pending job afresh (it was held back, or a promise it counted on was
        lost); whether it is in the plan now."""
        if record.state is not JobState.PENDING:
            return False
        previous = record.guaranteed_start
        if record.guaranteed_start is not None or record.planned_start is not None:
            # Only its plan goes: it keeps its place in the queue (a planning lane had it).
            self.planner.policy_of(record.partition).withdraw(record.id, now)
            record.drop_plan()
        decision = self.decide(record, now)
        if isinstance(decision, Reject):
            self._withdraw_unplanned(record)
            self.set_state(record, JobState.REJECTED, decision.reason)
            record.end_time = now
            self.outbox.emit("job.rejected", now, record.id, reason=record.state_reason)
            return False
        self._note_plan(record, decision, now)
        if record.guaranteed_start != previous:
            self.outbox.emit(
                "job.guarantee_changed",
                now,
                record.id,
                previous=previous,
                guaranteed_start=record.guaranteed_start,
                guaranteed_end=record.guaranteed_end,
                reason="what it waits for moved",
            )
        return True

    def _gate(self, record: JobRecord, bound: Bound, now: int) -> None:
        if record.state is not JobState.PENDING:
            return
        previous = record.guaranteed_start
        # Held back already (so not through withdraw): only a planning lane had it.
        self.planner.policy_of(record.partition).withdraw(record.id, now)
        record.drop_plan()
        self.set_state(record, JobState.PENDING, self.waiting_reason(bound))
        if previous is not None:
            self.outbox.emit(
                "job.guarantee_changed",
                now,
                record.id,
                previous=previous,
                guaranteed_start=None,
                guaranteed_end=None,
                reason=record.state_reason,
            )

    def _withdraw_unplanned(self, record: JobRecord) -> None:
        self.pending.pop(record.id, None)

    # ------------------------------------------------------------------ what jobs did
    def _outcome(self, job_id: int) -> tuple[bool, bool, bool]:
        record = self.jobs.get(job_id)
        if record is None:  # let go from memory: it ended long ago, and was settled then
            return True, True, True
        ended = record.final and not _to_requeue(record)
        return record.start_time is not None, ended, record.state is JobState.COMPLETED

    def _promised(self, need: Need) -> int | None:
        """The predecessor's promised start (``after``) or end: its guarantee while it
        waits, its time limit once it runs (none in a gang partition: it is suspended
        at times), its real end once it ended."""
        record = self.jobs.get(need.job_id)
        if record is None or _to_requeue(record):
            return None  # (queued again after a node failure: its new guarantee will tell)
        if need.kind == "after":
            return record.start_time if record.start_time is not None else record.guaranteed_start
        if record.final:
            return record.end_time
        if record.state is JobState.RUNNING:
            return None if self.gang_of(record) is not None else record.limit_at
        if record.state is JobState.PENDING:
            if record.guaranteed_end is not None:
                return record.guaranteed_end
            if record.guaranteed_start is not None:
                return record.guaranteed_start + record.time_limit
        return None

    def _plans_ahead(self, record_id: int) -> bool:
        record = self.jobs.get(record_id)
        if record is None or self.gang_of(record) is not None:
            return False
        lane = self.planner.lanes.get(record.partition)
        return lane is not None and lane.policy.reserves_every_job

    # ------------------------------------------------------------------ restart
    def rebuild_waits(self) -> None:
        """After a restart: who waits for whom, from each waiting job's needs."""
        for record in sorted(self.jobs.values(), key=lambda r: r.id):
            if not record.final and record.needs:
                self.waits.add(record.id, parse_needs(record.needs), self._outcome)


def _to_requeue(record: JobRecord) -> bool:
    """Lost with a node and about to be queued again (it has not ended for good)."""
    return record.state is JobState.NODE_FAIL and record.requeue


def dependency_answer(engine: DependentJobs, record: JobRecord) -> dict[str, object]:
    """What a waiting job still waits for, for ``GET /v1/jobs/{id}/start``: each need
    with its predecessor's state and promised start or end, and the predecessor whose
    promise sets the job's earliest start (``waits_for_job``)."""
    needs = []
    for need in engine.waits.graph.needs(record.id):
        other = engine.jobs.get(need.job_id)
        needs.append(
            {
                "job_id": need.job_id,
                "kind": need.kind,
                "job_state": None if other is None else other.state.value,
                "promised": engine._promised(need),
            }
        )
    bound = engine.waits.graph.bound(record.id, engine._promised)
    return {
        "dependencies": needs,
        "waits_for_job": None if bound.by is None else bound.by.job_id,
        "not_before": bound.time if bound.known else None,
    }
