"""The summed profiles a node plan keeps beside its nodes' own, and their upkeep.

A :class:`~berth.core.nodes.NodePlan` filters every search by a summed profile: the
whole cluster's (``aggregate``), or, for a slot only some nodes can hold (a GPU slot),
the sum of those nodes' profiles, built the first time such a slot is asked for. Every
booking on the nodes is booked on each summed profile that counts them, once, with what
its nodes hold together. :class:`SummedRooms` is that part of the plan: which summed
profile a slot reads, which ones a booking changes. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from berth.core.profile import Profile
from berth.core.profile_sets import summed


class SummedRooms:
    """The summed profiles of a node plan (a part of :class:`~berth.core.nodes.NodePlan`,
    which holds the state: ``aggregate``, ``_groups``, ``_groups_of_node``,
    ``_room_by_demand``)."""

    __slots__ = ()

    aggregate: Profile
    capacities: list[int]
    profiles: list[Profile]
    #: The sums of the profiles of the nodes able to hold a slot, by those nodes.
    _groups: dict[tuple[int, ...], Profile]
    #: Per node, the sums that count it.
    _groups_of_node: list[list[Profile]]
    #: Per slot (packed demand), the summed profile it reads.
    _room_by_demand: dict[int, Profile]

    def _able(self, demand: int) -> list[int]:
        raise NotImplementedError  # (the plan's: the nodes that can hold a slot)

    def _room(self, demand: int) -> Profile:
        """The summed profile of the nodes able to hold a slot of ``demand``: the
        aggregate when every node can; else one kept for that set of nodes, built when
        first asked and updated with theirs from then on."""
        room = self._room_by_demand.get(demand)
        if room is None:
            able = tuple(self._able(demand))
            if len(able) == len(self.capacities) or not able:
                room = self.aggregate
            else:
                room = self._groups.get(able)
                if room is None:
                    room = self._groups[able] = summed([self.profiles[i] for i in able])
                    for index in able:
                        self._groups_of_node[index].append(room)
            self._room_by_demand[demand] = room
        return room

    def summed_over(self, held: Mapping[int, int]) -> list[Profile]:
        """The summed profiles that count any node of ``held``: the aggregate, and the
        profile of every set of able nodes with one of them."""
        summed = [self.aggregate]
        if self._groups:
            for index in held:
                for group in self._groups_of_node[index]:
                    if group not in summed:
                        summed.append(group)
        return summed

    def _add_summed(self, held: Mapping[int, int], start: int, duration: int, sign: int) -> None:
        """Give back (``sign`` 1) or take (-1) ``held`` in the summed profiles: each once,
        with what its nodes hold together."""
        self.aggregate.add(start, start + duration, sign * sum(held.values()))
        if self._groups:
            self._add_groups(held, start, duration, sign)

    def _add_groups(self, held: Mapping[int, int], start: int, duration: int, sign: int) -> None:
        """:meth:`_add_summed` for the summed profiles of sets of able nodes."""
        together: dict[Profile, int] = {}
        for index, amount in held.items():
            for group in self._groups_of_node[index]:
                together[group] = together.get(group, 0) + amount
        for group, amount in together.items():
            group.add(start, start + duration, sign * amount)
