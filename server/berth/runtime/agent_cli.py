"""``berth agent``: run the node agent for one node (it calls the daemon, never the reverse).

The flags and the running are :mod:`berth.agent.cli`'s, which the lean ``berth-agent``
command shares: only the standard library and :mod:`berth.agent` load here, so an agent
starts in milliseconds on a compute node and never imports the daemon's stack.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from berth.agent.cli import add_arguments, run


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    agent = commands.add_parser("agent")
    add_arguments(agent)
    return {"agent": run_agent}


def run_agent(args: argparse.Namespace) -> int:
    return run(args)
