"""Test data builders: jobs, workloads and replays in one line each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.resources import ResourceSpace
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob


def trace_job(
    job_id: int,
    submit: int,
    runtime: int,
    estimate: int | None = None,
    **resources: int,
) -> TraceJob:
    """A job for replay; resources default to one cpu."""
    return TraceJob(
        Job(
            id=job_id,
            submit=submit,
            estimate=runtime if estimate is None else estimate,
            resources=resources or {"cpus": 1},
        ),
        runtime,
    )


def run(
    jobs: Sequence[TraceJob], policy: str, capacity: Mapping[str, int], **options: object
) -> dict[int, JobRecord]:
    """Replay jobs (sorted here) under ``policy`` with ``options``; records by job id."""
    ordered = sorted(jobs, key=lambda t: (t.job.submit, t.job.id))
    records = replay(ordered, make_policy(policy, ResourceSpace(capacity), **options))
    return {r.id: r for r in records}


def starts(records: Mapping[int, JobRecord]) -> dict[int, int | None]:
    return {job_id: r.start for job_id, r in records.items()}
