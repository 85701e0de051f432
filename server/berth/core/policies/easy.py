"""EASY backfilling (Lifka 1995; Feitelson & Mu'alem Weil 1998, section 2.2, Fig. 5).

Start from the head while it fits. When the head is blocked, compute its *shadow time*
(the earliest expected end of a running job at which, counting every running job
expected to end by then, the head fits in every resource) and the *extra* resources
(free now + what those jobs release - the head's demand). Then scan the rest of the
queue in order and start every job that fits in what is free now and either ends by the
shadow or fits within the extra (which it then consumes). The head's reservation is
never delayed; other queued jobs may be, without bound, so EASY makes no promises.
Pure: time is an argument, no I/O.
"""

from __future__ import annotations

from itertools import islice

from berth.core.decisions import Start
from berth.core.policies.base import Waiting
from berth.core.policies.fcfs import Fcfs
from berth.core.resources import ResourceSpace
from berth.core.selection import Selector


class Easy(Fcfs):
    """EASY backfilling over K resources, exactly as specified in ``docs/semantics.md``.

    ``selection`` chooses among the jobs that satisfy EASY's backfill constraints: ``ff``
    takes them in queue order; ``bl`` and ``bb`` repeatedly take the best-balanced one
    (:mod:`berth.core.selection`), re-checking the constraints after each start.
    """

    name = "easy"

    def __init__(self, space: ResourceSpace, selection: str = "ff") -> None:
        super().__init__(space)
        self.selector = Selector(space, selection)

    def schedule(self, now: int) -> list[Start]:
        started = self.start_heads(now)
        if len(self.waiting) < 2:
            return started
        head = next(iter(self.waiting.values()))
        shadow, extra = self.shadow(head.demand)
        if self.selector.rule != "ff":
            started.extend(self._backfill_by_selection(now, shadow, extra))
            return started
        guard = self.guard
        free = self.free
        chosen: list[tuple[Waiting, str]] = []
        for entry in islice(self.waiting.values(), 1, None):
            if free == 0:
                break
            demand = entry.demand
            if ((free | guard) - demand) & guard != guard:
                continue
            if now + entry.job.estimate <= shadow:
                chosen.append((entry, f"backfilled: ends by the head's shadow time {shadow}"))
            elif ((extra | guard) - demand) & guard == guard:
                extra -= demand
                chosen.append(
                    (entry, f"backfilled: fits in the extra resources beside the head at {shadow}")
                )
            else:
                continue
            free -= demand
        started.extend(self.launch(entry, now, reason) for entry, reason in chosen)
        return started

    def _backfill_by_selection(self, now: int, shadow: int, extra: int) -> list[Start]:
        """Backfill with BL or BB: the best-scoring eligible job first, until none is left."""
        guard = self.guard
        free = self.free
        eligible = list(islice(self.waiting.values(), 1, None))
        started: list[Start] = []
        while eligible:
            candidates = [
                entry
                for entry in eligible
                if ((free | guard) - entry.demand) & guard == guard
                and (
                    now + entry.job.estimate <= shadow
                    or ((extra | guard) - entry.demand) & guard == guard
                )
            ]
            if not candidates:
                break
            chosen = candidates[self.selector.pick(free, [e.demand for e in candidates])]
            rule = self.selector.rule
            if now + chosen.job.estimate <= shadow:
                reason = f"backfilled ({rule}): ends by the head's shadow time {shadow}"
            else:
                extra -= chosen.demand
                reason = (
                    f"backfilled ({rule}): fits in the extra resources beside the head at {shadow}"
                )
            free -= chosen.demand
            started.append(self.launch(chosen, now, reason))
            eligible = [entry for entry in candidates if entry is not chosen]
        return started

    def shadow(self, head_demand: int) -> tuple[int, int]:
        """The head's shadow time and the packed extra resources at that time.

        All running jobs expected to end at the same instant are counted together, so a
        tie at the shadow time releases every one of them.
        """
        guard = self.guard
        available = self.free
        by_end = sorted(self.running.values(), key=lambda r: r.expected_end)
        i, n = 0, len(by_end)
        while i < n:
            moment = by_end[i].expected_end
            while i < n and by_end[i].expected_end == moment:
                available += by_end[i].demand
                i += 1
            if ((available | guard) - head_demand) & guard == guard:
                return moment, available - head_demand
        raise AssertionError("the head fits an empty cluster, so some end must unblock it")
