"""One timeline: the daemon's engine on emulated nodes, driven the way the coordinator
drives it (a batch per instant: due events, the instant's submissions, one pass), admits
and starts every job at the same time as ``berth emulate``'s replay of the same
submissions, for every policy and backfill selection, on one node or several, with
deadlines."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.dependencies import KINDS, Need
from berth.core.policies import POLICY_OPTIONS
from berth.core.policies.node_registry import make_node_policy
from berth.dispatch.emulated import EmulatedNodes
from berth.emulate.replay import replay
from berth.emulate.virtual import trace_request
from berth.emulate.workload import TraceJob
from berth.service.handlers import job_commands
from berth.service.model import NodeRecord
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine
from tests.property.strategies import clusters, workloads
from tests.support.builders import trace_job

#: Every policy, with each backfill selection it takes.
VARIANTS = [
    (name, {"selection": rule} if "selection" in POLICY_OPTIONS.get(name, ()) else {})
    for name in ("fcfs", "easy", "conservative", "qops", "msb", "mrt", "slack")
    for rule in (("ff", "bl", "bb") if "selection" in POLICY_OPTIONS.get(name, ()) else ("ff",))
]


def _valid(jobs: list[TraceJob], capacity: dict[str, int]) -> list[TraceJob]:
    """The jobs the cluster can hold at all, renumbered 1.. in arrival order (the ids the
    daemon hands out)."""
    kept = [t for t in jobs if all(t.job.resources.get(n, 0) <= c for n, c in capacity.items())]
    return [
        trace_job(
            i,
            submit=t.job.submit,
            runtime=t.runtime,
            estimate=t.job.estimate,
            **dict(t.job.resources),
        )
        for i, t in enumerate(kept, start=1)
    ]


def daemon_starts(
    jobs: list[TraceJob],
    capacity: dict[str, int],
    policy: str,
    options: dict[str, object],
    nodes: int = 1,
) -> dict[int, int | None]:
    """Start times the live engine gives, batch by batch as the coordinator applies them
    (``None``: never started, rejected at admission)."""
    records = [NodeRecord(f"node{i:03d}", dict(capacity)) for i in range(1, nodes + 1)]
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, records, policy, options)
    for submit in sorted({t.job.submit for t in jobs}):
        with live.batch(submit):
            live.advance(submit)
            for t in (t for t in jobs if t.job.submit == submit):
                job_commands.submit(live, trace_request(t), submit)
    while (due := live.next_event()) is not None:
        with live.batch(due):
            live.advance(due)
    return {job_id: record.start_time for job_id, record in live.jobs.items()}


@settings(max_examples=60, deadline=None)
@given(data=st.data(), variant=st.sampled_from(VARIANTS))
def test_daemon_and_emulator_start_every_job_at_the_same_time(
    data: st.DataObject, variant: tuple[str, dict[str, object]]
) -> None:
    policy, options = variant
    capacity = data.draw(clusters())
    nodes = data.draw(st.integers(1, 3))
    jobs = _valid(data.draw(workloads(capacity, max_jobs=10)), capacity)
    if not jobs:
        return
    # Deadlines from submit + estimate on (the daemon refuses sooner ones outright), for
    # the policies that admit by deadline (the daemon refuses a deadline the others do
    # not promise; the replay has no such check).
    deadlines = policy in ("qops", "msb", "mrt")
    jobs = [
        TraceJob(
            dataclasses.replace(t.job, deadline=t.job.submit + t.job.estimate + slack),
            t.runtime,
        )
        if deadlines and (slack := data.draw(st.one_of(st.none(), st.integers(0, 20)))) is not None
        else t
        for t in jobs
    ]
    # The dry run is the daemon's computation: every policy on the named nodes.
    named = {f"node{i:03d}": dict(capacity) for i in range(1, nodes + 1)}
    emulated = replay(jobs, make_node_policy(policy, named, None, **options))
    expected = {r.id: r.start for r in emulated}
    assert daemon_starts(jobs, capacity, policy, options, nodes) == expected


@settings(max_examples=60, deadline=None)
@given(data=st.data(), variant=st.sampled_from(VARIANTS))
def test_dependencies_start_at_the_same_time_in_the_daemon_and_the_emulator(
    data: st.DataObject, variant: tuple[str, dict[str, object]]
) -> None:
    """Jobs that wait for earlier ones (every kind, random outcomes: some run over their
    limit and fail) are planned, moved up, started and cancelled alike by both shells."""
    policy, options = variant
    capacity = data.draw(clusters())
    nodes = data.draw(st.integers(1, 3))
    jobs = _valid(data.draw(workloads(capacity, max_jobs=10)), capacity)
    waiting = []
    for index, t in enumerate(jobs):
        earlier = [e.job.id for e in jobs[:index]]
        needs: tuple[Need, ...] = ()
        if len(earlier) > 0 and data.draw(st.booleans()):
            chosen = data.draw(
                st.lists(st.sampled_from(earlier), min_size=1, max_size=2, unique=True)
            )
            needs = tuple(Need(data.draw(st.sampled_from(KINDS)), p) for p in chosen)
        waiting.append(dataclasses.replace(t, needs=needs))
    named = {f"node{i:03d}": dict(capacity) for i in range(1, nodes + 1)}
    emulated = replay(waiting, make_node_policy(policy, named, None, **options))
    expected = {r.id: r.start for r in emulated}
    assert daemon_starts(waiting, capacity, policy, options, nodes) == expected


def test_same_instant_arrivals_share_one_pass() -> None:
    """The case that split the shells: under EASY with BB, a job arriving at the instant
    another ends competes in the same pass as those already waiting."""
    capacity = {"cpus": 4, "mem": 4}
    jobs = [
        trace_job(1, submit=0, runtime=100, estimate=100, cpus=3, mem=1),  # runs 0-100
        trace_job(2, submit=0, runtime=5, estimate=5, cpus=1, mem=3),  # runs 0-5
        trace_job(3, submit=1, runtime=10, estimate=10, cpus=4, mem=4),  # the head, until 100
        trace_job(4, submit=2, runtime=3, estimate=3, cpus=1, mem=1),  # waits for room
        trace_job(5, submit=5, runtime=3, estimate=3, cpus=1, mem=2),  # arrives as 2 ends
    ]
    # At 5, BB prefers job 5 (it balances job 1's cpu-heavy use); a pass run before job
    # 5 arrived would have started job 4 instead.
    options: dict[str, object] = {"selection": "bb"}
    emulated = replay(jobs, make_node_policy("easy", {"node001": capacity}, None, **options))
    starts = {r.id: r.start for r in emulated}
    assert (starts[4], starts[5]) == (8, 5)
    assert daemon_starts(jobs, capacity, "easy", options) == starts
