"""``berth admin``: the operator's commands, as Slurm's ``scontrol`` and ``sinfo -N`` do them.

``nodes`` lists each node's state, reason, resources and use; ``drain``, ``resume`` and
``down`` change nodes (a drain that would break a job's guarantee or deadline is refused
with the jobs it would break, unless ``--force``); ``hold``, ``release`` and
``priority`` change waiting jobs; ``node-token`` issues an agent's token and ``agents``
shows the agents; ``token`` (``tokens_cli``) issues users' tokens. Nodes may be named
as Slurm hostlists (``node[001-096]``); several go in one request, changed together or
refused as a whole (one replan on the daemon). Each command that names several jobs
tries every one, prints one line each, and says which it could not change (exit status
1 then), as ``berth cancel`` does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from berth_client import tokens_cli
from berth_client.cli_support import client_of, guard, span, to_json
from berth_client.errors import BerthError
from berth_client.hostlists import expand_hostlist, hostlist

#: The actions that change nodes, and what each does.
NODE_ACTIONS = {
    "drain": "drain nodes: their running jobs go on, no new ones start (like scontrol "
    "update State=DRAIN); refused if a guarantee or deadline would break",
    "resume": "put drained or down nodes back up",
    "down": "mark nodes down: the jobs on them are killed",
}

#: The actions that change waiting jobs, and what each does.
JOB_ACTIONS = {
    "hold": "hold pending jobs: they give up their guarantee (like scontrol hold)",
    "release": "release held jobs: each is admitted again (like scontrol release)",
}


def add_admin_command(
    commands: Any, common: Callable[[argparse.ArgumentParser], None]
) -> Callable[[argparse.Namespace], int]:
    """Register ``berth admin ACTION ...``; its handler."""
    admin = commands.add_parser("admin")
    actions = admin.add_subparsers(dest="admin_command", required=True)
    nodes = actions.add_parser("nodes", help="each node: state, reason, resources, use (sinfo -N)")
    common(nodes)
    nodes.add_argument(
        "--state", choices=("up", "drained", "down"), help="only nodes in this state (sinfo -t)"
    )
    for action, text in NODE_ACTIONS.items():
        parser = actions.add_parser(action, help=text)
        common(parser)
        parser.add_argument(
            "names",
            nargs="+",
            type=expand_hostlist,
            metavar="NODE",
            help="one or more nodes, or Slurm hostlists: node[0001-0100],gpu[1-2]",
        )
        if action != "resume":
            parser.add_argument("--reason", default="", help="why (shown beside the node)")
        if action == "drain":
            parser.add_argument(
                "--force", action="store_true", help="drain even if a guarantee breaks"
            )
    for action, text in JOB_ACTIONS.items():
        parser = actions.add_parser(action, help=text)
        common(parser)
        parser.add_argument("job_ids", type=int, nargs="+", metavar="JOB_ID")
        if action == "hold":
            parser.add_argument("--reason", help="why (default: held by you)")
    priority = actions.add_parser(
        "priority", help="set a job's political priority, 0 to 1 (slack-based priority)"
    )
    common(priority)
    priority.add_argument("job_id", type=int)
    priority.add_argument("value", type=fraction, help="0 to 1")
    token = actions.add_parser(
        "node-token", help="issue a node's agent token (shown once; replaces its older one)"
    )
    common(token)
    token.add_argument("name", help="the node's name, as its agent gives it with --name")
    agents = actions.add_parser("agents", help="each node's agent: state, last heard, jobs")
    common(agents)
    tokens_cli.add_token_commands(actions, common)
    return run_admin


def fraction(text: str) -> float:
    """A number from 0 to 1; an argparse type."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:  # (NaN too)
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def run_admin(args: argparse.Namespace) -> int:
    if args.admin_command == "token":
        return tokens_cli.run_token(args)
    return _run(args)


@guard
def _run(args: argparse.Namespace) -> int:
    action = args.admin_command
    with client_of(args) as client:
        if action in NODE_ACTIONS:
            names = list(dict.fromkeys(name for listed in args.names for name in listed))
            if len(names) > 1:
                return _change_nodes(client, action, names, args)
            return _each(args, names, lambda name: _change_node(client, action, name, args))
        if action in JOB_ACTIONS:
            return _each(
                args, args.job_ids, lambda job_id: _change_job(client, action, job_id, args)
            )
        if action == "priority":
            body = {"political": args.value}
            job = client.admin("PUT", f"jobs/{args.job_id}/priority", body)
            print(
                to_json(job)
                if args.json
                else f"job {job['job_id']} political priority {args.value:g}"
            )
            return 0
        if action == "node-token":
            return _print_node_token(args, client.node_token(args.name))
        answer = client.cluster() if action == "nodes" else client.agents()
    if action == "nodes" and args.state is not None:
        answer["nodes"] = [node for node in answer["nodes"] if node["state"] == args.state]
    if args.json:
        print(to_json(answer, indent=2))
    elif action == "nodes":
        _print_nodes(answer)
    else:
        _print_agents(answer)
    return 0


def _change_node(client: Any, action: str, name: str, args: argparse.Namespace) -> str:
    body = None if action == "resume" else _node_body(action, args)  # (resume takes none)
    node = client.admin("POST", f"nodes/{name}/{action}", body)
    return to_json(node) if args.json else _node_line(node)


def _change_nodes(client: Any, action: str, names: list[str], args: argparse.Namespace) -> int:
    """Several nodes in one request (one replan on the daemon: one by one, a rack of 96
    on 4,096 nodes took six minutes); refused as a whole, with one line saying why."""
    try:
        answer = client.admin(
            "POST", f"nodes/{action}", {"names": names, **_node_body(action, args)}
        )
    except BerthError as error:
        _say_refused(action, hostlist(names), error)
        return 1
    if args.json:
        print(to_json(answer["nodes"]))  # (one document: the nodes as changed)
        return 0
    for node in answer["nodes"]:
        print(_node_line(node))
    return 0


def _node_body(action: str, args: argparse.Namespace) -> dict[str, Any]:
    if action == "resume":
        return {}
    if action == "drain":
        return {"reason": args.reason, "force": args.force}
    return {"reason": args.reason}


def _node_line(node: dict[str, Any]) -> str:
    reason = f" ({node['reason']})" if node["reason"] else ""
    return f"node {node['name']} {node['state']}{reason}"


def _change_job(client: Any, action: str, job_id: int, args: argparse.Namespace) -> str:
    body = ({"reason": args.reason} if args.reason else {}) if action == "hold" else None
    job = client.admin("POST", f"jobs/{job_id}/{action}", body)
    if args.json:
        return to_json(job)
    # (a release admits the job again, which may refuse it: say why)
    why = f": {job['state_reason']}" if job["job_state"] == "REJECTED" else ""
    return f"job {job['job_id']} {job['job_state']}{why}"


def _each(args: argparse.Namespace, targets: list[Any], change: Callable[[Any], str]) -> int:
    """``change`` for each target in turn, one line each; those refused are named on
    stderr and make the exit status 1."""
    failed = 0
    for target in targets:
        try:
            print(change(target))
        except BerthError as error:
            failed += 1
            _say_refused(args.admin_command, target, error)
    return 1 if failed else 0


def _say_refused(action: str, target: object, error: BerthError) -> None:
    """One line on stderr: what was refused and why (and the field the daemon named)."""
    where = f" ({error.field})" if error.field else ""
    print(f"berth admin {action} {target}: {error.message}{where}", file=sys.stderr)


def _print_node_token(args: argparse.Namespace, answer: dict[str, Any]) -> int:
    if args.json:
        print(to_json(answer, indent=2))
        return 0
    print(answer["token"])
    print(
        f"(the token for node {answer['name']}: start its agent with "
        f"berth agent --name {answer['name']} --token-file FILE; it is not shown again)",
        file=sys.stderr,
    )
    return 0


def _amounts(amounts: dict[str, int]) -> str:
    return ",".join(f"{name}={amount}" for name, amount in amounts.items()) or "-"


def _print_nodes(answer: dict[str, Any]) -> None:
    print(f"{'NODE':16} {'STATE':8} {'RESOURCES':28} {'USED':28} REASON")
    for node in answer["nodes"]:
        print(
            f"{node['name'][:16]:16} {node['state']:8} {_amounts(node['resources'])[:28]:28} "
            f"{_amounts(node['used'])[:28]:28} {node['reason']}"
        )


def _print_agents(answer: dict[str, Any]) -> None:
    print(f"{'NODE':16} {'STATE':8} {'HEARD':>10} {'JOBS':>5} {'CONFINEMENT':40} REASON")
    for row in answer["agents"]:
        heard = row["seconds_since_heard"]
        heard_text = "never" if heard is None else f"{span(int(heard))} ago"
        confined = row.get("confinement") or "-"
        print(
            f"{row['name'][:16]:16} {row['state']:8} {heard_text:>10} {row['running_jobs']:>5} "
            f"{confined:40} {row['reason']}"
        )
    delays = answer["launch_delay_seconds"]
    if delays.get("count"):
        print(
            f"launch delay (commit to process running) over {delays['count']} starts: "
            f"p50 {delays['p50'] * 1000:.0f} ms, p99 {delays['p99'] * 1000:.0f} ms"
        )
