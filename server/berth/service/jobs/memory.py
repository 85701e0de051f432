"""The engine's memory of finished jobs: the newest are held, older ones let go.

A daemon runs for months; holding every finished job would grow without bound.
:class:`JobMemory` keeps the newest :data:`KEEP_FINISHED` finished jobs (and their
idempotency keys) in the engine's job table and lets the older ones go once committed;
the store still has them, and a submission retried with a key the engine let go brings
its job back (:meth:`JobMemory.remember`). A part of
:class:`~berth.service.engine.Engine`, over the engine's job table. No I/O.
"""

from __future__ import annotations

from collections import deque

from berth.service.model import JobRecord, JobRequest

#: Finished jobs an engine holds in memory (the newest); older ones are read from the
#: store when asked for.
KEEP_FINISHED = 1000


class JobMemory:
    """Which finished jobs of ``jobs`` are still held, and the idempotency keys known."""

    def __init__(self, jobs: dict[int, JobRecord], keep: int = KEEP_FINISHED) -> None:
        self.jobs = jobs
        #: How many finished jobs are held; beyond it the oldest are let go.
        self.keep = keep
        self._keys: dict[tuple[str, str], int] = {}
        self._finished: deque[int] = deque()  # oldest first

    def job_with_key(self, user: str, key: str) -> int | None:
        """The job ``user`` submitted with idempotency key ``key``, if held."""
        return self._keys.get((user, key))

    def made_for(self, request: JobRequest) -> int | None:
        """The job a submission with ``request``'s idempotency key made before, if held
        (``None`` too for a request without a key)."""
        key = request.idempotency_key
        return None if key is None else self._keys.get((request.user, key))

    def knows_key(self, user: str, key: str) -> bool:
        return (user, key) in self._keys

    def note_key(self, record: JobRecord) -> None:
        """A held job's idempotency key (if it has one)."""
        if record.idempotency_key is not None:
            self._keys[(record.user, record.idempotency_key)] = record.id

    def finished(self, job_id: int) -> None:
        """A held job reached a final state: the newest finished job now."""
        self._finished.append(job_id)

    def remember(self, record: JobRecord) -> None:
        """Hold a stored job the engine had let go (its idempotency key came again)."""
        if record.id not in self.jobs:
            self.jobs[record.id] = record
            self.note_key(record)
            self._finished.append(record.id)

    def let_go(self) -> None:
        """Drop the oldest finished jobs beyond :attr:`keep` (after their commit)."""
        while len(self._finished) > self.keep:
            job_id = self._finished.popleft()
            record = self.jobs.get(job_id)
            if record is None or not record.final:
                continue  # requeued after a node failure: live again
            del self.jobs[job_id]
            if record.idempotency_key is not None:
                self._keys.pop((record.user, record.idempotency_key), None)
