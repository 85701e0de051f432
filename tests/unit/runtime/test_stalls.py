"""The stall watch measures how late the event loop turns, and names what held it."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from berth.runtime.stalls import StallWatch


def hold_the_loop_for(seconds: float, watch: StallWatch) -> float:
    """Work that keeps the event loop from turning (a stand-in for a long pass): for
    ``seconds``, and on (up to 5 s) until the watch's thread has sampled it at least
    once (when it samples), which a loaded machine may not schedule at once; how long
    it held."""
    began = time.monotonic()
    sampling = watch.report_after > 0
    while (held := time.monotonic() - began) < seconds or (
        sampling and not watch._samples and held < 5
    ):
        sum(range(1000))
    return held


async def _watched(watch: StallWatch, hold: float) -> float:
    watch.start()
    try:
        await asyncio.sleep(0.05)  # a few beats on time first
        held = hold_the_loop_for(hold, watch)
        await asyncio.sleep(0.05)  # the beat comes back and records it
    finally:
        watch.stop()
    return held


def test_a_held_loop_is_counted_late_and_its_holder_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = StallWatch(report_after=0.04)
    with caplog.at_level(logging.WARNING, logger="berth.stalls"):
        held = asyncio.run(_watched(watch, 0.3))
    late_turns, worst = watch.lag()
    assert late_turns >= 1
    assert 0.25 < worst < held + 0.5
    reports = [r.getMessage() for r in caplog.records if r.name == "berth.stalls"]
    assert len(reports) == 1, reports
    assert reports[0].startswith("event loop held ")
    assert "hold_the_loop_for" in reports[0]


def test_without_reports_the_lateness_is_still_measured(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = StallWatch()  # report_after 0: no watcher thread, no log
    with caplog.at_level(logging.WARNING, logger="berth.stalls"):
        asyncio.run(_watched(watch, 0.2))
    assert watch.lag()[0] >= 1
    assert not [r for r in caplog.records if r.name == "berth.stalls"]
