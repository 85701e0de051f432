"""BL and BB backfill selection on a node plan: which job starts now first.

With FF the node planner takes jobs in queue order. With BL or BB
(:class:`~berth.core.node_selection.NodeSelector`), among the jobs that may start now
the best balanced goes first, and the others are asked again, as on the pool:

* EASY (:func:`backfill_by_selection`): every waiting job but the head that has a
  placement now for its whole estimate beside the head's reservation is a candidate;
  the chosen one starts, and the candidates are asked again until none is left.
* Conservative (:func:`start_now_by_selection`): when jobs end, before compression,
  every reserved job that could start now (its own reservation given back) is a
  candidate; the chosen one is moved to now, and the others are asked again. Moving a
  job into room that is free now delays no reservation, so every guarantee holds.

Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from berth.core.decisions import Start, at
from berth.core.nodes import NodePlan, Placement
from berth.core.policies.node_easy import fits
from berth.core.policies.node_schedule import NodeSchedule, Planned, SelectionRound


def _pick(policy: NodeSchedule, now: int, helds: list[dict[int, int]]) -> int:
    plan = policy.plan
    profiles = plan.profiles if isinstance(plan, NodePlan) else None
    return policy.selector.pick(plan.aggregate.free_at(now), profiles, helds, now)


def backfill_by_selection(
    policy: NodeSchedule, head: Planned, reserved: int, now: int, started: list[Start]
) -> None:
    """EASY with BL or BB: the best-scoring job that has a placement now beside the
    head's reservation starts first, until none has one.

    Deferred (the daemon), the pass stops once ``pass_stop()`` says so, after one
    question at least: the best candidate found so far starts, and the next pass goes
    on from the job it stopped at (``backfill_resume``), as EASY's first-fit pass does;
    the jobs before that one wait for the pass after (EASY promises nothing)."""
    plan = policy.plan
    eligible = [
        e for e in policy.waiting.values() if e is not head and e.job.id not in policy.parked
    ]
    rule = policy.selector.rule
    stop = policy.pass_stop if policy.deferred else None
    resume, policy.backfill_resume = policy.backfill_resume, None
    if resume is not None:
        eligible = eligible[next((i for i, e in enumerate(eligible) if e.job.id == resume), 0) :]
    # Only jobs whose total fits in what is free now, summed over the nodes, can have a
    # placement now (what is free only shrinks during the pass): the others are not
    # asked, as EASY's first-fit pass filters its queue.
    guard = policy.space.guard
    free_now = plan.aggregate.free_at(now) | guard
    eligible = [e for e in eligible if fits(e, free_now, guard)]
    asked = False
    while eligible:
        candidates: list[tuple[Planned, Placement, dict[int, int]]] = []
        cut: Planned | None = None  # the first job this pass did not ask
        for entry in eligible:
            if asked and stop is not None and stop():
                cut = entry
                break
            asked = True
            shape = entry.shape
            placement = plan.place(shape, entry.demand, now, entry.job.estimate)
            if placement is not None:
                held = plan.held(placement, entry.demand, shape.exclusive)
                candidates.append((entry, placement, held))
        if candidates:
            entry, placement, _ = candidates[_pick(policy, now, [c[2] for c in candidates])]
            reason = f"backfilled ({rule}) beside the head's reservation at {at(reserved)}"
            started.append(policy._launch(entry, now, placement, reason))
        if cut is not None:
            policy.backfill_resume = cut.job.id  # where the next pass goes on
            return
        if not candidates:
            return
        eligible = [c[0] for c in candidates if c[0] is not entry]


def start_now_by_selection(
    policy: NodeSchedule, now: int, stop: Callable[[], bool] | None = None
) -> bool:
    """Conservative with BL or BB: move up to ``now`` the reserved jobs that can start
    now, the best-scoring first, asking the others again after each move; whether it is
    done. With ``stop`` (the daemon's slices) it stops after a question once ``stop()``
    says so and goes on from ``policy.selection_round`` at the next call; a job found
    movable in an earlier slice is asked again before it moves (the plan may have
    changed in between)."""
    plan = policy.plan
    current = policy.selection_round or SelectionRound()
    policy.selection_round = None
    asked = False
    while True:
        for entry in list(policy.waiting.values()):
            job_id = entry.job.id
            old, held = entry.start, entry.held
            if job_id in current.asked or old is None or old <= now or held is None:
                continue
            if entry.job.ready(now) != now:
                continue  # it may not start yet (its dependencies)
            if asked and stop is not None and stop():
                policy.selection_round = current
                return False
            asked = True
            current.asked.add(job_id)
            estimate = entry.job.estimate
            if not _room_now(entry, now):
                continue
            found = plan.earlier(entry.shape, entry.demand, estimate, now, old, held, now + 1)
            if found is None:
                continue
            # Only asked: put its reservation back as it was.
            plan.reserve(held, old, estimate)
            held_now = plan.held(found[1], entry.demand, entry.shape.exclusive)
            current.movable.append((entry, held_now))
        movable = [(e, h) for e, h in current.movable if e.job.id in policy.waiting]
        current = SelectionRound()
        while movable:
            chosen = movable.pop(_pick(policy, now, [m[1] for m in movable]))[0]
            # Found movable in an earlier slice, maybe: the plan may have changed since,
            # and a counted plan's ``earlier`` takes the room as given.
            if _room_now(chosen, now) and policy._move_earlier(chosen, now, now + 1):
                break  # one moved: the others are asked again
        else:
            return True


def _room_now(entry: Planned, now: int) -> bool:
    """Whether a reserved job's nodes have room together now for its estimate, its own
    reservation aside: necessary for a move to now, and on a counted plan what
    ``earlier`` takes as given (``True`` when the plan has no summed test for it)."""
    old = entry.start
    if old is None or old <= now:
        return False
    if entry.need is None:
        return True
    summed, total = entry.need
    return summed.earliest_start(total, entry.job.estimate, now, old) == now
