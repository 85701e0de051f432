"""The earliest start of a shape that shares nodes, on a :class:`~berth.core.nodes.NodePlan`.

Only starts where the nodes able to hold a slot have room together (their summed
profile) are candidates; blocks of nodes whose sum lacks one slot are left unasked;
each node's answer holds until a known later start, so a heap says which nodes to ask
again at the next candidate (a node with no room at a start is asked when that may
change only if the search goes on past it); among the nodes with room at the start
found, the ones with the least room just before it are chosen first
(:func:`choose_ranked`). The plan's module keeps its state and bookings; this one is
the search that reads them, as a friend of the plan (one algorithm, cut in two for
size). On C profiles, for plans that count windows over their length, the same search
runs in C (``_profile_search.h``, :data:`NATIVE_SEARCH`); this one is its reference
(``tests/property/test_native_plans.py`` compares the plans) and the path for the rest.
Pure: no clock, no I/O.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from berth.core import profile as _profiles
from berth.core.profile import Profile

if TYPE_CHECKING:
    from berth.core.node_blocks import NodeBlocks
    from berth.core.shapes import Shape


#: Steps of a block's summed profile read to find when it may hold a slot, before the
#: search takes the time reached as a bound and asks the block again there.
BLOCK_STEPS = 64

#: The search in C (``_profile_search.h``), for plans of C profiles whose windows are
#: counted over their length; ``None``: this module's search for every plan (the tests
#: set it so to compare the two).
NATIVE_SEARCH = _profiles.NATIVE_SEARCH
#: The C profile's class (a class of no profile where it is not built).
NativeProfile = _profiles.NativeProfile

#: A search's ``stop()``: whether the caller's slice of time is over.
Stop = Callable[[], bool]


#: A placement: node index -> slots held there.
Placement = dict[int, int]

#: A node's slots at an instant of a plan that only grows, and the step that holds
#: them: ``(slots, since, until)`` (:meth:`Profile.slots_at`).
Instant = tuple[int, int, int]


class SearchedPlan(Protocol):
    """What the search reads of a plan (:class:`~berth.core.nodes.NodePlan`): its node
    profiles, reservation ends, summed profiles, blocks and what it knows of each
    node's slots at an instant."""

    profiles: list[Profile]
    grows_only: bool
    _ends: list[int]
    _blocks: NodeBlocks | None

    def _able(self, demand: int) -> list[int]: ...

    def _room(self, demand: int) -> Profile: ...

    def instant_slots(self, demand: int, count: int) -> list[Instant | None]: ...


class SearchStopped(Exception):
    """A search for an earlier start stopped by its caller's ``stop()`` before an
    answer: no start before ``at`` holds the job (on the plan as it was); a search
    asked again from ``at`` on the same plan gives the answer the whole one would."""

    def __init__(self, at: int) -> None:
        super().__init__(at)
        self.at = at


def earliest_shared(
    plan: SearchedPlan,
    shape: Shape,
    demand: int,
    duration: int,
    after: int,
    limit: int | None,
    stop: Stop | None = None,
    before_nodes: Callable[[], None] | None = None,
) -> tuple[int, Placement] | None:
    """:meth:`NodePlan.earliest` for a shape that shares nodes. Only starts where the nodes
    able to hold a slot have room together for the job's total during its window can
    hold it (a necessary condition), so their summed profile jumps from one such
    start to the next; the nodes are examined only there. The starts tried are the
    same as testing every candidate in turn (``after`` and reservation ends): the
    summed profile's first fit from a candidate on is that candidate or a later
    end, because free resources only grow at ends; and after a start where the
    nodes fail, the candidates before the first change of any node's answer fail
    alike. ``before_nodes`` is called once, before the first node's profile is read
    (see :meth:`NodePlan.earlier`)."""
    if not plan._able(demand):
        return None  # no node holds a slot (a policy refuses such a job before)
    ends = plan._ends
    total = demand * shape.count
    summed = plan._room(demand)
    if NATIVE_SEARCH is not None and not plan.grows_only and isinstance(summed, NativeProfile):
        blocks, able = plan._blocks, plan._able(demand)
        found = NATIVE_SEARCH(
            plan.profiles,
            able,
            None if blocks is None else blocks.of_able(demand, able),
            summed,
            ends,
            demand,
            total,
            shape.count,
            shape.nodes or 0,
            duration,
            after,
            limit,
            stop,
            before_nodes,
            BLOCK_STEPS,
        )
        if isinstance(found, int):
            raise SearchStopped(found)
        return found  # type: ignore[return-value]
    profiles = plan.profiles
    count = shape.count
    # Where the nodes have room together: found by bisection in a plan that only grows.
    first_room = summed.earliest_growing if plan.grows_only else summed.earliest_start
    start = first_room(total, duration, after, limit)
    if start is None:
        return None
    blocks = plan._blocks
    if blocks is not None:
        able_blocks = blocks.of_able(demand, plan._able(demand))
        floor = blocks.floor(
            able_blocks, demand, count, duration, start, limit, ends, stop, plan.grows_only
        )
        if floor is None:
            return None
        if stop is not None and floor > start and stop():
            raise SearchStopped(floor)
        start = floor
    if before_nodes is not None:
        before_nodes()
    # Each node's slots, valid until a later start (``copies_until``); a heap of
    # those times says which nodes to ask again at the next start, so a start costs
    # the nodes whose answer may have changed, not every node.
    # A block of nodes (``index`` -1 - its position) whose sum has no room for one
    # slot is left unasked until its sum has: none of its nodes holds one before.
    slots: dict[int, int] = {}
    due: list[tuple[int, int]] = []
    # Slots per node at a start: over its window; or, in a plan that only grows, at its
    # first instant, as known from an earlier search while the node has not changed.
    known = plan.instant_slots(demand, count) if plan.grows_only else None

    def ask(index: int, at: int) -> tuple[int, int]:
        if known is None:
            return profiles[index].copies_until(demand, at, duration, count, limit)
        entry = known[index]
        if entry is None or not entry[1] <= at < entry[2]:
            entry = known[index] = profiles[index].slots_at(demand, at, count)
        return entry[0], entry[2]

    if blocks is None:
        nodes = plan._able(demand)
        asked: list[tuple[Profile, list[int]]] = []
    else:
        nodes = []
        asked = []
        for block, members in able_blocks:
            free_from = block.earliest_or_bound(demand, duration, start, BLOCK_STEPS)
            if free_from == start:
                nodes += members
            else:
                due.append((free_from, -1 - len(asked)))
                asked.append((block, members))
    # A node with no room at a start holds no slot there, whatever its window; when
    # its next chance comes (its ``until``, the costly part of asking: a walk to a run
    # of room long enough) matters only if the search goes on past this start, so it
    # is asked then (``deferred``): at the start found, most nodes asked had none. Not
    # for a search with a ``limit`` (compression's, which mostly finds no start: the
    # test would only add to the asking).
    deferred: list[int] = []
    lazy = known is None and limit is None
    if known is None:
        for index in nodes:
            if lazy and not profiles[index].fits_during(demand, start, 1):
                slots[index] = 0
                deferred.append(index)
                continue
            k, until = ask(index, start)
            slots[index] = k
            due.append((until, index))
    else:  # (the same, inlined: every node of a large cluster comes through here)
        for index in nodes:
            entry = known[index]
            if entry is None or not entry[1] <= start < entry[2]:
                entry = known[index] = profiles[index].slots_at(demand, start, count)
            slots[index] = entry[0]
            due.append((entry[2], index))
    heapq.heapify(due)
    held = sum(slots.values())
    nodes_with_room = sum(1 for k in slots.values() if k)
    while True:
        while due and due[0][0] <= start:
            index = due[0][1]
            if index < 0:  # a block's sum may have room from now on
                block, members = asked[-1 - index]
                free_from = block.earliest_or_bound(demand, duration, start, BLOCK_STEPS)
                if free_from > start:  # not yet (its time was a bound): ask again then
                    heapq.heapreplace(due, (free_from, index))
                    continue
                heapq.heappop(due)
                for member in members:
                    if lazy and not profiles[member].fits_during(demand, start, 1):
                        slots[member] = 0
                        deferred.append(member)
                        continue
                    k, until = ask(member, start)
                    slots[member] = k
                    held += k
                    nodes_with_room += k > 0
                    heapq.heappush(due, (until, member))
                continue
            if lazy and not profiles[index].fits_during(demand, start, 1):
                held -= slots[index]
                nodes_with_room -= slots[index] > 0
                slots[index] = 0
                deferred.append(index)
                heapq.heappop(due)
                continue
            k, until = ask(index, start)
            held += k - slots[index]
            nodes_with_room += (k > 0) - (slots[index] > 0)
            slots[index] = k
            heapq.heapreplace(due, (until, index))
        if held >= count and (shape.nodes is None or nodes_with_room >= shape.nodes):
            room = [(index, k) for index, k in slots.items() if k]
            placement = choose_ranked(profiles, room, shape, demand, start, known)
            if placement is not None:
                return start, placement
        for index in deferred:  # (none at ``start``: when may that change?)
            heapq.heappush(due, (ask(index, start)[1], index))
        deferred.clear()
        # No candidate before the soonest change of a node's answer can differ.
        at = bisect_left(ends, due[0][0]) if due else len(ends)
        if at == len(ends) or (limit is not None and ends[at] >= limit):
            return None
        if stop is not None and stop():
            raise SearchStopped(ends[at])
        start = first_room(total, duration, ends[at], limit)
        if start is None:
            return None


def choose_ranked(
    profiles: list[Profile],
    room: list[tuple[int, int]],
    shape: Shape,
    demand: int,
    start: int,
    known: list[Instant | None] | None = None,
) -> Placement | None:
    """:func:`_choose` among the nodes with room, best fit in time: nodes with the
    least room just before ``start`` first (those that free up at ``start``, or are
    fullest now), so nodes idle before a reservation stay open for backfilling;
    node order breaks ties. ``known`` (:meth:`NodePlan.instant_slots`, each node's entry
    holding at ``start``) gives a node's room before ``start`` when its step began
    earlier."""
    count = shape.count
    before = start - 1
    ranked = []
    for index, k in room:
        entry = None if known is None else known[index]
        if entry is not None and entry[1] <= before:
            ranked.append((entry[0], index, k))
        else:  # (the copies free at ``before``: one call, no packed vector made)
            ranked.append((profiles[index].slots_at(demand, before, count)[0], index, k))
    ranked.sort()
    return _choose([(index, k) for _, index, k in ranked], shape)


def _choose(room: list[tuple[int, int]], shape: Shape) -> Placement | None:
    """Slots per node from what each node can hold (in node order), or ``None``.

    ``room`` is in preference order. Without a node count: first fit in that order.
    With ``nodes`` = N: the N nodes that hold the most (ties in preference order), one
    slot each first, then filled in preference order.
    """
    count = shape.count
    if shape.nodes is None:
        placement: Placement = {}
        for index, k in room:
            take = min(k, count)
            placement[index] = take
            count -= take
            if count == 0:
                return placement
        return None
    if len(room) < shape.nodes:
        return None
    chosen = sorted(room, key=lambda r: -r[1])[: shape.nodes]  # stable: keeps preference
    if sum(k for _, k in chosen) < count:
        return None
    placement = {index: 1 for index, _ in chosen}
    count -= shape.nodes
    for index, k in chosen:
        take = min(k - 1, count)
        placement[index] += take
        count -= take
    return placement
