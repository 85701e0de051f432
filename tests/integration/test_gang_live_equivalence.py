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
from berth.emulate.virtual import run_on_virtual_clock, trace_request
from berth.emulate.workload import TraceJob
from berth.service.model import JobState, NodeRecord
from berth.service.partitions.gang import GangSpec
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine
from tests.support.node_changes import create_partition

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
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, nodes, "conservative", {})
    create_partition(live, GangSpec("g", [n.name for n in nodes], scheme, SLOT), 0)
    part = live.gang["g"]
    rows: list[int] = []

    def look(_: int) -> None:
        rows.append(len(part.rotation.scheduler.matrix.rows))
        part.rotation.scheduler.matrix.check()

    arrivals = [(trace.job.submit, trace_request(trace, "g")) for trace in jobs]
    engine_ids = run_on_virtual_clock(live, arrivals, look)
    ids = {engine_id: trace.job.id for engine_id, trace in zip(engine_ids, jobs, strict=True)}
    most_rows = max(rows)
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
