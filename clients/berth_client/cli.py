"""``berth submit``, ``berth queue`` (with start times, like ``squeue --start``),
``berth show`` and ``berth cancel``. The daemon's URL and token come from ``--url`` and
``--token`` or ``$BERTH_URL`` and ``$BERTH_TOKEN``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from berth_client.client import BerthClient, BerthError

DEFAULT_URL = "http://127.0.0.1:8080"


def _amounts(text: str) -> dict[str, int]:
    amounts: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise argparse.ArgumentTypeError(f"expected NAME=AMOUNT, got {part!r}")
        amounts[name.strip()] = int(value)
    if not amounts:
        raise argparse.ArgumentTypeError("expected at least one NAME=AMOUNT")
    return amounts


def _when(value: int | None) -> str:
    if value is None:
        return "-"
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Register the client commands on an argparse subparsers object; their handlers."""

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--url", default=os.environ.get("BERTH_URL", DEFAULT_URL))
        parser.add_argument("--token", default=os.environ.get("BERTH_TOKEN"))
        parser.add_argument("--json", action="store_true", help="print the raw JSON answer")

    submit = commands.add_parser("submit", help="submit a job to a running daemon")
    common(submit)
    submit.add_argument(
        "--resources", "-r", type=_amounts, required=True, help="e.g. cpus=64,mem_gb=256"
    )
    submit.add_argument(
        "--time-limit", "-t", type=int, required=True, help="seconds; also the kill limit"
    )
    submit.add_argument("--name", "-J", default="job")
    submit.add_argument("--deadline", type=int, help="complete by this time (cluster seconds)")
    submit.add_argument("--priority", type=float, help="user priority in [0, 1]")
    submit.add_argument("--command", dest="job_command", help="what real nodes run")
    submit.add_argument("--emulated-runtime", type=int, help="emulated nodes: how long it runs")
    submit.add_argument(
        "--idempotency-key", help="retrying with the same key never creates two jobs"
    )

    queue = commands.add_parser("queue", help="pending and running jobs with start times")
    common(queue)
    queue.add_argument("--state", help="only this state (PENDING, RUNNING, ...)")
    queue.add_argument("--user")
    queue.add_argument("--all", action="store_true", help="include ended jobs")

    show = commands.add_parser("show", help="one job, with its start-time answer")
    common(show)
    show.add_argument("job_id", type=int)

    cancel = commands.add_parser("cancel", help="cancel a job (a running job is killed)")
    common(cancel)
    cancel.add_argument("job_id", type=int)
    return {"submit": run_submit, "queue": run_queue, "show": run_show, "cancel": run_cancel}


def _client(args: argparse.Namespace) -> BerthClient:
    return BerthClient(args.url, args.token)


def _guard(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except BerthError as error:
            where = f" ({error.field})" if error.field else ""
            print(f"berth {args.command}: {error.message}{where}", file=sys.stderr)
            return 1
        except (OSError, httpx.TransportError) as error:
            print(f"berth {args.command}: cannot reach {args.url}: {error}", file=sys.stderr)
            return 1

    return wrapped


@_guard
def run_submit(args: argparse.Namespace) -> int:
    with _client(args) as client:
        answer = client.submit(
            args.resources,
            args.time_limit,
            name=args.name,
            deadline=args.deadline,
            priority=args.priority,
            command=args.job_command,
            emulated_runtime=args.emulated_runtime,
            idempotency_key=args.idempotency_key,
        )
    if args.json:
        print(json.dumps(answer, indent=2))
        return 0 if answer["accepted"] else 3
    job = answer["job"]
    if not answer["accepted"]:
        print(f"job {job['job_id']} rejected: {answer['reason']}")
        return 3
    line = f"job {job['job_id']} accepted ({job['job_state']})"
    if job["guaranteed_start"] is not None:
        line += f"; guaranteed to start by {_when(job['guaranteed_start'])}"
    if job["guaranteed_end"] is not None:
        line += f" and to end by {_when(job['guaranteed_end'])}"
    print(line)
    return 0


@_guard
def run_queue(args: argparse.Namespace) -> int:
    with _client(args) as client:
        jobs: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = client.jobs(state=args.state, user=args.user, limit=1000, offset=offset)
            jobs += page["jobs"]
            offset += len(page["jobs"])
            if offset >= page["total"] or not page["jobs"]:
                break
        if not args.all and args.state is None:
            jobs = [j for j in jobs if j["job_state"] in ("PENDING", "RUNNING", "HELD")]
        starts = {
            j["job_id"]: client.start(j["job_id"]) for j in jobs if j["job_state"] == "PENDING"
        }
    if args.json:
        print(json.dumps({"jobs": jobs, "starts": starts}, indent=2))
        return 0
    header = (
        f"{'JOBID':>7} {'NAME':12} {'USER':10} {'STATE':9} {'START':19} {'GUARANTEED':19} RESOURCES"
    )
    print(header)
    for job in jobs:
        start = job["start_time"]
        if job["job_state"] == "PENDING":
            start = starts[job["job_id"]]["predicted_start"]
        resources = ",".join(f"{k}={v}" for k, v in job["resources"].items())
        print(
            f"{job['job_id']:>7} {job['name'][:12]:12} {job['user'][:10]:10} {job['job_state']:9} "
            f"{_when(start):19} {_when(job['guaranteed_start']):19} {resources}"
        )
    return 0


@_guard
def run_show(args: argparse.Namespace) -> int:
    with _client(args) as client:
        job = client.job(args.job_id)
        start = client.start(args.job_id)
    if args.json:
        print(json.dumps({"job": job, "start": start}, indent=2))
        return 0
    for key, value in job.items():
        print(f"{key:>18}: {value}")
    print(f"{'predicted_start':>18}: {start['predicted_start']}  ({start['based_on']})")
    if start["blocked_by"]:
        print(f"{'blocked_by':>18}: {start['blocked_by']}")
    return 0


@_guard
def run_cancel(args: argparse.Namespace) -> int:
    with _client(args) as client:
        job = client.cancel(args.job_id)
    print(json.dumps(job, indent=2) if args.json else f"job {job['job_id']} {job['job_state']}")
    return 0
