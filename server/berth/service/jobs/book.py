"""The engine's job records: every job it holds, the waiting ones in arrival order, the
running ones, the next job number and what happened to jobs, counted.

The state part of :class:`~berth.service.engine.Engine`: the lifecycle
(:mod:`berth.service.jobs.lifecycle`) moves records between its tables, the dependencies
(:mod:`berth.service.jobs.dependencies`) and the partitions (:mod:`berth.service.partitions.registry`)
read them, and the routes look a job up here (404 naming the field). No I/O.
"""

from __future__ import annotations

import heapq
from collections import Counter

from berth.service.jobs.array_fill import ArrayFill
from berth.service.model import JobRecord, RequestError, StartLags


class JobBook:
    """Every held job by id; the pending ones (arrival order) and the running ones."""

    __slots__ = (
        "_limits",
        "counters",
        "filling",
        "jobs",
        "next_id",
        "pending",
        "running",
        "start_lags",
    )

    def __init__(self) -> None:
        self.jobs: dict[int, JobRecord] = {}
        self.pending: dict[int, JobRecord] = {}  # arrival order
        self.running: dict[int, JobRecord] = {}
        #: The number the next job gets (ids are never reused, across restarts too).
        self.next_id = 1
        #: Arrays being submitted in parts, by array id (see :mod:`.array_fill`).
        self.filling: dict[int, ArrayFill] = {}
        #: Jobs accepted, started, ended in each way, ... since the daemon started.
        self.counters: Counter[str] = Counter()
        #: How late jobs started after their planned start.
        self.start_lags = StartLags()
        #: (time limit reached at, job) of running jobs, soonest first; an entry whose
        #: job left or was suspended since is dropped when it reaches the top.
        self._limits: list[tuple[int, int]] = []

    def add_running(self, record: JobRecord) -> None:
        """A job runs (started, or restored running): in the running table, its time
        limit watched. The one way in, so that no way in forgets the watch."""
        self.running[record.id] = record
        self.watch_limit(record)

    def watch_limit(self, record: JobRecord) -> None:
        """Note when a running job (added, or resumed) reaches its time limit: the
        engine's next event and its kills ask this instead of every running job
        (thousands on a large cluster, at every batch)."""
        limit = record.limit_at
        if limit is not None:
            heapq.heappush(self._limits, (limit, record.id))

    def next_limit(self) -> int | None:
        """The soonest time a running job reaches its limit, if any runs unsuspended."""
        limits, running = self._limits, self.running
        while limits:
            limit, job_id = limits[0]
            record = running.get(job_id)
            if record is not None and record.limit_at == limit:
                return limit
            heapq.heappop(limits)  # it ended, or was suspended (resumed: noted again)
        return None

    def reaching_limit(self, now: int) -> JobRecord | None:
        """A running job at or past its limit at ``now`` (the soonest), taken off the
        watch; ``None`` if there is none."""
        limit = self.next_limit()
        if limit is None or limit > now:
            return None
        return self.running[heapq.heappop(self._limits)[1]]

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
