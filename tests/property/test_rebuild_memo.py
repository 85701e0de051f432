"""QoPS on nodes keeps what it knows of its last rebuild only while it holds.

Insertion point 0 takes every waiting job out and places them again in deadline order;
the jobs at the head of that order that the last rebuild placed, on a board unchanged
since, are left where they are (:class:`~berth.core.policies.admission.Rebuilt`). Two
replays, one that never keeps them, must give the same schedule: the same admissions,
starts, guarantees and nodes, with bursts of arrivals at one instant (where it is kept),
jobs that end early, start, are compressed, withdrawn or allowed to start earlier
(where it must be forgotten).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies.boards import Board
from berth.core.policies.node_deadline import NodeDeadline
from berth.core.shapes import Shape
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.strategies import drawing, with_deadlines
from tests.property.test_node_planner import check, node_clusters, node_jobs


class Afresh(NodeDeadline):
    """QoPS that rebuilds from nothing at every decision."""

    def _known_rebuild(self, now: int) -> list[int]:
        return []


@settings(max_examples=150, deadline=None)
@given(data=st.data(), budget=st.sampled_from([None, 1]), heuristic=st.sampled_from(["edf", "llf"]))
def test_keeping_the_known_rebuild_gives_the_same_schedule(
    data: st.DataObject, budget: int | None, heuristic: str
) -> None:
    nodes = data.draw(node_clusters())
    drawn = data.draw(node_jobs(nodes, most=20))
    jobs = [
        TraceJob(t.job, min(d.runtime, t.job.estimate))  # most end early
        for t, d in zip(with_deadlines(drawing(data), drawn, spare=12), drawn, strict=True)
    ]
    kept = replay(jobs, NodeDeadline("qops", nodes, heuristic=heuristic), compression_budget=budget)
    afresh = replay(jobs, Afresh("qops", nodes, heuristic=heuristic), compression_budget=budget)
    assert kept == afresh
    check(kept, jobs, nodes, "qops")


def _plan(policy: NodeDeadline) -> dict[int, tuple[object, ...]]:
    return {i: (e.start, e.placement, e.guarantee) for i, e in policy.waiting.items()}


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_same_decisions_whatever_happens_between_them(data: st.DataObject) -> None:
    """Driven directly, as the daemon does: arrivals (some that may not start yet),
    passes that start jobs, ends, withdrawals and jobs allowed to start earlier, at one
    instant or later ones, in any order."""
    nodes = data.draw(node_clusters())
    drawn = [t.job for t in data.draw(node_jobs(nodes, most=20))]
    kept, afresh = NodeDeadline("qops", nodes), Afresh("qops", nodes)
    now = 0
    for job in drawn:
        for _ in range(data.draw(st.integers(0, 2))):
            action = data.draw(st.sampled_from(["pass", "end", "withdraw", "relax", "later"]))
            if action == "pass":
                assert kept.schedule(now) == afresh.schedule(now)
            elif action == "end" and kept.running:
                ended = [data.draw(st.sampled_from(sorted(kept.running)))]
                kept.complete(ended, now)
                afresh.complete(ended, now)
            elif action == "withdraw" and kept.waiting:
                job_id = data.draw(st.sampled_from(sorted(kept.waiting)))
                assert kept.withdraw(job_id, now) == afresh.withdraw(job_id, now)
            elif action == "relax" and held_back(kept):  # (a dependency met, a hold lifted)
                job_id = data.draw(st.sampled_from(held_back(kept)))
                was = kept.waiting[job_id].job.not_before
                assert was is not None
                earlier = st.integers(0, was - 1) if was > 0 else st.nothing()
                not_before = data.draw(st.one_of(st.none(), earlier))
                kept.relax(job_id, not_before, now)
                afresh.relax(job_id, not_before, now)
            elif action == "later":  # a pass at every instant, as the shells wake up
                for _ in range(data.draw(st.integers(1, 3))):
                    assert kept.schedule(now) == afresh.schedule(now)
                    now += 1
        not_before = data.draw(st.one_of(st.none(), st.integers(now, now + 6)))
        ready = now if not_before is None else not_before
        deadline = ready + job.estimate + data.draw(st.integers(0, 3 * job.estimate + 6))
        arrival = dataclasses.replace(job, submit=now, deadline=deadline, not_before=not_before)
        assert kept.submit(arrival, now) == afresh.submit(arrival, now)
        assert _plan(kept) == _plan(afresh)


def held_back(policy: NodeDeadline) -> list[int]:
    """The waiting jobs that may not start before some time."""
    return sorted(i for i, e in policy.waiting.items() if e.job.not_before is not None)


def _job(job_id: int, slots: int, estimate: int, deadline: int) -> Job:
    return Job(job_id, 0, estimate, {}, deadline=deadline, shape=Shape(slots, {"cpus": 1}))


def test_a_burst_keeps_the_head_of_the_rebuild_and_a_start_forgets_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Jobs arriving at one instant: each later one with a later deadline finds every
    job before it where the last rebuild put it, and takes none of them out."""
    policy = NodeDeadline("qops", {"a": {"cpus": 2}, "b": {"cpus": 2}})
    taken: list[int] = []
    take = Board.take

    def counting_take(board: Board[Any, Any], entry: Any) -> None:
        taken.append(entry.job.id)
        take(board, entry)

    monkeypatch.setattr(Board, "take", counting_take)
    for job_id in range(1, 7):
        assert isinstance(policy.submit(_job(job_id, 4, 10, 1_000 + job_id), 0), Reserve)
    # Each needs the whole cluster, one after another: none was taken out again.
    assert taken == []
    assert policy._known_rebuild(0) == [1, 2, 3, 4, 5, 6]
    # A job with the earliest deadline goes first: all six are placed again after it.
    assert isinstance(policy.submit(_job(7, 4, 10, 10), 0), Reserve)  # (starts now)
    assert sorted(taken) == [1, 2, 3, 4, 5, 6]
    assert policy._known_rebuild(0) == [7, 1, 2, 3, 4, 5, 6]
    # A rejection (job 7 must start now) leaves the plan, and what is known, as it was.
    assert isinstance(policy.submit(_job(8, 4, 10, 15), 0), Reject)
    assert policy._known_rebuild(0) == [7, 1, 2, 3, 4, 5, 6]
    assert [start.job_id for start in policy.schedule(0)] == [7]
    assert policy._known_rebuild(0) == []  # job 7 holds its nodes from the next one on


def test_a_job_allowed_to_start_earlier_is_placed_again() -> None:
    """A may start from 4, B has the later deadline: the rebuild puts A at 4 and B
    before it. Allowed to start now, A cannot move in the plan (B holds the room), but a
    rebuild places A first: the next decision must not keep the old head."""
    nodes = {"n0": {"cpus": 1}}
    a = Job(1, 0, 3, {}, deadline=100, shape=Shape(1, {"cpus": 1}), not_before=4)
    b = Job(2, 0, 4, {}, deadline=200, shape=Shape(1, {"cpus": 1}))
    c = Job(3, 0, 2, {}, deadline=300, shape=Shape(1, {"cpus": 1}))
    kept, afresh = NodeDeadline("qops", nodes), Afresh("qops", nodes)
    for policy in (kept, afresh):
        for job in (a, b):
            assert isinstance(policy.submit(job, 0), Reserve)
        assert (policy.waiting[1].start, policy.waiting[2].start) == (4, 0)
        policy.relax(1, None, 0)
        assert (policy.waiting[1].start, policy.waiting[2].start) == (4, 0)
    assert kept.submit(c, 0) == afresh.submit(c, 0)
    assert _plan(kept) == _plan(afresh)
    assert (kept.waiting[1].start, kept.waiting[2].start) == (0, 3)
