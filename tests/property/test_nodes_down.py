"""Hypothesis: a node failure's replan, made before its jobs are killed, is the one made
after.

The single writer prepares a node failure off the event loop (reads go on during the
replan: seconds on a large cluster), so the replan is made on the engine as it is,
with the jobs on the failed nodes counted as ended and those that asked for it queued
again. Applied, it must leave every job exactly as killing first and replanning after
does (the order the daemon used before): same states, plans, guarantees, nodes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.service.engine import Engine
from berth.service.handlers import job_commands, node_commands
from berth.service.model import JobState
from berth.service.nodes.intents import Kill
from tests.support.live import engine, request

NODES = ["node001", "node002", "node003", "node004"]

job = st.tuples(
    st.integers(1, 16),  # cpus of a 4 x 8-cpu cluster
    st.integers(10, 200),  # time limit
    st.booleans(),  # queued again after a node failure
    st.integers(0, 400),  # deadline slack (QoPS)
)
scenario = st.tuples(
    st.lists(job, min_size=1, max_size=24),
    st.integers(0, 60),  # when the nodes fail
    st.sets(st.sampled_from(NODES), min_size=1, max_size=3),
)


def _build(policy: str, jobs: list[tuple[int, int, bool, int]], at: int) -> Engine:
    live = engine(policy)
    for cpus, limit, requeue, slack in jobs:
        deadline = limit + slack + 400 if policy == "qops" else None
        made = dataclasses.replace(
            request(cpus=cpus, limit=limit, deadline=deadline), requeue=requeue
        )
        job_commands.submit(live, made, 0)
    live.advance(at)
    return live


def _killed_then_replanned(live: Engine, names: list[str], now: int) -> None:
    """The order of the daemon before: kill, queue again, then replan."""
    down = set(names)
    for record in list(live.running.values()):
        if down & record.allocation.keys():
            failed = sorted(down & record.allocation.keys())[0]
            live.outbox.intend(Kill(record.id, now))
            live.life.end_job(record, JobState.NODE_FAIL, now, f"node {failed} went down: psu")
    live.life.requeue_ended(now, decide=False)
    node_commands.apply_node_change(
        live, node_commands.plan_node_change(live, "down", names, "psu", now), now
    )


def _state(live: Engine) -> dict[int, tuple[Any, ...]]:
    return {
        j.id: (
            j.state, j.state_reason, j.requeued, j.start_time, j.end_time, j.allocation,
            j.planned_start, j.planned_nodes, j.guaranteed_start, j.guaranteed_end,
        )
        for j in live.jobs.values()
    }  # fmt: skip


@pytest.mark.parametrize("policy", ["conservative", "easy", "qops", "slack"])
@settings(max_examples=40, deadline=None)
@given(case=scenario)
def test_a_failure_prepared_before_its_kills_plans_as_after_them(
    policy: str, case: tuple[list[tuple[int, int, bool, int]], int, set[str]]
) -> None:
    jobs, at, failed = case
    names = sorted(failed)
    before, after = _build(policy, jobs, at), _build(policy, jobs, at)
    prepared = node_commands.plan_nodes_down(before, names, "psu", at)
    assert _state(before) == _state(after)  # (preparing changed nothing)
    node_commands.apply_nodes_down(before, prepared, at)
    _killed_then_replanned(after, names, at)
    assert _state(before) == _state(after)
    assert before.counters == after.counters
