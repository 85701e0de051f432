"""A live gang partition on emulated nodes, driven by a virtual clock, runs the same
schedule as the gang emulator (``berth emulate --policy gang``) on the same jobs.

The emulator counts work in whole slots and ends a job at the end of the slot in which
its last unit is done; the live engine ends it when its emulated runtime of run time is
used, inside that slot. So each job's live end, rounded up to a slot boundary, must be
the emulator's end, for every scheme, and both see the same largest number of rows.
"""

from __future__ import annotations

import random

import pytest

from berth.core.model import Job
from berth.dispatch.emulated import EmulatedNodes
from berth.emulate.gang import replay_gang
from berth.emulate.workload import TraceJob
from berth.service.engine import Engine
from berth.service.gang import GangSpec
from berth.service.model import JobRequest, JobState, NodeRecord
from berth.service.ports import Snapshot

SLOT = 10
PROCESSORS = 16


def workload(seed: int, count: int = 150) -> list[TraceJob]:
    """Integer sizes 1-16 (blocks are rounded up), runtimes 1-200 s, load near 0.9."""
    rng = random.Random(seed)
    jobs, now = [], 0
    for job_id in range(1, count + 1):
        size = rng.choice([1, 2, 3, 4, 5, 8, 12, 16])
        runtime = rng.randint(1, 200)
        now += int(rng.expovariate(0.9 * PROCESSORS / (6 * 100)))
        jobs.append(TraceJob(Job(job_id, now, runtime * 2, {"cpus": size}), runtime))
    return jobs


def live_ends(jobs: list[TraceJob], scheme: str) -> tuple[dict[int, int], int]:
    """Each job's end rounded up to a slot boundary, and the most rows seen."""
    nodes = [NodeRecord(f"n{i}", {"cpus": 4, "mem_gb": 16}) for i in range(4)]
    live = Engine.restore(Snapshot(), EmulatedNodes(), 0, nodes, "conservative", {})
    live.create_partition(GangSpec("g", [n.name for n in nodes], scheme, SLOT), 0)
    part = live.gang["g"]
    ids: dict[int, int] = {}  # engine id -> trace id
    arrivals = sorted(jobs, key=lambda j: (j.job.submit, j.job.id))
    index, most_rows = 0, 0
    while True:
        due = live.next_event()
        coming = arrivals[index].job.submit if index < len(arrivals) else None
        if due is None and coming is None:
            break
        now = min(t for t in (due, coming) if t is not None)
        with live.batch(now):
            live.advance(now)
            while index < len(arrivals) and arrivals[index].job.submit == now:
                trace = arrivals[index]
                request = JobRequest(
                    name=str(trace.job.id),
                    user="u",
                    resources=dict(trace.job.resources),
                    time_limit=trace.job.estimate,
                    emulated_runtime=trace.runtime,
                    partition="g",
                )
                record, _ = live.submit(request, now)
                ids[record.id] = trace.job.id
                index += 1
        most_rows = max(most_rows, len(part.rotation.scheduler.matrix.rows))
        part.rotation.scheduler.matrix.check()
    ends = {}
    for engine_id, trace_id in ids.items():
        record = live.jobs[engine_id]
        assert record.state is JobState.COMPLETED, (trace_id, record.state_reason)
        assert record.end_time is not None
        ends[trace_id] = -(-record.end_time // SLOT) * SLOT
    return ends, most_rows


@pytest.mark.parametrize("scheme", ["bc", "br", "brms", "brmms"])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_live_gang_partition_runs_the_emulators_schedule(scheme: str, seed: int) -> None:
    jobs = workload(seed)
    emulated = replay_gang(jobs, PROCESSORS, scheme, SLOT)
    live, most_rows = live_ends(jobs, scheme)
    expected = {record.id: record.end for record in emulated.records}
    assert live == expected
    assert most_rows == emulated.report["n_l"]
    assert int(str(emulated.report["n_l"])) >= 3  # the workload really stacks rows
