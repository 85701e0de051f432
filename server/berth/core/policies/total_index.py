"""Waiting jobs sorted by what they need free summed over the nodes, for EASY's filter.

EASY's pass asks only the waiting jobs whose total (a packed vector: what they need
free summed over the nodes) fits in what is free now, field by field. A packed vector
is its fields shifted and added, so a total that fits field by field is also no greater
as an integer: the jobs that may fit are a prefix of the queue sorted by total, found
with one bisect, and only that prefix is tested field by field. On a full cluster with
a deep queue most jobs are wider than what is free: at 40,000 waiting on 4,096 nodes,
the filter over the whole queue was the largest part of a pass. Pure: no I/O.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from typing import Generic, Protocol, TypeVar

_AFTER_ALL = 1 << 62  # later than any arrival number


class _Totalled(Protocol):
    total: int


Entry = TypeVar("Entry", bound=_Totalled)


class TotalIndex(Generic[Entry]):
    """Entries by ``(total, arrival)``; each entry's total must not change while it is
    in (a plan that starts naming its nodes changes them all: :meth:`rebuild`)."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: list[tuple[int, int, Entry]] = []

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, entry: Entry, arrival: int) -> None:
        insort(self._rows, (entry.total, arrival, entry))  # (arrivals are unique)

    def remove(self, entry: Entry, arrival: int) -> None:
        at = bisect_left(self._rows, (entry.total, arrival))
        assert self._rows[at][2] is entry, "an entry's total changed while indexed"
        del self._rows[at]

    def rebuild(self, entries: list[tuple[Entry, int]]) -> None:
        """Index ``entries`` (each with its arrival) afresh: their totals changed."""
        self._rows = sorted((entry.total, arrival, entry) for entry, arrival in entries)

    def copy(self) -> TotalIndex[Entry]:
        """An independent index of the same entries (a forecast's copy shares them)."""
        twin: TotalIndex[Entry] = TotalIndex()
        twin._rows = self._rows.copy()
        return twin

    def at_most(self, total: int, longest: int) -> list[tuple[int, int, Entry]] | None:
        """The rows whose total is at most ``total`` as an integer (a superset of those
        that fit in ``total`` field by field), as ``(total, arrival, entry)``; ``None``
        if they are more than ``longest`` (not copied then)."""
        rows = self._rows
        end = bisect_right(rows, (total, _AFTER_ALL))
        return rows[:end] if end <= longest else None
