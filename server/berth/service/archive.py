"""What the store holds beyond the engine's memory, read off the event loop.

Finished jobs the engine let go of, job history, usage and the event log live in the
store only. :class:`Archive` reads them in a worker thread, so the loop goes on serving
requests and the single writer meanwhile. Reads only, apart from pruning old events;
what it recalls for the idempotency keys of submissions goes back into the engine's
memory.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from berth.service.model import JobRecord
from berth.service.ports import EventRow, JobFilter, Store, UsageBy

if TYPE_CHECKING:
    from berth.service.commands import SubmitJob
    from berth.service.engine import Engine

log = logging.getLogger("berth.coordinator")


class Archive:
    """The store's records, read off the loop."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def recall_keys(self, engine: Engine, submits: list[SubmitJob]) -> None:
        """Submits that carry an idempotency key the engine no longer holds (a job let go
        after it finished): those jobs fetched from the store (off the loop) back into the
        engine's memory before the submits apply, so a retry finds its job instead of
        creating a second one."""
        keys = [
            (submit.request.user, key)
            for submit in submits
            if (key := submit.request.idempotency_key) is not None
            and not engine.memory.knows_key(submit.request.user, key)
        ]
        if keys:
            try:
                found = await asyncio.to_thread(self.store.jobs_by_keys, keys)
            except Exception:  # the save after them will fail the same way and say so
                log.exception("looking up idempotency keys failed")
                return
            for record in found:
                engine.memory.remember(record)

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
