"""The engine's job records: every job it holds, the waiting ones in arrival order, the
running ones, the next job number and what happened to jobs, counted.

The state part of :class:`~berth.service.engine.Engine`: the lifecycle
(:mod:`berth.service.jobs.lifecycle`) moves records between its tables, the dependencies
(:mod:`berth.service.jobs.dependencies`) and the partitions (:mod:`berth.service.partitions.registry`)
read them, and the routes look a job up here (404 naming the field). No I/O.
"""

from __future__ import annotations

from collections import Counter

from berth.service.model import JobRecord, RequestError, StartLags


class JobBook:
    """Every held job by id; the pending ones (arrival order) and the running ones."""

    __slots__ = ("counters", "jobs", "next_id", "pending", "running", "start_lags")

    def __init__(self) -> None:
        self.jobs: dict[int, JobRecord] = {}
        self.pending: dict[int, JobRecord] = {}  # arrival order
        self.running: dict[int, JobRecord] = {}
        #: The number the next job gets (ids are never reused, across restarts too).
        self.next_id = 1
        #: Jobs accepted, started, ended in each way, ... since the daemon started.
        self.counters: Counter[str] = Counter()
        #: How late jobs started after their planned start.
        self.start_lags = StartLags()

    def job(self, job_id: int) -> JobRecord:
        """A held job by id (404 naming ``job_id`` if there is none)."""
        record = self.jobs.get(job_id)
        if record is None:
            raise RequestError("not_found", f"no job {job_id}", "job_id")
        return record

    def array_tasks(self, array_id: int) -> list[JobRecord]:
        """The tasks of array ``array_id`` the engine holds, by index."""
        tasks = [r for r in self.jobs.values() if r.array_job_id == array_id]
        return sorted(tasks, key=lambda r: r.array_task_id or 0)
