"""What the store holds beyond the engine's memory, read off the event loop.

Finished jobs the engine let go of, job history, usage and the event log live in the
store only. :class:`Archive` reads them in a worker thread, so the loop goes on serving
requests and the single writer meanwhile. Reads only, apart from pruning old events.
"""

from __future__ import annotations

import asyncio
import logging
import time

from berth.service.model import JobRecord
from berth.service.ports import EventRow, JobFilter, Store, UsageBy

log = logging.getLogger("berth.coordinator")


class Archive:
    """The store's records, read off the loop."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def stored_job(self, job_id: int) -> JobRecord | None:
        """A job the engine does not hold, from the store (off the loop)."""
        return await asyncio.to_thread(self.store.job, job_id)

    async def history(self, where: JobFilter, before: int | None, limit: int) -> list[JobRecord]:
        """Stored jobs that pass ``where``, newest first, below ``before`` (off the loop)."""
        return await asyncio.to_thread(self.store.history, where, before, limit)

    async def usage(
        self, since: int, until: int, by: UsageBy, where: JobFilter
    ) -> dict[str, dict[str, float]]:
        """Per user or account: jobs that ended in ``[since, until)``, resource-seconds."""
        return await asyncio.to_thread(self.store.usage, since, until, by, where)

    async def events_after(
        self, after: int, limit: int = 1000, job_id: int | None = None
    ) -> list[EventRow]:
        """Committed events numbered above ``after`` (from the store, off the loop); only
        job ``job_id``'s if given."""
        return await asyncio.to_thread(self.store.events_after, after, limit, job_id)

    async def prune_events(self, retention_seconds: float) -> int:
        """Delete events older than ``retention_seconds`` (wall time); how many went."""
        before = time.time() - retention_seconds
        pruned = await asyncio.to_thread(self.store.prune_events, before)
        if pruned:
            log.info("pruned %d events older than %.0f s", pruned, retention_seconds)
        return pruned
