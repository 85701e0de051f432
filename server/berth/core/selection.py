"""Backfill job selection over K resources: FF, BL and BB (Leinberger, Karypis & Kumar 1999).

When a backfilling policy has several jobs it may start now (each satisfying the
policy's own backfill constraints), the selection rule says which goes first:

* **FF** (first fit): queue order — the classic behaviour.
* **BL** (Backfill Lowest, window w = 1): the least utilized resource is found; among the
  candidates whose largest requirement (as a share of capacity) is that resource, the one
  with the lowest fullness modifier wins; if none is such a job, first fit.
* **BB** (Backfill Balanced): each candidate is scored by the balance measure
  ``max_i(U_i + R_i) / avg_i(U_i + R_i)`` times the fullness modifier
  ``1 - avg_i(U_i + R_i)``; the lowest score wins.

``U_i`` is the current utilization of resource ``i`` and ``R_i`` the job's requirement of
it, both as shares of the capacity. Ties go to queue order, so as the machine fills BL and
BB approach FF, as the paper intends. Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.catalog import SELECTIONS
from berth.core.resources import ResourceSpace

__all__ = ["SELECTIONS", "Selector", "bb_score", "fullness"]


class Selector:
    """Picks the next backfill job among candidates by FF, BL or BB."""

    __slots__ = ("_capacity", "_shares", "rule", "space")

    def __init__(self, space: ResourceSpace, rule: str = "ff") -> None:
        if rule not in SELECTIONS:
            raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, got {rule!r}")
        self.space = space
        self.rule = rule
        self._capacity = [space.capacity[name] for name in space.names]
        self._shares: dict[int, tuple[float, ...]] = {}

    def shares(self, packed: int) -> tuple[float, ...]:
        """A packed vector as shares of the capacity, per resource (cached per vector)."""
        cached = self._shares.get(packed)
        if cached is None:
            amounts = self.space.unpack(packed)
            cached = tuple(
                amounts[name] / cap
                for name, cap in zip(self.space.names, self._capacity, strict=True)
            )
            if len(self._shares) < 65536:
                self._shares[packed] = cached
        return cached

    def pick(self, free: int, demands: Sequence[int]) -> int:
        """The index in ``demands`` (packed candidates, in queue order) of the job to start."""
        if self.rule == "ff" or len(demands) == 1:
            return 0
        used = self.shares(self.space.packed_capacity - free)
        if self.rule == "bb":
            return min(
                range(len(demands)), key=lambda i: (bb_score(used, self.shares(demands[i])), i)
            )
        lowest = min(range(len(used)), key=lambda r: (used[r], r))
        best: tuple[float, int] | None = None
        for index, demand in enumerate(demands):
            need = self.shares(demand)
            if max(range(len(need)), key=lambda r: (need[r], -r)) != lowest:
                continue
            score = fullness(used, need)
            if best is None or score < best[0]:
                best = (score, index)
        return 0 if best is None else best[1]


def fullness(used: Sequence[float], need: Sequence[float]) -> float:
    """The fullness modifier ``1 - avg(U + R)``: the average availability left."""
    return 1.0 - sum(u + r for u, r in zip(used, need, strict=True)) / len(used)


def bb_score(used: Sequence[float], need: Sequence[float]) -> float:
    """BB's score: balance ``max(U + R) / avg(U + R)`` times the fullness modifier."""
    after = [u + r for u, r in zip(used, need, strict=True)]
    average = sum(after) / len(after)
    if average <= 0.0:
        return 1.0
    return max(after) / average * (1.0 - average)
