"""The ``berth workload generate`` command: K-resource and gang workloads.

``--model zhou`` draws the synthetic gang workload of Zhou, Brent and Walsh
(:mod:`berth.emulate.zhou`) at an offered load ``--load``. The default model,
``leinberger`` (Leinberger et al. 1999), reads a single-resource trace, extends its first ``--jobs`` jobs to ``--k`` resources
(:mod:`berth.emulate.generate`), calibrates Poisson arrivals so that FCFS/FF-EASY reaches
``--queue-length`` waiting jobs on average, and writes a JSONL workload that
``berth emulate`` replays. Progress (one line per calibration replay) goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from berth.core.catalog import DISTRIBUTIONS, GANG_SLOT_SECONDS
from berth.runtime.commands import BAD_ARGUMENTS
from berth.runtime.paths import path_arg


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    workload = commands.add_parser("workload")
    actions = workload.add_subparsers(dest="workload_command", required=True)
    generate = actions.add_parser(
        "generate",
        help="a K-resource workload from a single-resource trace, with Poisson arrivals "
        "calibrated to a target FCFS/FF-EASY queue length (--model leinberger), or the "
        "synthetic gang workload of Zhou, Brent & Walsh at a given load (--model zhou)",
    )
    generate.add_argument(
        "--model", choices=("leinberger", "zhou"), default="leinberger", help="default leinberger"
    )
    generate.add_argument("--from", dest="source", type=path_arg, help="base trace (leinberger)")
    generate.add_argument("--k", type=int, default=4, help="number of resources (default 4)")
    generate.add_argument("--distribution", choices=DISTRIBUTIONS, default="uniform")
    generate.add_argument(
        "--queue-length", type=float, default=128, help="target average queue (default 128)"
    )
    generate.add_argument(
        "--jobs",
        type=int,
        default=5000,
        help="jobs taken from the base (leinberger) or drawn (zhou)",
    )
    generate.add_argument("--seed", type=int, default=0)
    zhou = generate.add_argument_group("zhou model")
    zhou.add_argument("--load", type=float, help="offered load rho = lambda p t / P, e.g. 0.9")
    zhou.add_argument("--processors", type=int, default=128, help="a power of two (default 128)")
    zhou.add_argument(
        "--sizes",
        choices=("power-of-two", "integer"),
        default="power-of-two",
        help="round log-uniform sizes to powers of two (default) or to integers",
    )
    zhou.add_argument(
        "--slot-seconds",
        type=int,
        default=GANG_SLOT_SECONDS,
        help=f"seconds per slot in the written times (default {GANG_SLOT_SECONDS})",
    )
    generate.add_argument("--out", type=path_arg, required=True, help="JSONL file to write")
    return {"workload": run_generate}


def run_generate(args: argparse.Namespace) -> int:
    if args.model == "zhou":
        return _generate_zhou(args)
    if args.source is None:
        print("berth workload generate: --model leinberger needs --from TRACE", file=sys.stderr)
        return BAD_ARGUMENTS
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
        return BAD_ARGUMENTS

    def report(iteration: int, gap: float, length: float) -> None:
        print(
            f"  calibration {iteration}: mean gap {gap:,.1f} s -> FF-EASY queue {length:,.1f}",
            file=sys.stderr,
        )

    try:
        jobs = extend_to_k(base.jobs[: args.jobs], args.k, args.distribution, processors, args.seed)
        capacity = dict.fromkeys(resource_names(args.k), processors)
        found = calibrate(jobs, capacity, args.queue_length, args.seed, progress=report)
    except ValueError as error:  # (an option's value)
        print(f"berth workload generate: {error}", file=sys.stderr)
        return BAD_ARGUMENTS
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


def _generate_zhou(args: argparse.Namespace) -> int:
    from berth.emulate.traces.jsonl import write_jsonl
    from berth.emulate.zhou import generate_zhou

    if args.load is None:
        print("berth workload generate: --model zhou needs --load RHO", file=sys.stderr)
        return BAD_ARGUMENTS
    if args.slot_seconds < 1:
        print(
            f"berth workload generate: --slot-seconds must be >= 1, got {args.slot_seconds}",
            file=sys.stderr,
        )
        return BAD_ARGUMENTS
    try:
        made = generate_zhou(
            args.load,
            args.jobs,
            args.seed,
            processors=args.processors,
            powers_of_two=args.sizes == "power-of-two",
            slot_seconds=args.slot_seconds,
        )
    except ValueError as error:  # (an option's value)
        print(f"berth workload generate: {error}", file=sys.stderr)
        return BAD_ARGUMENTS
    comments = [
        f"berth workload generate --model zhou --load {args.load:g} --jobs {args.jobs} "
        f"--seed {args.seed} --processors {args.processors} --sizes {args.sizes} "
        f"--slot-seconds {args.slot_seconds}",
        f"mean inter-arrival {made.mean_interarrival_slots:.3f} slots; replay with "
        f"berth emulate --policy gang --slot-seconds {args.slot_seconds}",
    ]
    with args.out.open("w", encoding="utf-8") as stream:
        write_jsonl(made.jobs, {"cpus": made.processors}, stream, comments)
    print(
        f"wrote {len(made.jobs):,} jobs to {args.out}: offered load {args.load:g} on "
        f"{made.processors} processors, mean inter-arrival {made.mean_interarrival_slots:,.2f} "
        f"slots of {args.slot_seconds} s"
    )
    return 0
