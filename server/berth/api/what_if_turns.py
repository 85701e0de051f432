"""What-ifs' forecasts take turns: at most a few run at once, the others wait.

Under EASY and FCFS a what-if's predicted start is a forecast on a copy of the policy,
driven by its request in short slices with a turn of the event loop between them
(:class:`~berth.service.queries.answers.WhatIfForecast`). Every forecast under way
adds its slice to each turn, so sixteen what-ifs at once made every other request,
and the writer, wait sixteen slices (on 256 nodes, `/healthz` 300 ms at the median
beside them; 80 ms with turns); and each of them, sharing the time with the rest,
reached the job later than one alone would. So a what-if waits for one of
``WHAT_IF_FORECASTS`` turns before it drives its forecast, within the same budget of
wall time: one that gets no turn in time answers with no predicted start and says why.
"""

from __future__ import annotations

import asyncio

from berth.service.planning.budgets import within
from berth.service.queries.answers import WhatIfForecast


class Turns:
    """``at_once`` turns for what-ifs' forecasts (one per daemon)."""

    __slots__ = ("_free", "at_once")

    def __init__(self, at_once: int) -> None:
        self.at_once = at_once
        self._free = asyncio.Semaphore(at_once)


async def drive(answer: WhatIfForecast, turns: Turns, seconds: float, slice_seconds: float) -> None:
    """Drive ``answer``'s forecast in slices of ``slice_seconds`` once one of ``turns`` is
    free, for ``seconds`` of wall time in all (a free turn is taken without waiting)."""
    spent = within(seconds)
    try:
        async with asyncio.timeout(seconds):
            await turns._free.acquire()
    except TimeoutError:
        answer.no_turn(seconds, turns.at_once)
        return
    try:
        while not answer.advance(within(slice_seconds)):
            if spent():
                answer.give_up(seconds)
                break
            await asyncio.sleep(0)
    finally:
        turns._free.release()
