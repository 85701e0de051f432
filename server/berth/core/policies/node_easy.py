"""EASY's pass on a node plan (first fit), whole or in slices.

The head of the queue starts if it has a placement now; else it holds its reservation
in the plan while every other waiting job that has a placement for its whole estimate
starts now, in queue order. The emulator runs the pass whole at every instant; the
daemon (``deferred``) bounds it with the shell's ``pass_stop`` and goes on at the next
pass from the job it stopped at. A pass that started nothing is remembered: until the
plan changes, only jobs queued since are asked (:func:`idle_since`). Pure: no clock, no
I/O (``pass_stop`` is the shell's).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import dropwhile, islice

from berth.core.decisions import Start, at
from berth.core.nodes import NodePlan, Placement
from berth.core.policies.base import queued_after
from berth.core.policies.failure_front import FailureFront
from berth.core.policies.node_schedule import NodeSchedule, Planned
from berth.core.whole_nodes import TENTATIVE, CountedPlan, Window


def easy_pass(policy: NodeSchedule, now: int) -> list[Start]:
    """One pass of EASY with first-fit backfilling (see the module's docstring).

    Cheap where it can be, exactly: the head's placement is searched only if its
    total fits in what is free now; the others are filtered at C speed by the same
    test (what is free only shrinks during a pass); the head's reservation is held
    only if some job passed, and then a job that runs past its start is asked only if
    its total is free beside it (:func:`_past_head`, :func:`backfill`); and after an
    idle pass only the jobs queued since are asked."""
    started: list[Start] = []
    plan, guard, parked = policy.plan, policy.space.guard, policy.parked
    while True:
        if parked:
            head = next((e for e in policy.waiting.values() if e.job.id not in parked), None)
        else:  # (no generator: a pass runs at every instant)
            head = next(iter(policy.waiting.values()), None)
        if head is None:
            return started
        free_now = plan.aggregate.free_at(now) | guard
        found = None
        if fits(head, free_now, guard):
            found = head_placement(policy, head, now)
            if found[0] == now:
                started.append(policy._launch(head, now, found[1], "head of the queue fits"))
                continue
        newer = idle_since(policy, head)
        resumed = policy.backfill_resume is not None
        window: Window | None = None
        candidates, first, kept = _candidates(policy, head, free_now, newer)
        if first < len(candidates):
            # The head's placement only now: most passes find no job that fits now.
            if found is None:
                found = head_placement(policy, head, now)
            if isinstance(plan, CountedPlan):  # the head's window, not booked
                amount = plan.amount(head.shape, head.demand)
                window = (found[0], found[0] + head.job.estimate, amount)
                if not kept:
                    candidates = _beside_head(plan, candidates, window, now, guard)
        if first < len(candidates):
            assert found is not None
            before = len(started)
            if window is not None:
                backfill(policy, head, found[0], now, started, candidates, first, window)
            else:  # the head holds its reservation while the rest are backfilled
                held = policy._book(head, found[0], found[1])
                if not kept:  # (a kept list is tested job by job in backfill)
                    candidates = _past_head(plan, found[0], now, candidates, guard)
                backfill(policy, head, found[0], now, started, candidates, first)
                plan.release(held, found[0], head.job.estimate)
            idle = len(started) == before
        else:
            idle = True
        complete = not resumed and policy.backfill_resume is None
        remember_idle(policy, head, idle and complete)
        return started


def head_placement(policy: NodeSchedule, head: Planned, now: int) -> tuple[int, Placement]:
    """The head's earliest start from ``now`` on, and its placement there."""
    found = policy.plan.earliest(head.shape, head.demand, head.job.estimate, now)
    assert found is not None, "an admitted job always fits once all has ended"
    return found


def fits(entry: Planned, free_now: int, guard: int) -> bool:
    """Whether the job's total fits in what is free now, summed over the nodes (a
    necessary test for a placement now; always true for a job taking whole nodes)."""
    return (free_now - entry.total) & guard == guard


def _candidates(
    policy: NodeSchedule,
    head: Planned,
    free_now: int,
    newer: list[Planned] | None,
) -> tuple[list[Planned], int, bool]:
    """The jobs worth asking, in queue order, where to begin in that list, and whether
    it is the list a stopped pass kept: after the job a stopped pass reached (if any),
    only those queued since an idle pass (``newer``), and of them those whose total
    fits in what is free now (all that take whole nodes of named nodes).

    A pass that goes on where one stopped goes on through that pass's list: filtering
    a queue of 50,000 jobs again took most of a 10-ms slice, so each slice asked one
    question. Jobs in it that started, left or became the head since are skipped as
    they are reached (:func:`backfill`), and jobs it left out wait for the next pass,
    as the jobs before the one it stopped at do.

    On a counted plan the total is the whole nodes a job takes, and the pass narrows a
    new list further (:func:`_beside_head`)."""
    source: Iterable[Planned] = policy.waiting.values() if newer is None else newer
    resume, policy.backfill_resume = policy.backfill_resume, None
    rest, policy.backfill_rest = policy.backfill_rest, None
    if rest is not None and rest[1] < len(rest[0]) and rest[0][rest[1]].job.id == resume:
        return rest[0], rest[1], True
    guard, parked = policy.space.guard, policy.parked
    # (A long prefix costs more sorted than the whole queue filtered: a quarter at most.)
    rows = (
        None
        if newer is not None
        else policy.by_total.at_most(free_now ^ guard, len(policy.waiting) >> 2)
    )
    if rows is not None:
        # Only jobs whose total is at most what is free now, as integers, may fit: a
        # prefix of the queue by total, put back in queue order, from the job a pass
        # stopped at.
        first = policy._arrival.get(resume, 0) if resume is not None else 0
        source = [e for _, e in sorted((a, e) for _, a, e in rows if a >= first)]
    elif resume is not None and resume in policy.waiting:
        source = dropwhile(lambda e: e.job.id != resume, source)
    elif newer is None and not parked:  # the whole queue after its head: the test alone
        after_head = islice(source, 1, None)
        return (
            [other for other in after_head if (free_now - other.total) & guard == guard],
            0,
            False,
        )
    return (
        [  # fits() written out: a call per waiting job costs more than the test
            other
            for other in source
            if (free_now - other.total) & guard == guard
            and other is not head
            and other.job.id not in parked
        ],
        0,
        False,
    )


def _beside_head(
    plan: CountedPlan, fitting: list[Planned], window: Window, now: int, guard: int
) -> list[Planned]:
    """Of the jobs whose whole nodes are free now, those also free beside the head's
    ``window`` (not booked) if they run past its start: one more test at C speed, asked
    only once some job fits now (most passes find none, and the head's search is then
    not needed). On a plan of running jobs only, whose room only comes back, it is also
    sufficient, so nearly every job that passes it starts; :func:`backfill` still asks
    the plan about each."""
    beside, latest = _room_beside(plan, window, now)
    beside |= guard
    return [
        other
        for other in fitting
        if other.job.estimate <= latest or (beside - other.total) & guard == guard
    ]


def _past_head(
    plan: NodePlan | CountedPlan, reserved: int, now: int, fitting: list[Planned], guard: int
) -> list[Planned]:
    """Of the jobs whose total is free now, those :func:`backfill` would not turn away
    at once beside the head's reservation, held in the plan at ``reserved``: those that
    end by then, or whose total is left then, summed over the nodes. The same test as
    backfill's, at C speed over a new list (a start query's forecast at 20,000 queued on
    1,024 nodes asked about 9,000 jobs a pass, most failing it)."""
    beside, latest = plan.aggregate.free_at(reserved) | guard, reserved - now
    return [
        other
        for other in fitting
        if other.job.estimate <= latest or (beside - other.total) & guard == guard
    ]


def _room_beside(plan: CountedPlan, window: Window, now: int) -> tuple[int, int]:
    """What is free beside the head's ``window`` (not booked) at its start, packed, and
    how long a job started at ``now`` may run before it: a job that runs no longer
    needs no room beside it. On a plan of running jobs only, room only comes back as
    time goes on, so what a job needs is free during its whole window exactly when it
    is free now and, if it runs past the head's start, free beside the head then."""
    reserved, _, held = window
    return plan.aggregate.free_at(reserved) - held, reserved - now


def backfill(
    policy: NodeSchedule,
    head: Planned,
    reserved: int,
    now: int,
    started: list[Start],
    candidates: list[Planned],
    first: int = 0,
    window: Window | None = None,
) -> None:
    """Start now every job of ``candidates`` from ``first`` on that has a placement for
    its whole estimate beside the ``head``'s reservation (held in the plan at
    ``reserved``, or, on a counted plan, its ``window``: the room beside it, kept as
    jobs start, see :func:`_room_beside`), in order.

    Four exact shortcuts, as the plan only fills during the pass: once nothing is free
    now, no job can start (every job asks for something: most of a trace's passes
    ended so, asking the rest of their list one by one); a job whose total does not
    fit in what is free now cannot start (one packed test); nor can one that
    runs past the head's start if its total does not fit in what is left then, summed
    over the nodes (it would hold its room then too; a start query's forecast at
    20,000 queued on 1,024 nodes asked about 9,000 jobs a pass, most failing so); and
    a job that asks for no more than one that already failed to be placed, slot for
    slot (the same slot and node terms, no more slots, no longer estimate), fails too.
    The test is made as each job is reached, with the head the pass has now: a list
    kept from a stopped pass may have been built under another head.

    Deferred (the daemon), the pass stops once ``pass_stop()`` says so, after one
    question at least, and the next pass goes on from the job it stopped at (as
    Slurm's backfill continues): a deep queue is walked over several batches, and
    the jobs before that one wait for the pass after (EASY promises nothing). The
    list and where it stopped are kept for that pass (``backfill_rest``); a job of it
    that is no longer waiting, or is the head now, is skipped."""
    guard = policy.space.guard
    free_now = policy.plan.aggregate.free_at(now) | guard
    failed: dict[tuple[int, int | None, bool], FailureFront] = {}
    stop = policy.pass_stop if policy.deferred else None
    asked = False
    plan = policy.plan
    capacity = 0
    counted = False
    if window is not None and isinstance(plan, CountedPlan):
        counted = True  # (answered from the room beside the head: no question to the plan)
        beside, latest = _room_beside(plan, window, now)
        capacity = plan.node_capacity
    else:  # the head's reservation is held in the plan: what is left at its start
        beside, latest = plan.aggregate.free_at(reserved), reserved - now
    waiting, parked = policy.waiting, policy.parked
    for position in range(first, len(candidates)):
        other = candidates[position]
        if asked and stop is not None and stop():
            policy.backfill_resume = other.job.id
            policy.backfill_rest = (candidates, position)
            return
        if first and (
            other is head or waiting.get(other.job.id) is not other or other.job.id in parked
        ):
            continue  # (a list kept from a stopped pass)
        shape, estimate = other.shape, other.job.estimate
        if (free_now - other.total) & guard != guard:
            continue
        if not counted and estimate > latest and ((beside | guard) - other.total) & guard != guard:
            continue  # it runs past the head's start, where too little is left in total
        terms = (other.demand, shape.nodes, shape.exclusive)
        front = failed.get(terms)
        if front is not None and front.covers(shape.count, estimate):
            continue
        asked = True
        placement: Placement | None
        if not counted:
            placement = plan.place(shape, other.demand, now, estimate)
        elif estimate <= latest or ((beside | guard) - other.total) & guard == guard:
            placement = {TENTATIVE: other.total // capacity}
        else:
            placement = None
        if placement is None:
            if front is None:
                front = failed[terms] = FailureFront()
            front.add(shape.count, estimate)
            continue
        reason = f"backfilled beside the head's reservation at {at(reserved)}"
        started.append(policy._launch(other, now, placement, reason))
        free_now = policy.plan.aggregate.free_at(now) | guard
        if free_now == guard:
            return  # nothing is free now, and every job asks for something
        if estimate > latest:
            beside -= other.total  # (it holds its room at the head's start too)


def idle_since(policy: NodeSchedule, head: Planned) -> list[Planned] | None:
    """After a pass that started nothing, with the head still unable to start now: the
    jobs that need asking, those queued since (``[]``: none), or ``None`` when every
    job must be asked (the plan changed, the head changed, a pass stopped midway).

    Exact, as the pool's EASY's memo is: between two passes with no reservation taken
    or given back, the running jobs are the same ones (one that ends gives its room
    back), each still holding its nodes at ``now`` and until its planned end, and the
    head's reservation would hold the same nodes from the same start (which is still
    to come: the head did not start). A job's window from a later ``now`` meets every
    running job its earlier window met, at its start, and at least as much of the
    head's reservation: a job with no placement then has none now. Jobs queued since
    were never asked."""
    memo = policy.idle_pass
    if memo is None or policy.backfill_resume is not None:
        return None
    changes, head_id, parked, last = memo
    if (changes, head_id, parked) != (policy.plan.changes, head.job.id, len(policy.parked)):
        return None
    if last not in policy.waiting:
        return None
    return queued_after(policy.waiting, last)


def remember_idle(policy: NodeSchedule, head: Planned, idle: bool) -> None:
    """After a pass: remember it if it started nothing and asked every job it had to
    (it did not stop midway, nor go on from a stopped one), else forget."""
    if not idle or not policy.waiting:
        policy.idle_pass = None
        return
    last = next(reversed(policy.waiting))
    policy.idle_pass = (policy.plan.changes, head.job.id, len(policy.parked), last)
