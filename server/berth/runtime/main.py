"""The ``berth`` command: ``berth serve`` runs the daemon, ``berth submit/queue/show/cancel``
talk to it, ``berth db upgrade`` migrates its database, ``berth emulate`` replays a
workload and ``berth demo`` shows the emulator off.

Argument errors exit with status 2 and a message naming the option; unreadable
workloads exit with status 1 and name the file, line and field.

Start-up cost is a feature: this module imports only the standard library and the
table of commands (:mod:`berth.runtime.commands`); only the group of commands the
command line names gets its arguments, and each command imports what it runs when it
runs (the daemon's web and database stack only for ``serve`` and ``db``, the emulator
only for ``emulate``, ``demo`` and ``workload``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence

from berth.runtime.commands import Handler, add_commands, groups_named

#: What ``berth --help`` says above the commands: the docstring's first two paragraphs
#: (the third is for developers).
_FOR_USERS = "\n\n".join((__doc__ or "").split("\n\n")[:2])


def build_parser(groups: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``berth`` parser: every command's arguments, or only those of ``groups``
    (the others listed by name and help)."""
    parser = argparse.ArgumentParser(prog="berth", description=_FOR_USERS)
    commands = parser.add_subparsers(dest="command", required=True)
    add_commands(commands, groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(groups_named(words)).parse_args(words)
    run: Handler = args.run
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
