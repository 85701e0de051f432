"""What-ifs' forecasts take turns (:mod:`berth.api.what_if_turns`): at most a few are
driven at once, the others wait, and one that gets no turn in time says why."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from berth.api import what_if_turns
from berth.service.queries.answers import WhatIfForecast


class Forecast(WhatIfForecast):
    """A forecast that completes after ``slices`` slices, counting how many are being
    driven at once (between a first slice and the last)."""

    driving: ClassVar[set[int]] = set()
    most_at_once: ClassVar[int] = 0

    def __init__(self, number: int, slices: int) -> None:
        self.answer = {"accepted": True, "reason": "queued", "predicted_start": None}
        self.number, self.left = number, slices

    def advance(self, stop: object) -> bool:
        Forecast.driving.add(self.number)
        Forecast.most_at_once = max(Forecast.most_at_once, len(Forecast.driving))
        self.left -= 1
        if self.left:
            return False
        Forecast.driving.discard(self.number)
        self.answer["predicted_start"] = 100 + self.number
        return True


def test_at_most_so_many_forecasts_are_driven_at_once_and_all_finish() -> None:
    Forecast.driving, Forecast.most_at_once = set(), 0
    forecasts = [Forecast(n, 3) for n in range(6)]

    async def ask_all() -> None:
        turns = what_if_turns.Turns(2)
        await asyncio.gather(*(what_if_turns.drive(f, turns, 60.0, 1.0) for f in forecasts))

    asyncio.run(ask_all())
    assert Forecast.most_at_once == 2
    assert [f.answer["predicted_start"] for f in forecasts] == [100 + n for n in range(6)]


def test_a_what_if_that_gets_no_turn_in_time_answers_no_start_and_says_why() -> None:
    waiting = Forecast(7, 1)

    async def ask_while_busy() -> None:
        turns = what_if_turns.Turns(1)
        holder = Forecast(8, 1 << 30)  # another what-if's forecast holds the only turn
        busy = asyncio.create_task(what_if_turns.drive(holder, turns, 60.0, 1.0))
        await asyncio.sleep(0)
        await what_if_turns.drive(waiting, turns, 0.05, 1.0)
        busy.cancel()

    asyncio.run(ask_while_busy())
    assert waiting.answer == {
        "accepted": True,
        "reason": "queued; no predicted start: other what-ifs' forecasts held every "
        "turn for 0.05 s (1 run at once); ask again",
        "predicted_start": None,
    }
    assert waiting.left == 1  # never driven
