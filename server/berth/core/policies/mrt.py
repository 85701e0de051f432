"""MRT deadline admission on the pool (Islam et al. 2003, section 2.2.2, Figure 2).

The algorithm (every job re-placed by a strongly feasible depth-first search in
heuristic order, at most ``max_backtracks`` backtracks) is
:func:`berth.core.policies.admission.mrt`, the same on the pool and on nodes. Pure.
"""

from __future__ import annotations

from berth.core.policies.admission import DEFAULT_MAX_BACKTRACKS
from berth.core.policies.deadline import DeadlinePolicy
from berth.core.resources import ResourceSpace

__all__ = ["DEFAULT_MAX_BACKTRACKS", "Mrt"]


class Mrt(DeadlinePolicy):
    """Modified real-time deadline admission: rebuild by search with strong feasibility."""

    name = "mrt"

    def __init__(
        self,
        space: ResourceSpace,
        heuristic: str = "edf",
        relaxation: float = 5.0,
        max_backtracks: int = DEFAULT_MAX_BACKTRACKS,
    ) -> None:
        super().__init__(space, heuristic, relaxation, max_backtracks=max_backtracks)

    @property
    def max_backtracks(self) -> int:
        return self.admission.max_backtracks
