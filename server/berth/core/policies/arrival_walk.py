"""The waiting jobs in arrival order, kept from one compression slice to the next.

The daemon compresses in slices of a few milliseconds, each going on from the job the
last one stopped at. Building the queue's list again and looking that job up in it at
every slice cost time in proportion to the queue, at every slice: with 16,000 jobs
queued on 1,024 nodes, 22 % of the daemon's time while jobs ended (py-spy, 2026-11-27).
This list is kept instead:

- jobs queued since are appended: the queue's dict holds them last, in arrival order;
- jobs that left the queue stay where they lie, and the walker skips them (their entry
  is no longer the queue's); the list drops them once they are half of it;
- the job a slice stopped at is found again by its arrival number, with a bisect.

Pure: no I/O.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from typing import Generic, TypeVar

Entry = TypeVar("Entry")

#: Left-queue entries tolerated beyond the live ones before the list is rebuilt.
_SLACK = 64


class ArrivalWalk(Generic[Entry]):
    """A list of a queue's entries in arrival order that may hold entries since gone:
    an entry is still queued when the queue holds it under its job's id."""

    __slots__ = ("entries", "numbers", "upto")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.numbers: list[int] = []  # arrival numbers, rising
        self.upto = 0  # the last arrival number the list has seen

    def current(
        self, queue: dict[int, Entry], arrival: Mapping[int, int], arrivals: int
    ) -> list[Entry]:
        """The list brought up to date with ``queue`` (job id → entry, in arrival order),
        whose job ``i`` arrived ``arrival[i]``-th, ``arrivals`` jobs so far."""
        if arrivals > self.upto:
            new = []
            for job_id, entry in reversed(queue.items()):
                number = arrival[job_id]
                if number <= self.upto:
                    break
                new.append((number, entry))
            for number, entry in reversed(new):
                self.numbers.append(number)
                self.entries.append(entry)
            self.upto = arrivals
        if len(self.entries) > 2 * len(queue) + _SLACK:
            self.numbers = [arrival[job_id] for job_id in queue]
            self.entries = list(queue.values())
        return self.entries

    def index_of(self, number: int) -> int:
        """Where the job that arrived ``number``-th is (or would be) in the list."""
        return bisect_left(self.numbers, number)
