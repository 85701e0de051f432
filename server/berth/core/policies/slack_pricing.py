"""Slack-based priority backfilling's pricing (Talby & Feitelson 1999), on any board.

Every waiting job has a reservation and a *slack*: how much later than its current
reservation it may still be pushed. A new job may push waiting jobs back, within their
slack, when that lowers the *price* of the schedule:

    price = (t_e - now)^a_t * n^a_u + sum over moved jobs of cost(j_i, t_i, j)
    cost(j_i, t_i, j) = n_i^a_u * t_i^a_t * (p_i / p)^a_p * (s0_i / s_i)^(a_p * a_f)

(``n`` a job's size, ``t_e`` the new job's start, ``t_i`` the delay of ``j_i``, ``p`` the
weighted priority, ``s0`` and ``s`` the initial and remaining slack). Insertion tries
each time slot ``ts`` from ``now`` up to the conservative start: every waiting job
reserved at or after ``ts`` is delayed by the new job's estimate (where it is: on the
same nodes, on a node plan), the new job takes ``ts``, and the delayed jobs are
compressed one at a time in the order one of five permutation heuristics gives (AST,
AAT, DU, DC, DP). A schedule that pushes a job past its slack is infinitely expensive;
the cheapest finite one wins (ties: fewest moved jobs, then the earliest slot; the
conservative placement, which moves nobody, is always a candidate).

:class:`SlackPricing` holds the priorities, the slack state and the search; the policy
that mixes it in supplies the schedule as a :class:`~berth.core.policies.boards.Board`
(the pool's profile, or the live node plan) and a job's size. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from berth.core.catalog import SLACK_HEURISTICS
from berth.core.model import Job
from berth.core.policies.boards import Board
from berth.core.policies.option_values import number

#: The permutation heuristics of section 2.4, by their paper abbreviations.
HEURISTICS = SLACK_HEURISTICS
#: User and political priority of a job that gives none; also the scheduler priority a
#: new job starts with ("we want all jobs to wait exactly the average wait time").
NEUTRAL_PRIORITY = 0.5
#: Weighted priority of the timeless dummy job that prices a removal (Remove(j)).
DUMMY_PRIORITY = NEUTRAL_PRIORITY

#: The largest initial slack, slack_factor x awt, in seconds (about 31,700 years): a
#: job's bound, its start plus its slack, is a promise the daemon stores as a time. An
#: infinite slack factor gave a job of priority 1 a NaN slack (0 x inf), and a bound
#: of 10^300 seconds is no time the store holds.
MOST_INITIAL_SLACK = 1e12


@dataclass(slots=True)
class SlackState:
    """What the slack scheduler knows of a waiting job beyond its reservation.

    ``priority`` is the weighted priority ``p`` (minus infinity for an over-quota job),
    ``initial`` the initial slack ``s0`` in seconds (infinite with ``p = -inf``),
    ``bound`` the latest start promised (reservation + remaining slack; ``None`` when
    unbounded), ``weight`` the job's ``n^a_u`` and ``arrival`` its arrival number.
    """

    priority: float
    initial: float
    bound: int | None
    weight: float
    area: float
    arrival: int


@dataclass(slots=True)
class SlackPlan:
    price: float
    moved: int
    start: int
    moves: list[tuple[Any, int]]
    #: The slot the new job takes when jobs are pushed (None: the conservative start).
    slot: int | None


def _power(value: float, exponent: float) -> float:
    """``value ** exponent`` keeping the sign (a negative delay is a move up: a profit)."""
    if exponent == 1.0:
        return value
    return math.copysign(abs(value) ** exponent, value)


class Reserved(Protocol):
    """A waiting job as the pricing sees it."""

    @property
    def job(self) -> Job: ...

    @property
    def start(self) -> int | None: ...


AnyBoard = Board[Any, Any]


class SlackPricing:
    """The slack policy's options, priorities, slack state and cheapest insertion."""

    state: dict[int, SlackState]

    def init_slack(
        self,
        heuristic: str = "ast",
        slack_factor: float = 3.0,
        awt: float = 2401.0,
        alpha_u: float = 1.0,
        alpha_t: float = 1.0,
        alpha_p: float = 1.0,
        alpha_f: float = 1.0,
    ) -> None:
        """The options (Talby & Feitelson's names and defaults), each checked."""
        if heuristic not in HEURISTICS:
            raise ValueError(
                f"slack heuristic must be one of {', '.join(HEURISTICS)}, got {heuristic!r}"
            )
        self.heuristic = heuristic
        self.slack_factor = number("slack_factor", slack_factor, low=0.0)
        self.awt = number("awt", awt, low=0.0, strict=True)
        if self.slack_factor * self.awt > MOST_INITIAL_SLACK:
            raise ValueError(
                f"slack_factor x awt (the largest initial slack) must be at most "
                f"{MOST_INITIAL_SLACK:g} s, got {self.slack_factor * self.awt:g}"
            )
        self.alpha_u = number("alpha_u", alpha_u, low=0.0, high=1.0)
        self.alpha_t = number("alpha_t", alpha_t, low=0.0, high=1.0)
        self.alpha_p = number("alpha_p", alpha_p, low=0.0, high=1.0)
        self.alpha_f = number("alpha_f", alpha_f, low=0.0, high=1.0)
        self.state = {}
        #: Candidate schedules priced so far (for the bench's cost-per-insertion figures).
        self.schedules_priced = 0

    # ------------------------------------------------------------------ priorities
    @staticmethod
    def components(job: Job) -> tuple[float, float]:
        """The job's (user, political) priorities."""
        return (
            job.priority.get("user", NEUTRAL_PRIORITY),
            job.priority.get("political", NEUTRAL_PRIORITY),
        )

    def priority_problem(self, job: Job) -> str | None:
        """Why the job's priorities are out of range, if they are."""
        user, political = self.components(job)
        if not 0.0 <= user <= 1.0:
            return f"user priority must be in [0, 1], got {user}"
        if not (0.0 <= political <= 1.0 or political == -math.inf):
            return f"political priority must be in [0, 1] or -inf, got {political}"
        return None

    def weighted_priority(self, job: Job, scheduler: float) -> float:
        user, political = self.components(job)
        return (user + political + scheduler) / 3.0

    def initial_slack(self, priority: float) -> float:
        if priority == -math.inf:
            return math.inf
        return (1.0 - priority) * self.slack_factor * self.awt

    def new_state(
        self, job: Job, start: int, now: int, size: float, arrival: int, bound: int | None = None
    ) -> SlackState:
        """The state of a job placed at ``start`` with the scheduler priority computed
        once from its wait (section 2.2); its bound is ``start`` plus the initial slack
        unless ``bound`` (a kept promise) is given."""
        scheduler = min((start - now) / (2.0 * self.awt), 1.0)
        priority = self.weighted_priority(job, scheduler)
        initial = self.initial_slack(priority)
        if bound is None and initial != math.inf:
            bound = start + math.floor(initial)
        state = SlackState(
            priority, initial, bound, size**self.alpha_u, size * job.estimate, arrival
        )
        self.state[job.id] = state
        return state

    # ------------------------------------------------------------------ pricing
    def cost(self, entry: Reserved, new_start: int, priority: float) -> float:
        """The cost of moving ``entry`` to ``new_start`` for a job of weighted ``priority``."""
        state = self.state[entry.job.id]
        assert entry.start is not None
        delay = new_start - entry.start
        if delay == 0 or state.bound is None:
            return 0.0  # an unbounded (over-quota) job is pushed for free
        remaining = state.bound - entry.start
        fairness = max(state.initial, 1.0) / max(remaining, 1)
        ratio = state.priority / priority
        price: float = (
            state.weight
            * _power(float(delay), self.alpha_t)
            * ratio**self.alpha_p
            * fairness ** (self.alpha_p * self.alpha_f)
        )
        return price

    def permutation(self, entries: Sequence[Reserved], priority: float) -> list[Any]:
        """``entries`` (sorted by reserved start) in the order the heuristic compresses them."""
        state = self.state
        key: Callable[[Reserved], tuple[float, int]]
        if self.heuristic == "ast":
            return list(entries)
        if self.heuristic == "aat":
            key = lambda e: (0.0, state[e.job.id].arrival)  # noqa: E731
        elif self.heuristic == "du":
            key = lambda e: (-state[e.job.id].area, state[e.job.id].arrival)  # noqa: E731
        elif self.heuristic == "dc":
            key = lambda e: (  # noqa: E731
                -self.cost(e, _start(e) + 1, priority),
                state[e.job.id].arrival,
            )
        else:  # dp: highest priority first, then arrival
            key = lambda e: (-state[e.job.id].priority, state[e.job.id].arrival)  # noqa: E731
        return sorted(entries, key=key)

    def by_start(self, waiting: Sequence[Reserved]) -> list[Any]:
        """The reserved jobs of ``waiting`` by (reserved start, arrival)."""
        state = self.state
        return sorted(
            (e for e in waiting if e.start is not None),
            key=lambda e: (_start(e), state[e.job.id].arrival),
        )

    # ------------------------------------------------------------------ insert
    def cheapest(
        self,
        board: AnyBoard,
        by_start: Sequence[Reserved],
        entry: Reserved,
        size: float,
        now: int,
        priority: float,
    ) -> SlackPlan:
        """The cheapest schedule for inserting ``entry`` (section 2.4 with the heuristic);
        ``by_start``: the reserved waiting jobs in order of start. The board is left as
        it was; :meth:`insert` puts the chosen schedule on it."""
        estimate = entry.job.estimate
        weight = size**self.alpha_u
        alpha_t = self.alpha_t
        base = board.earliest(entry, now)
        best = SlackPlan(weight * _power(float(base - now), alpha_t), 0, base, [], None)
        if priority == -math.inf or base == now or not by_start:
            return best  # an over-quota job never pushes anyone; nothing to gain at now
        # The time slots: where the free resources change and where a waiting job is
        # reserved (two jobs back to back with equal demands leave no breakpoint).
        slots = sorted(
            {
                now,
                *board.breakpoints(now, base),
                *(_start(e) for e in by_start if _start(e) < base),
            },
            reverse=True,
        )
        root = board.mark()
        # Every job reserved at or after the slot delayed by the new job's estimate,
        # built incrementally as the slot moves from the latest to ``now``.
        first_delayed = len(by_start)
        for slot in slots:
            while first_delayed > 0 and _start(by_start[first_delayed - 1]) >= slot:
                first_delayed -= 1
                board.shift(by_start[first_delayed], estimate)
            if first_delayed == len(by_start):
                continue
            mark = board.mark()
            if not board.put(entry, slot):
                continue
            own = weight * _power(float(slot - now), alpha_t)
            plan = self._compress_delayed(board, by_start[first_delayed:], slot, now, priority, own)
            board.undo(mark)
            if plan is not None and _cheaper(plan, best):
                best = plan
        board.undo(root)
        return best

    def _compress_delayed(
        self,
        board: AnyBoard,
        delayed: Sequence[Reserved],
        slot: int,
        now: int,
        priority: float,
        price: float,
    ) -> SlackPlan | None:
        """Price one slot (the new job at ``slot``, the ``delayed`` jobs pushed): each
        delayed job compressed in the heuristic's order; ``None`` when one of them would
        pass its bound."""
        self.schedules_priced += 1
        moves: list[tuple[Any, int]] = []
        moved = 0
        state = self.state
        for waiting in self.permutation(delayed, priority):
            original = _start(waiting)
            board.take(waiting)
            found = board.place(waiting, now)  # its earliest; no later than pushed
            bound = state[waiting.job.id].bound
            if bound is not None and found > bound:
                return None
            if found != original:
                moved += 1
                price += self.cost(waiting, found, priority)
                moves.append((waiting, found))
        return SlackPlan(price, moved, slot, moves, slot)

    def insert(
        self,
        board: AnyBoard,
        by_start: Sequence[Reserved],
        entry: Reserved,
        plan: SlackPlan,
        now: int,
        priority: float,
    ) -> None:
        """Put ``plan``'s schedule on the board but the new job: the delayed jobs where
        the plan moved them (the same computation again, which gives the same places)."""
        if plan.slot is None:
            return  # the conservative placement moves nobody
        estimate = entry.job.estimate
        delayed = [e for e in by_start if _start(e) >= plan.slot]
        for waiting in reversed(delayed):
            board.shift(waiting, estimate)
        put = board.put(entry, plan.slot)
        again = self._compress_delayed(board, delayed, plan.slot, now, priority, 0.0)
        assert put, "the new job fitted there a moment ago"
        assert again is not None, "the same trial as when it was priced"
        assert again.moves == plan.moves, "the same trial as when it was priced"
        self.schedules_priced -= 1  # the same schedule, priced once
        board.take(entry)

    def planned_bound(self, job_id: int) -> int | None:
        """The latest start promised to a waiting job (``None``: unbounded or not waiting)."""
        state = self.state.get(job_id)
        return None if state is None else state.bound


def _start(entry: Reserved) -> int:
    assert entry.start is not None
    return entry.start


def _cheaper(plan: SlackPlan, best: SlackPlan) -> bool:
    """Strictly cheaper, or as cheap with fewer moved jobs (the paper's tie rule); slots
    are tried from the latest, so among full ties the earlier slot wins."""
    tolerance = 1e-9 * max(1.0, abs(best.price))
    if plan.price < best.price - tolerance:
        return True
    return abs(plan.price - best.price) <= tolerance and plan.moved <= best.moved
