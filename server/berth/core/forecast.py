"""Predicted starts: run a copy of a policy forward, assuming nothing new happens.

The forecast answers "when will my job start?" for policies that make no plan (FCFS,
EASY): a deep copy of the policy is driven forward in time, every running job ending at
its expected end (start + estimate) and no job arriving, until every waiting job has
started. For planning policies (conservative, deadline admission) the same run simply
reproduces their reservations. It is a prediction, not a promise: early completions make
jobs start sooner, and under EASY later arrivals may backfill ahead and delay them.
The live policy is never touched. Pure: time is an argument, no I/O.
"""

from __future__ import annotations

import copy
import heapq

from berth.core.policies.base import LivePolicy


def forecast(policy: LivePolicy, now: int) -> dict[int, int]:
    """The predicted start of every job waiting in ``policy`` at ``now``.

    Running jobs whose expected end has passed (overrunning, about to be killed) are
    assumed to end at ``now``.
    """
    twin = copy.deepcopy(policy)
    ends = [(max(r.expected_end, now), job_id) for job_id, r in twin.running.items()]
    heapq.heapify(ends)
    predicted: dict[int, int] = {}
    moment = now
    for start in twin.schedule(moment):
        predicted[start.job_id] = moment
    while twin.waiting:
        wake = twin.next_wakeup()
        candidates = [t for t in (ends[0][0] if ends else None, wake) if t is not None]
        if not candidates:
            break  # nothing can change any more: the remaining jobs never start
        moment = max(min(candidates), moment)
        finished: list[int] = []
        while ends and ends[0][0] <= moment:
            finished.append(heapq.heappop(ends)[1])
        if finished:
            twin.complete(finished, moment)
        for start in twin.schedule(moment):
            predicted[start.job_id] = moment
            heapq.heappush(ends, (twin.running[start.job_id].expected_end, start.job_id))
    return predicted
