"""Hypothesis: EASY's backfill pass on nodes takes shortcuts that change nothing.

The pass skips a job whose total does not fit what is free now, and a job that asks
for no less than one that already failed in the same pass. On random clusters (with and
without blocks of nodes) it starts the same jobs at the same times on the same nodes as
a pass that asks the plan for every waiting job.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core import nodes as node_module
from berth.core.decisions import Start, at
from berth.core.policies.node_schedule import Planned
from berth.core.policies.nodes import NodeBackfill
from berth.emulate.replay import replay
from tests.property.test_node_blocks import blocky_clusters
from tests.property.test_node_planner import node_jobs
from tests.support.stops import EveryFewQuestions


class EveryJobAsked(NodeBackfill):
    """EASY asking the plan for every waiting job, no shortcut."""

    def _backfill(self, head: Planned, reserved: int, now: int, started: list[Start]) -> None:
        for other in list(self.waiting.values()):
            if other is head or other.job.id in self.parked:
                continue
            placement = self.plan.place(other.shape, other.demand, now, other.job.estimate)
            if placement is not None:
                reason = f"backfilled beside the head's reservation at {at(reserved)}"
                started.append(self._launch(other, now, placement, reason))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), blocks_from=st.sampled_from([1, 1 << 30]))
def test_the_shortcuts_start_what_asking_every_job_starts(
    data: st.DataObject, blocks_from: int
) -> None:
    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 30))
    with mock.patch.object(node_module, "BLOCKS_FROM", blocks_from):
        fast = replay(jobs, NodeBackfill("easy", nodes))
        plain = replay(jobs, EveryJobAsked("easy", nodes))
    assert [(r.id, r.start, r.nodes) for r in fast] == [(r.id, r.start, r.nodes) for r in plain]


class PassesInSlices(NodeBackfill):
    """Deferred EASY whose passes stop after a few questions; at each instant the shell
    (here, this loop; the daemon's writer) runs passes until none is under way."""

    def __init__(self, nodes: dict[str, dict[str, int]], size: int, selection: str = "ff") -> None:
        super().__init__("easy", nodes, None, selection)
        self.deferred = True
        self.pass_stop = EveryFewQuestions(size)
        self.slices = 0

    def schedule(self, now: int) -> list[Start]:
        started = super().schedule(now)
        while self.improvement_due:
            self.slices += 1
            started += super().schedule(now)
        return started


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 3), selection=st.sampled_from(["ff", "bl", "bb"]))
def test_a_pass_in_slices_places_for_real_and_starts_every_job(
    data: st.DataObject, size: int, selection: str
) -> None:
    """FF, BL and BB passes cut into slices of a few questions (BL and BB start the best
    candidate found when a slice ends)."""
    from tests.property.test_node_planner import check

    nodes = data.draw(blocky_clusters())
    jobs = data.draw(node_jobs(nodes, 30))
    policy = PassesInSlices(nodes, size, selection)
    records = replay(jobs, policy)
    check(records, jobs, nodes, "easy")  # every admitted job ran; no node over-committed


def test_a_pass_does_stop_and_go_on() -> None:
    """Half the cluster busy, a head that needs all of it, four short jobs that can be
    backfilled: a pass stopped after each question starts them over several slices."""
    from berth.core.model import Job
    from berth.core.shapes import Shape
    from berth.emulate.workload import TraceJob

    nodes = {"a": {"cpus": 2}, "b": {"cpus": 2}}
    jobs = [
        TraceJob(Job(1, 0, 100, {}, shape=Shape(2, {"cpus": 1})), 100),
        TraceJob(Job(2, 0, 50, {}, shape=Shape(4, {"cpus": 1})), 50),
    ]
    jobs += [TraceJob(Job(i, 1, 10, {}, shape=Shape(1, {"cpus": 1})), 10) for i in range(3, 7)]
    policy = PassesInSlices(nodes, 1)
    records = {r.id: r for r in replay(jobs, policy)}
    assert policy.slices >= 2
    assert [records[i].start for i in range(3, 7)] == [1, 1, 11, 11]
    assert records[2].start == 100


def test_a_balanced_pass_stops_and_goes_on() -> None:
    """The same cluster under BB, a pass stopped after each question: every pass starts
    the one candidate it found, and the four short jobs start over several slices."""
    from berth.core.model import Job
    from berth.core.shapes import Shape
    from berth.emulate.workload import TraceJob

    nodes = {"a": {"cpus": 2}, "b": {"cpus": 2}}
    jobs = [
        TraceJob(Job(1, 0, 100, {}, shape=Shape(2, {"cpus": 1})), 100),
        TraceJob(Job(2, 0, 50, {}, shape=Shape(4, {"cpus": 1})), 50),
    ]
    jobs += [TraceJob(Job(i, 1, 10, {}, shape=Shape(1, {"cpus": 1})), 10) for i in range(3, 7)]
    policy = PassesInSlices(nodes, 1, "bb")
    records = {r.id: r for r in replay(jobs, policy)}
    assert policy.slices >= 2
    assert sorted(records[i].start for i in range(3, 7)) == [1, 1, 11, 11]
    assert records[2].start == 100
