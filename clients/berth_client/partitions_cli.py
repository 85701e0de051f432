"""``berth partition``: list partitions, draw a gang partition's matrix, and (operators)
create, change, drain, resume and delete partitions, gang or backfilling."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from berth_client.cli_support import client_of, guard, option_pair, to_json, when

#: The actions of ``berth partition`` and what each does.
ACTIONS = {
    "list": "every partition: policy, nodes, jobs",
    "matrix": "a gang partition's rows x processors",
    "create": "a partition from idle default nodes (gang, or --policy P)",
    "set": "a new policy (backfilling), or slot length, row limit, scheme (gang)",
    "drain": "take no new jobs; those queued go on",
    "resume": "take new jobs again",
    "delete": "delete an empty partition; its nodes return to default",
}


def add_commands(
    commands: Any, common: Callable[[argparse.ArgumentParser], None]
) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Register ``berth partition ACTION ...``. Only the action is parsed at start-up;
    its own options are parsed when it runs, so the CLI starts no slower for them."""
    partition = commands.add_parser(
        "partition",
        description="\n".join(f"  {name:8} {text}" for name, text in ACTIONS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    partition.add_argument("partition_command", choices=ACTIONS, metavar="ACTION")
    partition.add_argument("rest", nargs=argparse.REMAINDER, help="the action's arguments")

    def run(args: argparse.Namespace) -> int:
        parser = argparse.ArgumentParser(
            prog=f"berth partition {args.partition_command}",
            description=ACTIONS[args.partition_command],
        )
        common(parser)
        _action_arguments(parser, args.partition_command)
        inner = parser.parse_args(args.rest)
        inner.command, inner.partition_command = "partition", args.partition_command
        return run_partition(inner)

    return {"partition": run}


def _action_arguments(parser: argparse.ArgumentParser, action: str) -> None:
    if action != "list":
        parser.add_argument("name")
    schemes = ("bc", "br", "brms", "brmms")
    if action == "create":
        parser.add_argument("--nodes", required=True, help="comma-separated, in processor order")
        parser.add_argument(
            "--policy", default="gang", help="gang (default), or a backfilling policy (easy, ...)"
        )
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            type=option_pair,
            metavar="NAME=VALUE",
            help="a backfilling policy's option (repeatable)",
        )
        parser.add_argument("--scheme", choices=schemes, default="brmms")
        parser.add_argument("--slot-seconds", type=int, default=30, help="time slot length")
        parser.add_argument("--max-rows", type=int, help="most rows; jobs beyond wait in order")
        parser.add_argument("--force", action="store_true", help="even if a guarantee breaks")
    elif action == "set":
        parser.add_argument("--policy", help="backfilling partitions (and default): a new policy")
        parser.add_argument(
            "--option",
            action="append",
            type=option_pair,
            metavar="NAME=VALUE",
            help="a backfilling policy's option (repeatable)",
        )
        parser.add_argument("--force", action="store_true", help="even if a guarantee breaks")
        parser.add_argument("--scheme", choices=schemes)
        parser.add_argument("--slot-seconds", type=int)
        parser.add_argument("--max-rows", type=int)
        parser.add_argument("--no-max-rows", action="store_true", help="remove the row limit")


@guard
def run_partition(args: argparse.Namespace) -> int:
    action = args.partition_command
    with client_of(args) as client:
        if action == "list":
            answer = client.partitions()
        elif action == "matrix":
            answer = client.matrix(args.name)
        elif action == "create":
            options: dict[str, Any] = dict(args.option)
            if args.policy == "gang":
                options = {"scheme": args.scheme, "slot_seconds": args.slot_seconds,
                           "max_rows": args.max_rows}  # fmt: skip
            nodes = [n.strip() for n in args.nodes.split(",") if n.strip()]
            body = {"name": args.name, "nodes": nodes, "policy": args.policy,
                    "options": options, "force": args.force}  # fmt: skip
            answer = client.admin("POST", "partitions", body)
        elif action == "set":
            body = {"scheme": args.scheme, "slot_seconds": args.slot_seconds,
                    "max_rows": args.max_rows, "no_max_rows": args.no_max_rows,
                    "policy": args.policy, "force": args.force,
                    "options": None if args.option is None else dict(args.option)}  # fmt: skip
            body = {k: v for k, v in body.items() if v not in (None, False)}
            answer = client.admin("PATCH", f"partitions/{args.name}", body)
        elif action == "delete":
            client.admin("DELETE", f"partitions/{args.name}")
            print(f"partition {args.name} deleted; its nodes are back in the default partition")
            return 0
        else:
            answer = client.admin("POST", f"partitions/{args.name}/{action}")
    if args.json:
        print(to_json(answer))
    elif action == "list":
        print(f"{'NAME':12} {'POLICY':14} {'NODES':>5} {'PEND':>5} {'RUN':>5} {'SUSP':>5} OPTIONS")
        for row in answer["partitions"]:
            _print_row(row)
    elif action == "matrix":
        print(draw(answer))
    else:
        _print_row(answer)
    return 0


def _print_row(row: dict[str, Any]) -> None:
    policy = row["policy"] + (" (drained)" if row["drained"] else "")
    options = ",".join(f"{k}={v}" for k, v in row["options"].items() if v is not None)
    print(
        f"{row['name'][:12]:12} {policy[:14]:14} {len(row['nodes']):>5} {row['pending']:>5} "
        f"{row['running']:>5} {row['suspended']:>5} {options}"
    )


def draw(matrix: dict[str, Any]) -> str:
    """The matrix as text, one line per row: runs of processors with the job on them
    (``.`` idle), ``>`` marking the row that runs now; then the node of each range."""
    rows = matrix["rows"]
    lines = [
        f"gang partition {matrix['name']}: {matrix['scheme']}, {matrix['slot_seconds']}-s slots, "
        f"{len(rows)} row(s), next boundary {when(matrix['next_boundary'])}"
    ]
    for index, row in enumerate(rows):
        mark = ">" if index == matrix["running_row"] else " "
        runs = "  ".join(
            f"{'.' if job is None else job} [{span_of(a, b)}]" for job, a, b in runs_of(row)
        )
        lines.append(f"{mark} row {index:<3} {runs}")
    nodes = runs_of([p["node"] for p in matrix["processors"]])
    lines.append("  processors: " + ", ".join(f"{node} [{span_of(a, b)}]" for node, a, b in nodes))
    if matrix["waiting"]:
        lines.append("  waiting: " + ", ".join(map(str, matrix["waiting"])))
    return "\n".join(lines)


def runs_of(cells: list[Any]) -> list[tuple[Any, int, int]]:
    """Consecutive equal cells as ``(value, first, last)``."""
    runs: list[tuple[Any, int, int]] = []
    for index, value in enumerate(cells):
        if runs and runs[-1][0] == value:
            runs[-1] = (value, runs[-1][1], index)
        else:
            runs.append((value, index, index))
    return runs


def span_of(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"
