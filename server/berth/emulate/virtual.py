"""The live engine on a virtual clock: the daemon's batches, without the daemon.

Each instant at which a job arrives or the engine has an event becomes one batch, as
the coordinator applies them: advance to the instant, submit that instant's jobs, one
scheduling pass. Tests and benchmarks use it to hold the live engine against the
emulator on the same jobs; nothing here waits for the wall clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from berth.emulate.workload import TraceJob
from berth.service.engine import Engine
from berth.service.handlers.job_commands import submit
from berth.service.model import JobRequest


def trace_request(trace: TraceJob, partition: str | None = None) -> JobRequest:
    """A trace job as a submission: its estimate the time limit, its runtime emulated,
    its deadline, slots and needs kept (its needs name jobs by the ids the daemon gives
    them: the trace's must be the same)."""
    return JobRequest(
        name=str(trace.job.id),
        user=trace.job.user or "u",
        resources={n: a for n, a in trace.job.resources.items() if a},
        time_limit=trace.job.estimate,
        deadline=trace.job.deadline,
        emulated_runtime=trace.runtime,
        partition=partition,
        shape=trace.job.shape,
        dependency=",".join(map(str, trace.needs)) or None,
    )


def run_on_virtual_clock(
    engine: Engine,
    arrivals: Sequence[tuple[int, JobRequest]],
    after_batch: Callable[[int], None] | None = None,
) -> list[int]:
    """Submit each request at its time (in order) and run the engine, event by event,
    until nothing is left to happen; ``after_batch(now)`` runs after each batch. The
    engine's ids of the requests, in the order given."""
    order = sorted(range(len(arrivals)), key=lambda i: arrivals[i][0])
    ids = [0] * len(arrivals)
    index = 0
    while True:
        due = engine.next_event()
        coming = arrivals[order[index]][0] if index < len(order) else None
        if due is None and coming is None:
            return ids
        now = min(t for t in (due, coming) if t is not None)
        with engine.batch(now):
            engine.advance(now)
            while index < len(order) and arrivals[order[index]][0] == now:
                ids[order[index]] = submit(engine, arrivals[order[index]][1], now)[0].id
                index += 1
        if after_batch is not None:
            after_batch(now)
