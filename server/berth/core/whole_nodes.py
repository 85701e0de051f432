"""Whole identical nodes: an exact plan that counts nodes instead of naming them.

When every node of a plan is identical and every job takes whole nodes (exclusive, or
slots that fill a node exactly), a set of reservations fits on the nodes exactly when,
at every moment, the nodes they take do not outnumber the nodes there are: intervals on
identical machines can be given machines greedily in order of start (an interval
graph's chromatic number is its largest clique). So :class:`CountedPlan` plans on the
aggregate profile alone, one profile instead of one per node. It names nodes only when
a job starts (any nodes free at that moment: what remains is still colourable) and, to
show the plan, by colouring the reservations in order of start. A reservation not yet
named holds ``{TENTATIVE: amount}``. A job that does not take whole nodes ends the
counting: the policy rebuilds a :class:`~berth.core.nodes.NodePlan` from
:meth:`CountedPlan.colouring`. Pure: no clock, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.core.node_search import Stop
from berth.core.nodes import Need, Placement
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape, slots_in

#: The key of a reservation's nodes before they are named.
TENTATIVE = -1

_DAWN = -(1 << 62)
#: A reservation not booked (EASY's head's, asked about beside the others): from,
#: until, amount.
Window = tuple[int, int, int]


@dataclass(slots=True)
class _Booking:
    """One reservation: ``[start, end)`` on ``count`` nodes, named or not yet."""

    start: int
    end: int
    count: int
    held: Mapping[int, int]  # kept alive so that its id is never reused while booked
    order: int
    #: Its named nodes as bits (bit ``i``: node ``i``); 0 while not named.
    nodes: int = 0


def identical(capacities: Sequence[int]) -> bool:
    """Whether a counted plan is exact for these nodes: all alike, at least one."""
    return bool(capacities) and all(cap == capacities[0] for cap in capacities)


class CountedPlan:
    """The :class:`~berth.core.nodes.NodePlan` interface for identical nodes and jobs
    that take whole nodes (``nodes_taken`` is not ``None`` for every job booked)."""

    __slots__ = ("_bookings", "_busy", "_colours", "_every_node", "_extra", "_extra_nodes", "_fit_by_slots", "_order", "_taken_by_shape",
                 "aggregate",
                 "capacities", "changes", "guard", "node_capacity", "space")  # fmt: skip

    #: :meth:`earlier` only looks before the reservation's start: from there on its
    #: own nodes are its room.
    looks_before_start = True

    def __init__(self, space: ResourceSpace, capacities: Sequence[int], origin: int) -> None:
        assert identical(capacities), "a counted plan needs identical nodes"
        self.space = space
        self.guard = space.guard
        self.capacities = list(capacities)
        self.node_capacity = capacities[0]
        self.aggregate = Profile(sum(self.capacities), space.guard, origin)
        self._bookings: dict[int, _Booking] = {}  # id(held) -> booking
        # Nodes a named reservation holds, as bits (bit i: node i), and how many more
        # hold a node than one: a job that ran past its estimate still holds its nodes,
        # which the plan counts free and may name again (rare). Bits, not a heap of
        # idle nodes: giving back a job's nodes is one operation, not one per node.
        self._every_node = (1 << len(self.capacities)) - 1
        self._busy = 0
        self._extra: dict[int, int] = {}
        self._extra_nodes = 0
        self._order = 0
        self._colours: dict[int, list[int]] | None = None
        self._taken_by_shape: dict[tuple[int, int, int | None, bool], int | None] = {}
        self._fit_by_slots: dict[tuple[int, int], int] = {}  # (slot, count) -> per node
        #: Bumped by every booking taken, given back or named (:attr:`NodePlan.changes`).
        self.changes = 0

    def __deepcopy__(self, memo: dict[int, object]) -> CountedPlan:
        """A copy whose bookings are keyed by the copies of their held dicts (the
        copies the copied policy holds, through ``memo``)."""
        twin = CountedPlan.__new__(CountedPlan)
        memo[id(self)] = twin
        for name in self.__slots__:
            setattr(twin, name, copy.deepcopy(getattr(self, name), memo))
        twin._bookings = {id(b.held): b for b in twin._bookings.values()}
        twin._colours = None
        return twin

    def nodes_taken(self, shape: Shape, demand: int) -> int | None:
        """How many whole nodes ``shape`` takes, or ``None`` if it would share one."""
        fit = slots_in(self.node_capacity, demand, shape.count)
        if fit == 0:
            return None
        if shape.exclusive:
            return shape.nodes if shape.nodes is not None else -(-shape.count // fit)
        if demand * fit != self.node_capacity or shape.count % fit:
            return None  # room is left on a node, or a node is only partly filled
        taken = shape.count // fit
        return taken if shape.nodes in (None, taken) else None

    def earliest(
        self, shape: Shape, demand: int, duration: int, after: int, limit: int | None = None
    ) -> tuple[int, Placement] | None:
        taken = self._taken(shape, demand)
        start = self.aggregate.earliest_start(taken * self.node_capacity, duration, after, limit)
        return None if start is None else (start, {TENTATIVE: taken})

    #: (Counted nodes keep no bounds of earlier searches: see NodePlan.earliest_afresh.)
    earliest_afresh = earliest

    def place(self, shape: Shape, demand: int, start: int, duration: int) -> Placement | None:
        taken = self._taken(shape, demand)
        if self.aggregate.fits_during(taken * self.node_capacity, start, duration):
            return {TENTATIVE: taken}
        return None

    def amount(self, shape: Shape, demand: int) -> int:
        """What a reservation of ``shape`` holds in the aggregate profile."""
        return self._taken(shape, demand) * self.node_capacity

    def need(self, shape: Shape, demand: int) -> Need | None:
        """What the whole cluster must have free during any window of ``shape``: the
        nodes it takes (with counted nodes, also enough); ``None`` if it would share."""
        taken = self._whole(shape, demand)
        return None if taken is None else (self.aggregate, taken * self.node_capacity)

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
        """:meth:`NodePlan.earlier`. With counted nodes ``first`` must be the aggregate
        profile's answer (for the reservation's :meth:`need`, up to ``current``): it is
        exact, so the reservation moves there (no search: ``stop`` is not needed)."""
        self.release(held, current, duration)
        return first, {TENTATIVE: self._taken(shape, demand)}

    def move(self, held: Mapping[int, int], current: int, first: int, duration: int) -> None:
        """Move a reservation not yet named from ``current`` to ``first``, earlier (the
        aggregate profile's answer, exact with counted nodes), keeping ``held``: what
        :meth:`earlier` and :meth:`reserve` do, with only the parts of the two windows
        that do not overlap changed in the profile (compression moves a million
        reservations in a replay of a real trace)."""
        assert first < current, "a reservation only moves earlier"
        self.changes += 1
        amount, end = sum(held.values()), first + duration
        add = self.aggregate.add
        if end <= current:  # the windows do not meet
            add(current, current + duration, amount)
            add(first, end, -amount)
        else:
            add(end, current + duration, amount)
            add(first, current, -amount)
        booking = self._bookings[id(held)]
        self._order += 1  # (a new booking's order, as giving back and taking again gives)
        booking.start, booking.end, booking.order = first, end, self._order
        self._colours = None

    def held(self, placement: Placement, demand: int, exclusive: bool) -> dict[int, int]:
        if TENTATIVE in placement:
            return {TENTATIVE: placement[TENTATIVE] * self.node_capacity}
        return dict.fromkeys(placement, self.node_capacity)

    def reserve(self, held: Mapping[int, int], start: int, duration: int) -> None:
        self.changes += 1
        amount = sum(held.values())
        self.aggregate.reserve(start, duration, amount)
        end = start + duration
        if TENTATIVE in held:
            count, nodes = held[TENTATIVE] // self.node_capacity, 0
        else:
            count, nodes = len(held), self._name(sum(1 << index for index in held))
        self._order += 1
        self._bookings[id(held)] = _Booking(start, end, count, held, self._order, nodes)
        self._colours = None

    def release(self, held: Mapping[int, int], start: int, duration: int) -> None:
        """Give back a reservation from ``start`` on; it ends its booking."""
        self.changes += 1
        if duration > 0:
            self.aggregate.release(start, duration, sum(held.values()))
        booking = self._bookings.pop(id(held), None)
        if booking is None:
            return  # taken over after its end: it was never booked
        nodes = booking.nodes
        if nodes:
            still = nodes & self._extra_nodes  # (nodes another named reservation holds too)
            if still:
                self._unshare(still)
            self._busy &= ~(nodes ^ still)
        self._colours = None

    def summed_over(self, held: Mapping[int, int]) -> list[Profile]:
        """:meth:`NodePlan.summed_over`: the aggregate is the only summed profile."""
        return [self.aggregate]

    def forget_before(self, now: int) -> None:
        self.aggregate.forget_before(now)

    def pin(
        self, placement: Placement, held: dict[int, int], shape: Shape, demand: int, now: int
    ) -> tuple[Placement, dict[int, int]]:
        """Name the nodes of a reservation that starts at ``now``: the first nodes that
        no named reservation holds then."""
        if TENTATIVE not in held:
            return placement, held
        self.changes += 1
        booking = self._bookings.pop(id(held))
        # The same amount over the same window: the aggregate profile does not change.
        named, named_held, booking.nodes = self._name_idle(booking.count, shape, demand, now)
        booking.held = named_held
        self._bookings[id(named_held)] = booking
        self._colours = None
        return named, named_held

    def start_now(
        self, placement: Placement, shape: Shape, demand: int, now: int, duration: int
    ) -> tuple[Placement, dict[int, int]]:
        """:meth:`reserve` and :meth:`pin` in one step, for a job that starts at ``now``
        on ``placement`` (a count of nodes, or named ones): the booking is made on the
        nodes it names, with no tentative booking taken and popped again (EASY starts
        most jobs it places this way)."""
        taken = placement.get(TENTATIVE)
        if taken is None:
            held = self.held(placement, demand, shape.exclusive)
            self.reserve(held, now, duration)
            return placement, held
        self.changes += 1
        self.aggregate.reserve(now, duration, taken * self.node_capacity)
        named, named_held, nodes = self._name_idle(taken, shape, demand, now)
        self._order += 1
        booking = _Booking(now, now + duration, taken, named_held, self._order, nodes)
        self._bookings[id(named_held)] = booking
        self._colours = None
        return named, named_held

    def _name_idle(
        self, count: int, shape: Shape, demand: int, now: int
    ) -> tuple[Placement, dict[int, int], int]:
        """Name ``count`` idle nodes for a job of ``shape`` starting at ``now``: its
        placement, what it holds there (whole nodes, as :meth:`held` gives) and the
        nodes as bits, marked held."""
        chosen, nodes = self._idle_nodes(count, now)
        named = self.named_placement(chosen, shape, demand)
        return named, dict.fromkeys(named, self.node_capacity), self._name(nodes)

    def _idle_nodes(self, count: int, now: int) -> tuple[list[int], int]:
        """The first ``count`` nodes no named reservation holds at ``now``, as indices
        and as bits: the lowest of those no named reservation holds at all, or, when
        jobs that ran past their estimate still hold some of the nodes the plan counts
        free, the first whose named reservations all end by ``now``. Idle nodes are
        taken a run of neighbours at a time (a job's nodes are mostly one run)."""
        idle = self._every_node & ~self._busy
        if count == 1 and idle:  # (most jobs of a trace take one node)
            lowest = idle & -idle
            return [lowest.bit_length() - 1], lowest
        if idle.bit_count() >= count:
            chosen: list[int] = []
            taken = 0
            while count:
                lowest = idle & -idle
                run = idle & ~(idle + lowest)  # the lowest run of idle nodes
                first = lowest.bit_length() - 1
                length = min(run.bit_length() - first, count)
                chosen.extend(range(first, first + length))
                bits = ((1 << length) - 1) << first
                taken |= bits
                idle ^= bits
                count -= length
            return chosen, taken
        chosen = [i for i, until in enumerate(self._busy_until()) if until <= now][:count]
        assert len(chosen) == count, "the count of nodes in use is exact"
        return chosen, sum(1 << index for index in chosen)

    def named_placement(self, nodes: Sequence[int], shape: Shape, demand: int) -> Placement:
        """Slots per node when ``shape`` takes ``nodes``: as many as a node holds, in
        node order, one at least on each."""
        left = shape.count - len(nodes)
        if not left:  # a slot on each node (every one-slot node): nothing to spread
            return dict.fromkeys(nodes, 1)
        fit = self._fit_by_slots.get((demand, shape.count))
        if fit is None:
            fit = self._fit_by_slots[demand, shape.count] = slots_in(
                self.node_capacity, demand, shape.count
            )
        if shape.count == fit * len(nodes):  # every node full (a job that shares none)
            return dict.fromkeys(nodes, fit)
        # The first nodes filled, the next one holding what is left, one on each other.
        full, rest = divmod(left, fit - 1)  # (fit > 1: some node holds more than one)
        placement = dict.fromkeys(nodes, 1)
        placement.update(dict.fromkeys(nodes[:full], fit))
        if rest:
            placement[nodes[full]] += rest
        return placement

    def names(self, held: Mapping[int, int]) -> dict[int, int]:
        """What ``held`` holds per named node; a reservation not yet named gets the
        nodes of the colouring."""
        if TENTATIVE not in held:
            return dict(held)
        return dict.fromkeys(self.colouring()[id(held)], self.node_capacity)

    def colouring(self) -> dict[int, list[int]]:
        """Nodes for every reservation not yet named (by ``id`` of its held), given in
        order of start (then of booking) to the first nodes free by then. Every named
        reservation started no later than any unnamed one, so this greedy colouring
        never runs short while the aggregate profile is respected."""
        if self._colours is not None:
            return self._colours
        free_from = self._busy_until()
        colours: dict[int, list[int]] = {}
        waiting = [(b.start, b.order, key, b) for key, b in self._bookings.items()
                   if TENTATIVE in b.held]  # fmt: skip
        for start, _, key, booking in sorted(waiting):
            chosen = [i for i, t in enumerate(free_from) if t <= start][: booking.count]
            assert len(chosen) == booking.count, "the count of nodes in use is exact"
            for index in chosen:
                free_from[index] = booking.end
            colours[key] = chosen
        self._colours = colours
        return colours

    def _busy_until(self) -> list[int]:
        """The latest end of a named reservation on each node (``_DAWN`` where none is)."""
        until = [_DAWN] * len(self.capacities)
        for booking in self._bookings.values():
            if booking.nodes:
                for index in booking.held:
                    until[index] = max(until[index], booking.end)
        return until

    def _name(self, nodes: int) -> int:
        """Mark ``nodes`` (bits) held by one more named reservation; returns them."""
        shared = nodes & self._busy
        if shared:
            for index in range(shared.bit_length()):
                if shared >> index & 1:
                    self._extra[index] = self._extra.get(index, 0) + 1
            self._extra_nodes |= shared
        self._busy |= nodes
        return nodes

    def _unshare(self, nodes: int) -> None:
        """One named reservation fewer on each of ``nodes``, which others hold too."""
        for index in range(nodes.bit_length()):
            if nodes >> index & 1:
                left = self._extra[index] - 1
                if left:
                    self._extra[index] = left
                else:
                    del self._extra[index]
                    self._extra_nodes &= ~(1 << index)

    def _taken(self, shape: Shape, demand: int) -> int:
        taken = self._whole(shape, demand)
        assert taken is not None, "a counted plan only books jobs that take whole nodes"
        return taken

    def _whole(self, shape: Shape, demand: int) -> int | None:
        """:meth:`nodes_taken`, remembered per shape."""
        key = (demand, shape.count, shape.nodes, shape.exclusive)
        if key not in self._taken_by_shape:
            self._taken_by_shape[key] = self.nodes_taken(shape, demand)
        return self._taken_by_shape[key]
