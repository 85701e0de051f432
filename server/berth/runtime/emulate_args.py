"""The arguments of ``berth emulate`` and ``berth demo`` (the emulator's commands).

Registered only when the command line names one of them (:mod:`berth.runtime.commands`);
the handlers import the emulator when they run (:mod:`berth.runtime.emulate_cli`).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from berth.core.catalog import (
    DEADLINE_HEURISTICS,
    GANG_SCHEMES,
    GANG_SLOT_SECONDS,
    POLICY_NAMES,
    SELECTIONS,
    SLACK_HEURISTICS,
)
from berth.runtime.commands import Handler
from berth.runtime.options import estimates_arg, node_group, parse_capacity, stringency_arg
from berth.runtime.paths import path_arg


def add_commands(commands: Any) -> dict[str, Handler]:
    """Register ``emulate`` and ``demo``; their handlers."""
    emulate_cmd = commands.add_parser("emulate")
    emulate_cmd.add_argument("workload", type=path_arg, help=".swf, .swf.gz or .jsonl workload")
    emulate_cmd.add_argument(
        "--policy",
        choices=sorted((*POLICY_NAMES, "gang")),
        default="easy",
        help="a backfilling or deadline policy, or gang (time-slot matrix, see --scheme)",
    )
    gang = emulate_cmd.add_argument_group("gang scheduling (Zhou, Brent & Walsh)")
    gang.add_argument(
        "--scheme",
        choices=GANG_SCHEMES,
        default="brmms",
        help="allocation scheme for --policy gang (default brmms)",
    )
    gang.add_argument(
        "--slot-seconds",
        type=int,
        default=GANG_SLOT_SECONDS,
        help=f"time-slot length for --policy gang (default {GANG_SLOT_SECONDS}, the paper's)",
    )
    gang.add_argument(
        "--max-rows",
        type=int,
        help="at most this many rows for --policy gang; jobs beyond wait in order "
        "(default: no limit, as in the paper)",
    )
    emulate_cmd.add_argument(
        "--selection",
        choices=SELECTIONS,
        help="backfill job selection for easy and conservative: first fit (default), "
        "Backfill Lowest or Backfill Balanced (Leinberger et al. 1999)",
    )
    emulate_cmd.add_argument(
        "--capacity", type=parse_capacity, help="cluster capacity, e.g. cpus=100,mem_gb=512"
    )
    emulate_cmd.add_argument(
        "--nodes",
        action="append",
        type=node_group,
        metavar="COUNTxNAME=AMOUNT,...",
        help="a node cluster instead of a pool, e.g. --nodes 16xcpus=32,mem_gb=128 --nodes "
        "2xcpus=32,mem_gb=256,gpus=4 (repeatable; jobs get whole slots on named nodes; "
        "every policy and selection)",
    )
    emulate_cmd.add_argument(
        "--compression-budget",
        type=int,
        metavar="N",
        help="node clusters: compress the plan in slices of N questions per instant (a "
        "job asked again, or a step of its search), going on at the next instant as the "
        "daemon's slices do, instead of whole at every end as the papers do; replays a "
        "deep queue on many nodes much faster, some reservations staying later meanwhile "
        "(no guarantee is broken)",
    )
    emulate_cmd.add_argument("--out", type=path_arg, help="write per-job results as JSONL here")
    emulate_cmd.add_argument(
        "--starts",
        action="store_true",
        help="print each job's guaranteed start, start and end (always, for a workload "
        "with dependencies or array limits)",
    )
    emulate_cmd.add_argument("--out-swf", type=path_arg, help="write the replay as an SWF trace")
    emulate_cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    emulate_cmd.add_argument(
        "--estimates",
        type=estimates_arg,
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
        type=stringency_arg,
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
        choices=[*DEADLINE_HEURISTICS, *SLACK_HEURISTICS],
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
    sweep = emulate_cmd.add_argument_group("sweeps (a grid of replays on Dask)")
    sweep.add_argument(
        "--sweep",
        type=path_arg,
        metavar="GRID.toml",
        help="replay the workload under each point of a grid (policies, selections, "
        "estimates, seeds): one table out",
    )
    sweep.add_argument("--csv", type=path_arg, help="--sweep: also write the table as CSV here")
    sweep.add_argument(
        "--dask",
        help="--sweep: local (default: a Dask cluster of --workers processes), "
        "tcp://HOST:PORT (a Dask scheduler) or berth://HOST:PORT (Berth jobs)",
    )
    sweep.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="--sweep: workers (all cores)"
    )

    demo = commands.add_parser("demo")
    demo.add_argument(
        "--trace",
        type=path_arg,
        help="trace to use (default: the KTH trace from shared/traces or $BERTH_TRACES, "
        "else the bundled 400-job KTH sample)",
    )
    demo.add_argument("--jobs", type=int, default=3000, help="how many jobs to replay")
    return {"emulate": run_emulate, "demo": run_demo}


def run_emulate(args: argparse.Namespace) -> int:
    from berth.runtime import emulate_cli

    return emulate_cli.run_emulate(args)


def run_demo(args: argparse.Namespace) -> int:
    from berth.runtime import emulate_cli

    return emulate_cli.run_demo(args)
