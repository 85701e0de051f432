"""The read model of predicted starts: when every pending job is expected to start.

A reserving policy (conservative, slack, the deadline policies) plans every waiting
job, and its plan is on the job records (``planned_start``). A policy that promises
nothing (EASY, FCFS) plans no one but runs a copy of itself forward
(:class:`~berth.core.forecast.ForecastRun`) once per change of the engine (its
:attr:`~berth.service.outbox.Outbox.version`). Sliced (the daemon), the read that
starts a run gives it :data:`FORECAST_SLICE`; a run that does not finish then goes on
in the single writer's slices (:meth:`Forecasts.advance`) only, and reads meanwhile get
the last finished run, whose ``computed_at`` says from when: no read waits for a deep
queue's forecast, nor drives one. (At 4,096 nodes and 40,000 waiting a run never
finishes within a slice, and every start-time query spent its 5 ms, often more, on
it.) A run stops after :data:`FORECAST_HORIZON` starts: the jobs behind get no
prediction, and an answer says why. A part of
:class:`~berth.service.engine.Engine`, reading its pending jobs, its partitions'
timelines and its outbox's version. No I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping

from berth.core.forecast import ForecastRun
from berth.core.policies.base import LivePolicy
from berth.core.timeline import Timeline
from berth.service.model import JobRecord
from berth.service.outbox import Outbox
from berth.service.planning.budgets import within

#: Wall time a read may spend on a forecast before it answers from the last one.
FORECAST_SLICE = 0.005

#: How many starts a forecast predicts per policy before it stops. Driving EASY
#: forward until all of 49,000 waiting jobs had started on 4,096 nodes took over ten
#: minutes, so no read ever got a prediction; the first 500 take 6 s, the first 1,000
#: 16 s (in-process), in the writer's slices. Slurm's backfill, likewise, estimates
#: only the jobs it reaches (``bf_max_job_test``, 500 by default).
FORECAST_HORIZON = 500


class Forecasts:
    """Predicted starts of the pending jobs, computed once per change of the engine."""

    def __init__(
        self,
        pending: Mapping[int, JobRecord],
        lanes: Mapping[str | None, Timeline[LivePolicy]],
        outbox: Outbox,
    ) -> None:
        self._pending = pending
        self._lanes = lanes
        self._outbox = outbox
        #: Whether a forecast is computed in slices (the daemon) or whole (tests).
        self.sliced = False
        #: How many starts a forecast predicts per policy (:data:`FORECAST_HORIZON`).
        self.horizon = FORECAST_HORIZON
        #: The last finished forecast: the version and time it is of, its starts, and
        #: whether it stopped at its horizon with jobs still waiting.
        self._done: tuple[int, int, dict[int, int], bool] | None = None
        #: The forecast under way: the version and time it started at, a run per policy.
        self._run: tuple[int, int, list[ForecastRun]] | None = None
        #: The sorted predicted starts, per (version, prediction time).
        self._standing: tuple[tuple[int, int], list[int]] | None = None

    @property
    def under_way(self) -> bool:
        """A forecast is being computed (the writer's slices go on with it)."""
        return self._run is not None

    def predictions(self, now: int) -> tuple[int, dict[int, int]]:
        """``(computed_at, predicted start of every pending job)``: the plans on the
        records, and for the policies that plan no one, the last finished forecast."""
        predicted = {
            i: r.planned_start for i, r in self._pending.items() if r.planned_start is not None
        }
        done = self._last(now)
        if done is None:
            return now, predicted
        return done[0], {**done[1], **predicted}

    def prediction(self, job_id: int, now: int) -> tuple[int, int | None]:
        """``(computed_at, predicted start)`` of one pending job: :meth:`predictions`
        without building the map of every job (a start-time query in a deep queue)."""
        record = self._pending.get(job_id)
        planned = None if record is None else record.planned_start
        done = self._last(now)
        if done is None:
            return now, planned
        return done[0], done[1].get(job_id) if planned is None else planned

    def _last(self, now: int) -> tuple[int, dict[int, int]] | None:
        """The last finished forecast's time and starts (``None``: none yet, or every
        policy plans its jobs). A change of the engine starts a new run, given one slice
        here; one under way is the writer's to drive (:meth:`advance`)."""
        if all(lane.policy.reserves_every_job for lane in self._lanes.values()):
            return None
        version = self._outbox.version
        if self._run is None and (self._done is None or self._done[0] != version):
            policies = [
                lane.policy for lane in self._lanes.values() if not lane.policy.reserves_every_job
            ]
            runs = [ForecastRun(policy, now, self.horizon) for policy in policies]
            self._run = (version, now, runs)
            self.advance(within(FORECAST_SLICE) if self.sliced else None)
        return None if self._done is None else (self._done[1], self._done[2])

    def queue_standing(
        self, job_ids: Iterable[int], now: int
    ) -> dict[int, tuple[int | None, int | None]]:
        """For waiting jobs: their predicted start and how many waiting jobs are
        predicted to start no later (``None``, ``None``: no prediction yet). The sorted
        starts are kept per prediction, so a page of a deep queue costs a bisect a job."""
        at, predicted = self.predictions(now)
        key = (self._outbox.version, at)
        if self._standing is None or self._standing[0] != key:
            self._standing = (key, sorted(predicted.values()))
        starts = self._standing[1]
        standing: dict[int, tuple[int | None, int | None]] = {}
        for job_id in job_ids:
            start = predicted.get(job_id)
            standing[job_id] = (start, None if start is None else bisect_right(starts, start) - 1)
        return standing

    def advance(self, stop: Callable[[], bool] | None) -> bool:
        """Drive the forecast under way until done or ``stop()``; whether it is done (it
        is then the one reads get)."""
        if self._run is None:
            return True
        version, at, runs = self._run
        if not all(run.advance(stop) for run in runs):
            return False
        predicted: dict[int, int] = {}
        for run in runs:
            predicted.update(run.predicted)
        self._done, self._run = (version, at, predicted, any(run.cut for run in runs)), None
        return True

    def beyond_horizon(self, job_id: int) -> bool:
        """Whether the last finished forecast stopped at its horizon before ``job_id``."""
        done = self._done
        return done is not None and done[3] and job_id not in done[2]
