"""Invariants of a live gang partition under random jobs, for every scheme.

At every event of a virtual clock: the jobs that run (started, not suspended) never
share a cpu; memory held by the jobs on a node (suspended ones included) never exceeds
the node's; a suspended job is never past its time limit, and every job is given its
whole runtime of run time, ending completed, or is killed at its limit.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.dispatch.emulated import EmulatedNodes
from berth.emulate.virtual import run_on_virtual_clock
from berth.service.engine import Engine
from berth.service.model import JobRequest, JobState, NodeRecord
from berth.service.partitions.gang import GangSpec
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine
from tests.support.node_changes import create_partition

SLOT = 5

jobs = st.lists(
    st.tuples(
        st.integers(0, 60),  # submit
        st.integers(1, 8),  # cpus
        st.integers(0, 12),  # mem_gb
        st.integers(1, 40),  # runtime
        st.integers(1, 40),  # time limit
    ),
    min_size=1,
    max_size=25,
)


def check(live: Engine) -> None:
    part = live.gang["g"]
    memory: dict[str, int] = {}
    for job_id in part.rotation.scheduler.matrix.jobs:
        for node, amounts in part.allocation(job_id).items():
            memory[node] = memory.get(node, 0) + amounts.get("mem_gb", 0)
    cpus: dict[str, int] = {}
    for record in live.running.values():
        if record.suspended_at is None:
            for node, amounts in record.allocation.items():
                cpus[node] = cpus.get(node, 0) + amounts["cpus"]
        else:
            assert record.limit_at is None  # a suspended job's limit does not run
    for node, node_record in live.cluster.nodes.items():
        assert memory.get(node, 0) <= node_record.resources["mem_gb"], (node, memory)
        assert cpus.get(node, 0) <= node_record.resources["cpus"], (node, cpus)
    part.rotation.scheduler.matrix.check()


@settings(max_examples=60, deadline=None)
@given(scheme=st.sampled_from(("bc", "br", "brms", "brmms")), workload=jobs)
def test_a_live_gang_partition_keeps_its_invariants(
    scheme: str, workload: list[tuple[int, int, int, int, int]]
) -> None:
    nodes = [NodeRecord("a", {"cpus": 4, "mem_gb": 16}), NodeRecord("b", {"cpus": 4, "mem_gb": 16})]
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, nodes, "easy", {})
    create_partition(live, GangSpec("g", ["a", "b"], scheme, SLOT), 0)
    arrivals = [
        (submit, JobRequest("j", "u", {"cpus": cpus, "mem_gb": mem}, limit,
                            emulated_runtime=runtime, partition="g"))
        for submit, cpus, mem, runtime, limit in workload
    ]  # fmt: skip
    engine_ids = run_on_virtual_clock(live, arrivals, lambda _: check(live))
    ids = {i: (job[3], job[4]) for i, job in zip(engine_ids, workload, strict=True)}
    for job_id, (runtime, limit) in ids.items():
        record = live.jobs[job_id]
        assert record.start_time is not None
        assert record.end_time is not None
        ran = record.end_time - record.start_time - record.suspended_for
        if runtime <= limit:
            assert record.state is JobState.COMPLETED, record
            assert ran == runtime
        else:
            assert record.state is JobState.TIMEOUT, record
            assert ran == limit
