"""Hypothesis: conservative compression on nodes (and BL/BB's moves to now), deferred
and run in slices.

The daemon defers compression after job ends and runs it in slices between commands
(:meth:`NodeBackfill.improve`). Two properties:

* a compression cut into slices of one to three questions, finished before anything
  else happens, gives exactly the plan a whole compression gives (it goes on from the
  job it stopped at, and a search stopped midway from the start it had reached), on
  small clusters and with blocks of nodes pruning the searches;
* with slices left unfinished while jobs arrive and start, no node is over-committed and
  no job starts after its guarantee (a compression not yet done breaks no promise).

The emulator's ``compression_budget`` (slices of so many questions per instant, going on
at the next instant) is held to the same two: a budget no slice reaches is the whole
replay, and small budgets break no promise.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core import nodes as node_module
from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.nodes import NodeBackfill
from berth.core.shapes import Shape
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from tests.property.test_node_blocks import blocky_clusters
from tests.property.test_node_planner import check, node_clusters, node_jobs
from tests.support.stops import EveryFewQuestions


class SlicedToTheEnd(NodeBackfill):
    """Deferred compression (and BL/BB moves), finished in small slices right after
    each end."""

    def __init__(self, nodes: dict[str, dict[str, int]], size: int, selection: str = "ff") -> None:
        super().__init__("conservative", nodes, None, selection)
        self.deferred = True
        self.stop = EveryFewQuestions(size)
        self.slices = 0
        self.stopped_searches = 0  # slices that ended inside a search

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        super().complete(job_ids, now)
        while not self.improve(now, self.stop):
            self.slices += 1
            self.stopped_searches += any(e.searched for e in self.waiting.values())


class LeftUnfinished(NodeBackfill):
    """Deferred compression (and BL/BB moves): one slice per end, arrival and pass."""

    def __init__(self, nodes: dict[str, dict[str, int]], size: int, selection: str = "ff") -> None:
        super().__init__("conservative", nodes, None, selection)
        self.deferred = True
        self.stop = EveryFewQuestions(size)

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        super().complete(job_ids, now)
        self.improve(now, self.stop)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        self.improve(now, self.stop)
        return super().submit(job, now)

    def schedule(self, now: int) -> list[Start]:
        self.improve(now, self.stop)
        return super().schedule(now)


class CheckedWhenFinished(LeftUnfinished):
    """One slice per end, arrival and pass (a search may stop midway, then room is given
    back before it goes on); before the pass of every third instant, the compression is
    finished and checked: no waiting job has an earlier placement left."""

    def schedule(self, now: int) -> list[Start]:
        if now % 3:  # left unfinished across the next ends, as between the daemon's batches
            return super().schedule(now)
        while not self.improve(now, self.stop):
            pass
        for entry in self.waiting.values():
            if entry.start is None or entry.held is None:
                continue
            first: int | None = entry.job.ready(now)  # as compression asks (its need first)
            if entry.need is not None and first is not None and first < entry.start:
                summed, total = entry.need
                first = summed.earliest_start(total, entry.job.estimate, first, entry.start)
            if first is None or first >= entry.start:
                continue
            found = self.plan.earlier(
                entry.shape, entry.demand, entry.job.estimate, first, entry.start, entry.held
            )
            assert found is None, (entry.job.id, entry.start, found)
        return super().schedule(now)


SELECTIONS = st.sampled_from(["ff", "bl", "bb"])


def many_questions() -> tuple[dict[str, dict[str, int]], list[TraceJob]]:
    """40 nodes of 4 cpus and 120 seeded jobs of 1-40 slots whose compressions walk
    many starts: a queue that takes many questions to compress."""
    rng = random.Random(7)
    nodes = {f"n{i:02d}": {"cpus": 4} for i in range(40)}
    jobs = []
    for job_id in range(1, 121):
        estimate = rng.randint(5, 60)
        shape = Shape(rng.choice((1, 2, 4, 8, 16, 40)), {"cpus": rng.choice((1, 2))})
        job = Job(job_id, job_id // 3, estimate, {}, shape=shape)
        jobs.append(TraceJob(job, rng.randint(1, estimate)))
    return nodes, jobs


def drawn_queue(data: st.DataObject) -> tuple[dict[str, dict[str, int]], list[TraceJob]]:
    """A small random cluster and up to 30 jobs for it."""
    nodes = data.draw(node_clusters())
    return nodes, data.draw(node_jobs(nodes, 30))


def plans(records: list[JobRecord]) -> list[tuple[object, ...]]:
    """What two replays must agree on: each job's start, guarantee and nodes."""
    return [(r.id, r.start, r.guarantee, r.nodes) for r in records]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 3), selection=SELECTIONS)
def test_a_compression_in_slices_is_the_whole_compression(
    data: st.DataObject, size: int, selection: str
) -> None:
    nodes, jobs = drawn_queue(data)
    whole = replay(jobs, NodeBackfill("conservative", nodes, None, selection))
    sliced = replay(jobs, SlicedToTheEnd(nodes, size, selection))
    assert plans(sliced) == plans(whole)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 3))
def test_searches_stopped_midway_in_blocks_of_nodes_give_the_whole_compression(
    data: st.DataObject, size: int
) -> None:
    nodes = data.draw(blocky_clusters(least=3, most=12))
    jobs = data.draw(node_jobs(nodes, 30))
    with mock.patch.object(node_module, "BLOCKS_FROM", 1):  # blocks of two or three nodes
        whole = replay(jobs, NodeBackfill("conservative", nodes))
        sliced = replay(jobs, SlicedToTheEnd(nodes, size))
    assert plans(sliced) == plans(whole)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), size=st.integers(1, 3))
def test_a_compression_finished_after_interruptions_leaves_no_job_an_earlier_start(
    data: st.DataObject, size: int
) -> None:
    nodes = data.draw(blocky_clusters(least=3, most=12))
    jobs = data.draw(node_jobs(nodes, 30))
    with mock.patch.object(node_module, "BLOCKS_FROM", 1):
        replay(jobs, CheckedWhenFinished(nodes, size, "ff"))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 3), selection=SELECTIONS)
def test_an_unfinished_compression_breaks_no_promise(
    data: st.DataObject, size: int, selection: str
) -> None:
    nodes, jobs = drawn_queue(data)
    records = replay(jobs, LeftUnfinished(nodes, size, selection))
    check(records, jobs, nodes, "conservative")


def test_slices_do_stop_and_go_on() -> None:
    """A queue whose compression takes several questions is really cut into slices."""
    nodes = {"a": {"cpus": 2}, "b": {"cpus": 2}}
    jobs = [TraceJob(Job(1, 0, 100, {}, shape=Shape(4, {"cpus": 1})), 5)]
    jobs += [TraceJob(Job(i, 1, 10, {}, shape=Shape(1, {"cpus": 1})), 10) for i in range(2, 8)]
    policy = SlicedToTheEnd(nodes, 1)
    records = replay(jobs, policy)
    assert policy.slices >= 2
    assert [r.start for r in records] == [
        r.start for r in replay(jobs, NodeBackfill("conservative", nodes))
    ]


def test_a_search_stopped_midway_goes_on_from_where_it_was() -> None:
    """On 40 nodes in blocks, with a queue whose compression searches walk many starts,
    slices of one question end inside searches, and the plan is the whole one's."""
    nodes, jobs = many_questions()
    with mock.patch.object(node_module, "BLOCKS_FROM", 1):
        whole = replay(jobs, NodeBackfill("conservative", nodes))
        policy = SlicedToTheEnd(nodes, 1)
        sliced = replay(jobs, policy)
    assert policy.stopped_searches >= 10
    assert [(r.id, r.start, r.nodes) for r in sliced] == [(r.id, r.start, r.nodes) for r in whole]


def test_a_job_found_movable_in_an_earlier_slice_is_asked_again_on_counted_nodes() -> None:
    """BL/BB on a counted plan, one question a slice: a job found movable to now in one
    slice is moved in a later one only if its nodes still have room then (a counted
    plan's move takes the room as given: this once over-committed the node, found by
    Hypothesis)."""

    def job(job_id: int, submit: int, estimate: int, count: int, whole: bool) -> TraceJob:
        shape = Shape(count=count, per_slot={"cpus": 1}, exclusive=whole)
        return TraceJob(Job(job_id, submit, estimate, {}, shape=shape), 2 if job_id == 3 else 1)

    nodes = {"n0": {"cpus": 2}}
    jobs = [job(2, 0, 7, 1, True), job(3, 0, 2, 1, True), job(4, 0, 1, 1, True)]
    jobs += [job(5, 0, 1, 1, True), job(6, 0, 1, 2, False), job(1, 8, 1, 1, False)]
    for selection in ("bl", "bb"):
        check(replay(jobs, LeftUnfinished(nodes, 1, selection)), jobs, nodes, "conservative")


@settings(max_examples=150, deadline=None)
@given(data=st.data(), budget=st.integers(1, 3), selection=SELECTIONS)
def test_a_replay_with_a_compression_budget_breaks_no_promise(
    data: st.DataObject, budget: int, selection: str
) -> None:
    nodes, jobs = drawn_queue(data)
    policy = NodeBackfill("conservative", nodes, None, selection)
    check(replay(jobs, policy, compression_budget=budget), jobs, nodes, "conservative")


@settings(max_examples=100, deadline=None)
@given(data=st.data(), selection=SELECTIONS)
def test_a_compression_budget_no_slice_reaches_is_the_whole_replay(
    data: st.DataObject, selection: str
) -> None:
    nodes, jobs = drawn_queue(data)
    whole = replay(jobs, NodeBackfill("conservative", nodes, None, selection))
    budgeted = NodeBackfill("conservative", nodes, None, selection)
    assert plans(replay(jobs, budgeted, compression_budget=10**9)) == plans(whole)


def test_a_compression_budget_leaves_work_for_later_instants() -> None:
    """On 40 nodes with a queue whose compression takes many questions, a budget of 2
    an instant leaves compressions unfinished at some instants and finishes them at
    later ones, and the replay keeps every promise."""
    nodes, jobs = many_questions()
    policy = NodeBackfill("conservative", nodes)
    finished: list[bool] = []
    improve = policy.improve

    def counted(now: int, stop: object) -> bool:
        done = improve(now, stop)  # type: ignore[arg-type]
        finished.append(done)
        return done

    policy.improve = counted  # type: ignore[method-assign]
    records = replay(jobs, policy, compression_budget=2)
    check(records, jobs, nodes, "conservative")
    assert finished.count(False) >= 10
    assert finished[-1]
