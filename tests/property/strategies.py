"""Hypothesis strategies: small random K-resource clusters and workloads."""

from __future__ import annotations

import dataclasses
from typing import cast

from hypothesis import strategies as st

from berth.emulate.workload import TraceJob
from tests.support.builders import trace_job

RESOURCE_NAMES = ("cpus", "mem", "gpus")


def drawing(data: st.DataObject) -> st.DrawFn:
    """``data.draw`` as the helpers below take it (a composite's ``draw``): the two
    are the same function, which mypy cannot match."""
    return cast(st.DrawFn, data.draw)


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, int]:
    k = draw(st.integers(1, 3))
    return {name: draw(st.integers(1, 6)) for name in RESOURCE_NAMES[:k]}


@st.composite
def workloads(
    draw: st.DrawFn, capacity: dict[str, int], max_jobs: int = 8, max_time: int = 8
) -> list[TraceJob]:
    """Jobs with small times; a few ask for more than the cluster has (to be rejected).

    Estimates and submits are often drawn from a few round values, as users do, so that
    several running jobs end at the same instant (EASY's shadow ties) and jobs arrive
    together.
    """
    round_times = [max(1, max_time // 4), max(1, max_time // 2), max_time]
    times = st.one_of(st.integers(1, max_time), st.sampled_from(round_times))
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for job_id in range(1, n + 1):
        resources = {
            name: draw(st.integers(0, cap + (1 if draw(st.integers(0, 9)) == 0 else 0)))
            for name, cap in capacity.items()
        }
        if sum(resources.values()) == 0:
            resources[next(iter(capacity))] = 1
        jobs.append(
            trace_job(
                job_id,
                submit=draw(st.one_of(st.integers(0, 2 * max_time), st.sampled_from([0, 1]))),
                runtime=draw(times),
                estimate=draw(times),
                **resources,
            )
        )
    return sorted(jobs, key=lambda t: (t.job.submit, t.job.id))


def with_deadlines(draw: st.DrawFn, jobs: list[TraceJob], spare: int = 20) -> list[TraceJob]:
    """``jobs`` with exact estimates; most get a deadline of estimate + a random slack
    (up to 3 estimates + ``spare``) after submit, often too tight, so some are refused."""
    result = []
    for drawn in jobs:
        job = drawn.job
        deadline = None
        if draw(st.integers(0, 4)) > 0:
            deadline = job.submit + job.estimate + draw(st.integers(0, 3 * job.estimate + spare))
        result.append(TraceJob(dataclasses.replace(job, deadline=deadline), job.estimate))
    return result
