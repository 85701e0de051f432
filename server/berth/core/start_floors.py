"""Lower bounds on a new job's earliest start, from the searches before it.

In a plan that has only lost room since a search found a job's earliest start ``F``
(searched from ``a``), a job with the same kind of slot (same packed slot, node count
and exclusivity) that needs no fewer slots, for no shorter a time, asked from no
earlier than ``a``, cannot start before ``F``: a placement of it at ``t`` would hold the
smaller job at ``t`` too. So its search may begin at ``F`` and finds the same start and
placement (the start is ``F`` or a later reservation end, both candidates from ``F``
on).

Room given back during ``[since, until)`` opens a hole in such a bound: a job of
duration ``d`` may now start at ``t`` only if its window meets that room, ``since - d <
t < until``. A bound keeps one hole, ``[lo, hi)``, the span of every such window since
it was found: the starts in ``[a, lo)`` and ``[hi, F)`` are still ruled out, so a search
asks the hole (up to ``hi``) and then goes on from ``F``. In the daemon a job ends
every fraction of a second and gives room back from the present to its planned end:
the hole is the next hours, and the bound still skips the days of plan beyond them.

A conservative plan thousands of reservations deep is where this pays: a submission
searched from the present walked the whole packed prefix of the plan again. Kept per
kind of slot, each a front of bounds none of which another makes useless. Room given
back is applied to the bounds when they are next read, as a few windows (overlapping
ones merged): deadline admission takes a thousand reservations out in a row, and
updating every bound at each take was a tenth of its time. Pure: no clock, no I/O.
"""

from __future__ import annotations

#: The kind of slot a bound applies to: packed slot, node count, whole nodes.
Kind = tuple[int, int | None, bool]

#: A bound: ``(count, duration, after, lo, hi, start)``: no job of this kind with at
#: least ``count`` slots for at least ``duration``, asked from ``after`` or later, starts
#: in ``[after, lo)`` or ``[hi, start)``; ``after <= lo <= hi <= start``, and ``lo ==
#: hi`` when there is no hole (a hole that reached the end became the new ``start``).
Bound = tuple[int, int, int, int, int, int]

#: Where a search may begin: ``(lo, hi, start)``: ask ``[lo, hi)`` first (nothing when
#: ``lo == hi``), then from ``start`` on.
Floor = tuple[int, int, int]

#: Bounds kept per kind at most (the oldest go first): each search reads its kind's
#: whole front, and each window of room given back updates every bound.
FRONT_LIMIT = 64

#: Windows of room given back kept apart until the bounds are read; past this, they
#: become one window that spans them all (a hole may then be wider than it need be:
#: a bound rules out less, never a start that fits).
PENDING_LIMIT = 8


class StartFloors:
    """Per kind of slot, a front of bounds on earliest starts (see the module)."""

    __slots__ = ("_fronts", "_pending")

    def __init__(self) -> None:
        self._fronts: dict[Kind, list[Bound]] = {}
        #: Room given back since the bounds were last brought up to date: disjoint
        #: windows ``[since, until)``, in time order.
        self._pending: list[tuple[int, int]] = []

    def floor(self, kind: Kind, count: int, duration: int, after: int) -> Floor:
        """Where the search of a job of ``kind``, ``count`` slots and ``duration``,
        asked from ``after``, may begin: the bound that rules out most, its hole cut
        to ``after``; ``(after, after, after)`` when nothing is known."""
        best = (after, after, after)
        if self._pending:
            self._settle()
        front = self._fronts.get(kind)
        if front:
            for c, d, a, lo, hi, start in front:
                if start > best[2] and c <= count and d <= duration and a <= after:
                    best = (lo, hi, start)
            lo, hi, start = best
            if lo < after:
                lo = after
                if hi < lo:
                    hi = lo
            best = (lo, hi, start)
        return best

    def found(self, kind: Kind, count: int, duration: int, after: int, start: int) -> None:
        """A search found ``start`` for such a job: keep the bound unless another makes
        it useless, and drop the bounds it makes useless."""
        if start <= after:
            return  # it says nothing beyond the question itself
        if self._pending:
            self._settle()  # room given back before this search applies to older bounds
        front = self._fronts.get(kind)
        if front is None:
            self._fronts[kind] = [(count, duration, after, after, after, start)]
            return
        for c, d, a, lo, hi, s in front:
            if c <= count and d <= duration and a <= after and s >= start and lo == hi:
                return
        front[:] = [
            bound
            for bound in front
            if not (
                bound[0] >= count and bound[1] >= duration and bound[2] >= after
                and bound[5] <= start
            )
        ]  # fmt: skip
        front.append((count, duration, after, after, after, start))
        if len(front) > FRONT_LIMIT:
            del front[0]

    def given_back(self, since: int, until: int) -> None:
        """Room was given back during ``[since, until)``: kept, merged with the windows
        it overlaps or touches (the bounds' holes are spans, so the merged window opens
        the same holes), for the bounds to take when next read."""
        if not self._fronts:
            return  # no bound to open
        pending = self._pending
        at = 0
        while at < len(pending) and pending[at][1] < since:  # wholly before it
            at += 1
        end = at
        while end < len(pending) and pending[end][0] <= until:  # overlapping or touching
            since, until = min(since, pending[end][0]), max(until, pending[end][1])
            end += 1
        pending[at:end] = [(since, until)]
        if len(pending) > PENDING_LIMIT:
            pending[:] = [(pending[0][0], max(u for _, u in pending))]

    def _settle(self) -> None:
        """Apply the room given back to every bound: each gets the starts whose windows
        meet it as a hole (or as its new end, when the hole reaches it); a bound left
        saying nothing is dropped."""
        for since, until in self._pending:
            self._open(since, until)
        self._pending.clear()

    def _open(self, since: int, until: int) -> None:
        """:meth:`_settle` for one window of room given back."""
        for kind, front in list(self._fronts.items()):
            kept = []
            for bound in front:
                c, d, a, lo, hi, start = bound
                first = since - d + 1
                if first < a:
                    first = a
                last = until if until < start else start
                if first < last:  # the hole [first, last) meets the bound
                    if lo < hi:
                        lo, hi = min(lo, first), max(hi, last)
                    else:
                        lo, hi = first, last
                    if hi >= start:
                        start = hi = lo
                    if start <= a:
                        continue
                    bound = (c, d, a, lo, hi, start)
                kept.append(bound)
            if kept:
                self._fronts[kind] = kept
            else:
                del self._fronts[kind]
