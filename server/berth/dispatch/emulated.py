"""Emulated nodes: a started job "runs" for its emulated runtime on the cluster clock.

A job ends ``emulated_runtime`` seconds after it starts (default: its time limit, so it
completes exactly at its limit); the engine kills it earlier if that is past its limit.
Nothing is executed. Because the end time follows from the start time alone, a daemon
restarted after a crash re-adopts a running job and learns that it ended while the
daemon was down, at the very time it would have ended.
"""

from __future__ import annotations

import heapq

from berth.service.model import JobRecord
from berth.service.ports import Ended


class EmulatedNodes:
    """The :class:`~berth.service.ports.NodeBackend` of an emulated cluster."""

    #: Nothing leaves the process: starts are known at once (see ``NodeBackend``).
    in_process = True

    def __init__(self) -> None:
        self._ends: list[tuple[int, int]] = []  # (end, job id); stale entries are skipped
        self._live: dict[int, int] = {}  # job id -> end
        self._paused: dict[int, int] = {}  # job id -> seconds left

    @staticmethod
    def runtime(job: JobRecord) -> int:
        return job.emulated_runtime if job.emulated_runtime is not None else job.time_limit

    def _run_until(self, job_id: int, end: int) -> None:
        self._live[job_id] = end
        heapq.heappush(self._ends, (end, job_id))

    def start(self, job: JobRecord, now: int) -> None:
        self._run_until(job.id, now + self.runtime(job))

    def adopt(self, job: JobRecord, now: int) -> None:
        """Take back a running job: it ends its runtime after its start plus the time it
        was suspended (gang partitions), or waits with what it has left if suspended."""
        assert job.start_time is not None
        if job.suspended_at is not None:
            ran = job.suspended_at - job.start_time - job.suspended_for
            self._paused[job.id] = max(self.runtime(job) - ran, 0)
        else:
            self._run_until(job.id, job.start_time + job.suspended_for + self.runtime(job))

    def kill(self, job_id: int, now: int) -> None:
        self._live.pop(job_id, None)
        self._paused.pop(job_id, None)

    def suspend(self, job_id: int, now: int) -> None:
        end = self._live.pop(job_id, None)
        if end is not None:
            self._paused[job_id] = max(end - now, 0)

    def resume(self, job_id: int, now: int) -> None:
        left = self._paused.pop(job_id, None)
        if left is not None:
            self._run_until(job_id, now + left)

    def finished(self, now: int) -> list[Ended]:
        done: list[Ended] = []
        ends = self._ends
        while ends and ends[0][0] <= now:
            end, job_id = heapq.heappop(ends)
            if self._live.get(job_id) == end:
                del self._live[job_id]
                done.append(Ended(job_id, end, exit_code=0))
        return done

    def next_event(self) -> int | None:
        ends = self._ends
        while ends and self._live.get(ends[0][1]) != ends[0][0]:
            heapq.heappop(ends)
        return ends[0][0] if ends else None
