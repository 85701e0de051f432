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


async def drive(
    answer: WhatIfForecast,
    turns: asyncio.Semaphore,
    at_once: int,
    seconds: float,
    slice_seconds: float,
) -> None:
    """Drive ``answer``'s forecast in slices of ``slice_seconds`` once one of ``turns``
    (``at_once`` of them) is free, for ``seconds`` of wall time in all."""
    spent = within(seconds)
    if turns.locked():
        try:
            async with asyncio.timeout(seconds):
                await turns.acquire()
        except TimeoutError:
            answer.no_turn(seconds, at_once)
            return
    else:
        await turns.acquire()  # free: taken at once
    try:
        while not answer.advance(within(slice_seconds)):
            if spent():
                answer.give_up(seconds)
                break
            await asyncio.sleep(0)
    finally:
        turns.release()
