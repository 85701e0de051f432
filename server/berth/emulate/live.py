"""Dry run of live state: the daemon's running and waiting jobs replayed forward.

The daemon hands over its jobs as they are at ``now``: running jobs (with their start
and how long they will really run, which the emulated nodes know) are adopted by a
fresh policy, waiting jobs arrive at ``now`` in queue order, and the replay runs them
all under any policy, exactly as ``berth emulate`` would. Live state is never touched.
Waits and responses in the report count from ``now``, not from the original submits.
Waiting jobs keep what they still wait for: jobs of the replay, running ones (which end
as the emulated nodes know they will), or jobs outside it (a gang partition's), whose
needs count as met.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from berth.core.policies import make_policy
from berth.core.resources import ResourceSpace
from berth.emulate.metrics import summarize
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob


def replay_live(
    running: Sequence[tuple[TraceJob, int]],
    waiting: Sequence[TraceJob],
    policy_name: str,
    policy_options: Mapping[str, object],
    capacity: Mapping[str, int],
    now: int,
) -> tuple[list[JobRecord], dict[str, object]]:
    """Records of the waiting jobs and the report, replaying forward from ``now``.

    ``running`` pairs each running job with its start; it ends at
    ``start + min(runtime, estimate)`` (at ``now`` if that has passed).
    """
    policy = make_policy(policy_name, ResourceSpace(capacity), **policy_options)
    ends = []
    before: dict[int, tuple[int, int, bool]] = {}
    for trace_job, start in running:
        job = trace_job.job
        policy.adopt_running(job, start, now)
        end = start + min(trace_job.runtime, job.estimate)
        ends.append((max(end, now), job.id))
        before[job.id] = (start, job.estimate, trace_job.runtime <= job.estimate)
    arrivals = [dataclasses.replace(t, job=dataclasses.replace(t.job, submit=now)) for t in waiting]
    records = replay(arrivals, policy, running_ends=ends, running=before)
    return records, summarize(records, capacity)
