"""The cyclic garbage collector paused while long-lived state is built or planned on.

Reading a trace builds hundreds of thousands of objects and a replay hundreds of
thousands more (records, reservations, placements), and neither makes a reference
cycle: every collection their allocations set off finds nothing and walks everything
built so far. Paused, reading SDSC-BLUE took 0.79 s against 1.13 s, and the KTH replay
on 100 nodes 0.94x the time. The daemon's writer applies each batch of commands with the
collector paused for the same reason: a QoPS decision on 256 nodes with 1,000 waiting
jobs makes tens of thousands of tuples and dicts, and the young collections they set off
cost it up to 5 % (``benchmarks/bench_admission.py --collector both``: running against
paused, paired, 1.018x, 1.049x and 1.004x the time in three runs). A batch is bounded in
time (:data:`~berth.service.planning.budgets.BATCH_SECONDS`), so the collector is never
held off for long. Reference counting still frees what they drop; a test checks that a
replay leaves no cycle for the collector to find.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block (as it was after)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
