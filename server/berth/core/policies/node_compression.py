"""Conservative compression on a node plan, whole or in slices.

When room is given back (a job ended early, was cancelled, or moved), each waiting job
may now start earlier. :func:`compress` moves each, in the policy's compression order
(arrival order; slack: its heuristic's), to its earliest placement before its current
start, in passes until none moves; it can stop between two questions, or inside one,
when the shell's ``stop()`` says so, and goes on from the same job at the next call (a
search stopped midway goes on from the start it had reached, if no room was given back
meanwhile), so the daemon compresses in bounded slices between commands while the
emulator compresses whole at every end. A reservation only ever moves earlier: a
compression not yet finished keeps every guarantee. Pure: no clock, no I/O (``stop``
is the shell's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from berth.core.node_search import SearchStopped
from berth.core.nodes import NodePlan
from berth.core.policies.node_schedule import NodeSchedule
from berth.core.room_log import Window
from berth.core.whole_nodes import CountedPlan


def compress(policy: NodeSchedule, now: int, stop: Callable[[], bool] | None = None) -> bool:
    """Whether the compression finished (``False``: ``stop()`` ended the slice first;
    the next call goes on from the job it stopped at).

    Each waiting job, in arrival order, to its earliest placement before its
    current start (kept where it is if there is none), in passes until no job
    moves: a job moved earlier can leave room where an earlier-arrived job, already
    passed over, now fits. The result is the same whatever the history, so a restart
    (which compresses the adopted queue afresh) finds the plan the live engine had.

    A job is only asked again when it may have a new answer: since it was last
    known to have no earlier start, plans only gained reservations and lost the
    windows in the room log, so a start that works now and did not then overlaps
    room given back since, on a node that can hold its slots (each job reads the
    log of those nodes: a GPU job is not asked again when a node without GPUs
    frees up; the answer depends on those nodes alone). Room given back only from
    the end of the job's reach on (its start, when the plan looks only before it,
    as a counted plan does; else its start plus its estimate) changes nothing, and
    a new start must be earlier than the latest end of that room. On a plan that
    names nodes, a new start also needs one of the nodes that gained room to have
    room for a slot then (:func:`first_on_given_back`). The same result as whole
    passes, for a fraction of the work.
    """
    # Moving a job writes on its entry, which a forecast's or a what-if's copy shares
    # with the live policy: such a copy never compresses (node_fork).
    assert not policy.shares_entries, "a copy sharing the live entries never compresses"
    whole_window = not policy.plan.looks_before_start
    resume, moved = policy.compress_resume
    policy.compress_resume = (None, False)
    entries, at = policy.compression_walk(resume)
    queued = policy.waiting
    asked = False
    while True:
        for index in range(at, len(entries)):
            entry = entries[index]
            checked = entry.checked
            log = entry.log
            assert log is not None
            if checked == log.size:
                continue  # nothing was given back since it was asked
            old = entry.start
            if old is None or queued.get(entry.job.id) is not entry:
                continue  # not reserved, or no longer queued (the walk keeps it)
            estimate = entry.job.estimate
            bound = None
            if checked >= 0:
                # Usually one completion since: its entry is the newest.
                earliest, bound = log.last if checked == log.size - 1 else log.since(checked)
                if earliest >= (old + estimate if whole_window else old):
                    entry.checked = log.size
                    continue
            if asked and stop is not None and stop():  # each slice asks one at least
                policy.compress_resume = (entry.job.id, moved)
                return False
            asked = True
            ready = entry.job.ready(now)
            if ready >= old:
                entry.checked = log.size  # it may not start earlier (its dependencies)
                continue
            first: int | None = ready
            if entry.need is not None:
                # Necessary for any earlier start: the nodes that could hold it have
                # room together before ``old`` (from there on the job's own
                # reservation is its room). Most jobs fail it, and keep their
                # reservation untouched.
                summed, total = entry.need
                first = summed.earliest_start(total, estimate, ready, old, bound)
            searched, entry.searched = entry.searched, None
            if searched is not None and first is not None and searched[0] == log.size:
                first = max(first, searched[1])  # nothing was given back since
            if first is not None and whole_window and checked >= 0:
                windows = log.windows_since(checked)  # (None: too many to read)
                if windows is not None:
                    first = first_on_given_back(
                        policy.plan, entry.demand, estimate, windows, first, old
                    )
            if first is not None and (bound is None or first < bound):
                try:
                    moved = policy._move_earlier(entry, first, bound, stop) or moved
                except SearchStopped as stopped:  # the slice ended inside one search
                    policy.compress_resume = (entry.job.id, moved)
                    entry.searched = (log.size, stopped.at)
                    return False
            entry.checked = log.size
        if not moved:
            return True
        moved = False
        at = 0


def first_on_given_back(
    plan: NodePlan | CountedPlan,
    demand: int,
    estimate: int,
    windows: Sequence[Window],
    first: int,
    old: int,
) -> int | None:
    """For a job reserved at ``old`` (its slot ``demand``, its ``estimate``): the earliest
    start from ``first`` on, before ``old``, at which one of the nodes in ``windows``
    (room given back since the job was last asked) has room for one slot during the
    job's window, cut at ``old``, and that window meets the room given back there;
    ``None``: no start before ``old`` is new. ``first`` itself if the plan does not name
    nodes.

    Why it is a bound: when the job was last asked, no placement before ``old`` held
    it. Since then the plan lost room (reservations) and gained only the windows
    logged. So a placement that holds it now uses a node that gained room during its
    window, and that node has room for one slot during it (before ``old``: from there
    on the job's own reservation is its room, which the node's profile still holds).
    Most jobs fail it on the few nodes a completion freed, and keep their reservation
    without a search of the whole cluster."""
    if not isinstance(plan, NodePlan):
        return first
    profiles = plan.profiles
    best = old
    for since, until, nodes in windows:
        after = max(first, since - estimate + 1)  # the window reaches into the room
        before = min(until, best)  # and starts before it ends (and before the best yet)
        if after >= before:
            continue
        if not nodes:
            return first  # room given back on nodes not named: no bound from them
        for index in nodes:
            start = profiles[index].earliest_start(demand, estimate, after, old, before)
            if start is not None:
                best = before = start
                if after >= before:
                    break
    return None if best == old else best
