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

#: Wall time a batch may spend applying commands before the rest wait for the next
#: batch (each command is whole; reads and commits go on in between).
BATCH_SECONDS = 0.05
#: Wall time one slice of deferred plan improvement (compression) may take in a batch
#: (for what the batch's ends made due, before its arrivals, as in the emulator); the
#: batch shares one budget of :data:`PASS_SECONDS` with the passes around it.
IMPROVE_SECONDS = PASS_SECONDS
#: Wall time of a slice between batches. Every request that arrives waits for the slice
#: under way: at 4,096 nodes x 50,000 queued, 8 clients submitting waited 32 ms at the
#: median (p99 66) behind 10-ms slices, 24 ms (p99 57) behind 5-ms ones, with as many
#: jobs ending and starting (``bench_scale.py``). With no request waiting, slices follow
#: each other, so compression alone goes as fast.
SLICE_SECONDS = PASS_SECONDS / 2
#: Turns of the loop the writer gives after a slice of improvement before the next.
#: A request takes a few turns (read, handler, its command or read, the answer), and
#: would otherwise wait a whole slice at each: /healthz took 67 ms at the 99th
#: percentile with one turn, on 1,024 nodes with compression going on for minutes.
TURNS_BETWEEN_SLICES = 4


def within(seconds: float) -> Callable[[], bool]:
    """A ``stop()`` for a slice of work: true once ``seconds`` of wall time have passed
    since this call."""
    deadline = time.perf_counter() + seconds
    return lambda: time.perf_counter() >= deadline
