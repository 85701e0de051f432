"""The ``berth workload generate`` command: K-resource workloads (Leinberger et al. 1999).

Reads a single-resource trace, extends its first ``--jobs`` jobs to ``--k`` resources
(:mod:`berth.emulate.generate`), calibrates Poisson arrivals so that FCFS/FF-EASY reaches
``--queue-length`` waiting jobs on average, and writes a JSONL workload that
``berth emulate`` replays. Progress (one line per calibration replay) goes to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

import argparse
import sys
from collections.abc import Callable
from typing import Any

from berth.core.catalog import DISTRIBUTIONS
from berth.runtime.paths import path_arg


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    workload = commands.add_parser("workload", help="generate workloads for the emulator")
    actions = workload.add_subparsers(dest="workload_command", required=True)
    generate = actions.add_parser(
        "generate",
        help="a K-resource workload from a single-resource trace, with Poisson arrivals "
        "calibrated to a target FCFS/FF-EASY queue length",
    )
    generate.add_argument("--from", dest="source", type=path_arg, required=True, help="base trace")
    generate.add_argument("--k", type=int, default=4, help="number of resources (default 4)")
    generate.add_argument("--distribution", choices=DISTRIBUTIONS, default="uniform")
    generate.add_argument(
        "--queue-length", type=float, default=128, help="target average queue (default 128)"
    )
    generate.add_argument("--jobs", type=int, default=5000, help="jobs taken from the base")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", type=path_arg, required=True, help="JSONL file to write")
    return {"workload": run_generate}


def run_generate(args: argparse.Namespace) -> int:
    from berth.emulate.generate import calibrate, extend_to_k, resource_names, with_poisson_arrivals
    from berth.emulate.traces import read_workload
    from berth.emulate.traces.jsonl import write_jsonl
    from berth.emulate.workload import WorkloadError

    try:
        base = read_workload(args.source)
    except (OSError, WorkloadError, ValueError) as error:
        print(f"berth workload generate: {error}", file=sys.stderr)
        return 1
    processors = base.capacity.get("cpus")
    if processors is None:
        print(
            f"berth workload generate: {args.source} declares no processor count", file=sys.stderr
        )
        return 1
    if args.jobs < 2:
        print(f"berth workload generate: --jobs must be >= 2, got {args.jobs}", file=sys.stderr)
        return 1

    def report(iteration: int, gap: float, length: float) -> None:
        print(
            f"  calibration {iteration}: mean gap {gap:,.1f} s -> FF-EASY queue {length:,.1f}",
            file=sys.stderr,
        )

    try:
        jobs = extend_to_k(base.jobs[: args.jobs], args.k, args.distribution, processors, args.seed)
        capacity = dict.fromkeys(resource_names(args.k), processors)
        found = calibrate(jobs, capacity, args.queue_length, args.seed, progress=report)
    except ValueError as error:
        print(f"berth workload generate: {error}", file=sys.stderr)
        return 1
    arrivals = with_poisson_arrivals(jobs, found.mean_interarrival, args.seed)
    comments = [
        f"berth workload generate --from {args.source.name} --k {args.k} "
        f"--distribution {args.distribution} --queue-length {args.queue_length:g} "
        f"--jobs {len(jobs)} --seed {args.seed}",
        f"mean inter-arrival {found.mean_interarrival:.3f} s; "
        f"FCFS/FF-EASY average queue length {found.queue_length:.1f}",
    ]
    with args.out.open("w", encoding="utf-8") as stream:
        write_jsonl(arrivals, capacity, stream, comments)
    print(
        f"wrote {len(arrivals):,} jobs to {args.out}: mean inter-arrival "
        f"{found.mean_interarrival:,.1f} s, FF-EASY queue {found.queue_length:,.1f} "
        f"(target {args.queue_length:g})"
    )
    return 0
