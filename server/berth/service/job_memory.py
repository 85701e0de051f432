"""The engine's memory of finished jobs: the newest are held, older ones let go.

A daemon runs for months; holding every finished job would grow without bound. The
engine keeps the newest :data:`KEEP_FINISHED` (and their idempotency keys) and lets the
older ones go once committed; the store still has them, and a submission retried with a
key the engine let go brings its job back (:meth:`JobMemory.remember`). A mixin of
:class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.service.engine_base import EngineBase
from berth.service.model import JobRecord

#: Finished jobs an engine holds in memory (the newest); older ones are read from the
#: store when asked for.
KEEP_FINISHED = 1000


class JobMemory(EngineBase):
    """Which finished jobs the engine still holds, and the idempotency keys it knows."""

    def remember(self, record: JobRecord) -> None:
        """Hold a stored job the engine had let go (its idempotency key came again)."""
        if record.id not in self.jobs:
            self.jobs[record.id] = record
            if record.idempotency_key is not None:
                self._idempotency[(record.user, record.idempotency_key)] = record.id
            self._finished.append(record.id)

    def knows_key(self, user: str, key: str) -> bool:
        return (user, key) in self._idempotency

    def let_go(self) -> None:
        """Drop the oldest finished jobs beyond ``keep_finished`` (after their commit)."""
        while len(self._finished) > self.keep_finished:
            job_id = self._finished.popleft()
            record = self.jobs.get(job_id)
            if record is None or not record.final:
                continue  # requeued after a node failure: live again
            del self.jobs[job_id]
            if record.idempotency_key is not None:
                self._idempotency.pop((record.user, record.idempotency_key), None)
