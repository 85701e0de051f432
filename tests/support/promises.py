"""Promise checks shared by the pool and node property tests: deadline admission's
(every admitted job completes by its deadline) and slack's (a bound never moves and no
reservation passes it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.emulate.records import JobRecord
from berth.emulate.workload import TraceJob


def assert_deadlines_kept(
    promised: Mapping[int, int], records: Mapping[int, JobRecord], jobs: Sequence[TraceJob]
) -> None:
    """Every admitted job ended by its promised completion, which is its own deadline
    when it gave one; exactly the admitted jobs ran."""
    for job_id, completion in promised.items():
        record = records[job_id]
        assert record.end is not None
        assert record.end <= completion, (job_id, record.end, completion)
        deadline = next(t.job.deadline for t in jobs if t.job.id == job_id)
        if deadline is not None:
            assert completion == deadline
    assert {r.id for r in records.values() if r.status != "rejected"} == set(promised)


class BoundChecks:
    """Mixed into a slack policy: after every event, each reserved waiting job's bound
    is the one it got when placed and its reservation is no later."""

    bounds: dict[int, int | None]
    waiting: dict[int, Any]
    planned_bound: Callable[[int], int | None]  # the policy's

    def _check(self) -> None:
        if not hasattr(self, "bounds"):
            self.bounds = {}
        for job_id, entry in self.waiting.items():
            if entry.start is None:
                continue  # waits unplanned (nodes drained or down)
            bound = self.planned_bound(job_id)
            first = self.bounds.setdefault(job_id, bound)
            assert bound == first, f"job {job_id}: bound moved from {first} to {bound}"
            assert bound is None or entry.start <= bound, (job_id, entry.start, bound)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        decision: Reserve | Reject | None = super().submit(job, now)  # type: ignore[misc]
        self._check()
        return decision

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        super().complete(job_ids, now)  # type: ignore[misc]
        self._check()

    def schedule(self, now: int) -> list[Start]:
        started: list[Start] = super().schedule(now)  # type: ignore[misc]
        self._check()
        return started


class RepeatedCompression:
    """Mixed into a pool policy: compression in passes until no job moves, as the node
    planner compresses, so that one-cpu nodes and the pool can be compared exactly."""

    moved_up: int

    def compress(self, now: int) -> None:
        while True:
            before = self.moved_up
            super().compress(now)  # type: ignore[misc]
            if self.moved_up == before:
                return


class RecordsPromises:
    """Mixed into a deadline policy: each admission's promised completion, and whether
    each rejection left the schedule as it was (``snapshot`` and ``same`` say what the
    schedule is and when two are alike)."""

    promised: dict[int, int]
    unchanged_after_reject: list[bool]

    def snapshot(self, now: int) -> object:
        raise NotImplementedError

    def same(self, before: object, after: object) -> bool:
        return before == after

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        if not hasattr(self, "promised"):
            self.promised, self.unchanged_after_reject = {}, []
        before = self.snapshot(now)
        decision: Reserve | Reject | None = super().submit(job, now)  # type: ignore[misc]
        if isinstance(decision, Reject):
            self.unchanged_after_reject.append(self.same(before, self.snapshot(now)))
        elif isinstance(decision, Reserve):
            assert decision.completion is not None
            self.promised[job.id] = decision.completion
        return decision
