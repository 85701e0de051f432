"""Live gang benchmark (``make bench``): the daemon's engine against the emulator.

The same Zhou et al. workload (128 processors, ``--jobs`` jobs at load ``--load``) runs
through a live gang partition of 8 emulated nodes of 16 cpus, driven by a virtual clock
batch by batch as the daemon's scheduler would drive it, and through ``replay_gang``.
Reported: the engine's CPU time per slot boundary (median, p99), the whole run against
the emulator's (the engine also keeps job records, events, intents and memory shares),
and whether the two schedules agree job by job. Medians of ``--repeat`` runs.

    .venv/bin/python benchmarks/bench_gang_live.py
    .venv/bin/python benchmarks/bench_gang_live.py --jobs 5000 --scheme brms
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from berth.dispatch.emulated import EmulatedNodes
from berth.emulate.gang import replay_gang
from berth.emulate.virtual import run_on_virtual_clock, trace_request
from berth.emulate.workload import TraceJob
from berth.emulate.zhou import PROCESSORS, SLOT_SECONDS, generate_zhou
from berth.service.cluster_commands import CreatePartition
from berth.service.model import NodeRecord
from berth.service.partitions.gang import GangSpec
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine


def run_live(jobs: list[TraceJob], scheme: str) -> tuple[float, list[float], dict[int, int]]:
    """Total CPU seconds, CPU seconds of each boundary, and each job's end slot."""
    nodes = [NodeRecord(f"n{i:02d}", {"cpus": 16, "mem_gb": 64}) for i in range(8)]
    live = restore_engine(Snapshot(), EmulatedNodes(), 0, nodes, "easy", {})
    CreatePartition(GangSpec("g", [n.name for n in nodes], scheme, SLOT_SECONDS)).apply(live, 0)
    live.memory.keep = len(jobs)  # the comparison reads every job's end at the close
    arrivals = [(trace.job.submit, trace_request(trace, "g")) for trace in jobs]
    steps: list[float] = []
    clock = [time.process_time()]

    def after_batch(_: int) -> None:
        live.take_changes()  # what the coordinator would persist
        live.outbox.take_events()
        now = time.process_time()
        steps.append(now - clock[0])
        clock[0] = now

    started = clock[0]
    engine_ids = run_on_virtual_clock(live, arrivals, after_batch)
    ids = {engine_id: trace.job.id for engine_id, trace in zip(engine_ids, jobs, strict=True)}
    total = time.process_time() - started
    ends = {}
    for engine_id, trace_id in ids.items():
        end = live.jobs[engine_id].end_time
        assert end is not None
        ends[trace_id] = -(-end // SLOT_SECONDS) * SLOT_SECONDS
    return total, steps, ends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--scheme", default="brmms")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    jobs = generate_zhou(args.load, args.jobs, seed=1).jobs
    # The Zhou workload's estimates are its runtimes; give room so no job is killed.
    jobs = [TraceJob(replace(j.job, estimate=j.runtime * 2), j.runtime) for j in jobs]
    live_times, emulated_times, per_step = [], [], []
    agree = True
    for _ in range(args.repeat):
        total, steps, ends = run_live(jobs, args.scheme)
        live_times.append(total)
        per_step.extend(steps)
        started = time.process_time()
        emulated = replay_gang(jobs, PROCESSORS, args.scheme, SLOT_SECONDS)
        emulated_times.append(time.process_time() - started)
        agree = agree and ends == {r.id: r.end for r in emulated.records}
    per_step.sort()
    live_s, emulated_s = statistics.median(live_times), statistics.median(emulated_times)
    print(
        f"live gang partition, {args.jobs:,} Zhou jobs at load {args.load}, {args.scheme}, "
        f"{PROCESSORS} cpus on 8 nodes, {len(per_step) // args.repeat:,} events per run"
    )
    print(
        f"  per event: median {statistics.median(per_step) * 1e6:,.0f} us, "
        f"p99 {per_step[int(len(per_step) * 0.99)] * 1e6:,.0f} us"
    )
    print(
        f"  whole run: live {live_s:.2f} s, emulator {emulated_s:.2f} s "
        f"(ratio {live_s / emulated_s:.1f}x); same schedule job by job: {agree}"
    )


if __name__ == "__main__":
    main()
