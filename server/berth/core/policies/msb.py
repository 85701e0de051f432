"""MSB deadline admission on the pool (Islam et al. 2003, section 2.2.1, Figure 1).

The algorithm (for each position from N down to 0, the new job at its earliest start and
the jobs from there re-placed in their order; the cheapest feasible option wins) is
:func:`berth.core.policies.admission.msb`, the same on the pool and on nodes. Pure.
"""

from __future__ import annotations

from berth.core.policies.deadline import DeadlinePolicy

__all__ = ["Msb"]


class Msb(DeadlinePolicy):
    """Modified slack-based deadline admission: fixed order, cheapest insertion point."""

    name = "msb"
