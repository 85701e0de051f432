"""Keep the cyclic garbage collector's pauses short as the daemon's state grows.

A daemon holding 10,000 queued jobs keeps millions of long-lived objects, and every
full collection walks all of them. It lands on whatever request is being answered:
in-process, a start-time query into 10,000 queued jobs took 2 ms at the median and
21 ms at the 99th percentile, and 2.4 ms once the long-lived objects were frozen.
So the daemon *settles* its heap at start-up and every :data:`THAW_EVERY` seconds: it
thaws what it froze before, collects once, and freezes what survives
(:func:`gc.freeze`). Frozen objects are still freed by reference counting when dropped;
the collector just stops walking them. A cycle that becomes garbage while frozen waits
for the next thawing settle. In between, every :data:`SETTLE_EVERY` seconds, a light
settle collects and freezes only what was made since: a thawing settle walks every
long-lived object, about 300 ms at 50,000 queued jobs on 4,096 nodes, which every
minute put the daemon's worst answer above 250 ms. And in ``berth serve``'s process,
after each full collection the collector starts by itself, what survived is frozen too
(:func:`freeze_after_full_collections`): those collections walk everything made since
the last freeze, and while a queue of 20,000 jobs was being submitted to 1,024 nodes
within a minute a dozen of them took 45-70 ms each, on top of the requests they landed
on; with the survivors frozen, one a run took 35-45 ms and the rest at most 12.
"""

from __future__ import annotations

import gc

#: Seconds between two light settles (what was made since the last one).
SETTLE_EVERY = 60.0
#: Seconds between two thawing settles (the whole heap).
THAW_EVERY = 3600.0


def freeze_after_full_collections() -> None:
    """From now on, freeze what survives each full collection the collector starts by
    itself (once; see the module)."""
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()  # (the collection is over: what is left survived it)


def settle_heap(thaw: bool = True) -> int:
    """Collect and freeze what survives (``thaw``: every object, the frozen ones too;
    else only those made since the last freeze); how many objects are frozen."""
    if thaw:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
