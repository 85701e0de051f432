"""What every ``berth`` client command shares: how it reads amounts and job states,
prints times and JSON, reaches the daemon and reports a failure in one line.

Kept apart from the commands themselves so that each command module depends on this one
and none on another (``cli`` registers them all).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from berth_client.errors import BerthError
from berth_client.hostlists import hostlist

if TYPE_CHECKING:
    from berth_client.client import BerthClient


def amounts(text: str) -> dict[str, int]:
    """``cpus=4,mem_gb=8`` as a mapping; an argparse type."""
    parsed: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise argparse.ArgumentTypeError(f"expected NAME=AMOUNT, got {part!r}")
        parsed[name.strip()] = int(value)
    if not parsed:
        raise argparse.ArgumentTypeError("expected at least one NAME=AMOUNT")
    return parsed


def option_pair(text: str) -> tuple[str, int | float | str]:
    """A policy option written ``NAME=VALUE``: the value a whole number, else a number,
    else text (``selection=bb``); an argparse type."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    for read in (int, float):
        try:
            return name.strip(), read(value)
        except ValueError:
            pass
    return name.strip(), value


#: The job states, and the short codes squeue and sacct print for them.
JOB_STATES = ("PENDING", "HELD", "RUNNING", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED",
              "REJECTED", "NODE_FAIL", "OUT_OF_MEMORY")  # fmt: skip
SLURM_STATE_CODES = {"PD": "PENDING", "R": "RUNNING", "CD": "COMPLETED", "F": "FAILED",
                     "TO": "TIMEOUT", "CA": "CANCELLED", "NF": "NODE_FAIL",
                     "OOM": "OUT_OF_MEMORY"}  # fmt: skip


def job_states(text: str) -> list[str]:
    """``pending,R`` as job states, in any case, with Slurm's short codes (PD, R, CD, F,
    TO, CA, NF, OOM); an argparse type."""
    states: list[str] = []
    for part in filter(None, (p.strip().upper() for p in text.split(","))):
        state = SLURM_STATE_CODES.get(part, part)
        if state not in JOB_STATES:
            known = ", ".join(JOB_STATES)
            codes = ", ".join(SLURM_STATE_CODES)
            raise argparse.ArgumentTypeError(
                f"unknown job state {part!r}: one of {known} (any case), or {codes}"
            )
        if state not in states:
            states.append(state)
    if not states:
        raise argparse.ArgumentTypeError("expected at least one job state")
    return states


def span(seconds: int) -> str:
    """A duration as people say it: ``45s``, ``12m``, ``2h13m``, ``3d4h``."""
    seconds = abs(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, _ = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours}h" if hours else f"{days}d"


def when(value: int | None, now: int | None = None) -> str:
    """A cluster time as local date and time, with how far ahead (``in 2h13m``) or back
    (``5m ago``) it is from ``now`` when ``now`` is known; ``-`` for no time."""
    if value is None:
        return "-"
    text = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(value))
    if now is None:
        return text
    if value > now:
        return f"{text} (in {span(value - now)})"
    if value < now:
        return f"{text} ({span(now - value)} ago)"
    return f"{text} (now)"


def start_words(job: dict[str, Any], now: int | None) -> str:
    """A job's start as its submitter reads it: ``started ... on NODES`` once it runs,
    else ``guaranteed start ...``, or ``no guaranteed start``."""
    if job["job_state"] == "RUNNING" and job.get("start_time") is not None:
        held = hostlist(list(job.get("nodes") or {}))
        return f"started {when(job['start_time'], now)}" + (f" on {held}" if held else "")
    if job.get("guaranteed_start") is None:
        return "no guaranteed start"
    return f"guaranteed start {when(job['guaranteed_start'], now)}"


def to_json(value: Any, indent: int = 2) -> str:
    """``--json`` output; :mod:`json` loads only when a command prints it."""
    import json

    return json.dumps(value, indent=indent)


def client_of(args: argparse.Namespace) -> BerthClient:
    """A client for the daemon at ``--url`` with ``--token``."""
    from berth_client.client import BerthClient

    return BerthClient(args.url, args.token)


def guard(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command that reports the daemon's refusal or an unreachable daemon in one line
    on stderr (exit status 1) instead of a traceback."""

    def wrapped(args: argparse.Namespace) -> int:
        import http.client

        try:
            return run(args)
        except BrokenPipeError:  # a reader that stopped early (``| head``): say nothing
            import os

            # What is still buffered for stdout must not fail again at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        except BerthError as error:
            where = f" ({error.field})" if error.field else ""
            print(f"berth {args.command}: {error.message}{where}", file=sys.stderr)
            return 1
        except (OSError, http.client.HTTPException) as error:
            print(f"berth {args.command}: cannot reach {args.url}: {error}", file=sys.stderr)
            return 1

    return wrapped


def user_filter(args: argparse.Namespace, client: BerthClient) -> str | None:
    """The user a listing or a cancel is for: ``--user``, or with ``--me`` the token's
    own (asked of the daemon); both at once is refused in one line."""
    if not args.me:
        return str(args.user) if args.user else None
    if args.user:
        raise SystemExit(f"berth {args.command}: give --user or --me, not both")
    return str(client.whoami()["user"])
