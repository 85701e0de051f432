"""Slack-based priority backfilling (Talby & Feitelson 1999).

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
``docs/semantics.md`` ("Slack-based priority backfilling").

The guarantee: a job's *bound* (its reservation plus its remaining slack) is fixed once
it is placed and never moves, so no job starts after it. Pure: time is an argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from berth.core.catalog import SLACK_HEURISTICS
from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.base import Waiting
from berth.core.policies.conservative import Conservative
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace

#: The permutation heuristics of section 2.4, by their paper abbreviations.
HEURISTICS = SLACK_HEURISTICS
#: User and political priority of a job that gives none; also the scheduler priority a
#: new job starts with ("we want all jobs to wait exactly the average wait time").
NEUTRAL_PRIORITY = 0.5
#: Weighted priority of the timeless dummy job that prices a removal (Remove(j)).
DUMMY_PRIORITY = NEUTRAL_PRIORITY


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
class _Plan:
    price: float
    moved: int
    start: int
    moves: list[tuple[Waiting, int]]


def _power(value: float, exponent: float) -> float:
    """``value ** exponent`` keeping the sign (a negative delay is a move up: a profit)."""
    if exponent == 1.0:
        return value
    return math.copysign(abs(value) ** exponent, value)


class SlackBackfilling(Conservative):
    """Priority backfilling with slack: reservations that may slide within a bound."""

    name = "slack"

    def __init__(
        self,
        space: ResourceSpace,
        heuristic: str = "ast",
        slack_factor: float = 3.0,
        awt: float = 2401.0,
        alpha_u: float = 1.0,
        alpha_t: float = 1.0,
        alpha_p: float = 1.0,
        alpha_f: float = 1.0,
        selection: str = "ff",
    ) -> None:
        super().__init__(space, selection)
        if heuristic not in HEURISTICS:
            raise ValueError(
                f"slack heuristic must be one of {', '.join(HEURISTICS)}, got {heuristic!r}"
            )
        self.heuristic = heuristic
        self.slack_factor = _number("slack_factor", slack_factor, low=0.0)
        self.awt = _number("awt", awt, low=0.0, strict=True)
        self.alpha_u = _number("alpha_u", alpha_u, low=0.0, high=1.0)
        self.alpha_t = _number("alpha_t", alpha_t, low=0.0, high=1.0)
        self.alpha_p = _number("alpha_p", alpha_p, low=0.0, high=1.0)
        self.alpha_f = _number("alpha_f", alpha_f, low=0.0, high=1.0)
        self.state: dict[int, SlackState] = {}
        #: Candidate schedules priced so far (for the bench's cost-per-insertion figures).
        self.schedules_priced = 0

    # ------------------------------------------------------------------ priorities

    @staticmethod
    def _components(job: Job) -> tuple[float, float]:
        """The job's (user, political) priorities (checked by :meth:`admit`)."""
        return (
            job.priority.get("user", NEUTRAL_PRIORITY),
            job.priority.get("political", NEUTRAL_PRIORITY),
        )

    def _priority(self, job: Job, scheduler: float) -> float:
        user, political = self._components(job)
        return (user + political + scheduler) / 3.0

    def _initial_slack(self, priority: float) -> float:
        if priority == -math.inf:
            return math.inf
        return (1.0 - priority) * self.slack_factor * self.awt

    def _size(self, demand: int) -> float:
        """A job's ``n``: its largest share of any resource (processors / total for K=1)."""
        amounts = self.space.unpack(demand)
        return max(amounts[name] / self.space.capacity[name] for name in self.space.names)

    # ------------------------------------------------------------------ pricing

    def cost(self, entry: Waiting, new_start: int, priority: float) -> float:
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

    def permutation(self, entries: Sequence[Waiting], priority: float) -> list[Waiting]:
        """``entries`` (sorted by reserved start) in the order the heuristic compresses them."""
        state = self.state
        key: Callable[[Waiting], tuple[float, int]]
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

    def _by_start(self) -> list[Waiting]:
        state = self.state
        return sorted(self.waiting.values(), key=lambda e: (_start(e), state[e.job.id].arrival))

    def compression_order(self) -> Iterable[Waiting]:
        return self.permutation(self._by_start(), DUMMY_PRIORITY)

    # ------------------------------------------------------------------ insert

    def admit(self, job: Job) -> Waiting | Reject:
        """As every policy, and the job's priorities must be in range."""
        user, political = self._components(job)
        if not 0.0 <= user <= 1.0:
            return Reject(job.id, f"user priority must be in [0, 1], got {user}")
        if not (0.0 <= political <= 1.0 or political == -math.inf):
            return Reject(job.id, f"political priority must be in [0, 1] or -inf, got {political}")
        return super().admit(job)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        plan = self._cheapest(entry, now, self._priority(job, NEUTRAL_PRIORITY))
        self._apply(plan)
        bound = self._place(entry, plan.start, now)
        reason = (
            "earliest time it fits beside every earlier promise"
            if plan.moved == 0
            else f"cheapest schedule: {plan.moved} waiting job(s) moved within their slack"
        )
        return Reserve(job.id, plan.start, bound, reason)

    def _cheapest(self, entry: Waiting, now: int, priority: float) -> _Plan:
        """The cheapest schedule for inserting ``entry`` (section 2.4 with the heuristic)."""
        profile = self.profile
        demand, estimate = entry.demand, entry.job.estimate
        weight = self._size(demand) ** self.alpha_u
        alpha_t = self.alpha_t
        base = profile.earliest_start(demand, estimate, now)
        assert base is not None, "an admitted job always fits once everything has ended"
        best = _Plan(weight * _power(float(base - now), alpha_t), 0, base, [])
        if priority == -math.inf or base == now or not self.waiting:
            return best  # an over-quota job never pushes anyone; nothing to gain at now
        by_start = self._by_start()
        # The profile with every job reserved at or after the slot shifted by the new job's
        # estimate, built incrementally as the slot moves from the latest to ``now``.
        shifted = profile.copy()
        first_delayed = len(by_start)
        # The time slots: where the free vector changes and where a waiting job is
        # reserved (two jobs back to back with equal demands leave no breakpoint).
        slots = sorted(
            {
                now,
                *profile.breakpoints(now, base),
                *(_start(e) for e in by_start if _start(e) < base),
            },
            reverse=True,
        )
        for slot in slots:
            while first_delayed > 0 and _start(by_start[first_delayed - 1]) >= slot:
                first_delayed -= 1
                moved = by_start[first_delayed]
                shifted.release(_start(moved), moved.job.estimate, moved.demand)
                shifted.reserve(_start(moved) + estimate, moved.job.estimate, moved.demand)
            if first_delayed == len(by_start) or not shifted.fits_during(demand, slot, estimate):
                continue
            own = weight * _power(float(slot - now), alpha_t)
            plan = self._compress_delayed(
                shifted, by_start[first_delayed:], slot, entry, now, priority, own
            )
            if plan is not None and _cheaper(plan, best):
                best = plan
        return best

    def _compress_delayed(
        self,
        shifted: Profile,
        delayed: Sequence[Waiting],
        slot: int,
        entry: Waiting,
        now: int,
        priority: float,
        price: float,
    ) -> _Plan | None:
        """Price one slot: the new job at ``slot``, the ``delayed`` jobs compressed in the
        heuristic's order; ``None`` when one of them would pass its bound."""
        self.schedules_priced += 1
        trial = shifted.copy()
        estimate = entry.job.estimate
        trial.reserve(slot, estimate, entry.demand)
        moves: list[tuple[Waiting, int]] = []
        moved = 0
        state = self.state
        for waiting in self.permutation(delayed, priority):
            original = _start(waiting)
            length = waiting.job.estimate
            pushed = original + estimate
            found = trial.earliest_start(waiting.demand, length, now, limit=pushed)
            if found is None:
                found = pushed
            else:
                trial.release(pushed, length, waiting.demand)
                trial.reserve(found, length, waiting.demand)
            bound = state[waiting.job.id].bound
            if bound is not None and found > bound:
                return None
            if found != original:
                moved += 1
                price += self.cost(waiting, found, priority)
                moves.append((waiting, found))
        return _Plan(price, moved, slot, moves)

    def _apply(self, plan: _Plan) -> None:
        """Move the waiting jobs of ``plan`` (all releases first: the moves interlock)."""
        profile = self.profile
        for waiting, _ in plan.moves:
            profile.release(_start(waiting), waiting.job.estimate, waiting.demand)
        for waiting, start in plan.moves:
            profile.reserve(start, waiting.job.estimate, waiting.demand)
            self.reschedule(waiting, start)

    def _place(self, entry: Waiting, start: int, now: int, bound: int | None = None) -> int | None:
        """Reserve ``entry`` at ``start`` with the scheduler priority recomputed once from
        its wait (section 2.2); its bound is ``start`` plus the new initial slack unless
        ``bound`` (a kept promise) is given. Returns the bound."""
        job = entry.job
        scheduler = min((start - now) / (2.0 * self.awt), 1.0)
        priority = self._priority(job, scheduler)
        initial = self._initial_slack(priority)
        if bound is None and initial != math.inf:
            bound = start + math.floor(initial)
        self.enqueue(entry, start, start if bound is None else bound)
        size = self._size(entry.demand)
        self.state[job.id] = SlackState(
            priority, initial, bound, size**self.alpha_u, size * job.estimate, self._arrivals
        )
        return bound

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

    def planned_bound(self, job_id: int) -> int | None:
        """The latest start promised to a waiting job (``None``: unbounded or not waiting)."""
        state = self.state.get(job_id)
        return None if state is None else state.bound


def _start(entry: Waiting) -> int:
    assert entry.start is not None
    return entry.start


def _cheaper(plan: _Plan, best: _Plan) -> bool:
    """Strictly cheaper, or as cheap with fewer moved jobs (the paper's tie rule); slots
    are tried from the latest, so among full ties the earlier slot wins."""
    tolerance = 1e-9 * max(1.0, abs(best.price))
    if plan.price < best.price - tolerance:
        return True
    return abs(plan.price - best.price) <= tolerance and plan.moved <= best.moved


def _number(
    name: str, value: object, low: float, high: float | None = None, strict: bool = False
) -> float:
    """Validate a numeric option (given as a number or a numeric string)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    too_low = number <= low if strict else number < low
    if math.isnan(number) or too_low or (high is not None and number > high):
        limits = f"> {low}" if strict else f">= {low}"
        if high is not None:
            limits = f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {limits}, got {value!r}")
    return number


__all__ = ["HEURISTICS", "SlackBackfilling", "SlackState"]
