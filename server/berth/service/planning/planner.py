"""The planner: each backfilling partition's policy in its timeline, and the plan
improvements left for later.

Every backfilling partition (``None``: the default one) has one core policy driven
through a :class:`~berth.core.timeline.Timeline`, which orders the events of each
instant as the emulator does. A command needs only a valid plan: a new job's guarantee
is found against the current reservations. Compression after jobs end only improves
the plan (a guarantee is an upper bound, so a compression not yet done breaks no
promise), so with :attr:`Planner.deferred` set (the daemon's single writer sets it)
the policies leave that work to :meth:`Planner.improve`, which the writer runs in
slices of bounded time between batches of commands: many job ends fold into one
compression and no request waits behind a long one. A part of
:class:`~berth.service.engine.Engine`, which applies what the policies decide to the
job records. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from berth.core.policies.base import LivePolicy
from berth.core.timeline import Timeline


class Planner:
    """The partitions' timelines, by partition name (``None``: the default partition)."""

    def __init__(self, default: LivePolicy) -> None:
        self.lanes: dict[str | None, Timeline[LivePolicy]] = {None: Timeline(default)}
        self._deferred = False

    @property
    def default(self) -> Timeline[LivePolicy]:
        return self.lanes[None]

    @property
    def deferred(self) -> bool:
        """Whether the policies leave improvements of their plans to :meth:`improve`
        instead of making them within the command that ended a job."""
        return self._deferred

    @deferred.setter
    def deferred(self, on: bool) -> None:
        self._deferred = on
        for lane in self.lanes.values():
            lane.policy.deferred = on

    def policy_of(self, partition: str | None) -> LivePolicy:
        """The policy planning ``partition`` (``None``: the default partition)."""
        return self.lanes[partition].policy

    def ended(self, jobs: Iterable[tuple[int, str | None]], now: int) -> None:
        """Tell each partition's timeline which of its jobs ended (``(job id,
        partition)`` pairs; a gang partition's jobs are not planned here)."""
        by_lane: dict[str | None, list[int]] = {}
        for job_id, partition in jobs:
            if partition in self.lanes:
                by_lane.setdefault(partition, []).append(job_id)
        for partition, job_ids in by_lane.items():
            self.lanes[partition].end(job_ids, now)

    def install(self, partition: str | None, policy: LivePolicy) -> None:
        """``policy`` plans ``partition`` from now on (a replan, or a new partition)."""
        policy.deferred = self._deferred
        if partition in self.lanes:
            self.lanes[partition].policy = policy
        else:
            self.lanes[partition] = Timeline(policy)

    def drop(self, partition: str) -> None:
        """A deleted partition's timeline goes."""
        self.lanes.pop(partition, None)

    def next_wakeup(self) -> int | None:
        """The earliest instant a policy asked to be woken at (a reservation's start)."""
        times = [t for lane in self.lanes.values() if (t := lane.policy.next_wakeup()) is not None]
        return min(times, default=None)

    @property
    def improvement_due(self) -> bool:
        return any(lane.policy.improvement_due for lane in self.lanes.values())

    def improve(self, now: int, stop: Callable[[], bool]) -> bool:
        """Improve the plans deferred until now until ``stop()``; whether all is done."""
        done = True
        for lane in self.lanes.values():
            if lane.policy.improvement_due:
                done = lane.policy.improve(now, stop) and done
        return done
