"""Every ``berth`` command, the group of commands that defines it, and its one line of help.

Start-up cost is a feature: ``berth --help`` and a client command such as ``berth
queue`` must start in about 100 ms, and building the arguments of every command (the
emulator's alone are 40) and importing their modules took 70 of the 130 ms that
``berth --help`` took. So the parser gives full arguments only to the commands of the
group the command line names; the others are listed by name and help, from this
table, without importing their module. A group is a module's ``add_commands``: it
registers its commands on the subparsers object :class:`HelpedCommands` wraps, which
gives each the help written here (one place, whichever parser is built).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Sequence
from importlib import import_module
from typing import Any

#: A command's handler: it runs the parsed command and returns the exit status.
Handler = Callable[[argparse.Namespace], int]

#: The exit status of arguments a command cannot take, argparse's own: a value out of
#: range, options that do not go together or do not fit the input (a file that cannot
#: be read is 1).
BAD_ARGUMENTS = 2

#: Each group's module (its ``add_commands(commands)`` registers the group's commands
#: and returns their handlers).
GROUPS = {
    "emulate": "berth.runtime.emulate_args",
    "serve": "berth.runtime.serve",
    "client": "berth_client.cli",
    "workload": "berth.runtime.workload_cli",
    "agent": "berth.runtime.agent_cli",
    "authd": "berth.runtime.authd_cli",
}

#: Every command, in the order ``berth --help`` lists them: its group and its help.
COMMANDS: dict[str, tuple[str, str]] = {
    "emulate": ("emulate", "replay a workload (SWF or JSONL) under a policy and report metrics"),
    "demo": ("emulate", "a short replay of the KTH trace under each policy"),
    "serve": ("serve", "run the daemon (REST API under /v1)"),
    "db": ("serve", "database migrations"),
    "submit": (
        "client",
        "submit a job (a command, or a batch script with #BERTH/#SBATCH lines)",
    ),
    "queue": ("client", "pending and running jobs with start times"),
    "history": ("client", "past and present jobs, newest first (like sacct), from the database"),
    "usage": ("client", "usage per user or per account over a period (like sreport)"),
    "show": ("client", "one job, with its start-time answer"),
    "cancel": ("client", "cancel jobs (a running job is killed)"),
    "hold": ("client", "hold pending jobs (like scontrol hold): a hold of yours you may release"),
    "release": ("client", "release held jobs (like scontrol release): admitted again"),
    "admin": ("client", "operator commands"),
    "partition": ("client", "partitions and gang matrices"),
    "ui-login": ("client", "print a link that signs the dashboard in as you (valid 15 minutes)"),
    "workload": ("workload", "generate workloads for the emulator"),
    "agent": ("agent", "run the node agent: this node's jobs, for a daemon (berth serve --agents)"),
    "authd": (
        "authd",
        "a login node's identity service: tokens for local users, from their uid (run as root)",
    ),
}


class HelpedCommands:
    """The top-level subparsers object as a group sees it: ``add_parser(name, ...)``
    gives the command its help from :data:`COMMANDS` (an unknown name is a programming
    error: every command is in the table)."""

    def __init__(self, commands: Any) -> None:
        self._commands = commands

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self._commands.add_parser(
            name, help=COMMANDS[name][1], **options
        )
        return parser


def groups_named(argv: Sequence[str]) -> set[str]:
    """The group of the command ``argv`` names (its first word that is not an option),
    or none (``berth --help``, a mistyped command: every command is listed, and none
    needs its arguments)."""
    word = next((arg for arg in argv if not arg.startswith("-")), None)
    return {COMMANDS[word][0]} if word in COMMANDS else set()


def add_commands(commands: Any, groups: Collection[str] | None = None) -> None:
    """Register every command on ``commands`` (argparse's subparsers object): those of
    ``groups`` (all, if ``None``) with their arguments and handler (``run``), the
    others by name and help only."""
    helped = HelpedCommands(commands)
    for group, module in GROUPS.items():
        if groups is not None and group not in groups:
            continue
        handlers: dict[str, Handler] = import_module(module).add_commands(helped)
        for name, handler in handlers.items():
            commands.choices[name].set_defaults(run=handler)
    for name, (_, text) in COMMANDS.items():
        if name not in commands.choices:
            commands.add_parser(name, help=text)
