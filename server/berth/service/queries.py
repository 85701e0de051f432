"""The engine's lookups: a job or a node by name (404 naming the field). The predicted
starts are a read model of their own (:mod:`berth.service.forecasts`).

A mixin of :class:`~berth.service.engine.Engine` (see :mod:`berth.service.engine_base`).
No I/O.
"""

from __future__ import annotations

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

    def array_tasks(self, array_id: int) -> list[JobRecord]:
        """The tasks of array ``array_id`` the engine holds, by index."""
        tasks = [r for r in self.jobs.values() if r.array_job_id == array_id]
        return sorted(tasks, key=lambda r: r.array_task_id or 0)
