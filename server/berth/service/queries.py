"""The engine's lookups: a job or a node by name (404 naming the field), and the
predicted start of every pending job, computed once per change of the plan.

A mixin of :class:`~berth.service.engine.Engine` (see :mod:`berth.service.engine_base`).
No I/O.
"""

from __future__ import annotations

from berth.core.forecast import forecast
from berth.service.engine_base import EngineBase
from berth.service.model import JobRecord, NodeRecord, RequestError


class EngineQueries(EngineBase):
    """Reads of the engine's records that the routes and the commands share."""

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
        """``(computed_at, predicted start of every pending job)``, cached per change."""
        if self._forecast is not None and self._forecast[0] == self.version:
            return self._forecast[1], self._forecast[2]
        # Reserving policies' plans and gang forecasts are on the records; the others
        # run a copy of their policy forward.
        predicted = {
            i: r.planned_start for i, r in self.pending.items() if r.planned_start is not None
        }
        for lane in self.lanes.values():
            if not lane.policy.reserves_every_job:
                predicted.update(forecast(lane.policy, now))
        self._forecast = (self.version, now, predicted)
        return now, predicted
