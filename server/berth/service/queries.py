"""The engine's lookups: a job or a node by name (404 naming the field), and the
predicted start of every pending job, computed once per change of the plan (in slices
of bounded time in the daemon).

A mixin of :class:`~berth.service.engine.Engine` (see :mod:`berth.service.engine_base`).
No I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable

from berth.core.forecast import ForecastRun
from berth.service.engine_base import EngineBase
from berth.service.improvements import within
from berth.service.model import JobRecord, NodeRecord, RequestError

#: Wall time a read may spend on a forecast before it answers from the last one.
FORECAST_SLICE = 0.02


class EngineQueries(EngineBase):
    """Reads of the engine's records that the routes and the commands share."""

    #: The forecast under way: the engine's version and time it started at, a run per
    #: policy without a plan.
    _forecast_run: tuple[int, int, list[ForecastRun]] | None = None
    #: The sorted predicted starts of the waiting jobs, per (version, prediction time).
    _standing: tuple[tuple[int, int], list[int]] | None = None

    def job(self, job_id: int) -> JobRecord:
        record = self.jobs.get(job_id)
        if record is None:
            raise RequestError("not_found", f"no job {job_id}", "job_id")
        return record

    def node(self, name: str) -> NodeRecord:
        node = self.cluster.nodes.get(name)
        if node is None:
            raise RequestError("not_found", f"no node {name!r}", "name")
        return node

    def predictions(self, now: int) -> tuple[int, dict[int, int]]:
        """``(computed_at, predicted start of every pending job)``.

        Reserving policies' plans are on the records. The others run a copy of their
        policy forward (:class:`~berth.core.forecast.ForecastRun`), once per change of
        the engine. While the engine defers improvements (the daemon), a run that does
        not finish within one slice of :data:`FORECAST_SLICE` goes on in the single
        writer's slices, and reads meanwhile get the last finished run (its
        ``computed_at`` says from when), so that no read waits for a deep queue's
        forecast."""
        predicted = {
            i: r.planned_start for i, r in self.pending.items() if r.planned_start is not None
        }
        policies = [
            lane.policy for lane in self.lanes.values() if not lane.policy.reserves_every_job
        ]
        if not policies:
            return now, predicted
        if self._forecast is None or self._forecast[0] != self.outbox.version:
            if self._forecast_run is None:
                runs = [ForecastRun(policy, now) for policy in policies]
                self._forecast_run = (self.outbox.version, now, runs)
            self.advance_forecast(within(FORECAST_SLICE) if self._defer_improvements else None)
        if self._forecast is None:
            return now, predicted
        return self._forecast[1], {**self._forecast[2], **predicted}

    def queue_standing(
        self, job_ids: Iterable[int], now: int
    ) -> dict[int, tuple[int | None, int | None]]:
        """For waiting jobs: their predicted start and how many waiting jobs are
        predicted to start no later (``None``, ``None``: no prediction yet). The sorted
        starts are kept per prediction, so a page of a deep queue costs a bisect a job."""
        at, predicted = self.predictions(now)
        if self._standing is None or self._standing[0] != (self.outbox.version, at):
            self._standing = ((self.outbox.version, at), sorted(predicted.values()))
        starts = self._standing[1]
        standing: dict[int, tuple[int | None, int | None]] = {}
        for job_id in job_ids:
            start = predicted.get(job_id)
            standing[job_id] = (start, None if start is None else bisect_right(starts, start) - 1)
        return standing

    def advance_forecast(self, stop: Callable[[], bool] | None) -> bool:
        """Drive the forecast under way until done or ``stop()``; whether it is done (it
        is then the one reads get)."""
        if self._forecast_run is None:
            return True
        version, at, runs = self._forecast_run
        if not all(run.advance(stop) for run in runs):
            return False
        predicted: dict[int, int] = {}
        for run in runs:
            predicted.update(run.predicted)
        self._forecast, self._forecast_run = (version, at, predicted), None
        return True
