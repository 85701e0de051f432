"""Workflows in a JSONL workload: job arrays and dependencies, as the daemon takes them.

A job line may carry ``"array": "0-9%2"`` (one job per task; task ids follow the line's
``id``: ``id``, ``id + 1``, ...; at most N running at once) and ``"dependency":
"afterok:1:2,afterany:3"`` (Slurm's kinds, ``singleton`` too; a reference is an earlier
line's job id, an array's id for all its tasks, or ``A_T`` for one task). A job may only
wait for jobs that arrive before it (earlier in (submit, id) order): the replay admits
in that order, as the daemon admits jobs that exist. Errors name the line and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from berth.core.arrays import parse_array, throttle
from berth.core.dependencies import Need, parse_dependency
from berth.emulate.workload import TraceJob, WorkloadError


@dataclass(slots=True)
class Workflow:
    """What the lines read so far define: each job's arrival order, arrays' tasks, and
    each (user, name)'s jobs for ``singleton``."""

    arrival: dict[int, tuple[int, int]] = field(default_factory=dict)
    tasks: dict[int, dict[int, int]] = field(default_factory=dict)
    named: dict[tuple[str | None, str], list[int]] = field(default_factory=dict)

    def expand(self, where: str, record: Mapping[str, Any], trace_job: TraceJob) -> list[TraceJob]:
        """The jobs one line makes (its array's tasks, or itself), with their needs."""
        job = trace_job.job
        indices: tuple[int, ...] = ()
        limit = None
        if "array" in record:
            if not isinstance(record["array"], str):
                raise WorkloadError(f"{where}: field 'array' must be a string such as 0-9%2")
            try:
                indices, limit = parse_array(record["array"])
            except ValueError as error:
                raise WorkloadError(f"{where}: field 'array': {error}") from None
        ids = [job.id + i for i in range(len(indices))] if indices else [job.id]
        needs, singleton = self._needs(where, record, job.submit, ids)
        name = str(record.get("name", ""))
        if singleton:
            needs += [Need("afterany", i) for i in self.named.get((job.user, name), [])]
            limit = 1 if indices else limit
        lanes = throttle(ids, limit)
        made = []
        for position, job_id in enumerate(ids):
            own = [*needs, lanes[job_id]] if job_id in lanes else needs
            task = replace(job, id=job_id)
            made.append(replace(trace_job, job=task, needs=tuple(dict.fromkeys(own))))
            self.arrival[job_id] = (job.submit, job_id)
            self.named.setdefault((job.user, name), []).append(job_id)
            if indices:
                self.tasks.setdefault(job.id, {})[indices[position]] = job_id
        return made

    def _needs(
        self, where: str, record: Mapping[str, Any], submit: int, ids: list[int]
    ) -> tuple[list[Need], bool]:
        text = record.get("dependency")
        if text is None:
            return [], False
        if not isinstance(text, str):
            raise WorkloadError(f"{where}: field 'dependency' must be a string")
        try:
            pairs, singleton = parse_dependency(text)
        except ValueError as error:
            raise WorkloadError(f"{where}: field 'dependency': {error}") from None
        needs = []
        for kind, reference in pairs:
            for job_id in self._referenced(where, reference):
                if job_id in ids or self.arrival[job_id] >= (submit, ids[0]):
                    raise WorkloadError(
                        f"{where}: field 'dependency': job {job_id} does not arrive before "
                        "this one (a job waits only for earlier arrivals)"
                    )
                needs.append(Need(kind, job_id))
        return needs, singleton

    def _referenced(self, where: str, reference: str) -> list[int]:
        array_text, _, task_text = reference.partition("_")
        array_id = int(array_text)
        tasks = self.tasks.get(array_id)
        if task_text:
            task = None if tasks is None else tasks.get(int(task_text))
            if task is None:
                raise WorkloadError(
                    f"{where}: field 'dependency': no task {task_text} of array {array_id} "
                    "on an earlier line"
                )
            return [task]
        if tasks is not None:
            return list(tasks.values())
        if array_id not in self.arrival:
            raise WorkloadError(
                f"{where}: field 'dependency': no job {array_id} on an earlier line"
            )
        return [array_id]
