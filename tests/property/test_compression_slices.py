"""Hypothesis: conservative compression on nodes (and BL/BB's moves to now), deferred
and run in slices.

The daemon defers compression after job ends and runs it in slices between commands
(:meth:`NodeBackfill.improve`). Two properties:

* a compression cut into slices of one to three questions, finished before anything
  else happens, gives exactly the plan a whole compression gives (it goes on from the
  job it stopped at);
* with slices left unfinished while jobs arrive and start, no node is over-committed and
  no job starts after its guarantee (a compression not yet done breaks no promise).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.nodes import NodeBackfill
from berth.emulate.replay import replay
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

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        super().complete(job_ids, now)
        while not self.improve(now, self.stop):
            self.slices += 1


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


SELECTIONS = st.sampled_from(["ff", "bl", "bb"])


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 3), selection=SELECTIONS)
def test_a_compression_in_slices_is_the_whole_compression(
    data: st.DataObject, size: int, selection: str
) -> None:
    nodes = data.draw(node_clusters())
    jobs = data.draw(node_jobs(nodes, 30))
    whole = replay(jobs, NodeBackfill("conservative", nodes, None, selection))
    sliced = replay(jobs, SlicedToTheEnd(nodes, size, selection))
    assert [(r.id, r.start, r.guarantee, r.nodes) for r in sliced] == [
        (r.id, r.start, r.guarantee, r.nodes) for r in whole
    ]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), size=st.integers(1, 3), selection=SELECTIONS)
def test_an_unfinished_compression_breaks_no_promise(
    data: st.DataObject, size: int, selection: str
) -> None:
    nodes = data.draw(node_clusters())
    jobs = data.draw(node_jobs(nodes, 30))
    records = replay(jobs, LeftUnfinished(nodes, size, selection))
    check(records, jobs, nodes, "conservative")


def test_slices_do_stop_and_go_on() -> None:
    """A queue whose compression takes several questions is really cut into slices."""
    nodes = {"a": {"cpus": 2}, "b": {"cpus": 2}}
    from berth.core.shapes import Shape
    from berth.emulate.workload import TraceJob

    jobs = [TraceJob(Job(1, 0, 100, {}, shape=Shape(4, {"cpus": 1})), 5)]
    jobs += [TraceJob(Job(i, 1, 10, {}, shape=Shape(1, {"cpus": 1})), 10) for i in range(2, 8)]
    policy = SlicedToTheEnd(nodes, 1)
    records = replay(jobs, policy)
    assert policy.slices >= 2
    assert [r.start for r in records] == [
        r.start for r in replay(jobs, NodeBackfill("conservative", nodes))
    ]
