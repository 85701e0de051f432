"""Slack-based priority backfilling (Talby & Feitelson 1999) on named nodes.

The node planner's conservative schedule (:class:`~berth.core.policies.nodes.
NodeBackfill`) with the slack policy's insertion: an arriving job may push waiting jobs
later, within their slack, when that lowers the price of the schedule — the same
pricing and search as on the pool (:class:`~berth.core.policies.slack_pricing.
SlackPricing`), run on a :class:`~berth.core.policies.node_board.NodeBoard`: a delayed
job keeps its nodes, the new job takes a placement at its slot, and the delayed jobs
are compressed to their earliest placements. A job's guarantee is its *bound*
(reservation plus slack when placed), fixed from then on: no job starts after it. A
job's size ``n`` is its largest share of a resource of the nodes that are up. Jobs are
compressed in the heuristic's order as jobs end. Pure: no clock, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies.base import push_starts
from berth.core.policies.node_board import NodeBoard, commit
from berth.core.policies.node_schedule import Planned
from berth.core.policies.nodes import NodeBackfill
from berth.core.policies.slack_pricing import DUMMY_PRIORITY, NEUTRAL_PRIORITY, SlackPricing


class NodeSlack(SlackPricing, NodeBackfill):
    """Slack-based priority backfilling on named nodes, with the pool policy's options."""

    def __init__(
        self,
        nodes: Mapping[str, Mapping[str, int]],
        configured: Mapping[str, Mapping[str, int]] | None = None,
        selection: str = "ff",
        **options: Any,
    ) -> None:
        """``options``: :meth:`~SlackPricing.init_slack`'s, as on the pool."""
        NodeBackfill.__init__(self, "slack", nodes, configured, selection)
        self.init_slack(**options)

    def trial(self) -> NodeSlack:
        """A deep copy: slack's insertion compresses the jobs it delays, which writes on
        the entries a shallower copy would share with the live policy."""
        return copy.deepcopy(self)

    def _size(self, entry: Planned) -> float:
        """A job's ``n``: its largest share of any resource of the nodes up."""
        amounts = self.space.unpack(entry.demand)
        count = entry.shape.count
        return max(amounts[name] * count / total for name, total in self.totals.items())

    def compression_walk(self, resume: int | None) -> tuple[list[Planned], int]:
        """Slack's compression order (its heuristic's, which changes with the starts:
        built at each call), and where a compression stopped at job ``resume`` goes on."""
        entries = self.permutation(self.by_start(list(self.waiting.values())), DUMMY_PRIORITY)
        if resume is None:
            return entries, 0
        return entries, next((i for i, entry in enumerate(entries) if entry.job.id == resume), 0)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self._admit(job, now)
        if isinstance(entry, Reject):
            return entry
        problem = self.priority_problem(job)
        if problem is not None:
            self._forget(job.id)
            return Reject(job.id, problem)
        if job.id in self.parked:
            return None  # waits, unplanned, for nodes that are drained or down
        priority = self.weighted_priority(job, NEUTRAL_PRIORITY)
        others = [e for e in self.waiting.values() if e is not entry]
        by_start = self.by_start(others)
        size = self._size(entry)
        board = NodeBoard(self)
        plan = self.cheapest(board, by_start, entry, size, now, priority)  # board left as was
        if plan.slot is None:
            self._reserve_earliest(entry, now)
        else:
            self.insert(board, by_start, entry, plan, now, priority)
            commit(self, board)
            placement = self.plan.place(entry.shape, entry.demand, plan.slot, job.estimate)
            assert placement is not None, "the slot was free for it in the priced schedule"
            self._hold(entry, plan.slot, placement)
            push_starts(self._starts, [(plan.slot, job.id)], self.waiting, self._arrival)
            # The slot was chosen by price, not as its earliest: the next compression
            # asks it afresh, as the pool's does, even if no room is given back.
            entry.checked = -1
        assert entry.start == plan.start
        state = self.new_state(job, plan.start, now, size, self._arrival[job.id])
        entry.guarantee = plan.start if state.bound is None else state.bound
        reason = (
            "earliest time it fits beside every earlier promise"
            if plan.moved == 0
            else f"cheapest schedule: {plan.moved} waiting job(s) moved within their slack"
        )
        return Reserve(job.id, plan.start, state.bound, reason)

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        """As conservative (its old start if still free, else its earliest), with its
        slack: the bound it was promised when the start is no later, else a new one."""
        problem = self.priority_problem(job)
        if problem is not None:
            return Reject(job.id, problem)
        decision = super().adopt_waiting(job, now, start, guarantee)
        if not isinstance(decision, Reserve):
            return decision
        entry = self.waiting[job.id]
        assert entry.start is not None
        kept = guarantee if guarantee is not None and entry.start <= guarantee else None
        # The scheduler priority at placement is not stored: re-derive it from the wait
        # between submit and the kept reservation.
        size = self._size(entry)
        state = self.new_state(job, entry.start, job.submit, size, self._arrival[job.id], kept)
        entry.guarantee = entry.start if state.bound is None else state.bound
        return Reserve(
            job.id, entry.start, state.bound, "taken over with its reservation and slack"
        )

    def _left_queue(self, job_id: int) -> None:
        self.state.pop(job_id, None)
