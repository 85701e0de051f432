"""EASY backfilling (Lifka 1995; Feitelson & Mu'alem Weil 1998, section 2.2, Fig. 5).

Start from the head while it fits. When the head is blocked, compute its *shadow time*
(the earliest expected end of a running job at which, counting every running job
expected to end by then, the head fits in every resource) and the *extra* resources
(free now + what those jobs release - the head's demand). Then scan the rest of the
queue in order and start every job that fits in what is free now and either ends by the
shadow or fits within the extra (which it then consumes). The head's reservation is
never delayed; other queued jobs may be, without bound, so EASY makes no promises.
Pure: time is an argument, no I/O.

A pass that starts nothing is remembered: until a job starts, ends or leaves the queue,
the head, its shadow time and the extra resources stay the same, and every job that did
not fit then still does not (time only moves on), so the next pass computes no shadow
and looks only at the jobs that arrived since (first fit). A replay spends most of its
instants on such passes.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Mapping
from itertools import islice

from berth.core.decisions import Start, at
from berth.core.model import Job
from berth.core.policies.base import Running, Waiting, queued_after
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
        #: The last pass that started nothing: (version, head id), its (shadow, extra)
        #: if it needed them, and the id of the last job it looked at.
        self._idle_pass: tuple[int, int] | None = None
        self._idle_shadow: tuple[int, int] | None = None  # None: not needed then
        self._idle_last = 0
        #: (expected end, job id) of the running jobs, sorted: the shadow time's walk.
        self._by_end: list[tuple[int, int]] = []

    def launch(self, entry: Waiting, now: int, reason: str) -> Start:
        start = super().launch(entry, now, reason)
        insort(self._by_end, (now + entry.job.estimate, entry.job.id))
        return start

    def finish(self, job_id: int) -> Running:
        done = super().finish(job_id)
        del self._by_end[bisect_left(self._by_end, (done.expected_end, job_id))]
        return done

    def adopt_running(
        self,
        job: Job,
        start: int,
        now: int,
        held: Mapping[str, int] | None = None,
        placement: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        super().adopt_running(job, start, now, held, placement)
        insort(self._by_end, (self.running[job.id].expected_end, job.id))

    def schedule(self, now: int) -> list[Start]:
        started = self.start_heads(now)
        if len(self.waiting) < 2:
            return started
        head = next(iter(self.waiting.values()))
        if self.selector.rule != "ff":
            shadow, extra = self.shadow(head.demand)
            started.extend(self._backfill_by_selection(now, shadow, extra))
        else:
            started.extend(self._backfill_first_fit(now, head))
        return started

    def _backfill_first_fit(self, now: int, head: Waiting) -> list[Start]:
        """Start, in queue order, every job that fits now and ends by the shadow or fits
        in the extra (consuming it)."""
        candidates: Iterable[Waiting]
        found: tuple[int, int] | None = None
        if self._idle_pass == (self.version, head.job.id):
            found = self._idle_shadow
            candidates = queued_after(self.waiting, self._idle_last)
        else:
            candidates = islice(self.waiting.values(), 1, None)
        guard = self.guard
        free = self.free
        # Free room only shrinks during the scan, and so does the extra: a job that fails
        # a test now fails it later in the scan. Filtering first runs at C speed over a
        # long queue, and the shadow is found only when some job fits.
        room = free | guard
        fitting = [entry for entry in candidates if (room - entry.demand) & guard == guard]
        if fitting and found is None:
            found = self.shadow(head.demand)
        shadow, extra = found or (0, 0)
        spare, latest = extra | guard, shadow - now
        chosen: list[tuple[Waiting, str]] = []
        for entry in [
            entry
            for entry in fitting
            if entry.job.estimate <= latest or (spare - entry.demand) & guard == guard
        ]:
            demand = entry.demand
            if ((free | guard) - demand) & guard != guard:
                continue
            if now + entry.job.estimate <= shadow:
                chosen.append((entry, f"backfilled: ends by the head's shadow time {at(shadow)}"))
            elif ((extra | guard) - demand) & guard == guard:
                extra -= demand
                chosen.append(
                    (
                        entry,
                        f"backfilled: fits in the extra resources beside the head at {at(shadow)}",
                    )
                )
            else:
                continue
            free -= demand
            if free == 0:
                break
        if not chosen:
            self._idle_pass = (self.version, head.job.id)
            self._idle_shadow = found
            self._idle_last = next(reversed(self.waiting))
            return []
        self._idle_pass = None
        return [self.launch(entry, now, reason) for entry, reason in chosen]

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
                reason = f"backfilled ({rule}): ends by the head's shadow time {at(shadow)}"
            else:
                extra -= chosen.demand
                reason = f"backfilled ({rule}): fits in the extra resources beside the head at {at(shadow)}"
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
        by_end = self._by_end
        running = self.running
        i, n = 0, len(by_end)
        while i < n:
            moment = by_end[i][0]
            while i < n and by_end[i][0] == moment:
                available += running[by_end[i][1]].demand
                i += 1
            if ((available | guard) - head_demand) & guard == guard:
                return moment, available - head_demand
        raise AssertionError("the head fits an empty cluster, so some end must unblock it")
