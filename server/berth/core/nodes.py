"""A plan of every node's free resources over time, and where a shape fits first.

Jobs ask for :class:`~berth.core.shapes.Shape` (slots on nodes).
:class:`NodePlan` keeps one availability :class:`~berth.core.profile.Profile` per node
plus aggregate profiles used as a filter: a start is only examined node by node when
the nodes that can hold one of the job's slots (all of them, or say only the GPU nodes)
have room together for the job's total in every step of its window (those summed
profiles and their upkeep: :mod:`berth.core.summed_rooms`). Candidate
starts are ``after`` and the ends of reservations (free resources only grow there).
A :class:`Placement` names how many slots each node holds. Pure: no clock, no I/O.

The search for a shape that shares nodes is :mod:`berth.core.node_search`, the block
index it prunes with :mod:`berth.core.node_blocks`; their invariant (no start is
skipped that a slower node-by-node search would find) is checked by the property
tests of the node planner. A new job's search begins at the bound that the searches
before it proved (:mod:`berth.core.start_floors`). A node's profile may be shared with
a fork of the plan until either changes it (copy on write, :meth:`NodePlan.fork`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Mapping, Sequence

from berth.core.node_blocks import BLOCKS_FROM, NodeBlocks
from berth.core.node_search import Instant as Instant
from berth.core.node_search import Placement as Placement
from berth.core.node_search import SearchStopped, Stop, choose_ranked, earliest_shared
from berth.core.profile import BOOK_NODES, HELD_OF, NativeProfile, Profile
from berth.core.profile_sets import forget_all_before
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape, slots_in
from berth.core.start_floors import StartFloors
from berth.core.summed_rooms import SummedRooms

#: How many (slot, count) pairs a plan keeps its nodes' slots at an instant for: the
#: head job's, and a few before it (a forecast's copy asks its own).
INSTANTS_KEPT = 4

#: What a job needs free for any start: the profile of the nodes that could hold its
#: slots, summed, and the job's total (packed).
Need = tuple[Profile, int]


class NodePlan(SummedRooms):
    """Every node's free resources over time, and where a shape fits first.

    ``capacities`` are the nodes' packed capacities in ``space`` (node order is the
    tie-break of every choice: first fit in that order).
    """

    __slots__ = ("_able_by_demand", "_blocks", "_ends", "_floors", "_groups", "_groups_of_node", "_instants", "_owned",
                 "_room_by_demand", "_sharing", "aggregate", "capacities", "changes", "grows_only",
                 "guard", "profiles", "space")  # fmt: skip

    #: Whether :meth:`earlier` only looks at room before the reservation's start: no,
    #: a placement on other nodes needs room for the whole window.
    looks_before_start = False

    def __init__(self, space: ResourceSpace, capacities: Sequence[int], origin: int) -> None:
        self.space = space
        self.guard = space.guard
        self.capacities = list(capacities)
        self.profiles = [Profile(cap, space.guard, origin) for cap in self.capacities]
        #: Copy on write: a node's profile may be shared with a fork (``_owned[i]`` 0)
        #: until either plan changes it; ``_sharing`` says whether any may be.
        self._owned = bytearray(b"\x01") * len(self.capacities)
        self._sharing = False
        #: Per (slot, count): each node's slots at an instant and the step they hold
        #: over, kept until the node changes (:meth:`instant_slots`).
        self._instants: dict[tuple[int, int], list[Instant | None]] = {}
        self.aggregate = Profile(sum(self.capacities), space.guard, origin)
        self._ends: list[int] = []  # end of every reservation, sorted (a multiset)
        self._able_by_demand: dict[int, list[int]] = {}
        # Sums of the profiles of the nodes able to hold a slot, for slots that only some
        # nodes can hold (a GPU slot): a far sharper filter for them than the aggregate.
        self._groups: dict[tuple[int, ...], Profile] = {}
        self._groups_of_node: list[list[Profile]] = [[] for _ in self.capacities]
        self._room_by_demand: dict[int, Profile] = {}
        #: Bounds on new searches' starts from the searches before (while room is only
        #: taken): a deep plan's prefix is not walked again by every submission.
        self._floors = StartFloors()
        #: Bumped by every reservation taken or given back: a pass that found nothing
        #: to do knows the plan is the same when this is (EASY's idle pass).
        self.changes = 0
        #: Whether the plan holds running jobs only when a start is searched (EASY's and
        #: FCFS's: the policy says so), so that free room only grows from the present on
        #: and a window holds what its first instant holds: the searches count slots at
        #: one instant (:meth:`Profile.copies_from`) instead of over each window.
        self.grows_only = False
        #: On a large cluster, nodes in blocks whose sums prune the node-by-node scans.
        self._blocks = (
            NodeBlocks(self.capacities, space.guard, origin)
            if len(self.capacities) >= BLOCKS_FROM
            else None
        )

    def fork(self) -> NodePlan:
        """An independent copy, far cheaper than a deep copy (a forecast takes one): the
        node profiles shared until either plan changes one (:meth:`_own`), the summed
        profiles copied, what depends only on the capacities shared. Copying every
        node's profile took 10-16 ms on 4,096 nodes, in the read that wanted a forecast,
        and as long again to free them when the next forecast replaced it."""
        twin = NodePlan.__new__(NodePlan)
        twin.space, twin.guard, twin.capacities = self.space, self.guard, self.capacities
        twin.profiles = self.profiles.copy()
        self._owned = bytearray(len(self.capacities))
        twin._owned = bytearray(len(self.capacities))
        self._sharing = twin._sharing = True
        twin._instants = {}
        twin._floors = StartFloors()
        twin.aggregate = self.aggregate.copy()
        twin._ends = self._ends.copy()
        twin._able_by_demand = self._able_by_demand  # a function of the capacities
        copies = {id(group): group.copy() for group in self._groups.values()}
        copies[id(self.aggregate)] = twin.aggregate
        twin._groups = {able: copies[id(group)] for able, group in self._groups.items()}
        twin._groups_of_node = [[copies[id(g)] for g in groups] for groups in self._groups_of_node]
        twin._room_by_demand = {d: copies[id(room)] for d, room in self._room_by_demand.items()}
        twin._blocks = None if self._blocks is None else self._blocks.fork()
        twin.changes = self.changes
        twin.grows_only = self.grows_only
        return twin

    def place(self, shape: Shape, demand: int, start: int, duration: int) -> Placement | None:
        """Where ``shape`` (``demand`` = its packed slot) fits during ``[start, start +
        duration)``, or ``None``."""
        total = demand * shape.count
        if not shape.exclusive and not self._room(demand).fits_during(total, start, duration):
            return None
        return self._place_on_nodes(shape, demand, start, duration)

    def _place_on_nodes(
        self, shape: Shape, demand: int, start: int, duration: int
    ) -> Placement | None:
        """:meth:`place` once the aggregate check has passed (or is moot: exclusive)."""
        end = start + duration
        room: list[tuple[int, int]] = []  # (node, slots it holds)
        profiles = self.profiles
        for index in self._candidates(demand, start, duration):
            if shape.exclusive:
                steps = profiles[index].min_free(start, end)
                if any(free != self.capacities[index] for free in steps):
                    continue
                k = slots_in(self.capacities[index], demand, shape.count)
            else:
                k = profiles[index].copies_during(demand, start, end, shape.count)
            if k:
                room.append((index, k))
        if sum(k for _, k in room) < shape.count or (
            shape.nodes is not None and len(room) < shape.nodes
        ):
            return None
        return choose_ranked(self.profiles, room, shape, demand, start)

    def earliest(
        self,
        shape: Shape,
        demand: int,
        duration: int,
        after: int,
        limit: int | None = None,
        stop: Stop | None = None,
        before_nodes: Callable[[], None] | None = None,
    ) -> tuple[int, Placement] | None:
        """The earliest start ``>= after`` (and ``< limit`` if given) where ``shape`` fits
        for ``duration``, with its placement; ``None`` if there is none. With ``stop``,
        raises :class:`SearchStopped` once it says so (after one candidate at least).
        ``before_nodes`` is called once before any node's profile is read (first thing,
        unless a shape that shares nodes leaves them all unasked)."""
        if limit is not None or stop is not None or before_nodes is not None:
            # (compression's, on a plan given back for the search)
            return self._earliest(shape, demand, duration, after, limit, stop, before_nodes)
        kind = (demand, shape.nodes, shape.exclusive)
        lo, hi, floor = self._floors.floor(kind, shape.count, duration, after)
        found = None
        if lo < hi:
            found = self._earliest(shape, demand, duration, lo, hi, None, None)
        if found is None:
            found = self._earliest(shape, demand, duration, floor, None, None, None)
        if found is not None:
            self._floors.found(kind, shape.count, duration, after, found[0])
        return found

    def earliest_afresh(
        self, shape: Shape, demand: int, duration: int, after: int
    ) -> tuple[int, Placement] | None:
        """:meth:`earliest` without the bounds of earlier searches, and leaving none: a
        board that takes a thousand reservations out and places them again opens their
        holes faster than the bounds skip (QoPS admission on 256 nodes took 0.9x the
        time without them)."""
        return self._earliest(shape, demand, duration, after, None, None, None)

    def _earliest(
        self,
        shape: Shape,
        demand: int,
        duration: int,
        after: int,
        limit: int | None,
        stop: Stop | None,
        before_nodes: Callable[[], None] | None,
    ) -> tuple[int, Placement] | None:
        """:meth:`earliest` without the bounds of earlier searches."""
        ends = self._ends
        if not shape.exclusive:
            return earliest_shared(self, shape, demand, duration, after, limit, stop, before_nodes)
        if before_nodes is not None:
            before_nodes()
        last = len(ends) if limit is None else bisect_left(ends, limit)
        candidates = [after, *ends[bisect_right(ends, after) : last]]
        previous = None
        for start in candidates:
            if start == previous or (limit is not None and start >= limit):
                continue
            if previous is not None and stop is not None and stop():
                raise SearchStopped(start)
            previous = start
            placement = self.place(shape, demand, start, duration)
            if placement is not None:
                return start, placement
        return None

    def need(self, shape: Shape, demand: int) -> Need | None:
        """What the nodes that can hold a slot of ``shape`` must have free together during
        any of its windows: their summed profile and the job's total, unless it takes
        whole nodes of unequal sizes (then ``None``)."""
        return None if shape.exclusive else (self._room(demand), demand * shape.count)

    def earlier(
        self,
        shape: Shape,
        demand: int,
        duration: int,
        first: int,
        current: int,
        held: dict[int, int],
        before: int | None = None,
        stop: Stop | None = None,
    ) -> tuple[int, Placement] | None:
        """For a reservation at ``current`` holding ``held``: its earliest start before
        ``current`` and a placement there, with ``held`` given back (the caller reserves
        the new placement); ``None``, and the plan unchanged, if there is none. No start
        before ``first`` can hold it (the caller asked the job's summed profile, or
        passes the present), and none from ``before`` on is new (the caller knows).
        ``stop``: see :meth:`earliest` (the plan is left unchanged when it stops).

        Most reservations cannot move, so only the blocks give ``held`` back before the
        search (they prune the nodes). The summed profiles are asked with windows cut
        at the start being moved, before which the reservation holds nothing, and the
        reservation's end is no candidate earlier than that start: they give it back
        only once the move is found. The nodes' own profiles give it back once the
        search reaches them (``give_back``): most searches end on the blocks' bound, and
        a wide job gave back and took again its room on each of its nodes for nothing
        (a conservative replay of 800 jobs on 1,024 nodes: 0.89x the time)."""
        profiles = self.profiles
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            given_back = True
            self._changing(held)
            for index, amount in held.items():
                profiles[index].release(current, duration, amount)

        blocks = self._blocks
        if blocks is not None:  # they prune nodes, so they give it back like the nodes
            blocks.add(held, current, current + duration, 1)
        # A start must also be earlier than ``before``; cutting the summed profiles'
        # window there too only weakens their (necessary) test.
        limit = current if before is None else min(current, before)
        try:
            found = self.earliest(shape, demand, duration, first, limit, stop, give_back)
        except SearchStopped:
            self._hold_again(held, current, duration, given_back)
            raise
        if found is None:
            self._hold_again(held, current, duration, given_back)
        else:
            assert given_back, "a placement was found on the nodes"
            self.changes += 1
            self._floors.given_back(current, current + duration)
            self._add_summed(held, current, duration, 1)
            self._drop_end(current + duration)
        return found

    def _hold_again(
        self, held: dict[int, int], current: int, duration: int, on_nodes: bool
    ) -> None:
        """Undo :meth:`earlier`'s giving back of ``held`` (no earlier start, or stopped):
        in the blocks, and on the nodes if it reached them (``on_nodes``)."""
        if on_nodes:
            self._changing(held)  # (owned already; but a search may have read them)
            profiles = self.profiles
            for index, amount in held.items():
                profiles[index].reserve(current, duration, amount)
        if self._blocks is not None:
            self._blocks.add(held, current, current + duration, -1)

    def _able(self, demand: int) -> list[int]:
        """The nodes whose capacity holds at least one slot of ``demand`` (a GPU slot
        only GPU nodes), in node order; cached per slot."""
        able = self._able_by_demand.get(demand)
        if able is None:
            able = [i for i, cap in enumerate(self.capacities) if slots_in(cap, demand, 1)]
            self._able_by_demand[demand] = able
        return able

    def _candidates(self, demand: int, start: int, duration: int) -> list[int]:
        """The nodes able to hold a slot of ``demand`` that may hold one during ``[start,
        start + duration)``, in node order: all of them, less the blocks whose summed
        profile lacks ``demand`` in some step of the window."""
        blocks = self._blocks
        able = self._able(demand)
        if blocks is None:
            return able
        nodes: list[int] = []
        for block, members in blocks.of_able(demand, able):
            if block.fits_during(demand, start, duration):
                nodes += members
        return nodes

    def held(self, placement: Placement, demand: int, exclusive: bool) -> dict[int, int]:
        """What a placement holds per node (packed): its slots, or the whole node."""
        if exclusive:
            return {index: self.capacities[index] for index in placement}
        if HELD_OF is not None:
            return HELD_OF(placement, demand)
        return {index: demand * slots for index, slots in placement.items()}

    def reserve(self, held: Mapping[int, int], start: int, duration: int) -> None:
        """Take ``held`` (packed amount per node) during ``[start, start + duration)``."""
        self.changes += 1
        self._changing(held)
        self._book(held, start, duration, -1)
        insort(self._ends, start + duration)

    def release(self, held: Mapping[int, int], start: int, duration: int) -> None:
        """Give back what :meth:`reserve` took, from ``start`` on (a later start than the
        reservation's gives back the rest of it; the end is the same)."""
        self.changes += 1  # a job that ended at its planned end changes the plan too
        if duration <= 0:
            return  # nothing left to give back; forget_before drops the end
        self._floors.given_back(start, start + duration)
        self._changing(held)
        self._book(held, start, duration, 1)
        self._drop_end(start + duration)

    def _book(self, held: Mapping[int, int], start: int, duration: int, sign: int) -> None:
        """Give back (``sign`` 1) or take (-1) ``held`` on its nodes, in the summed
        profiles and in the blocks: in one C call on C profiles (a dict of exactly
        ``int`` amounts, as the plan's own ``held`` is), else method by method."""
        blocks = self._blocks
        if (
            BOOK_NODES is not None
            and isinstance(self.aggregate, NativeProfile)
            and type(held) is dict
        ):
            BOOK_NODES(
                self.profiles,
                held,
                start,
                start + duration,
                sign,
                self.aggregate,
                None if blocks is None else blocks.profiles,
                None if blocks is None else blocks.block_of,
            )
            if self._groups:
                self._add_groups(held, start, duration, sign)
            return
        profiles = self.profiles
        if sign < 0:
            for index, amount in held.items():
                profiles[index].reserve(start, duration, amount)
        else:
            for index, amount in held.items():
                profiles[index].release(start, duration, amount)
        self._add_summed(held, start, duration, sign)
        if blocks is not None:
            blocks.add(held, start, start + duration, sign)

    def _drop_end(self, end: int) -> None:
        ends = self._ends
        at = bisect_left(ends, end)
        if at < len(ends) and ends[at] == end:
            del ends[at]

    def pin(
        self, placement: Placement, held: dict[int, int], shape: Shape, demand: int, now: int
    ) -> tuple[Placement, dict[int, int]]:
        """A reservation starting at ``now`` keeps the nodes it was planned on (a
        :class:`~berth.core.whole_nodes.CountedPlan` names them only then)."""
        return placement, held

    def names(self, held: Mapping[int, int]) -> dict[int, int]:
        """What ``held`` holds per node (it names its nodes already)."""
        return dict(held)

    def instant_slots(self, demand: int, count: int) -> list[Instant | None]:
        """Per node, its slots of ``demand`` (at most ``count``) free at an instant and
        the step ``[since, until)`` that holds them, as a search of a plan that only
        grows asked them (``None``: not asked since the node last changed). A head
        job's search on 4,096 nodes asked every node at every pass, though most had
        not changed since the pass before."""
        key = (demand, count)
        known = self._instants.get(key)
        if known is None:
            if len(self._instants) >= INSTANTS_KEPT:
                self._instants.clear()
            known = self._instants[key] = [None] * len(self.capacities)
        return known

    def _changing(self, nodes: Mapping[int, int]) -> None:
        """Before this plan changes the profiles of ``nodes``: its own copies of those
        it shares with a fork, and what was known of their slots forgotten."""
        if self._sharing:
            self._own(nodes)
        for known in self._instants.values():
            for index in nodes:
                known[index] = None

    def _own(self, nodes: Mapping[int, int]) -> None:
        """Before this plan changes the profiles of ``nodes``: a copy of its own of each
        it still shares with a fork (or a fork with it)."""
        owned, profiles = self._owned, self.profiles
        for index in nodes:
            if not owned[index]:
                profiles[index] = profiles[index].copy()
                owned[index] = 1

    def forget_before(self, now: int) -> None:
        # A fork may still ask about the past: a shared profile forgets on a copy.
        forget_all_before(self.profiles, now, self._owned if self._sharing else None)
        forget_all_before([self.aggregate, *self._groups.values()], now)
        if self._blocks is not None:
            self._blocks.forget_before(now)
        del self._ends[: bisect_right(self._ends, now)]
