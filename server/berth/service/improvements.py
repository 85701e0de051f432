"""Improvements of the plans left for later: the engine's side of the two speeds.

A command needs only a valid plan: a new job's guarantee is found against the current
reservations. Compression after jobs end only improves the plan (a guarantee is an
upper bound, so a compression not yet done breaks no promise). With
``defer_improvements`` set (the daemon's single writer sets it), the policies leave that
work to :meth:`PlanImprovements.improve`, which the writer runs in slices of bounded
time between batches of commands, so that many job ends are folded into one
compression and no request waits behind a long one. Part of the engine; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from berth.service.engine_base import EngineBase


class PlanImprovements(EngineBase):
    """Deferred plan improvements over every backfilling partition's policy."""

    _defer_improvements = False

    @property
    def defer_improvements(self) -> bool:
        """Whether the policies leave improvements of their plans (compression after
        jobs end) to :meth:`improve`, which the single writer runs in bounded slices
        between commands, instead of making them within the command that ended a job."""
        return self._defer_improvements

    @defer_improvements.setter
    def defer_improvements(self, on: bool) -> None:
        self._defer_improvements = on
        self.forecasts.sliced = on
        for lane in self.lanes.values():
            lane.policy.deferred = on

    @property
    def improvement_due(self) -> bool:
        return self.forecasts.under_way or any(
            lane.policy.improvement_due for lane in self.lanes.values()
        )

    def improve(self, now: int, stop: Callable[[], bool]) -> bool:
        """Improve the plans deferred until now until ``stop()``; whether all is done
        (moved reservations and the starts they make due follow in the batch's pass)."""
        done = True
        for lane in self.lanes.values():
            if lane.policy.improvement_due:
                done = lane.policy.improve(now, stop) and done
        return self.forecasts.advance(stop) and done
