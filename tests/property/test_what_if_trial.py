"""Hypothesis: a what-if tries its job on a trial copy, and never touches the live policy.

``NodeBackfill.trial`` copies only what one submission and the pass at the same instant
change (the plan copy on write, the queue's mappings; the entries shared), where a
deep copy of a deep queue held the daemon for seconds. On random clusters (small, and
with blocks of nodes) and random queues cut at a random moment, for every policy on
nodes: the decision and the starts on the trial are those on a deep copy, the live
policy is exactly as it was, and it goes on as a copy that was never tried.
"""

from __future__ import annotations

import copy
import dataclasses
from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from berth.core import nodes as node_module
from berth.core.policies.node_registry import make_node_policy
from berth.core.policies.nodes import NodeBackfill
from berth.emulate.workload import TraceJob
from tests.property.strategies import drawing, with_deadlines
from tests.property.test_forecast_fork import drive
from tests.property.test_node_blocks import blocky_clusters
from tests.property.test_node_planner import node_jobs

#: Every policy on nodes, with the selections backfilling offers.
POLICIES = [
    ("conservative", "ff"),
    ("conservative", "bl"),
    ("conservative", "bb"),
    ("easy", "ff"),
    ("easy", "bb"),
    ("fcfs", "ff"),
    ("qops", "ff"),
    ("msb", "ff"),
    ("mrt", "ff"),
    ("slack", "ff"),
]


def live_state(policy: NodeBackfill) -> object:
    """Everything a submission or a pass could write: the plan, every entry's
    reservation, guarantee and compression mark, the queue's order and indexes, the
    deadlines, slack's state of each job."""
    plan = policy.plan
    profiles = [p.steps() for p in getattr(plan, "profiles", [])] + [plan.aggregate.steps()]
    waiting = [
        (i, e.start, e.placement, e.held, e.guarantee, e.checked) for i, e in policy.waiting.items()
    ]
    running = [(i, e.start, e.placement, e.held) for i, e in policy.running.items()]
    queue = (
        sorted(policy._starts),
        dict(policy._arrival),
        policy._arrivals,
        set(policy._replanned),
        dict(policy.parked),
        policy.used,
    )
    deadlines = dict(getattr(policy, "deadline_of", {}))
    slack = {i: repr(state) for i, state in getattr(policy, "state", {}).items()}
    return profiles, waiting, running, queue, deadlines, slack


@pytest.mark.parametrize(("name", "selection"), POLICIES)
@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    blocks_from=st.sampled_from([1, 1 << 30]),
    events=st.integers(1, 10),
    later=st.integers(1, 4),
)
def test_a_what_if_on_a_trial_is_the_answer_of_a_deep_copy_and_leaves_the_live_alone(
    name: str, selection: str, data: st.DataObject, blocks_from: int, events: int, later: int
) -> None:
    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 20))
    if name in ("qops", "msb", "mrt"):
        jobs = with_deadlines(drawing(data), jobs, spare=12)
    *queued, asked = jobs
    options: dict[str, object] = {"selection": selection} if selection != "ff" else {}
    with mock.patch.object(node_module, "BLOCKS_FROM", blocks_from):
        policy = make_node_policy(name, nodes, None, **options)
        arrivals: list[TraceJob] = list(queued)
        ends: list[tuple[int, int]] = []
        now = drive(policy, queued, events, arrivals, ends)
        alone = copy.deepcopy(policy)
        alone_arrivals, alone_ends = list(arrivals), list(ends)
        before = live_state(policy)
        # The job asked about arrives now, with its deadline as far ahead as drawn.
        shift = max(0, now - asked.job.submit)
        deadline = asked.job.deadline
        job = dataclasses.replace(
            asked.job,
            id=10**6,
            submit=asked.job.submit + shift,
            deadline=None if deadline is None else deadline + shift,
        )

        twin = policy.trial()
        decision = twin.submit(job, now)
        starts = twin.schedule(now)
        assert live_state(policy) == before

        deep = copy.deepcopy(policy)
        assert decision == deep.submit(job, now)
        assert starts == deep.schedule(now)
        event(f"{type(decision).__name__}, {'starts' if starts else 'no start'} now")
        event(f"jobs already queued written on by the trial: {len(twin._own_entries) > 1}")

        went_on = drive(policy, queued, later, arrivals, ends, now)
        assert drive(alone, queued, later, alone_arrivals, alone_ends, now) == went_on
        assert live_state(policy) == live_state(alone)
