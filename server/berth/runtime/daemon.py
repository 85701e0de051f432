"""APScheduler wakes the engine at its next event instead of polling.

One ``date`` job is (re)scheduled after every committed batch for the engine's next
event (a reservation's start, a time limit expiring, an emulated job ending); one
``interval`` job reconciles every ``reconcile_seconds`` in case a wake-up was missed
(clock drift, a suspended host). Both just ask for a tick, which runs as a task of its
own, one at a time (:meth:`Waker._wake`). A third prunes
stored events past their retention, at start-up and hourly; a fourth settles the heap
(:mod:`berth.runtime.heap`) every minute.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from berth.runtime.heap import SETTLE_EVERY, THAW_EVERY, settle_heap
from berth.service.coordinator import Coordinator

#: Seconds between prunes of old events.
PRUNE_EVERY = 3600.0

log = logging.getLogger("berth.waker")

#: Wall seconds added to each wake-up so the clock has surely reached the event's second.
WAKE_MARGIN = 0.002


class Waker:
    def __init__(
        self,
        coordinator: Coordinator,
        reconcile_seconds: float,
        event_retention_seconds: float | None = None,
    ) -> None:
        self.coordinator = coordinator
        self.scheduler = AsyncIOScheduler(
            job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 1}
        )
        self.reconcile_seconds = reconcile_seconds
        self.event_retention_seconds = event_retention_seconds
        self._planned: int | None = None
        #: The task ticking the coordinator, while one runs, and whether a wake-up came
        #: while it did (then it ticks once more).
        self._ticking: asyncio.Task[None] | None = None
        self._tick_again = False

    def start(self) -> None:
        self.scheduler.start()
        self.scheduler.add_job(
            self._reconcile, "interval", seconds=self.reconcile_seconds, id="reconcile"
        )
        if self.event_retention_seconds is not None:
            self.scheduler.add_job(
                self._prune,
                "interval",
                seconds=PRUNE_EVERY,
                id="prune-events",
                next_run_time=dt.datetime.now(dt.UTC),  # once at start-up too
            )
        self.scheduler.add_job(
            settle_heap, "interval", seconds=SETTLE_EVERY, args=(False,), id="settle-heap"
        )
        self.scheduler.add_job(settle_heap, "interval", seconds=THAW_EVERY, id="thaw-heap")
        self.coordinator.on_next_event = self.plan

    def plan(self, cluster_time: int | None) -> None:
        """Wake the engine at ``cluster_time`` (cancel the wake-up if ``None``)."""
        if cluster_time == self._planned:
            return
        self._planned = cluster_time
        if cluster_time is None:
            if self.scheduler.get_job("wake") is not None:
                self.scheduler.remove_job("wake")
            return
        delay = self.coordinator.clock.wall_delay(cluster_time) + WAKE_MARGIN
        run_at = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=delay)
        # A wake only asks for a tick (at once): two may overlap, as one the scheduler
        # still counts as running until its task's callback has run (it skipped one a
        # run of that benchmark, with a warning, at one instance at a time).
        self.scheduler.add_job(
            self._wake, "date", run_date=run_at, id="wake", replace_existing=True, max_instances=4
        )

    async def _prune(self) -> None:
        assert self.event_retention_seconds is not None
        try:
            await self.coordinator.archive.prune_events(self.event_retention_seconds)
        except Exception:  # a failed prune is retried next hour; it loses nothing
            log.exception("pruning events failed")
        except asyncio.CancelledError:  # the daemon stops: the next start prunes
            log.debug("pruning events cut short by the daemon stopping")

    async def _wake(self) -> None:
        self._planned = None
        self._tick()

    async def _reconcile(self) -> None:
        self._tick()  # (a coroutine: the scheduler runs plain functions in a thread)

    def _tick(self) -> None:
        """Tick the coordinator in a task of its own, and return. A job awaiting the
        tick stayed running until its batch committed, and the scheduler runs one
        instance of a job at a time: under load every commit plans a wake-up already
        due, which it then skipped, with a warning, and for good (a ``date`` job runs
        once): 633 warnings in the three minutes of submissions of
        ``benchmarks/bench_scale.py --nodes 4096 --jobs 50000``, and a wake-up lost
        whenever no batch came after it. One tick at a time: a wake-up while one waits
        asks for one more after it (the one waiting may have been applied before the
        instant woken for)."""
        if self._ticking is not None:
            self._tick_again = True
            return
        self._ticking = asyncio.get_running_loop().create_task(self._ticks())

    async def _ticks(self) -> None:
        try:
            again = True
            while again:
                self._tick_again = False
                try:
                    await self.coordinator.tick()
                except Exception:  # (the coordinator stopping, its store down: it says so)
                    log.warning("a scheduled tick failed", exc_info=True)
                    return
                again = self._tick_again
        finally:
            self._ticking = None

    def stop(self) -> None:
        self.coordinator.on_next_event = None
        if self._ticking is not None:
            self._ticking.cancel()
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
