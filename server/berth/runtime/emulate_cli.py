"""``berth emulate`` and ``berth demo``: replay a workload through a policy and report.

Imported only when one of these commands runs (see :mod:`berth.runtime.main`); it loads
the emulator (and tqdm when a progress bar is shown), never the daemon's web or
database stack.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from berth.emulate.output import (
    format_report,
    format_starts,
    format_table,
    write_jobs_jsonl,
    write_swf,
)
from berth.emulate.run import Emulation, ProgressFactory, emulate, no_progress
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload, WorkloadError
from berth.runtime.commands import BAD_ARGUMENTS
from berth.runtime.options import POLICY_FLAGS, node_cluster
from berth.runtime.paths import DEMO_TRACE, find_shared_trace
from berth.service.collector import collector_paused


def _tqdm_progress(enabled: bool) -> ProgressFactory:
    @contextmanager
    def factory(label: str, total: int) -> Iterator[Callable[[int], None] | None]:
        from tqdm import tqdm  # costs ~40 ms to import: only when a bar is shown

        with tqdm(
            total=total, desc=f"replay {label}", unit="job", delay=1.0, file=sys.stderr,
            disable=not enabled, leave=False,
        ) as bar:  # fmt: skip

            def advance(count: int) -> None:
                bar.update(count)

            yield advance

    return factory


def run_emulate(args: argparse.Namespace) -> int:
    # The reader and the replay pause the cyclic collector (they build no cycles), and
    # each time they let it run again it walked all they had built, which was still
    # young: 0.15 s of SDSC-BLUE's EASY replay, 3 % of KTH's. Paused for the whole
    # command, it runs again only once the command's objects are gone.
    with collector_paused():
        return _run_emulate(args)


def _run_emulate(args: argparse.Namespace) -> int:
    if args.sweep is not None:
        from berth.runtime.sweep_cli import run_sweep

        return run_sweep(args)
    try:
        workload = read_workload(args.workload)
    except (OSError, WorkloadError, ValueError) as error:
        print(f"berth emulate: {error}", file=sys.stderr)
        return 1
    show = sys.stderr.isatty() if args.progress is None else args.progress
    workflow = any(t.needs for t in workload.jobs)
    if workflow:
        refused = [flag for flag, given in (("--policy gang", args.policy == "gang"),
                                            ("--slice", args.slice),
                                            ("--load", args.load != 1.0)) if given]  # fmt: skip
        if refused:
            print(
                f"berth emulate: {args.workload} has dependencies or array limits, which "
                f"{', '.join(refused)} cannot replay",
                file=sys.stderr,
            )
            return BAD_ARGUMENTS
    if args.policy == "gang":
        return _run_gang(args, workload, show)
    options = {
        name: getattr(args, name) for name in POLICY_FLAGS if getattr(args, name) is not None
    }
    try:
        scenario = Scenario(
            first=args.first,
            estimates=args.estimates,
            load=args.load,
            load_method=args.load_method,
            stringency=args.deadlines,
            deadline_fraction=args.deadline_fraction,
            seed=args.seed,
            priorities=args.priorities,
        )
        results = emulate(
            workload,
            args.policy,
            capacity=args.capacity,
            scenario=scenario,
            slice_by=args.slice,
            progress=_tqdm_progress(show) if show else no_progress,
            policy_options=options,
            nodes=node_cluster(args.nodes) if args.nodes else workload.nodes,
            compression_budget=args.compression_budget,
        )
    except ValueError as error:  # (an option's value, or options that do not go together)
        print(f"berth emulate: {error}", file=sys.stderr)
        return BAD_ARGUMENTS
    records = [r for result in results for r in result.records]
    if args.out:
        with args.out.open("w", encoding="utf-8") as stream:
            write_jobs_jsonl(records, stream)
    if args.out_swf:
        with args.out_swf.open("w", encoding="utf-8") as stream:
            write_swf(records, stream, workload.header)
    if (args.starts or workflow) and not args.json:
        needs = {t.job.id: t.needs for t in workload.jobs}
        print(format_starts(records, needs))
    _print_results(args, workload.skipped.total(), results)
    return 0


def _print_results(args: argparse.Namespace, skipped: int, results: Sequence[Emulation]) -> None:
    if args.json:
        payload: dict[str, object] = {"policy": args.policy, "skipped": skipped}
        if args.compression_budget is not None:
            payload["compression_budget"] = args.compression_budget
        if args.slice:
            payload["slices"] = [{"label": r.label, **r.report} for r in results]
        else:
            payload.update(results[0].report)
        print(json.dumps(payload, indent=2))
        return
    title = f"policy {args.policy} on {args.workload} (skipped {skipped} unusable jobs)"
    if args.compression_budget is not None:
        title += f", compressing {args.compression_budget} questions an instant"
    if args.slice:
        rows = [{"month": r.label, **r.report} for r in results]
        columns = ["month", "jobs", "rejected", "avg_wait", "avg_bounded_slowdown", "utilization"]
        print(title)
        print(format_table(rows, columns))
    else:
        print(format_report(results[0].report, title))


#: Options of the backfilling emulation that a gang replay does not take.
_NOT_FOR_GANG = {
    "nodes": "--nodes",
    "slice": "--slice",
    "deadlines": "--deadlines",
    "priorities": "--priorities",
    "out_swf": "--out-swf",
    "compression_budget": "--compression-budget",
}


def _run_gang(args: argparse.Namespace, workload: Workload, show: bool) -> int:
    """``berth emulate --policy gang``: the matrix slot by slot, the paper's measures."""
    from berth.emulate.gang import replay_gang

    unsupported = [flag for name, flag in _NOT_FOR_GANG.items() if getattr(args, name)]
    # (and the backfilling policies' options: gang scheduling has its own)
    unsupported += [
        f"--{name.replace('_', '-')}" for name in POLICY_FLAGS if getattr(args, name) is not None
    ]
    if unsupported:
        print(
            f"berth emulate: --policy gang does not take {', '.join(unsupported)}", file=sys.stderr
        )
        return BAD_ARGUMENTS
    capacity = {**workload.capacity, **(args.capacity or {})}
    processors = capacity.get("cpus")
    if processors is None:
        print(
            f"berth emulate: {args.workload} declares no processor count; pass --capacity cpus=N",
            file=sys.stderr,
        )
        return BAD_ARGUMENTS
    if processors & (processors - 1):
        power = 1 << processors.bit_length()
        print(
            f"berth emulate: --policy gang needs a power-of-two processor count (buddy "
            f"blocks), got {processors}; pass --capacity cpus={power} to replay on {power}",
            file=sys.stderr,
        )
        return BAD_ARGUMENTS
    jobs = workload.jobs[: args.first] if args.first else workload.jobs
    try:
        with _tqdm_progress(show)("gang", len(jobs)) as tick:
            result = replay_gang(
                jobs, processors, args.scheme, args.slot_seconds, tick, args.max_rows
            )
    except ValueError as error:  # (the slot length or row limit)
        print(f"berth emulate: {error}", file=sys.stderr)
        return BAD_ARGUMENTS
    if args.out:
        with args.out.open("w", encoding="utf-8") as stream:
            for record in result.records:
                stream.write(json.dumps(record.as_dict(), separators=(",", ":")) + "\n")
    report = {"skipped": workload.skipped.total(), **result.report}
    if args.json:
        print(json.dumps({"policy": "gang", **report}, indent=2))
    else:
        title = (
            f"gang scheduling, scheme {args.scheme}, {args.slot_seconds}-s slots, on "
            f"{args.workload} (turnarounds in slots)"
        )
        print(format_report(report, title))
    return 0


def run_demo(args: argparse.Namespace) -> int:
    trace = args.trace or find_shared_trace(DEMO_TRACE) or KTH_SAMPLE
    workload = read_workload(trace)
    workload.jobs = workload.jobs[: args.jobs]
    print(f"Berth demo: the first {len(workload.jobs):,} jobs of {trace.name}")
    print(f"on {workload.capacity}, with the users' own runtime estimates.\n")
    rows = []
    for policy in ("fcfs", "easy", "conservative"):
        (result,) = emulate(workload, policy)
        rows.append({"policy": policy, **result.report})
    columns = ["policy", "jobs", "avg_wait", "avg_response", "avg_bounded_slowdown", "utilization"]
    print(format_table(rows, columns))
    print("\nTry it yourself:")
    print(f"  .venv/bin/berth emulate {trace} --policy conservative --slice month")
    return 0
