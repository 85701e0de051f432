"""Slack-based priority backfilling on the pool (Talby & Feitelson 1999).

Every waiting job has a reservation, as under conservative backfilling, and a *slack*:
how much later than its current reservation it may still be pushed. A new job may push
waiting jobs back, within their slack, when that lowers the *price* of the schedule:

    price = (t_e - now)^a_t * n^a_u + sum over moved jobs of cost(j_i, t_i, j)
    cost(j_i, t_i, j) = n_i^a_u * t_i^a_t * (p_i / p)^a_p * (s0_i / s_i)^(a_p * a_f)

(``n`` a job's size, ``t_e`` the new job's start, ``t_i`` the delay of ``j_i``, ``p`` the
weighted priority, ``s0`` and ``s`` the initial and remaining slack). Insertion tries
each time slot ``ts`` of the profile from ``now`` up to the conservative start: every
waiting job reserved at or after ``ts`` is delayed by the new job's estimate, the new job
takes ``ts``, and the delayed jobs are compressed one at a time in the order one of five
permutation heuristics gives (AST, AAT, DU, DC, DP). A schedule that pushes a job past
its slack is infinitely expensive; the cheapest finite one wins (ties: fewest moved
jobs, then the earliest slot; the conservative placement, which moves nobody, is always
a candidate). Removing a job or an early completion compresses the schedule in the same
heuristic order. The choices where the paper is silent are listed in
``docs/semantics.md`` ("Slack-based priority backfilling"). The pricing and the search
are :class:`~berth.core.policies.slack_pricing.SlackPricing`, the same on named nodes;
here they run on a :class:`~berth.core.policies.boards.PoolBoard`.

The guarantee: a job's *bound* (its reservation plus its remaining slack) is fixed once
it is placed and never moves, so no job starts after it. Pure: time is an argument.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.base import Waiting
from berth.core.policies.boards import PoolBoard
from berth.core.policies.conservative import Conservative
from berth.core.policies.slack_pricing import (
    DUMMY_PRIORITY,
    HEURISTICS,
    NEUTRAL_PRIORITY,
    SlackPricing,
    SlackState,
)
from berth.core.resources import ResourceSpace

__all__ = ["HEURISTICS", "SlackBackfilling", "SlackState"]


class SlackBackfilling(SlackPricing, Conservative):
    """Priority backfilling with slack: reservations that may slide within a bound."""

    name = "slack"

    def __init__(self, space: ResourceSpace, selection: str = "ff", **options: Any) -> None:
        """``options``: :meth:`~SlackPricing.init_slack`'s (heuristic, slack_factor, awt,
        alpha_u, alpha_t, alpha_p, alpha_f)."""
        Conservative.__init__(self, space, selection)
        self.init_slack(**options)

    def _size(self, demand: int) -> float:
        """A job's ``n``: its largest share of any resource (processors / total for K=1)."""
        amounts = self.space.unpack(demand)
        return max(amounts[name] / self.space.capacity[name] for name in self.space.names)

    def compression_order(self) -> Iterable[Waiting]:
        return self.permutation(self.by_start(list(self.waiting.values())), DUMMY_PRIORITY)

    def admit(self, job: Job) -> Waiting | Reject:
        """As every policy, and the job's priorities must be in range."""
        problem = self.priority_problem(job)
        if problem is not None:
            return Reject(job.id, problem)
        return super().admit(job)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        priority = self.weighted_priority(job, NEUTRAL_PRIORITY)
        board = PoolBoard(self.profile, self.space, self.waiting.values(), now)
        by_start = self.by_start(list(self.waiting.values()))
        plan = self.cheapest(board, by_start, entry, self._size(entry.demand), now, priority)
        if plan.slot is not None:
            self.insert(board, by_start, entry, plan, now, priority)
            self.profile = board.profile
            for waiting, start in plan.moves:
                self.reschedule(waiting, start)
        bound = self._place(entry, plan.start, now)
        reason = (
            "earliest time it fits beside every earlier promise"
            if plan.moved == 0
            else f"cheapest schedule: {plan.moved} waiting job(s) moved within their slack"
        )
        return Reserve(job.id, plan.start, bound, reason)

    def _place(self, entry: Waiting, start: int, now: int, bound: int | None = None) -> int | None:
        """Reserve ``entry`` at ``start`` with its slack state (bound: a kept promise)."""
        job = entry.job
        state = self.new_state(job, start, now, self._size(entry.demand), self._arrivals + 1, bound)
        self.enqueue(entry, start, start if state.bound is None else state.bound)
        return state.bound

    # ------------------------------------------------------------------ live shells

    def keep(self, entry: Waiting, start: int, promise: int | None) -> Reserve:
        # The scheduler priority at placement is not stored: re-derive it from the wait
        # between submit and the kept reservation.
        bound = self._place(entry, start, entry.job.submit, promise)
        return Reserve(entry.job.id, start, bound, "taken over with its reservation and slack")

    def withdraw(self, job_id: int, now: int) -> bool:
        withdrawn = super().withdraw(job_id, now)
        if withdrawn:
            del self.state[job_id]
        return withdrawn

    def schedule(self, now: int) -> list[Start]:
        started = super().schedule(now)
        for start in started:
            del self.state[start.job_id]
        return started
