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
from berth.core.policies.nodes import NodeBackfill, Planned
from berth.emulate.replay import replay
from tests.property.test_node_blocks import blocky_clusters
from tests.property.test_node_planner import node_jobs


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
