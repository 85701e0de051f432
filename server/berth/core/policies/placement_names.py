"""What a placement holds, written for the shells: node name -> resources held there.

A plan holds packed amounts per node index; a :class:`~berth.core.decisions.Start` and
the daemon's views name the nodes and unpack the amounts. Nodes holding the same amount
share one mapping, read-only by its type (a job on 64 one-cpu nodes has 64 alike; a
copy of the policy for a what-if or a forecast shares or copies it like any other
state). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from berth.core.resources import ResourceSpace


class PlacementNames:
    """Placements of a cluster's nodes (``names``, by index) written by name."""

    __slots__ = ("_names", "_space", "_unpacked")

    def __init__(self, names: list[str], space: ResourceSpace) -> None:
        self._names = names
        self._space = space
        self._unpacked: dict[int, Mapping[str, int]] = {}

    def of(self, held: Mapping[int, int]) -> dict[str, Mapping[str, int]]:
        """``held`` (node index -> packed amount) by node name."""
        amounts = set(held.values())
        if len(amounts) == 1:  # (whole nodes, or the same on each: one mapping, no loop)
            return self.alike(held, amounts.pop())
        names = self._names
        return {names[index]: self.unpack(amount) for index, amount in held.items()}

    def alike(self, nodes: Iterable[int], amount: int) -> dict[str, Mapping[str, int]]:
        """``nodes`` by name, each holding ``amount``: one mapping shared by all."""
        names = self._names
        return dict.fromkeys(map(names.__getitem__, nodes), self.unpack(amount))

    def unpack(self, amount: int) -> Mapping[str, int]:
        """``amount`` unpacked without the resources it has none of, one mapping per
        amount (shared by every placement that holds it)."""
        known = self._unpacked.get(amount)
        if known is None:
            unpacked = self._space.unpack(amount)
            known = self._unpacked[amount] = {n: a for n, a in unpacked.items() if a}
        return known
