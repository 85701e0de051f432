"""A log of room given back in a plan, asked "what changed since entry i?" cheaply.

Compression asks each waiting job again only if room was given back, since it was last
asked, early enough to matter. :class:`RoomLog` records each window of room given back
(``[since, until)``, and the nodes it was on) and answers, for any suffix of the log, the
earliest ``since`` and the latest ``until`` in it, in O(log n): for an append-only
sequence the positions that hold a suffix's minimum form a stack whose values increase
(and likewise for the maximum), so a suffix query is a binary search over that stack.
A short suffix is also read entry by entry (:meth:`RoomLog.windows_since`): which nodes
gained room, and when; only the last :data:`WINDOWS_KEPT` entries are kept for that.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterable, Sequence

from berth.core.profile import NEVER

#: An entry of a log: room given back during ``[since, until)`` on these nodes (their
#: indices in the plan; empty when the logger does not name them).
Window = tuple[int, int, Sequence[int]]

#: The newest entries a log keeps to be read one by one: a suffix longer than this is
#: only summed up (reading more cost compression about what its search costs).
WINDOWS_KEPT = 8


class RoomLog:
    """Windows of room given back, in order; positions count from the last :meth:`clear`."""

    __slots__ = ("_high_at", "_highs", "_low_at", "_lows", "_windows", "last", "size")

    def __init__(self) -> None:
        self.size = 0  # entries since the last clear
        self.last = (NEVER, -NEVER)  # the newest entry: what ``since(size - 1)`` answers
        self._low_at: list[int] = []  # positions whose since is below every later one
        self._lows: list[int] = []
        self._high_at: list[int] = []  # positions whose until is above every later one
        self._highs: list[int] = []
        self._windows: list[Window] = []

    def append(self, since: int, until: int, nodes: Sequence[int] = ()) -> None:
        """Log room given back during ``[since, until)`` on ``nodes``."""
        self.extend([(since, until, nodes)])

    def extend(self, windows: Sequence[tuple[int, int, Iterable[int]]]) -> None:
        """:meth:`append` each ``(since, until, nodes)`` in turn; only the windows kept to
        be read one by one have their nodes made a tuple (a QoPS commit logs hundreds)."""
        lows, highs, low_at, high_at = self._lows, self._highs, self._low_at, self._high_at
        size = self.size
        for since, until, _ in windows:
            while lows and lows[-1] >= since:
                lows.pop()
                low_at.pop()
            while highs and highs[-1] <= until:
                highs.pop()
                high_at.pop()
            lows.append(since)
            low_at.append(size)
            highs.append(until)
            high_at.append(size)
            size += 1
        if not windows:
            return
        self.size = size
        self.last = (windows[-1][0], windows[-1][1])
        # As many as appending one by one keeps: each time the list passes twice the
        # kept, it is cut back to the kept.
        kept = self._windows
        length = len(kept) + len(windows)
        if length > 2 * WINDOWS_KEPT:
            length = WINDOWS_KEPT + (length - 2 * WINDOWS_KEPT - 1) % (WINDOWS_KEPT + 1)
        new = [(since, until, tuple(nodes)) for since, until, nodes in windows[-length:]]
        kept[:] = [*kept[len(kept) - (length - len(new)) :], *new] if length > len(new) else new

    def windows_since(self, position: int) -> list[Window] | None:
        """The entries logged at ``position`` or later, oldest first: each window of room
        given back with the nodes it was given back on; ``None`` if they are more than
        :data:`WINDOWS_KEPT`."""
        if self.size - position > WINDOWS_KEPT:
            return None
        return self._windows[len(self._windows) - (self.size - position) :]

    def since(self, position: int) -> tuple[int, int]:
        """The earliest ``since`` and the latest ``until`` logged at ``position`` or
        later (``NEVER`` and ``-NEVER``: none)."""
        lows, highs = self._lows, self._highs
        low = bisect_left(self._low_at, position)
        high = bisect_left(self._high_at, position)
        return (
            lows[low] if low < len(lows) else NEVER,
            highs[high] if high < len(highs) else -NEVER,
        )

    def clear(self) -> None:
        self.size = 0
        self.last = (NEVER, -NEVER)
        self._low_at.clear()
        self._lows.clear()
        self._high_at.clear()
        self._highs.clear()
        self._windows.clear()


#: Entries a room log keeps before it starts again (the node planner's logs).
LOG_LIMIT = 1 << 16


class RoomLogs:
    """A :class:`RoomLog` for each set of nodes some jobs can use (keyed by anything
    hashable that names the set; the node planner uses the set's summed profile).
    Room given back on nodes is logged in the log of every set they belong to, so a
    job reads only the room that can matter to it. A log longer than ``limit`` starts
    again (its jobs must then be asked afresh: slower once, never wrong)."""

    __slots__ = ("_limit", "_logs")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._logs: dict[Hashable, RoomLog] = {}

    def of(self, key: Hashable) -> RoomLog:
        """The log of set ``key`` (started empty when first asked)."""
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = RoomLog()
        return log

    def append(
        self, keys: Iterable[Hashable], since: int, until: int, nodes: Sequence[int] = ()
    ) -> list[RoomLog]:
        """Log ``[since, until)`` on ``nodes`` for the sets ``keys`` that have a log; the
        logs that started again first (their jobs must be asked afresh)."""
        restarted = []
        for key in keys:
            restarted += self.extend(key, [(since, until, nodes)])
        return restarted

    def extend(
        self, key: Hashable, windows: Sequence[tuple[int, int, Iterable[int]]]
    ) -> list[RoomLog]:
        """:meth:`append` each ``(since, until, nodes)`` in turn for the set ``key`` alone;
        its log each time it started again."""
        log = self._logs.get(key)
        restarted = []
        at = 0
        while log is not None and at < len(windows):
            if log.size >= self._limit:
                log.clear()
                restarted.append(log)
            part = windows[at : at + self._limit - log.size]
            log.extend(part)
            at += len(part)
        return restarted

    def clear(self) -> None:
        """Forget every set (the plan they were kept for is gone)."""
        self._logs.clear()
