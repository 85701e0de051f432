"""The ``berth`` command: ``berth serve`` runs the daemon, ``berth submit/queue/show/cancel``
talk to it, ``berth db upgrade`` migrates its database, ``berth emulate`` replays a
workload and ``berth demo`` shows the emulator off.

Argument errors exit with status 2 and a message naming the option; unreadable
workloads exit with status 1 and name the file, line and field.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tqdm import tqdm

from berth.core.policies import POLICIES
from berth.core.policies.slack import HEURISTICS
from berth.emulate.estimates import parse_estimates
from berth.emulate.output import format_report, format_table, write_jobs_jsonl, write_swf
from berth.emulate.run import Emulation, ProgressFactory, emulate, no_progress
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import WorkloadError
from berth.runtime import serve, workload_cli
from berth_client import cli as client_cli

DEMO_TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"


def parse_capacity(text: str) -> dict[str, int]:
    """``cpus=100,mem_gb=512`` -> ``{"cpus": 100, "mem_gb": 512}``."""
    capacity: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, amount = part.partition("=")
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"expected NAME=AMOUNT, got {part!r}")
        try:
            value = int(amount)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"capacity of {name.strip()!r} must be a whole number, got {amount!r}"
            ) from None
        if value <= 0:
            raise argparse.ArgumentTypeError(
                f"capacity of {name.strip()!r} must be positive, got {value}"
            )
        capacity[name.strip()] = value
    if not capacity:
        raise argparse.ArgumentTypeError("expected at least one NAME=AMOUNT")
    return capacity


#: ``berth emulate`` flags passed to the policy constructor (as keyword options).
POLICY_FLAGS = (
    "selection", "heuristic", "relaxation", "k_factor", "max_backtracks",
    "slack_factor", "awt", "alpha_u", "alpha_t", "alpha_p", "alpha_f",
)  # fmt: skip


def _estimates(text: str) -> str:
    try:
        parse_estimates(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _stringency(text: str) -> float:
    kind, _, value = text.partition(":")
    try:
        stringency = float(value)
    except ValueError:
        stringency = -1.0
    if kind != "easy" or not 0.0 <= stringency < 1.0:
        raise argparse.ArgumentTypeError(
            f"expected easy:S with a stringency S in [0, 1), got {text!r}"
        )
    return stringency


def _tqdm_progress(enabled: bool) -> ProgressFactory:
    @contextmanager
    def factory(label: str, total: int) -> Iterator[Callable[[int], None] | None]:
        with tqdm(
            total=total, desc=f"replay {label}", unit="job", delay=1.0, file=sys.stderr,
            disable=not enabled, leave=False,
        ) as bar:  # fmt: skip

            def advance(count: int) -> None:
                bar.update(count)

            yield advance

    return factory


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="berth", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    emulate_cmd = commands.add_parser(
        "emulate", help="replay a workload (SWF or JSONL) under a policy and report metrics"
    )
    emulate_cmd.add_argument("workload", type=Path, help=".swf, .swf.gz or .jsonl workload")
    emulate_cmd.add_argument("--policy", choices=sorted(POLICIES), default="easy")
    emulate_cmd.add_argument(
        "--selection",
        choices=["ff", "bl", "bb"],
        help="backfill job selection for easy and conservative: first fit (default), "
        "Backfill Lowest or Backfill Balanced (Leinberger et al. 1999)",
    )
    emulate_cmd.add_argument(
        "--capacity", type=parse_capacity, help="cluster capacity, e.g. cpus=100,mem_gb=512"
    )
    emulate_cmd.add_argument("--out", type=Path, help="write per-job results as JSONL here")
    emulate_cmd.add_argument("--out-swf", type=Path, help="write the replay as an SWF trace")
    emulate_cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    emulate_cmd.add_argument(
        "--estimates",
        type=_estimates,
        default="user",
        help="user (as given), exact (= runtime) or badness:F (uniform in [r, F*r])",
    )
    emulate_cmd.add_argument(
        "--slice", choices=["month"], help="replay each calendar month from an empty machine"
    )
    emulate_cmd.add_argument(
        "--seed", type=int, default=0, help="seed for badness estimates, load and deadlines"
    )
    emulate_cmd.add_argument("--first", type=int, help="replay only the first N jobs")
    scaling = emulate_cmd.add_argument_group("load and deadlines (Islam et al. 2003)")
    scaling.add_argument(
        "--load", type=float, default=1.0, help="offered load factor >= 1 (default 1.0)"
    )
    scaling.add_argument(
        "--load-method",
        choices=["duplicate", "expand"],
        default="duplicate",
        help="duplicate random jobs at random times, or compress submit times",
    )
    scaling.add_argument(
        "--deadlines",
        type=_stringency,
        metavar="easy:S",
        help="deadline = submit + max(runtime, (1 - S) x EASY response time)",
    )
    scaling.add_argument(
        "--deadline-fraction",
        type=float,
        default=1.0,
        help="fraction of jobs given a deadline with --deadlines (the rest: none)",
    )
    emulate_cmd.add_argument(
        "--priorities",
        metavar="every-nth:N",
        help="every N-th job gets user and political priority 1, the others 0 "
        "(Talby & Feitelson 1999 use every-nth:5)",
    )
    emulate_cmd.add_argument(
        "--heuristic",
        choices=["edf", "llf", *HEURISTICS],
        help="qops/msb/mrt: edf or llf (default edf); slack: the permutation heuristic "
        "ast, aat, du, dc or dp (default ast)",
    )
    slack = emulate_cmd.add_argument_group("slack policy options (Talby & Feitelson 1999)")
    slack.add_argument("--slack-factor", type=float, help="SF (default 3)")
    slack.add_argument(
        "--awt", type=float, help="AWT, the expected average wait in seconds (default 2401)"
    )
    for weight in ("u", "t", "p", "f"):
        slack.add_argument(f"--alpha-{weight}", type=float, help=f"alpha_{weight} (default 1)")
    deadline = emulate_cmd.add_argument_group("deadline policy options (qops, msb, mrt)")
    deadline.add_argument(
        "--relaxation", type=float, help="R in the artificial deadline max(24 h, R x estimate)"
    )
    deadline.add_argument("--k-factor", type=int, help="QoPS: violations repaired (default 5)")
    deadline.add_argument("--max-backtracks", type=int, help="MRT: backtrack limit (default 10)")
    emulate_cmd.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )

    demo = commands.add_parser("demo", help="a short replay of the KTH trace under each policy")
    demo.add_argument(
        "--trace",
        type=Path,
        help="trace to use (default: the KTH trace from shared/traces or $BERTH_TRACES, "
        "else the bundled 400-job KTH sample)",
    )
    demo.add_argument("--jobs", type=int, default=3000, help="how many jobs to replay")
    for name, handler in {
        **serve.add_commands(commands),
        **client_cli.add_commands(commands),
        **workload_cli.add_commands(commands),
    }.items():
        commands.choices[name].set_defaults(run=handler)
    return parser


def _run_emulate(args: argparse.Namespace) -> int:
    try:
        workload = read_workload(args.workload)
    except (OSError, WorkloadError, ValueError) as error:
        print(f"berth emulate: {error}", file=sys.stderr)
        return 1
    show = sys.stderr.isatty() if args.progress is None else args.progress
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
        )
    except ValueError as error:
        print(f"berth emulate: {error}", file=sys.stderr)
        return 1
    records = [r for result in results for r in result.records]
    if args.out:
        with args.out.open("w", encoding="utf-8") as stream:
            write_jobs_jsonl(records, stream)
    if args.out_swf:
        with args.out_swf.open("w", encoding="utf-8") as stream:
            write_swf(records, stream, workload.header)
    _print_results(args, workload.skipped.total(), results)
    return 0


def _print_results(args: argparse.Namespace, skipped: int, results: Sequence[Emulation]) -> None:
    if args.json:
        payload: dict[str, object] = {"policy": args.policy, "skipped": skipped}
        if args.slice:
            payload["slices"] = [{"label": r.label, **r.report} for r in results]
        else:
            payload.update(results[0].report)
        print(json.dumps(payload, indent=2))
        return
    title = f"policy {args.policy} on {args.workload} (skipped {skipped} unusable jobs)"
    if args.slice:
        rows = [{"month": r.label, **r.report} for r in results]
        columns = ["month", "jobs", "rejected", "avg_wait", "avg_bounded_slowdown", "utilization"]
        print(title)
        print(format_table(rows, columns))
    else:
        print(format_report(results[0].report, title))


def find_shared_trace(name: str) -> Path | None:
    """Where trace ``name`` is: in ``$BERTH_TRACES``, else in a ``shared/traces`` folder
    beside the checkout or the working directory (or one of their parents), else None."""
    folders = [Path(os.environ["BERTH_TRACES"])] if os.environ.get("BERTH_TRACES") else []
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        folders += [parent / "shared" / "traces" for parent in start.parents]
    for folder in folders:
        if (folder / name).exists():
            return folder / name
    return None


def _run_demo(args: argparse.Namespace) -> int:
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "emulate":
        return _run_emulate(args)
    if args.command == "demo":
        return _run_demo(args)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
