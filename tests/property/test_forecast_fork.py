"""Hypothesis: a forecast drives a fork of the policy, never the policy itself.

``NodeBackfill.fork`` copies only what a forecast changes (EASY and FCFS on a plan that
names its nodes). On random clusters (small, and with blocks of nodes) and random
queues cut at a random moment: the forecast from the fork is the forecast from a deep
copy, and the live policy is exactly as it was (its plan, queue and running jobs).
"""

from __future__ import annotations

import copy
import heapq
from unittest import mock

from hypothesis import event, given, settings
from hypothesis import strategies as st

from berth.core import nodes as node_module
from berth.core.forecast import ForecastRun, forecast
from berth.core.policies.nodes import NodeBackfill
from berth.emulate.workload import TraceJob
from tests.property.test_node_blocks import blocky_clusters
from tests.property.test_node_planner import node_jobs
from tests.support.stops import EveryFewQuestions


def drive(
    policy: NodeBackfill,
    jobs: list[TraceJob],
    events: int,
    arrivals: list[TraceJob] | None = None,
    ends: list[tuple[int, int]] | None = None,
    now: int = 0,
) -> int:
    """Run ``policy`` as the emulator would, for ``events`` instants; the time reached.
    ``arrivals`` and ``ends`` (the jobs still to come, the running jobs' ends) carry a
    run on when given."""
    arrivals = list(jobs) if arrivals is None else arrivals
    ends = [] if ends is None else ends
    for _ in range(events):
        candidates = [t for t in (arrivals[0].job.submit if arrivals else None,
                                  ends[0][0] if ends else None) if t is not None]  # fmt: skip
        if not candidates:
            break
        now = max(now, min(candidates))
        done = []
        while ends and ends[0][0] <= now:
            done.append(heapq.heappop(ends)[1])
        if done:
            policy.complete(done, now)
        while arrivals and arrivals[0].job.submit <= now:
            policy.submit(arrivals.pop(0).job, now)
        runtime = {t.job.id: min(t.runtime, t.job.estimate) for t in jobs}
        for start in policy.schedule(now):
            heapq.heappush(ends, (now + runtime[start.job_id], start.job_id))
    return now


def state(policy: NodeBackfill) -> tuple[object, object, object]:
    plan = policy.plan
    profiles = [p.steps() for p in getattr(plan, "profiles", [])] + [plan.aggregate.steps()]
    entries = [(i, e.start, e.placement, e.held) for i, e in policy.waiting.items()]
    running = [(i, e.start, e.held) for i, e in policy.running.items()]
    return profiles, entries, running


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["easy", "fcfs"]),
    blocks_from=st.sampled_from([1, 1 << 30]),
    events=st.integers(1, 5),
)
def test_a_forecast_from_a_fork_is_the_forecast_from_a_deep_copy(
    data: st.DataObject, name: str, blocks_from: int, events: int
) -> None:
    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 25))
    with mock.patch.object(node_module, "BLOCKS_FROM", blocks_from):
        policy = NodeBackfill(name, nodes)
        now = drive(policy, jobs, events)
        event(f"{type(policy.plan).__name__}, {'some' if policy.waiting else 'none'} waiting")
        before = state(policy)
        forked = forecast(policy, now)
        assert state(policy) == before
        with mock.patch.object(NodeBackfill, "fork", lambda self: copy.deepcopy(self)):
            deep = forecast(policy, now)
        assert forked == deep
        assert state(policy) == before


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["easy", "fcfs"]),
    blocks_from=st.sampled_from([1, 1 << 30]),
    events=st.integers(1, 4),
    later=st.integers(1, 4),
)
def test_a_forecast_under_way_is_not_changed_by_the_live_policy_going_on(
    data: st.DataObject, name: str, blocks_from: int, events: int, later: int
) -> None:
    """The fork shares the nodes' profiles with the live plan until either changes one
    (copy on write): while a forecast is under way, the live policy goes on (jobs end,
    arrive and start; it forgets its past) and the forecast still predicts what a deep
    copy taken at the fork predicts; the live policy goes on as it would have alone."""
    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 25))
    with mock.patch.object(node_module, "BLOCKS_FROM", blocks_from):
        policy, alone = NodeBackfill(name, nodes), NodeBackfill(name, nodes)
        arrivals: list[TraceJob] = list(jobs)
        ends: list[tuple[int, int]] = []
        alone_arrivals: list[TraceJob] = list(jobs)
        alone_ends: list[tuple[int, int]] = []
        now = drive(policy, jobs, events, arrivals, ends)
        assert drive(alone, jobs, events, alone_arrivals, alone_ends) == now
        at_fork = copy.deepcopy(policy)
        run = ForecastRun(policy, now)  # forked: the whole run comes after the live's
        went_on = drive(policy, jobs, later, arrivals, ends, now)
        assert drive(alone, jobs, later, alone_arrivals, alone_ends, now) == went_on
        event(f"{type(policy.plan).__name__}, live went on {went_on - now} s")
        # Nothing the live did reached the fork's plan or its queue. (Their entries
        # are shared, and the live writes on one it starts: see ``node_fork.fork``.)
        twin = run._twin
        assert isinstance(twin, NodeBackfill)
        assert state(twin)[0] == state(at_fork)[0]
        assert twin.waiting.keys() == at_fork.waiting.keys()
        run.advance()
        assert run.predicted == forecast(at_fork, now)
        for plan in (policy.plan, alone.plan):
            plan.forget_before(went_on)
        assert state(policy) == state(alone)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    selection=st.sampled_from(["ff", "bl", "bb"]),
    size=st.integers(1, 3),
    events=st.integers(1, 5),
)
def test_a_forecast_in_slices_is_the_whole_forecast(
    data: st.DataObject, selection: str, size: int, events: int
) -> None:
    """Driven in slices of a few questions (each of the copy's EASY passes stopping
    and going on at the same moment, as a read's slice and the writer's make it), a
    forecast predicts what the whole one does, and leaves the live policy as it was."""
    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 25))
    policy = NodeBackfill("easy", nodes, None, selection)
    now = drive(policy, jobs, events)
    before = state(policy)
    whole = forecast(policy, now)
    run = ForecastRun(policy, now)
    slices = 1
    while not run.advance(EveryFewQuestions(size)):
        slices += 1
    event(f"{'several slices' if slices > 1 else 'one slice'}")
    assert run.predicted == whole
    assert state(policy) == before


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["easy", "fcfs"]),
    events=st.integers(1, 4),
    horizon=st.integers(1, 6),
)
def test_a_forecast_with_a_horizon_is_the_start_of_the_whole_one(
    data: st.DataObject, name: str, events: int, horizon: int
) -> None:
    """Stopped once ``horizon`` jobs are predicted, a forecast predicts those jobs what
    the whole one does, every job it leaves out starts no earlier in the whole one,
    and it says it was cut when it left one out."""
    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 25))
    policy = NodeBackfill(name, nodes)
    now = drive(policy, jobs, events)
    whole = forecast(policy, now)
    run = ForecastRun(policy, now, horizon)
    assert run.advance()
    event(f"{'cut' if run.cut else 'whole'}")
    assert len(run.predicted) >= min(horizon, len(whole))
    assert run.predicted == {j: whole[j] for j in run.predicted}
    left_out = [whole[j] for j in whole if j not in run.predicted]
    if left_out:  # (cut may also leave jobs that never start)
        assert run.cut
        assert min(left_out) >= max(run.predicted.values())
