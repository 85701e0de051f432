"""How long the event loop goes without a turn, and what kept it.

Every read is answered on the event loop, so a read waits as long as the longest piece
of work between two of its turns: a scheduling slice, a batch of commands, a garbage
collection. :class:`StallWatch` measures that wait directly: a beat task asks for a turn
every :data:`BEAT` seconds and records how late it got it (in ``/metrics``:
``berth_event_loop_late_turns_total``, the turns later than :data:`LATE`, and
``berth_event_loop_lag_seconds_max``, the worst lateness). With
a report threshold set (``--stall-report-ms``), a watcher thread also samples the loop
thread's stack while a turn is overdue, and the beat logs, once the loop is back, how
long it was held and the frames it was seen in most — where to look, without a
profiler attached. While the loop turns on time the watcher only wakes every beat to
read a clock (a brief hand-over of the GIL).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

log = logging.getLogger("berth.stalls")

#: Seconds between two turns the beat asks for.
BEAT = 0.01
#: A turn later than this counts as late in the metrics (seconds).
LATE = 0.05
#: Berth's own frames named per sample: the outermost (what the turn was doing) and
#: the innermost (where in it).
OUTER, INNER = 3, 3


@dataclass
class StallWatch:
    """Measures the event loop's lateness; with ``report_after`` (seconds, 0: off),
    samples and logs what held it longer than that."""

    report_after: float = 0.0
    late_turns: int = 0
    worst: float = 0.0
    _last_turn: float = field(default_factory=time.monotonic)
    _samples: Counter[str] = field(default_factory=Counter)
    _loop_thread: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start beating on the running loop (and watching it, when reports are on)."""
        self._loop_thread = threading.get_ident()
        self._last_turn = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(self._beat())
        if self.report_after > 0:
            threading.Thread(target=self._watch, name="stall-watch", daemon=True).start()

    def lag(self) -> tuple[int, float]:
        """Turns later than :data:`LATE` so far, and the worst lateness (seconds)."""
        return self.late_turns, self.worst

    def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()

    async def _beat(self) -> None:
        while True:
            asked = time.monotonic()
            await asyncio.sleep(BEAT)
            now = time.monotonic()
            self._last_turn = now
            late = now - asked - BEAT
            if late > LATE:
                self.late_turns += 1
                self.worst = max(self.worst, late)
            if self.report_after > 0:
                if late > self.report_after:
                    self._report(late)
                elif self._samples:
                    self._samples = Counter()  # of a shorter wait: not reported

    def _report(self, late: float) -> None:
        samples, self._samples = self._samples, Counter()
        seen = "; ".join(f"{count}x {where}" for where, count in samples.most_common(3))
        log.warning(
            "event loop held %.0f ms: %s", 1000 * late, seen or "no sample (shorter than a tick)"
        )

    def _watch(self) -> None:
        """Sample the loop thread's stack every beat while a turn is overdue."""
        while not self._stop.wait(BEAT):
            if time.monotonic() - self._last_turn < 2 * BEAT:
                continue
            frame = sys._current_frames().get(self._loop_thread)
            if frame is not None:
                self._samples[_path(traceback.extract_stack(frame))] += 1


def _path(stack: traceback.StackSummary) -> str:
    """The berth frames of a stack, outermost first, the middle ones elided."""
    own = [e for e in stack if "/berth/" in e.filename and "/berth/runtime/" not in e.filename]
    if len(own) > OUTER + INNER:
        own = [*own[:OUTER], *own[-INNER:]]
    return " > ".join(_where(entry) for entry in own) or _where(stack[-1])


def _where(entry: traceback.FrameSummary) -> str:
    """A frame as ``module.py:line function``, the path cut to berth's own part."""
    path = entry.filename
    cut = path.rfind("/berth/")
    short = path[cut + 1 :] if cut >= 0 else path.rsplit("/", 1)[-1]
    return f"{short}:{entry.lineno} {entry.name}"
