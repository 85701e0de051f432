"""Runs of placements and give-backs looped in C keep the node plan as its methods do.

QoPS on nodes takes out and places again hundreds of jobs a decision; the node board
does it in one C call per run (:mod:`berth.core.node_runs`) where the plan allows it.
Taken out and placed again in any order, with deadlines that stop a run, on plans with
and without blocks of nodes, a board with the C loops and one without must end with the
same starts, placements, node and summed profiles, reservation ends and count of
changes, and undo to the same plan; and QoPS must plan the same schedules either way.
"""

from __future__ import annotations

import copy
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

from berth.core import node_runs
from berth.core import nodes as node_module
from berth.core.model import Job
from berth.core.policies.node_board import NodeBoard
from berth.core.policies.node_deadline import NodeDeadline
from berth.core.profile import NATIVE
from berth.core.shapes import Shape
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import drawing, with_deadlines
from tests.property.test_node_blocks import blocky_clusters, blocky_workloads
from tests.property.test_node_planner import check

pytestmark = pytest.mark.skipif(
    not NATIVE, reason="the C profile is not built (tools/build_native.py) or BERTH_NATIVE=0"
)


def _no_loops() -> Any:
    return mock.patch.object(node_runs, "PLACE_RUN", None)


def _state(board: NodeBoard) -> tuple[object, ...]:
    """The board and its plan (a plan that counts whole nodes has fewer parts)."""
    plan = board.plan
    blocks = getattr(plan, "_blocks", None)
    return (
        dict(board.starts),
        {job_id: (dict(p), dict(h)) for job_id, (p, h) in board.where.items()},
        [p.steps() for p in getattr(plan, "profiles", [])],
        plan.aggregate.steps(),
        None if blocks is None else [b.steps() for b in blocks.profiles],
        list(getattr(plan, "_ends", [])),
        plan.changes,
    )


@st.composite
def shared_workloads(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], list[TraceJob]]:
    """A cluster of :func:`blocky_clusters` and up to 30 jobs of slots that share nodes
    (the runs place those; a job taking whole nodes sends its run down the methods),
    most with no node count, or a node policy's mixed workload (those runs too)."""
    if draw(st.integers(0, 3)) == 0:
        return draw(blocky_workloads())
    nodes = draw(blocky_clusters())
    names = sorted({name for amounts in nodes.values() for name in amounts})
    jobs = []
    for job_id in range(1, draw(st.integers(1, 30)) + 1):
        per_slot = {name: draw(st.integers(0, 2)) for name in names}
        per_slot[names[0]] = max(per_slot[names[0]], 1)
        count = draw(st.integers(1, 6))
        spread = draw(st.one_of(st.none(), st.none(), st.integers(1, count)))
        shape = Shape(count=count, per_slot=per_slot, nodes=spread)
        job = Job(job_id, draw(st.integers(0, 10)), draw(st.integers(1, 8)), {}, shape=shape)
        jobs.append(TraceJob(job, draw(st.integers(1, 10))))
    return nodes, sorted(jobs, key=lambda t: (t.job.submit, t.job.id))


@st.composite
def admitted(draw: st.DrawFn) -> NodeDeadline:
    """A QoPS policy on nodes (blocks of a few nodes, or none) with jobs admitted."""
    nodes, drawn = draw(shared_workloads())
    with mock.patch.object(node_module, "BLOCKS_FROM", draw(st.sampled_from([1, 1 << 30]))):
        policy = NodeDeadline("qops", nodes)
    for t in with_deadlines(draw, drawn, spare=40):
        policy.submit(t.job, 0)
    return policy


@settings(max_examples=300, deadline=None)
@given(data=st.data(), policy=admitted())
def test_a_run_books_what_the_methods_book(data: st.DataObject, policy: NodeDeadline) -> None:
    entries = [e for e in policy.waiting.values() if e.start is not None]
    out = (
        data.draw(st.lists(st.sampled_from(entries), min_size=1, unique_by=lambda e: e.job.id))
        if entries
        else []
    )
    order = data.draw(st.permutations(out))
    # Some late (a run stops there), most not (long runs: each bounds the next searches).
    deadline = st.one_of(st.integers(0, 60), st.just(1 << 40))
    deadlines = {e.job.id: data.draw(deadline) for e in out}
    after = data.draw(st.integers(0, 5))
    event(f"runs apply: {node_runs.runs_apply(policy.plan)}, {len(out)} out")
    note(f"{type(policy.plan).__name__}, runs apply: {node_runs.runs_apply(policy.plan)}")
    twin = copy.deepcopy(policy)
    boards = []
    for subject, loops in ((policy, True), (twin, False)):
        board = NodeBoard(subject)
        before = _state(board)
        by_id = {e.job.id: e for e in subject.waiting.values()}
        with mock.patch.object(node_runs, "PLACE_RUN", node_runs.PLACE_RUN if loops else None):
            board.take_each([by_id[e.job.id] for e in out])
            left = [by_id[e.job.id] for e in order]
            starts: list[int] = []
            while left:  # run after run, as QoPS places them
                run = board.place_each(left, after, deadlines)
                late = [
                    s + e.job.estimate > deadlines[e.job.id]
                    for e, s in zip(left, run, strict=False)
                ]
                assert run
                assert not any(late[:-1])  # up to the first late job
                assert late[-1] or len(run) == len(left)  # which ends the run
                starts += run
                left = left[len(run) :]
            placed = _state(board)
            board.undo(0)
        assert _state(board)[:-1] == before[:-1]  # (an undo is a change too)
        boards.append((starts, placed, _state(board)[-1]))
    assert boards[0] == boards[1]


def test_the_loops_are_taken_on_a_plan_they_describe() -> None:
    """On nodes of one shape with blocks (the common case), the board does call them, so
    the comparisons above compare two paths."""
    nodes = {f"n{i}": {"cpus": 4, "mem": 8} for i in range(6)}
    with mock.patch.object(node_module, "BLOCKS_FROM", 1):
        policy = NodeDeadline("qops", nodes)
    calls: list[int] = []
    real = node_runs.PLACE_RUN
    assert real is not None

    def counted(*args: Any) -> Any:
        calls.append(len(args[-1]))
        return real(*args)

    with mock.patch.object(node_runs, "PLACE_RUN", counted):
        for job_id in range(1, 9):
            shape = Shape(job_id % 3 + 1, {"cpus": 2, "mem": 2})
            policy.submit(Job(job_id, 0, 5 + job_id, {}, deadline=400, shape=shape), 0)
    assert node_runs.runs_apply(policy.plan)  # (named nodes once a job shares them)
    assert len(policy.waiting) == 8
    assert sum(calls) >= 8  # every job placed through a run at least once


@settings(max_examples=150, deadline=None)
@given(data=st.data(), heuristic=st.sampled_from(["edf", "llf"]), budget=st.sampled_from([None, 1]))
def test_qops_plans_alike_with_and_without_the_loops(
    data: st.DataObject, heuristic: str, budget: int | None
) -> None:
    nodes, drawn = data.draw(shared_workloads())
    jobs = [
        TraceJob(t.job, min(d.runtime, t.job.estimate))  # most end early
        for t, d in zip(with_deadlines(drawing(data), drawn, spare=12), drawn, strict=True)
    ]
    blocks_from = data.draw(st.sampled_from([1, 1 << 30]))
    with mock.patch.object(node_module, "BLOCKS_FROM", blocks_from):
        looped = replay(
            jobs, NodeDeadline("qops", nodes, heuristic=heuristic), compression_budget=budget
        )
        with _no_loops():
            methods = replay(
                jobs, NodeDeadline("qops", nodes, heuristic=heuristic), compression_budget=budget
            )
    assert looped == methods
    check(looped, jobs, nodes, "qops")
