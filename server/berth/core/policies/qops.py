"""QoPS deadline admission on the pool (Islam, Balaji, Sadayappan & Panda 2003, section 3).

The algorithm (insertion points 0, N/2, 3N/4, ..., N; EDF or LLF re-placement with up
to ``k_factor`` violations repaired) is :func:`berth.core.policies.admission.qops`, the
same on the pool and on nodes. Pure; no I/O.
"""

from __future__ import annotations

from berth.core.policies.admission import DEFAULT_K_FACTOR, insertion_points
from berth.core.policies.deadline import DeadlinePolicy
from berth.core.resources import ResourceSpace

__all__ = ["DEFAULT_K_FACTOR", "Qops", "insertion_points"]


class Qops(DeadlinePolicy):
    """QoPS: deadline admission with reordering of the waiting jobs."""

    name = "qops"

    def __init__(
        self,
        space: ResourceSpace,
        heuristic: str = "edf",
        relaxation: float = 5.0,
        k_factor: int = DEFAULT_K_FACTOR,
    ) -> None:
        super().__init__(space, heuristic, relaxation, k_factor=k_factor)

    @property
    def k_factor(self) -> int:
        return self.admission.k_factor
