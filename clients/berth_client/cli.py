"""``berth submit``, ``berth queue`` (with start times, like ``squeue --start``),
``berth show``, ``berth cancel``, ``berth hold`` and ``berth release``. The daemon's URL
and token come from ``--url`` and ``--token`` or ``$BERTH_URL`` and ``$BERTH_TOKEN``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from berth_client.cli_support import (
    client_of,
    guard,
    job_states,
    span,
    to_json,
    user_filter,
    when,
)
from berth_client.efficiency import job_lines, usage_columns
from berth_client.errors import BerthError

if TYPE_CHECKING:
    pass

DEFAULT_URL = "http://127.0.0.1:8080"


#: Fields of a job that hold cluster times (``berth show`` prints them readably).
TIME_FIELDS = ("submit_time", "start_time", "end_time", "deadline", "begin_time",
               "guaranteed_start", "guaranteed_end", "planned_start", "predicted_start",
               "computed_at")  # fmt: skip


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Register the client commands on an argparse subparsers object; their handlers."""
    from berth_client import admin_cli, partitions_cli, submit_cli, tokens_cli

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--url", default=os.environ.get("BERTH_URL", DEFAULT_URL))
        parser.add_argument("--token", default=os.environ.get("BERTH_TOKEN"))
        parser.add_argument("--json", action="store_true", help="print the raw JSON answer")

    submit = submit_cli.add_command(commands, common)

    queue = commands.add_parser("queue")
    common(queue)
    queue.add_argument(
        "--state", "-t", type=job_states, help="only these states: PENDING,RUNNING or PD,R, ..."
    )
    queue.add_argument("--user", "-u", help="only this user's jobs")
    queue.add_argument("--me", action="store_true", help="only your own jobs (squeue --me)")
    queue.add_argument("--account", "-A", help="only jobs charged to this account")
    queue.add_argument("--partition", "-p", help="only jobs of this partition (default too)")
    queue.add_argument("--all", action="store_true", help="include ended jobs")

    history = commands.add_parser("history")
    common(history)
    history.add_argument(
        "--state", "-s", type=job_states, help="only these states: COMPLETED,FAILED or CD,F, ..."
    )
    history.add_argument("--user", "-u", help="only this user's jobs")
    history.add_argument("--account", "-A", help="only jobs charged to this account")
    history.add_argument("--partition", "-p", help="only jobs of this partition (default too)")
    history.add_argument("--limit", type=int, default=50, help="how many jobs (50)")

    usage = commands.add_parser("usage")
    common(usage)
    usage.add_argument("--days", type=float, default=30, help="the last N days (30)")
    usage.add_argument(
        "--by", choices=("user", "account"), default="user", help="total per user (default) "
        "or per account"
    )  # fmt: skip
    usage.add_argument("--account", "-A", help="only jobs charged to this account")

    show = commands.add_parser("show")
    common(show)
    show.add_argument("job_id", type=int)

    cancel = commands.add_parser("cancel")
    common(cancel)
    cancel.add_argument(
        "job_ids", type=int, nargs="*", metavar="JOB_ID", help="one or more (or filters instead)"
    )
    cancel.add_argument(
        "--array", action="store_true", help="the whole job arrays JOB_ID (their first tasks' ids)"
    )
    cancel.add_argument("--user", "-u", help="instead of ids: every job of this user (scancel -u)")
    cancel.add_argument("--me", action="store_true", help="instead of ids: every job of yours")
    cancel.add_argument(
        "--state", "-t", type=job_states, help="instead of ids: every job in these states"
    )
    cancel.add_argument("--name", "-n", help="instead of ids: every job of this name")
    cancel.add_argument("--account", "-A", help="instead of ids: every job of this account")
    cancel.add_argument("--partition", "-p", help="instead of ids: every job of this partition")

    hold = commands.add_parser("hold")
    common(hold)
    hold.add_argument("job_ids", type=int, nargs="+", metavar="JOB_ID")
    hold.add_argument("--reason", help="why (default: held by you)")
    release = commands.add_parser("release")
    common(release)
    release.add_argument("job_ids", type=int, nargs="+", metavar="JOB_ID")

    return {
        "submit": submit,
        "hold": run_hold,
        "release": run_release,
        "queue": run_queue,
        "history": run_history,
        "usage": run_usage,
        "show": run_show,
        "cancel": run_cancel,
        "admin": admin_cli.add_admin_command(commands, common),
        **partitions_cli.add_commands(commands, common),
        **tokens_cli.add_commands(commands, common),
    }


def fold_arrays(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The jobs as ``berth queue`` lists them: the waiting tasks of one job array folded
    into one line labelled ``12_[3-99]`` (like squeue), in the place of its first (whose
    id and predicted start the line keeps); a running task labelled ``12_3``."""
    folded: list[dict[str, Any]] = []
    waiting: dict[int, dict[str, Any]] = {}
    for job in jobs:
        array = job.get("array_job_id")
        if array is None or job["job_state"] != "PENDING":
            if array is not None:
                job = {**job, "label": f"{array}_{job['array_task_id']}"}
            folded.append(job)
            continue
        if array in waiting:
            waiting[array]["_tasks"].append(job["array_task_id"])
            continue
        waiting[array] = {**job, "_tasks": [job["array_task_id"]]}
        folded.append(waiting[array])
    for line in waiting.values():
        tasks = line.pop("_tasks")
        line["label"] = (
            f"{line['array_job_id']}_[{_ranges(tasks)}]"
            if len(tasks) > 1
            else (f"{line['array_job_id']}_{tasks[0]}")
        )
    return folded


def _ranges(indices: list[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``0-2,5,7-8``."""
    runs: list[list[int]] = []
    for index in sorted(indices):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ",".join(f"{a}-{b}" if b > a else str(a) for a, b in runs)


@guard
def run_queue(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        user = user_filter(args, client)
        jobs: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = client.jobs(args.state, user, 1000, offset, args.account, args.partition)
            jobs += page["jobs"]
            offset += len(page["jobs"])
            if offset >= page["total"] or not page["jobs"]:
                break
        if not args.all and args.state is None:
            jobs = [j for j in jobs if j["job_state"] in ("PENDING", "RUNNING", "HELD")]
        # Each waiting job's page carries its predicted start and the cluster's time; a
        # daemon older than that answer has them only in its whole plan (megabytes with a
        # deep queue on many nodes: every planned job's nodes).
        now = page.get("now")
        if now is None:
            plan = client.schedule()
            now, starts = plan["now"], {w["job_id"]: w["start"] for w in plan["planned"]}
            for job in jobs:
                job["predicted_start"] = starts.get(job["job_id"])
    predicted = {
        job["job_id"]: job["predicted_start"]
        for job in jobs
        if job["job_state"] == "PENDING" and job.get("predicted_start") is not None
    }
    if args.json:
        print(to_json({"now": now, "jobs": jobs, "predicted": predicted}, indent=2))
        return 0
    # (a DEADLINE column only where a listed job has one, as under QoPS)
    deadlines = any(job.get("deadline") is not None for job in jobs)
    print(
        f"{'JOBID':>7} {'NAME':12} {'USER':10} {'STATE':9} {'START':31} {'GUARANTEED':31} "
        + (f"{'DEADLINE':31} " if deadlines else "")
        + "RESOURCES"
    )
    for job in fold_arrays(jobs):
        start = job["start_time"]
        if job["job_state"] == "PENDING":
            start = predicted.get(job["job_id"])
        resources = ",".join(f"{k}={v}" for k, v in job["resources"].items())
        deadline = f"{when(job.get('deadline'), now):31} " if deadlines else ""
        print(
            f"{job.get('label', job['job_id']):>7} {job['name'][:12]:12} {job['user'][:10]:10} "
            f"{job['job_state']:9} "
            f"{when(start, now):31} {when(job['guaranteed_start'], now):31} {deadline}{resources}"
        )
    return 0


@guard
def run_history(args: argparse.Namespace) -> int:
    jobs: list[dict[str, Any]] = []
    before = None
    with client_of(args) as client:
        while len(jobs) < args.limit:
            size = min(1000, args.limit - len(jobs))
            page = client.history(args.state, args.user, before, size, args.account, args.partition)
            jobs += page["jobs"]
            before = page["next_before"]
            if before is None:
                break
    if args.json:
        print(to_json(jobs, indent=2))
        return 0
    print(
        f"{'JOBID':>7} {'NAME':12} {'USER':10} {'ACCOUNT':10} {'STATE':9} {'START':19} "
        f"{'ELAPSED':>8} RESOURCES"
    )
    for job in jobs:
        start, end = job["start_time"], job["end_time"]
        elapsed = span(end - start) if start is not None and end is not None else "-"
        started = when(start) if start is not None else "-"
        resources = ",".join(f"{k}={v}" for k, v in job["resources"].items())
        print(
            f"{job['job_id']:>7} {job['name'][:12]:12} {job['user'][:10]:10} "
            f"{job.get('account', '')[:10]:10} {job['job_state']:9} {started:19} "
            f"{elapsed:>8} {resources}"
        )
    return 0


@guard
def run_usage(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        now = client.now()
        since = max(0, now - int(args.days * 86_400))
        answer = client.usage(since, by=args.by, account=args.account)
    if args.json:
        print(to_json(answer, indent=2))
        return 0
    print(f"usage from {when(answer['since'])} to {when(answer['until'])}")
    rows = answer[f"{args.by}s"]
    measured = ("used_cpu_seconds", "measured_cpus_seconds")
    names = sorted({k for row in rows for k in row if k.endswith("_seconds")} - set(measured))
    hours_header = " ".join(f"{n[:-8].upper() + '-HOURS':>12}" for n in names)
    print(f"{args.by.upper():12} {'JOBS':>7} {hours_header} {'USED-CPU-H':>12} {'CPU-EFF':>8}")
    for row in rows:
        hours = " ".join(f"{row.get(n, 0) / 3600:>12,.1f}" for n in names)
        print(f"{row[args.by][:12]:12} {int(row['jobs']):>7} {hours} {usage_columns(row)}")
    return 0


@guard
def run_show(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        job = client.job(args.job_id)
        start = client.start(args.job_id)
    if args.json:
        print(to_json({"job": job, "start": start}, indent=2))
        return 0
    now = start["computed_at"]
    for key, value in job.items():
        if key == "usage":
            continue
        shown = when(value, now) if key in TIME_FIELDS and isinstance(value, int) else value
        print(f"{key:>18}: {shown}")
    for label, text in job_lines(job):
        print(f"{label:>18}: {text}")
    print(f"{'predicted_start':>18}: {when(start['predicted_start'], now)}  ({start['based_on']})")
    if start["blocked_by"]:
        print(f"{'blocked_by':>18}: {start['blocked_by']}")
    for need in start.get("dependencies") or ():
        setting = "  <- sets its earliest start" if need["job_id"] == start["waits_for_job"] else ""
        kind = "array limit" if need["kind"] == "throttle" else need["kind"]
        print(
            f"{'waits_for':>18}: job {need['job_id']} ({kind}; {need['job_state']}), promised "
            f"{'to start' if need['kind'] == 'after' else 'to end'} by "
            f"{when(need['promised'], now)}{setting}"
        )
    gang = start.get("gang")
    if gang:
        rows = ", ".join(map(str, gang["rows"])) or "none yet"
        print(
            f"{'gang':>18}: row(s) {rows} of {gang['row_count']}, "
            f"{gang['slot_seconds']}-s slots, next slot {when(gang['next_slot'], now)}"
        )
        print(
            f"{'completion':>18}: {when(gang['completion_forecast'], now)}  "
            f"({gang['completion_basis']})"
        )
    return 0


@guard
def run_cancel(args: argparse.Namespace) -> int:
    """Cancel each job (or array) named, as scancel does; each that cannot be is said
    (the others are still cancelled) and the exit status is 1. Or, with filters instead
    of ids, every job not ended they select, in one request."""
    filters = {"state": args.state, "user": args.user, "account": args.account,
               "name": args.name, "partition": args.partition}  # fmt: skip
    chosen = any(filters.values()) or args.me
    if chosen == bool(args.job_ids) or (args.array and not args.job_ids):
        print(
            "berth cancel: give job ids, or filters (-u, --me, -t, -n, -A, -p) instead",
            file=sys.stderr,
        )
        return 2
    if not args.job_ids:
        return _cancel_matching(args, filters)
    if args.array:
        return _each_job(
            args,
            "cancel",
            lambda client, job_id: client.cancel_array(job_id),
            lambda job_id, tasks: f"array {job_id}: {len(tasks)} task(s) cancelled",
        )
    return _each_job(args, "cancel", lambda client, job_id: client.cancel(job_id))


@guard
def run_hold(args: argparse.Namespace) -> int:
    """Hold each job named (scontrol hold); each that cannot be is said, exit status 1."""
    return _each_job(args, "hold", lambda client, job_id: client.hold(job_id, args.reason))


@guard
def run_release(args: argparse.Namespace) -> int:
    """Release each job named (scontrol release): admitted again, at the back; a job an
    operator holds only an operator (or its account's coordinator) releases."""
    return _each_job(args, "release", lambda client, job_id: client.release(job_id))


def _job_line(_: int, job: dict[str, Any]) -> str:
    """A job's state, and why when it is held or a release rejected it."""
    why = job["state_reason"] if job["job_state"] in ("HELD", "REJECTED") else ""
    return f"job {job['job_id']} {job['job_state']}" + (f" ({why})" if why else "")


def _each_job(
    args: argparse.Namespace,
    command: str,
    change: Callable[[Any, int], Any],
    line: Callable[[int, Any], str] = _job_line,
) -> int:
    """``change(client, id)`` for each job named, in turn, one ``line`` each (the others
    go on when one is refused); each refused is named on stderr, and makes the exit
    status 1. ``--json``: the answers instead (one job's alone)."""
    failed = False
    answers: list[Any] = []
    with client_of(args) as client:
        for job_id in args.job_ids:
            try:
                answer = change(client, job_id)
            except BerthError as error:
                failed = True
                print(f"berth {command}: {job_id}: {error.message}", file=sys.stderr)
                continue
            answers.append(answer)
            if not args.json:
                print(line(job_id, answer))
    if args.json:
        print(to_json(answers[0] if len(args.job_ids) == 1 and answers else answers, indent=2))
    return 1 if failed else 0


def _cancel_matching(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    with client_of(args) as client:
        filters["user"] = user_filter(args, client)
        try:
            jobs = client.cancel_matching(**filters)
        except BerthError as error:
            if error.status != 405:
                raise
            print(
                f"berth cancel: the daemon at {args.url} is older than this client and "
                "cancels by id only",
                file=sys.stderr,
            )
            return 1
    if args.json:
        print(to_json(jobs, indent=2))
    elif not jobs:
        print("no job selected: nothing cancelled")
    else:
        ids = ", ".join(str(job["job_id"]) for job in jobs[:20])
        more = f" and {len(jobs) - 20} more" if len(jobs) > 20 else ""
        print(f"{len(jobs)} job(s) cancelled: {ids}{more}")
    return 0
