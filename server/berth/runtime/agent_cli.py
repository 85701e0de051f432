"""``berth agent``: run the node agent for one node (it calls the daemon, never the reverse).

Only the standard library and :mod:`berth.agent` load here: an agent starts in
milliseconds on a compute node and never imports the daemon's stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.runtime.paths import path_arg

if TYPE_CHECKING:
    from pathlib import Path

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any


def _default_workdir() -> Path:
    from pathlib import Path

    if os.geteuid() == 0:
        return Path("/var/lib/berth-agent")
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state) / "berth-agent"


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    agent = commands.add_parser(
        "agent", help="run the node agent: this node's jobs, for a daemon (berth serve --agents)"
    )
    agent.add_argument(
        "--url",
        default=os.environ.get("BERTH_URL"),
        help="the daemon, e.g. http://head:8080 (several, comma-separated, with --ha daemons)",
    )
    agent.add_argument(
        "--token",
        default=os.environ.get("BERTH_AGENT_TOKEN"),
        help="the node's token (berth admin node-token NAME); or $BERTH_AGENT_TOKEN",
    )
    agent.add_argument("--token-file", type=path_arg, help="read the token from this file")
    agent.add_argument("--name", help="this node's name (default: the short host name)")
    agent.add_argument(
        "--resources",
        help="what this node offers, e.g. cpus=32,mem_gb=128,gpus=4 "
        "(default: cpus from the OS, mem_gb from /proc/meminfo)",
    )
    agent.add_argument(
        "--workdir",
        type=path_arg,
        help="job directories and exit statuses (default /var/lib/berth-agent as root, "
        "else ~/.local/state/berth-agent)",
    )
    agent.add_argument(
        "--run-as",
        metavar="ACCOUNT",
        help="as root: run every job as this local account instead of the submitter's (never root)",
    )
    agent.add_argument(
        "--no-cgroups",
        action="store_true",
        help="run jobs unconfined even where cgroups could hold them to their allocation",
    )
    agent.add_argument(
        "--pids-max",
        type=int,
        default=4096,
        metavar="N",
        help="the most tasks (processes and threads) one job may have here (default 4096)",
    )
    agent.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    return {"agent": run_agent}


def run_agent(args: argparse.Namespace) -> int:
    import logging

    from berth.agent.agent import Agent, AgentConfig, AgentRefused, default_name, host_resources
    from berth.runtime.main import parse_capacity

    token = args.token
    if args.token_file is not None:
        try:
            token = args.token_file.read_text().strip()
        except OSError as error:
            print(f"berth agent: cannot read --token-file: {error}", file=sys.stderr)
            return 2
    if not args.url:
        print("berth agent: give the daemon's --url (or set $BERTH_URL)", file=sys.stderr)
        return 2
    if not token:
        print(
            "berth agent: give the node's --token, --token-file or $BERTH_AGENT_TOKEN "
            "(an operator makes one with `berth admin node-token NAME`)",
            file=sys.stderr,
        )
        return 2
    try:
        resources = parse_capacity(args.resources) if args.resources else host_resources()
    except argparse.ArgumentTypeError as error:
        print(f"berth agent: --resources: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    workdir = args.workdir or _default_workdir()
    if args.pids_max < 1:
        print(f"berth agent: --pids-max must be at least 1, got {args.pids_max}", file=sys.stderr)
        return 2
    config = AgentConfig(
        args.url,
        token,
        args.name or default_name(),
        resources,
        workdir,
        run_as=args.run_as,
        cgroups=not args.no_cgroups,
        pids_max=args.pids_max,
    )
    try:
        Agent(config).run()
    except AgentRefused as refusal:
        print(f"berth agent: the daemon refused this agent: {refusal}", file=sys.stderr)
        return 1
    except ValueError as error:
        print(f"berth agent: {error}", file=sys.stderr)
        return 2
    return 0
