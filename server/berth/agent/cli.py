"""The node agent's command line: ``berth agent`` and, in the lean ``berth-agent``
distribution, the ``berth-agent`` command; the same flags, the same code.

Only the standard library and :mod:`berth.agent` load here, so the agent installs and
starts on a compute node that has none of the daemon's packages (``pip install
./agent`` from this repository; see ``docs/agents.md``), in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def parse_resources(text: str) -> dict[str, int]:
    """``cpus=100,mem_gb=512`` -> ``{"cpus": 100, "mem_gb": 512}`` (argparse ``type=``)."""
    amounts: dict[str, int] = {}
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
        amounts[name.strip()] = value
    if not amounts:
        raise argparse.ArgumentTypeError("expected at least one NAME=AMOUNT")
    return amounts


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def _default_workdir() -> Path:
    from pathlib import Path

    if os.geteuid() == 0:
        return Path("/var/lib/berth-agent")
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state) / "berth-agent"


def add_arguments(agent: argparse.ArgumentParser) -> None:
    """The agent's flags, on ``berth agent``'s parser or ``berth-agent``'s."""
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
    agent.add_argument("--token-file", type=_path, help="read the token from this file")
    agent.add_argument("--name", help="this node's name (default: the short host name)")
    agent.add_argument(
        "--resources",
        help="what this node offers, e.g. cpus=32,mem_gb=128,gpus=4 "
        "(default: cpus from the OS, mem_gb from /proc/meminfo)",
    )
    agent.add_argument(
        "--workdir",
        type=_path,
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
        "--exit-with-parent",
        action="store_true",
        help="stop when the process that started the agent ends, even killed (demos and "
        "test rigs; on a node, systemd runs the agent)",
    )
    agent.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )


def run(args: argparse.Namespace, program: str = "berth agent") -> int:
    """Run the agent until SIGTERM/SIGINT; the exit status (2: bad flags)."""
    import logging

    from berth.agent.agent import Agent, AgentConfig, AgentRefused, default_name, host_resources

    def refuse(message: str) -> int:
        print(f"{program}: {message}", file=sys.stderr)
        return 2

    token = args.token
    if args.token_file is not None:
        try:
            token = args.token_file.read_text().strip()
        except OSError as error:
            return refuse(f"cannot read --token-file: {error}")
    if not args.url:
        return refuse("give the daemon's --url (or set $BERTH_URL)")
    if not token:
        return refuse(
            "give the node's --token, --token-file or $BERTH_AGENT_TOKEN "
            "(an operator makes one with `berth admin node-token NAME`)"
        )
    try:
        resources = parse_resources(args.resources) if args.resources else host_resources()
    except argparse.ArgumentTypeError as error:
        return refuse(f"--resources: {error}")
    if args.pids_max < 1:
        return refuse(f"--pids-max must be at least 1, got {args.pids_max}")
    args.workdir = args.workdir or _default_workdir()  # (one folder, checked then used)
    problem = setup_problem(args, token)
    if problem is not None:
        return refuse(problem)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    config = AgentConfig(
        args.url,
        token,
        args.name or default_name(),
        resources,
        args.workdir,
        run_as=args.run_as,
        cgroups=not args.no_cgroups,
        pids_max=args.pids_max,
        parent=os.getppid() if args.exit_with_parent else None,
    )
    try:
        Agent(config).run()
    except AgentRefused as refusal:
        print(f"{program}: the daemon refused this agent: {refusal}", file=sys.stderr)
        return 1
    except ValueError as error:
        return refuse(str(error))
    return 0


def setup_problem(args: argparse.Namespace, token: str) -> str | None:
    """What in the flags would stop the agent once started (its daemons' URLs, its work
    folder, the account it runs jobs as), found before it starts: one line, not a
    thread's traceback."""
    from berth.agent.daemon_link import DaemonLink
    from berth.agent.launch import LaunchRefused, account_for

    try:
        DaemonLink(args.url, token).close()  # (reads the URLs; connects to none)
    except ValueError as error:
        return str(error)
    workdir = args.workdir or _default_workdir()
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return f"--workdir {workdir}: {error.strerror}"
    if args.run_as is not None:
        try:
            account_for(args.run_as, args.run_as)
        except LaunchRefused as error:
            return f"--run-as: {error}"
    return None


def main() -> None:
    """``berth-agent``: the lean distribution's command."""
    parser = argparse.ArgumentParser(
        prog="berth-agent",
        description="The Berth node agent: runs this node's jobs for a daemon "
        "(berth serve --agents); it calls the daemon, never the reverse.",
    )
    add_arguments(parser)
    raise SystemExit(run(parser.parse_args(), "berth-agent"))


if __name__ == "__main__":
    main()
