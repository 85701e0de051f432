"""``berth authd``'s flags: a login node's identity service (:mod:`berth.runtime.authd`).

Only the standard library's argument parsing loads here: ``berth --help`` stays fast,
and the service, its key handling and its event loop load when it runs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from berth.runtime.paths import path_arg
from berth_client.login import DEFAULT_SOCKET  # where the users' berth looks for it

DEFAULT_KEY = "/etc/berth/authd-key.pem"


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    authd = commands.add_parser("authd")
    authd.add_argument(
        "--socket",
        type=path_arg,
        default=Path(os.environ.get("BERTH_AUTHD_SOCKET", DEFAULT_SOCKET)),
        help=f"the Unix socket users' berth commands connect to (default {DEFAULT_SOCKET})",
    )
    authd.add_argument(
        "--key",
        type=path_arg,
        default=Path(DEFAULT_KEY),
        help=f"its private key, made if missing with KEY.pub beside it for the daemons' "
        f"--trust-keys (default {DEFAULT_KEY})",
    )
    authd.add_argument(
        "--lifetime", type=int, default=3600, help="seconds a token is valid (default 3600)"
    )
    authd.add_argument("--name", help="this login node's name (default: its host name)")
    return {"authd": run_authd}


def run_authd(args: argparse.Namespace) -> int:
    from berth.runtime.authd import run_authd as run

    return run(args)
