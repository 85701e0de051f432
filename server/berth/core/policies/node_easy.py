"""EASY's backfill pass on a node plan, whole or in slices.

With the head of the queue holding its reservation in the plan, every other waiting job
that has a placement for its whole estimate now starts now, in queue order. The
emulator runs the pass whole at every instant; the daemon (``deferred``) bounds it with
the shell's ``pass_stop`` and goes on at the next pass from the job it stopped at. Pure:
no clock, no I/O (``pass_stop`` is the shell's).
"""

from __future__ import annotations

from berth.core.decisions import Start, at
from berth.core.policies.node_schedule import NodeSchedule, Planned


def backfill(
    policy: NodeSchedule, head: Planned, reserved: int, now: int, started: list[Start]
) -> None:
    """EASY: start now every other job that has a placement for its whole estimate
    beside the head's reservation (held in the plan), in queue order.

    Two exact shortcuts, as the plan only fills during the pass: a job whose total
    does not fit in what is free now cannot start (one packed test); and a job that
    asks for no more than one that already failed to be placed, slot for slot
    (the same slot and node terms, no more slots, no longer estimate), fails too.

    Deferred (the daemon), the pass stops once ``pass_stop()`` says so, after one
    question at least, and the next pass goes on from the job it stopped at (as
    Slurm's backfill continues): a deep queue is walked over several batches, and
    the jobs before that one wait for the pass after (EASY promises nothing)."""
    guard = policy.space.guard
    free_now = policy.plan.aggregate.free_at(now) | guard
    failed: dict[tuple[int, int | None, bool], list[tuple[int, int]]] = {}
    stop = policy.pass_stop if policy.deferred else None
    queue = list(policy.waiting.values())
    resume, policy.backfill_resume = policy.backfill_resume, None
    first = 0
    if resume is not None:
        first = next((i for i, e in enumerate(queue) if e.job.id == resume), 0)
    asked = False
    for other in queue[first:]:
        if other is head or other.job.id in policy.parked:
            continue
        if asked and stop is not None and stop():
            policy.backfill_resume = other.job.id
            return
        shape, estimate = other.shape, other.job.estimate
        if (free_now - other.demand * shape.count) & guard != guard and not shape.exclusive:
            continue
        terms = (other.demand, shape.nodes, shape.exclusive)
        fewer = failed.get(terms)
        if fewer and any(c <= shape.count and e <= estimate for c, e in fewer):
            continue
        asked = True
        placement = policy.plan.place(shape, other.demand, now, estimate)
        if placement is None:  # kept minimal: what it now covers is dropped
            failed[terms] = [(c, e) for c, e in fewer or () if c < shape.count or e < estimate] + [
                (shape.count, estimate)
            ]
            continue
        reason = f"backfilled beside the head's reservation at {at(reserved)}"
        started.append(policy._launch(other, now, placement, reason))
        free_now = policy.plan.aggregate.free_at(now) | guard
