"""``berth submit``: a job from options, or a batch script with its directives.

``berth submit [options] --command CMD`` submits a command; ``berth submit [options]
job.sh [args...]`` submits the script itself, which the node runs as the job (its
arguments passed on). The script's ``#BERTH`` and ``#SBATCH`` lines give options
(:mod:`berth_client.batch`); options on the command line win over them. Options are
parsed with no defaults, so what was given is known, and the defaults are filled in
after the script's directives.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from berth_client.batch import begin_arg, deadline_arg, time_arg, yes_no
from berth_client.cli_support import amounts, client_of, guard, start_words, to_json, when

#: ``berth submit``'s defaults, filled in after the command line and the directives.
DEFAULTS: dict[str, Any] = {
    "name": "job",
    "exclusive": False,
    "requeue": False,
    "hold": False,
    "ignore_unknown": False,
    "parsable": False,
}


def add_options(submit: argparse.ArgumentParser) -> None:
    """The job's options (also what a ``#BERTH`` line may hold), with no defaults."""
    add = submit.add_argument
    add("--resources", "-r", type=amounts, help="totals, e.g. cpus=64,mem_gb=256 (or --slots)")
    add("--slots", type=int, help="how many whole slots (with --per-slot)")
    add("--per-slot", type=amounts, help="one slot's resources, e.g. cpus=4,mem_gb=16,gpus=1")
    add("--nodes", "-N", type=int, help="spread the slots over exactly N nodes")
    add("--exclusive", action="store_true", help="whole nodes, shared with no other job")
    add(
        "--time-limit",
        "-t",
        type=time_arg,
        help="also the kill limit: seconds, or MM:SS, HH:MM:SS, D-HH[:MM[:SS]] as in Slurm",
    )
    add("--name", "-J", help="the job's name (default: the script's, or job)")
    add(
        "--deadline",
        type=deadline_arg,
        help="complete by this time: cluster seconds, or a local moment as Slurm writes it "
        "(YYYY-MM-DD[THH:MM[:SS]], now+2hours, 18:30, MM/DD, tomorrow, noon)",
    )
    add(
        "--begin",
        "-b",
        dest="begin_time",
        type=begin_arg,
        help="start no earlier than this time (sbatch --begin): cluster seconds, or a "
        "local moment as --deadline takes it (now+1hour, 22:00, tomorrow)",
    )
    add("--priority", type=float, help="user priority in [0, 1]")
    add("--command", dest="job_command", help="the batch command (runs on the first node)")
    add(
        "--chdir",
        "-D",
        help="working directory on the node (default: this directory, as sbatch does)",
    )
    add("--output", "-o", help="stdout file (default berth-%%j.out; %%j id, %%x name)")
    add("--error", "-e", help="stderr file (default berth-%%j.err)")
    add("--requeue", action="store_true", help="queue the job again if its node fails")
    add(
        "--hold",
        "-H",
        action="store_true",
        help="submit it held (sbatch --hold): it waits, with no guarantee, until berth release",
    )
    add("--emulated-runtime", type=int, help="emulated nodes: how long it runs")
    add("--partition", "-p", help="the partition to run in (default: the default partition)")
    add("--account", "-A", help="the account its use is charged to (default: your user name)")
    add("--idempotency-key", help="retrying with the same key never creates two jobs")
    add(
        "--array",
        "-a",
        help="a job array: one job per task index, e.g. 0-99, 1,3,5-9 or 0-99:4, and %%N "
        "for at most N running (BERTH_ARRAY_TASK_ID; %%a and %%A in -o/-e)",
    )
    add(
        "--dependency",
        "-d",
        help="wait for other jobs: afterok:ID[:ID...], afterany:, afternotok:, after:, "
        "singleton, comma-separated (an array's id: all its tasks; ID_T: one task)",
    )
    add(
        "--parsable",
        action="store_true",
        help="print only the job's id (an array's id), as sbatch --parsable does: "
        "jid=$(berth submit --parsable job.sh)",
    )
    add(
        "--kill-on-invalid-dep",
        type=yes_no,
        help="yes (default): cancel the job when a dependency can never be satisfied; no: hold it",
    )


def add_command(
    commands: Any, common: Callable[[argparse.ArgumentParser], None]
) -> Callable[[argparse.Namespace], int]:
    submit = commands.add_parser(
        "submit",
        argument_default=argparse.SUPPRESS,
    )
    common(submit)
    add_options(submit)
    submit.add_argument(
        "--ignore-unknown",
        action="store_true",
        help="warn about script directives Berth does not support instead of refusing",
    )
    submit.add_argument(
        "--test-only",
        action="store_true",
        help="submit nothing: the decision and start the job would get now (sbatch --test-only)",
    )
    submit.add_argument("script", nargs="?", help="a batch script to run as the job")
    submit.add_argument(
        "script_args", nargs=argparse.REMAINDER, help="arguments passed to the script"
    )
    return run_submit


def _options(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    """The job's options (defaults < the script's directives < the command line) and
    the script's text; exits 2 naming the problem."""
    from berth_client.batch import ScriptError, parse_directives, read_script

    given = vars(args)
    options = {**DEFAULTS, "chdir": os.getcwd()}
    script = None
    if given.get("script"):
        if "job_command" in given:
            raise SystemExit("berth submit: give a script or --command, not both")
        try:
            script = read_script(given["script"])
            berth_lines = argparse.ArgumentParser(add_help=False, exit_on_error=False,
                                                  argument_default=argparse.SUPPRESS)  # fmt: skip
            add_options(berth_lines)
            directives = parse_directives(script, berth_lines, bool(given.get("ignore_unknown")))
        except (ScriptError, ValueError) as error:
            raise SystemExit(f"berth submit: {error}") from None
        for warning in directives.warnings:
            print(f"berth submit: {warning}", file=sys.stderr)
        options["name"] = os.path.basename(given["script"])
        options.update(directives.options)
    options.update(given)
    if options.get("time_limit") is None:
        raise SystemExit("berth submit: give a time limit (-t, or #BERTH/#SBATCH -t in the script)")
    return options, script


def _slots(options: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``--slots/--per-slot/-N/--exclusive`` as the API's ``slots`` and ``nodes``; exits 2
    naming the flag when they are combined wrongly."""
    slots, per_slot = options.get("slots"), options.get("per_slot")
    resources, nodes = options.get("resources"), options.get("nodes")
    if (slots is None) != (per_slot is None):
        raise SystemExit("berth submit: --slots and --per-slot go together")
    if slots is None:
        if resources is None:
            raise SystemExit("berth submit: give --resources (totals) or --slots with --per-slot")
        if nodes is not None or options["exclusive"]:
            raise SystemExit("berth submit: -N/--exclusive go with --slots and --per-slot")
        return None, None
    if resources is not None:
        raise SystemExit("berth submit: give --resources or --slots, not both")
    return {"count": slots, "per_slot": per_slot}, {"count": nodes,
                                                    "exclusive": options["exclusive"]}  # fmt: skip


@guard
def run_submit(args: argparse.Namespace) -> int:
    options, script = _options(args)
    slots, nodes = _slots(options)
    test_only = bool(getattr(args, "test_only", False))
    if test_only and options.get("array"):
        raise SystemExit("berth submit: --test-only asks about one job, not an array")
    parsable = bool(options["parsable"])
    if parsable and (test_only or getattr(args, "json", False)):
        raise SystemExit("berth submit: --parsable prints the id of a job submitted: "
                         "not with --test-only or --json")  # fmt: skip
    with client_of(args) as client:
        answer = client.submit(
            options.get("resources"),
            options["time_limit"],
            name=options["name"],
            deadline=options.get("deadline"),
            begin_time=options.get("begin_time"),
            priority=options.get("priority"),
            command=options.get("job_command"),
            emulated_runtime=options.get("emulated_runtime"),
            idempotency_key=options.get("idempotency_key"),
            slots=slots,
            nodes=nodes,
            chdir=options["chdir"],
            output=options.get("output"),
            error=options.get("error"),
            requeue=options["requeue"] or None,
            hold=options["hold"] or None,
            partition=options.get("partition"),
            account=options.get("account"),
            script=script,
            argv=list(options.get("script_args") or []) if script is not None else None,
            array=options.get("array"),
            dependency=options.get("dependency"),
            kill_on_invalid_dep=options.get("kill_on_invalid_dep"),
            test_only=test_only,
        )
    if test_only:
        return _print_test(answer, bool(getattr(args, "json", False)))
    if parsable:
        return _print_id(answer)
    if getattr(args, "json", False):
        print(to_json(answer, indent=2))
        return 0 if answer["accepted"] else 3
    job = answer["job"]
    if not answer["accepted"]:
        print(f"job {job['job_id']} rejected: {answer['reason']}")
        return 3
    now = job.get("submit_time")
    line = f"job {job['job_id']} accepted ({job['job_state']})"
    if answer.get("array_tasks"):
        count, rejected = len(answer["array_tasks"]), answer.get("rejected_tasks", 0)
        line = f"array {job['job_id']} accepted: {count} tasks, jobs {job['job_id']}-"
        line += f"{answer['array_tasks'][-1]}" + (f" ({rejected} rejected)" if rejected else "")
        line += "; its first task"
    if job["job_state"] == "RUNNING" and not answer.get("array_tasks"):
        # (started already: what is left to say is where, and that its time limit ends it,
        # which is sooner than any end a deadline policy promised)
        line += f"; {start_words(job, now)}; ends by {when(job['start_time'] + job['time_limit'], now)} at the latest"
    elif job["job_state"] == "HELD":
        line += f"; {job['state_reason']}"  # (held: no guarantee until released)
    elif job["guaranteed_start"] is not None:
        line += f"; guaranteed to start by {when(job['guaranteed_start'], now)}"
        if job["guaranteed_end"] is not None:
            line += f" and to end by {when(job['guaranteed_end'], now)}"
    print(line)
    return 0


def _print_id(answer: dict[str, Any]) -> int:
    """``--parsable``: the job's id alone on stdout (an array's: its id), for scripts;
    what else there is to say on stderr: why it was rejected (status 3), or how many of
    an array's tasks were."""
    job_id = answer["job"]["job_id"]
    if not answer["accepted"]:
        print(f"job {job_id} rejected: {answer['reason']}", file=sys.stderr)
        return 3
    if answer.get("rejected_tasks"):
        print(f"array {job_id}: {answer['rejected_tasks']} tasks rejected", file=sys.stderr)
    print(job_id)
    return 0


def _print_test(answer: dict[str, Any], as_json: bool) -> int:
    """``--test-only``'s answer: what the job would get; 3 when it would be rejected."""
    if as_json:
        print(to_json(answer, indent=2))
    elif not answer["accepted"]:
        print(f"the job would be rejected: {answer['reason']}")
    else:
        line = f"the job would be accepted: {answer['reason']}"
        start = answer.get("predicted_start")
        line += f"; predicted to start {when(start)}" if start is not None else ""
        if answer.get("guaranteed_start") is not None:
            line += f"; guaranteed to start by {when(answer['guaranteed_start'])}"
        if answer.get("guaranteed_end") is not None:
            line += f" and to end by {when(answer['guaranteed_end'])}"
        print(line + " (nothing submitted)")
    return 0 if answer["accepted"] else 3
