"""FF, BL and BB backfill selection on named nodes (Leinberger, Karypis & Kumar 1999).

The papers balance the K resources of one machine. On a cluster of nodes a job's
resources are used on the nodes it lands on, so the balance that matters is each of
those nodes'. With ``U_i`` the cluster's utilization of resource ``i`` now (used over
the nodes' total) and ``R_i`` the candidate's share of it where it would be placed:

* **BB**: the score is ``balance x (1 - avg_i(U_i + R_i))``, the balance being the mean,
  over the nodes of the placement, of ``max_i u_i / avg_i u_i`` with ``u_i`` the node's
  utilization of resource ``i`` once the job is there (resources the node has); the
  lowest score wins.
* **BL**: the cluster's least utilized resource is found; among the candidates whose
  largest share *on the nodes they would use* (what they hold there over those nodes'
  capacity) is that resource, the one with the lowest fullness ``1 - avg_i(U_i + R_i)``
  wins; if none, first fit.

Ties go to queue order. On one-resource nodes (every node's balance is 1) and on
identical nodes taken whole (each such node is full, its balance 1) both reduce to the
pool's rules (:mod:`berth.core.selection`), so one-cpu nodes give the pool's schedule.
Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from berth.core.profile import Profile
from berth.core.resources import ResourceSpace
from berth.core.selection import fullness


class NodeSelector:
    """Picks the next job to start now among candidates, each with what it would hold
    per node (packed; a key < 0 holds whole identical nodes not yet named)."""

    __slots__ = ("_capacity", "_names", "_total", "rule", "space")

    def __init__(self, space: ResourceSpace, capacities: Sequence[int], rule: str) -> None:
        self.space = space
        self.rule = rule
        self._names = list(space.names)
        self._capacity = [space.unpack(cap) for cap in capacities]
        self._total = {n: sum(c[n] for c in self._capacity) for n in self._names}

    def pick(
        self,
        free_now: int,
        profiles: Sequence[Profile] | None,
        candidates: Sequence[Mapping[int, int]],
        now: int,
    ) -> int:
        """The index in ``candidates`` (in queue order) of the job to start;
        ``free_now`` is what the cluster has free now (packed, summed), ``profiles``
        each node's availability (``None``: a plan that counts whole nodes)."""
        if self.rule == "ff" or len(candidates) == 1:
            return 0
        free = self.space.unpack(free_now)
        names = [n for n in self._names if self._total[n]]
        used = [1.0 - free[n] / self._total[n] for n in names]
        shares = [self._shares(held, names) for held in candidates]
        if self.rule == "bb":
            scores = [
                _bb_score(self._balance(held, profiles, now), used, share)
                for held, share in zip(candidates, shares, strict=True)
            ]
            return min(range(len(candidates)), key=lambda i: (scores[i], i))
        lowest = min(range(len(used)), key=lambda r: (used[r], r))
        best: tuple[float, int] | None = None
        for index, held in enumerate(candidates):
            largest = self._largest(held, names)
            if largest != lowest:
                continue
            score = fullness(used, shares[index])
            if best is None or score < best[0]:
                best = (score, index)
        return 0 if best is None else best[1]

    def _shares(self, held: Mapping[int, int], names: list[str]) -> list[float]:
        """The job's share of each resource of the cluster."""
        amounts = self.space.unpack(sum(held.values()))
        return [amounts[n] / self._total[n] for n in names]

    def _largest(self, held: Mapping[int, int], names: list[str]) -> int:
        """The resource the job takes the largest share of on the nodes it would use."""
        amounts = self.space.unpack(sum(held.values()))
        if any(index < 0 for index in held):  # whole identical nodes: as the cluster
            room = self._total
        else:
            room = {n: sum(self._capacity[i][n] for i in held) for n in names}
        need = [amounts[n] / room[n] if room[n] else 0.0 for n in names]
        return max(range(len(need)), key=lambda r: (need[r], -r))

    def _balance(
        self, held: Mapping[int, int], profiles: Sequence[Profile] | None, now: int
    ) -> float:
        """The mean over the job's nodes of ``max u / avg u`` once it is there."""
        if profiles is None or any(index < 0 for index in held):
            return 1.0  # whole identical nodes: each is full, its resources alike
        total = 0.0
        for index, amount in held.items():
            capacity = self._capacity[index]
            free = self.space.unpack(profiles[index].free_at(now))
            mine = self.space.unpack(amount)
            shares = [
                (capacity[n] - free[n] + mine[n]) / capacity[n] for n in self._names if capacity[n]
            ]
            average = sum(shares) / len(shares)
            total += max(shares) / average if average > 0 else 1.0
        return total / len(held) if held else 1.0


def _bb_score(balance: float, used: Sequence[float], share: Sequence[float]) -> float:
    """BB's score with the nodes' ``balance`` in place of the pool's ``max / avg``."""
    average = sum(u + r for u, r in zip(used, share, strict=True)) / len(used)
    return 1.0 if average <= 0.0 else balance * (1.0 - average)
