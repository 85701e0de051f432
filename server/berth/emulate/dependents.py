"""Dependencies in a replay: jobs that wait for other jobs of the workload.

The emulator's side of :class:`~berth.core.waits.Waits`, as the daemon's engine has its
own: a dependent job reaches its policy once every predecessor has a promise (a policy
that plans every job) or has ended (one that does not), from its predecessors' promised
ends on; a predecessor's promise is its guarantee until it starts, then its start plus
its estimate (never its real runtime: a planner cannot know it). A need that can never
be satisfied cancels the job. Deterministic: no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import cast

from berth.core.decisions import Reject, Reserve
from berth.core.dependencies import Need
from berth.core.policies.base import LivePolicy, Policy
from berth.core.timeline import Timeline
from berth.core.waits import Doom, Gate, Plan, Relax, Waits
from berth.emulate.records import JobRecord
from berth.emulate.workload import TraceJob


class Dependents:
    """The jobs of one replay that wait for others, and what follows as jobs move."""

    def __init__(
        self,
        timeline: Timeline[Policy],
        records: Mapping[int, JobRecord],
        decided: Callable[[JobRecord, Reserve | Reject | None], None],
        running: Mapping[int, tuple[int, int]] | None = None,
    ) -> None:
        self.timeline = timeline
        self.records = records
        self.decided = decided
        #: Jobs running before the replay began (a dry run of live state): start and
        #: estimate; they have no record of their own.
        self.running = dict(running or {})
        self.waits = Waits()
        self.jobs: dict[int, TraceJob] = {}
        self.ended: dict[int, bool] = {}  # job id -> ended successfully

    @property
    def policy(self) -> LivePolicy:
        return cast("LivePolicy", self.timeline.policy)

    def arrive(self, trace_job: TraceJob, record: JobRecord, now: int) -> bool:
        """A job arrives: whether it went to the policy now (else it waits, or was
        cancelled: a need could never be satisfied)."""
        job = trace_job.job
        self.jobs[job.id] = trace_job
        self.waits.add(job.id, trace_job.needs, self.outcome)
        return self._offer(job.id, now)

    def _offer(self, job_id: int, now: int) -> bool:
        plans = getattr(self.policy, "reserves_every_job", False)
        held = self.waits.admit(job_id, self.promised, plans)
        record = self.records[job_id]
        if held is not None:
            record.reason = f"waits for job {held.by.job_id} ({held.by.kind})" if held.by else ""
            return False
        job = replace(self.jobs[job_id].job, not_before=self.waits.not_before(job_id))
        self.decided(record, self.timeline.arrive(job, now))
        if record.status == "rejected":
            self.ended[job_id] = False
            self.waits.ended(job_id, started=False)
        else:
            self.waits.touch(job_id)  # a promise: jobs waiting for it may be planned
        return True

    def started(self, job_id: int) -> None:
        self.waits.touch(job_id)

    def finished(self, job_id: int, ok: bool) -> None:
        self.ended[job_id] = ok
        self.waits.ended(job_id, started=True)

    def cancel(self, record: JobRecord, need: Need, now: int) -> None:
        record.status = "cancelled"
        record.reason = f"its dependency {need} can never be satisfied"
        record.end = now
        self.ended[record.id] = False
        self.waits.ended(record.id, started=False)

    def settle(self, now: int) -> bool:
        """Apply what follows from the jobs that moved; whether a job reached the policy."""
        offered = False
        while steps := self.waits.settle(self.outcome, self.promised, self._plans_ahead):
            for step in steps:
                record = self.records[step.job_id]
                if isinstance(step, Doom):
                    if record.status == "queued":
                        self.policy.withdraw(step.job_id, now)
                        self.cancel(record, step.need, now)
                elif isinstance(step, Relax):
                    self.policy.relax(step.job_id, step.not_before, now)
                elif isinstance(step, Plan):
                    if step.again:
                        self.policy.withdraw(step.job_id, now)
                    offered = self._offer(step.job_id, now) or offered
                elif isinstance(step, Gate):
                    self.policy.withdraw(step.job_id, now)
        return offered

    def _plans_ahead(self, job_id: int) -> bool:
        return bool(getattr(self.policy, "reserves_every_job", False))

    def outcome(self, job_id: int) -> tuple[bool, bool, bool]:
        ended = job_id in self.ended
        record = self.records.get(job_id)
        if record is None:  # running before the replay, or outside it (counts as met)
            outside = job_id not in self.running
            return True, ended or outside, outside or (ended and self.ended[job_id])
        return record.start is not None, ended, ended and self.ended[job_id]

    def promised(self, need: Need) -> int | None:
        record = self.records.get(need.job_id)
        if record is None:
            start, estimate = self.running.get(need.job_id, (0, 0))
            return start if need.kind == "after" else start + estimate
        if need.kind == "after":
            return record.start if record.start is not None else record.guarantee
        if need.job_id in self.ended:
            return record.end
        if record.start is not None:
            return record.start + record.estimate
        if record.promised_completion is not None:
            return record.promised_completion
        return None if record.guarantee is None else record.guarantee + record.estimate
