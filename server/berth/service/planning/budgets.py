"""Wall-time budgets for work done in slices: a scheduling pass, a slice of plan
improvement, a forecast.

The single writer bounds how long any one piece of planning holds the event loop; work
that is not finished within its budget stops after a question and goes on in a later
slice (see :mod:`berth.service.planning.planner` and :mod:`berth.service.planning.forecasts`). The
only clock the service layer reads, and only to stop, never to decide.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Wall time one scheduling pass may take before it stops, to go on at the next.
PASS_SECONDS = 0.01


def within(seconds: float) -> Callable[[], bool]:
    """A ``stop()`` for a slice of work: true once ``seconds`` of wall time have passed
    since this call."""
    deadline = time.perf_counter() + seconds
    return lambda: time.perf_counter() >= deadline
