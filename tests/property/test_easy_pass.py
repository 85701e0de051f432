"""Hypothesis: EASY's backfill pass on nodes takes shortcuts that change nothing.

The pass searches the head's placement only if its total fits what is free now, holds
the head's reservation only if some job may start beside it, skips a job whose total
does not fit what is free now, and a job that asks for no less than one that already
failed in the same pass, and after a pass that started nothing asks only the jobs
queued since, until the plan changes. On random clusters (with and without blocks of
nodes) it starts the same jobs at the same times on the same nodes as a pass that asks
the plan for the head and every waiting job at every instant.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core import nodes as node_module
from berth.core.decisions import Start, at
from berth.core.policies.nodes import NodeBackfill
from berth.emulate.replay import replay
from tests.property.test_node_blocks import blocky_clusters
from tests.property.test_node_planner import identical_clusters, node_jobs, whole_node_jobs
from tests.support.stops import EveryFewQuestions


class EveryJobAsked(NodeBackfill):
    """EASY asking the plan for the head and every waiting job, no shortcut, no memory."""

    def schedule(self, now: int) -> list[Start]:
        started: list[Start] = []
        while True:
            head = next((e for e in self.waiting.values() if e.job.id not in self.parked), None)
            if head is None:
                return started
            found = self.plan.earliest(head.shape, head.demand, head.job.estimate, now)
            assert found is not None
            if found[0] == now:
                started.append(self._launch(head, now, found[1], "head of the queue fits"))
                continue
            held = self._hold(head, found[0], found[1])
            for other in list(self.waiting.values()):
                if other is head or other.job.id in self.parked:
                    continue
                placement = self.plan.place(other.shape, other.demand, now, other.job.estimate)
                if placement is not None:
                    reason = f"backfilled beside the head's reservation at {at(found[0])}"
                    started.append(self._launch(other, now, placement, reason))
            self.plan.release(held, found[0], head.job.estimate)
            head.start = head.placement = head.held = None
            return started


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


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_on_counted_nodes_the_heads_window_asked_about_is_its_reservation_held(
    data: st.DataObject,
) -> None:
    """Identical nodes and jobs that take whole nodes: the plan counts nodes, and the
    pass asks about the head's window beside each job instead of booking it."""
    nodes = data.draw(identical_clusters())
    jobs = data.draw(whole_node_jobs(nodes, 30))
    policy = NodeBackfill("easy", nodes)
    fast = replay(jobs, policy)
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
    assert sorted(s for i in range(3, 7) if (s := records[i].start) is not None) == [1, 1, 11, 11]
    assert records[2].start == 100


def test_a_pass_that_goes_on_keeps_its_list_and_skips_jobs_that_left() -> None:
    """A pass stopped after each question goes on through the list it was asking (no
    new filter of the queue): a job withdrawn between two slices is skipped, not
    started, and a job queued meanwhile waits for the next pass."""
    from berth.core.model import Job
    from berth.core.shapes import Shape

    def job(job_id: int, cpus: int, estimate: int) -> Job:
        return Job(job_id, 0, estimate, {}, shape=Shape(cpus, {"cpus": 1}))

    policy = NodeBackfill("easy", {"a": {"cpus": 4}, "b": {"cpus": 4}})
    policy.deferred = True
    policy.pass_stop = EveryFewQuestions(1)
    policy.submit(job(1, 4, 100), 0)
    assert [s.job_id for s in policy.schedule(0)] == [1]
    for job_id, cpus in ((2, 8), (3, 1), (4, 1), (5, 1)):
        policy.submit(job(job_id, cpus, 10 if job_id > 2 else 50), 1)
    assert [s.job_id for s in policy.schedule(1)] == [3]  # then it stops
    assert policy.backfill_rest is not None
    kept, position = policy.backfill_rest
    assert [e.job.id for e in kept[position:]] == [4, 5]
    assert policy.withdraw(4, 1)
    policy.submit(job(6, 1, 10), 1)
    assert [s.job_id for s in policy.schedule(1)] == [5]  # 4 skipped; 6 not in the list
    assert not policy.improvement_due
    assert policy.backfill_rest is None
    assert [s.job_id for s in policy.schedule(1)] == [6]  # the next pass asks it


def test_the_queue_filtered_by_total_goes_on_from_the_job_a_pass_stopped_at() -> None:
    """With most of a deep queue wider than what is free, EASY's filter asks the index
    by total: the jobs it gives are those that may fit, in queue order, from the job
    the last pass stopped at (a forecast's copy goes on from it without the list)."""
    from berth.core.model import Job
    from berth.core.policies.node_easy import _candidates
    from berth.core.shapes import Shape

    def job(job_id: int, cpus: int) -> Job:
        return Job(job_id, 0, 10, {}, shape=Shape(cpus, {"cpus": 1}))

    policy = NodeBackfill("easy", {"a": {"cpus": 4}, "b": {"cpus": 4}})
    policy.submit(Job(1, 0, 100, {}, shape=Shape(6, {"cpus": 1})), 0)
    assert [s.job_id for s in policy.schedule(0)] == [1]  # 2 cpus left free
    for job_id in range(2, 30):  # small ones at 7, 14, 21, 28; the rest too wide
        policy.submit(job(job_id, 1 if job_id % 7 == 0 else 8), 0)
    head = policy.waiting[2]
    guard = policy.space.guard
    free_now = policy.plan.aggregate.free_at(0) | guard
    policy.backfill_resume = 14
    listed, first, kept = _candidates(policy, head, free_now, None)
    assert ([e.job.id for e in listed], first, kept) == ([14, 21, 28], 0, False)
    listed, _, _ = _candidates(policy, head, free_now, None)  # no pass stopped this time
    assert [e.job.id for e in listed] == [7, 14, 21, 28]
