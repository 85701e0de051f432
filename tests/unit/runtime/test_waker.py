"""The waker ticks the coordinator at the engine's next event: a wake-up that comes due
while a tick still waits for its batch is kept, not skipped, and ticks never overlap."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

import pytest

from berth.runtime.daemon import Waker


class _Clock:
    def wall_delay(self, cluster_time: int) -> float:
        return 0.0  # every wake-up is due at once


class _Coordinator:
    """Ticks that wait until released, as a tick waits for its batch under load."""

    def __init__(self) -> None:
        self.clock = _Clock()
        self.on_next_event: Callable[[int | None], None] | None = None
        self.release = asyncio.Event()
        self.waiting = 0
        self.most_at_once = 0
        self.ticks = 0

    async def tick(self) -> None:
        self.waiting += 1
        self.most_at_once = max(self.most_at_once, self.waiting)
        try:
            await self.release.wait()
        finally:
            self.waiting -= 1
        self.ticks += 1


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(500):  # at most 5 s
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not reached in 5 s")


def test_a_wake_up_due_while_a_tick_waits_ticks_once_more_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> _Coordinator:
        coordinator = _Coordinator()
        waker = Waker(cast(Any, coordinator), reconcile_seconds=3600)
        waker.start()
        try:
            waker.plan(1)
            await _until(lambda: coordinator.waiting == 1)
            waker.plan(2)  # due at once, while the first tick still waits
            await asyncio.sleep(0.2)
            coordinator.release.set()
            await _until(lambda: coordinator.ticks == 2)
        finally:
            waker.stop()
        return coordinator

    with caplog.at_level(logging.WARNING):
        coordinator = asyncio.run(scenario())
    assert coordinator.most_at_once == 1
    assert not [r for r in caplog.records if "skipped" in r.getMessage()]


def test_stopping_cancels_the_tick_that_waits() -> None:
    async def scenario() -> _Coordinator:
        coordinator = _Coordinator()
        waker = Waker(cast(Any, coordinator), reconcile_seconds=3600)
        waker.start()
        waker.plan(1)
        await _until(lambda: coordinator.waiting == 1)
        waker.stop()
        coordinator.release.set()
        await asyncio.sleep(0.1)
        return coordinator

    coordinator = asyncio.run(scenario())
    assert (coordinator.waiting, coordinator.ticks) == (0, 0)


class _Archive:
    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def prune_events(self, older_than: float) -> int:
        self.started.set()
        await asyncio.sleep(3600)  # (as a prune's thread outlives a stopping daemon)
        return 0


def test_a_prune_cut_short_by_the_daemon_stopping_is_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A daemon that stops (or fails to listen) during its start-up prune used to log
    the scheduler's traceback of the cancelled prune."""
    coordinator = _Coordinator()
    archive = coordinator.archive = _Archive()  # type: ignore[attr-defined]
    waker = Waker(cast(Any, coordinator), 3600, event_retention_seconds=86_400)

    async def stop_during_a_prune() -> None:
        pruning = asyncio.create_task(waker._prune())
        await archive.started.wait()
        pruning.cancel()
        await pruning  # (returns: the cancellation is the prune's end)

    with caplog.at_level(logging.DEBUG, logger="berth.waker"):
        asyncio.run(stop_during_a_prune())
    assert [r.getMessage() for r in caplog.records] == [
        "pruning events cut short by the daemon stopping"
    ]
