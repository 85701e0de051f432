"""``berth admin token issue|list|revoke`` and ``berth ui-login``.

An operator issues a signed token for a user (``--role user|viewer|coordinator|
operator``, ``--account`` for a coordinator, ``--expires 30d``): it is printed once and
never stored. ``list`` shows the issued tokens not yet expired, ``revoke ID`` refuses
one from now on, on every daemon of the group. ``berth ui-login`` prints a link that
signs the dashboard in as whoever runs it, with a token that lives 15 minutes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from berth_client.cli_support import client_of, guard, span, to_json, when

#: ``--expires`` units.
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


def expires_arg(text: str) -> int:
    """``30d``, ``12h``, ``90m``, ``3600`` (seconds), ``1y``: seconds."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhdwy]?)\s*", text.lower())
    if match is None or int(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"expected a positive duration such as 3600, 90m, 12h, 30d or 1y, got {text!r}"
        )
    return int(match.group(1)) * UNITS[match.group(2) or "s"]


def add_token_commands(actions: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """``berth admin token ...`` under the admin actions."""
    token = actions.add_parser("token", help="issue, list and revoke signed tokens")
    verbs = token.add_subparsers(dest="token_command", required=True)
    issue = verbs.add_parser("issue", help="issue a token for a user (shown once)")
    common(issue)
    issue.add_argument("user", help="whom the token names")
    issue.add_argument(
        "--role", choices=("user", "viewer", "coordinator", "operator"), default="user",
        help="user (default); viewer: reads everything, changes nothing; coordinator: "
        "manages the jobs of --account; operator",
    )  # fmt: skip
    issue.add_argument("--account", help="a coordinator's account")
    issue.add_argument(
        "--expires", type=expires_arg, default=30 * 86400,
        help="how long it is valid: 3600, 90m, 12h, 30d (default), 1y",
    )  # fmt: skip
    listing = verbs.add_parser("list", help="the issued tokens not yet expired")
    common(listing)
    revoke = verbs.add_parser("revoke", help="revoke a token: refused from now on")
    common(revoke)
    revoke.add_argument("token_id", metavar="ID", help="the id that list shows")


def add_commands(
    commands: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    login = commands.add_parser("ui-login")
    common(login)
    login.add_argument(
        "--expires", type=expires_arg, default=900, help="the link's life, at most 1h (15m)"
    )
    return {"ui-login": run_ui_login}


@guard
def run_token(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        if args.token_command == "issue":
            answer = client.issue_token(args.user, args.role, args.expires, args.account)
            if args.json:
                print(to_json(answer))
                return 0
            print(answer["token"])
            print(
                f"(token {answer['id']} for {answer['user']} as {answer['role']}, valid until "
                f"{when(answer['expires_at'], int(time.time()))}: it is not shown again)",
                file=sys.stderr,
            )
            return 0
        if args.token_command == "revoke":
            answer = client.revoke_token(args.token_id)
            print(to_json(answer) if args.json else f"token {answer['id']} revoked")
            return 0
        rows = client.tokens()
    if args.json:
        print(to_json(rows))
        return 0
    print(_table(rows["tokens"]))
    return 0


def _table(rows: list[dict[str, Any]]) -> str:
    now = int(time.time())
    lines = [f"{'ID':18} {'USER':12} {'ROLE':12} {'ACCOUNT':10} {'EXPIRES IN':>11} {'BY':10} STATE"]
    for row in rows:
        state = "active" if row["revoked_at"] is None else f"revoked by {row['revoked_by']}"
        lines.append(
            f"{row['id'][:18]:18} {row['user'][:12]:12} {row['role']:12} "
            f"{(row['account'] or '-')[:10]:10} {span(row['expires_at'] - now):>11} "
            f"{row['issued_by'][:10]:10} {state}"
        )
    return "\n".join(lines)


@guard
def run_ui_login(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        answer = client.short_token(min(args.expires, 3600))
        base = client.url.rstrip("/")
    link = f"{base}/ui/#token={answer['token']}"
    if args.json:
        print(to_json({"url": link, "expires_at": answer["expires_at"]}))
        return 0
    print(link)
    print(
        f"(signs the dashboard in as {answer['user']} until "
        f"{when(answer['expires_at'], int(time.time()))}; do not share it)",
        file=sys.stderr,
    )
    return 0
