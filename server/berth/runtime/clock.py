"""The daemon's clock: cluster seconds, running ``scale`` times faster than the wall.

With ``scale`` 1 cluster time is Unix time. A scaled (emulated) cluster starts at the
later of the wall clock and the latest time already recorded in the store, so time never
runs backwards across restarts.
"""

from __future__ import annotations

import time


class ScaledClock:
    def __init__(self, scale: float = 1.0, not_before: int = 0) -> None:
        self.scale = scale
        # Keep the fraction: with scale 1 the cluster's seconds tick with Unix time's.
        self._origin = max(time.time(), float(not_before))
        self._mono = time.monotonic()

    def _exact(self) -> float:
        return self._origin + (time.monotonic() - self._mono) * self.scale

    def now(self) -> int:
        return int(self._exact())

    def wall_delay(self, cluster_time: int) -> float:
        return max(0.0, (cluster_time - self._exact()) / self.scale)
