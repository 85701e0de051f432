"""``berth-adopt``: place a login's process in the job its user runs on this node.

A job's command runs on the first node of its allocation; it reaches the other nodes by
``ssh`` (an MPI launcher does). Run from PAM when the job's user logs in to a node, as
Slurm's ``pam_slurm_adopt``, this command moves the login's process into that job's
cgroup here (the job's own on its first node, its share on the others; see
:mod:`berth.agent.shares`), so everything the session starts is confined to what the
job holds on the node, frozen with it and killed when it ends. A user with no job on
the node is refused (exit status 1: PAM then refuses the login)::

    # /etc/pam.d/sshd, after the account lines:
    account required pam_exec.so quiet /opt/berth/venv/bin/berth-adopt --workdir /var/lib/berth-agent

``pam_exec`` runs it as root with ``PAM_USER`` set; the process adopted is then its
parent (the ``sshd`` process that goes on to start the session). Without PAM, ``--pid``
and ``--user`` name them. A user with several jobs here is placed in the newest unless
``--job`` names one. Root is never adopted (exit 0). Only the standard library loads.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.agent.proc import read_json
from berth.agent.shares import Shares


@dataclass(frozen=True, slots=True)
class Holding:
    """A job (or a share of one) on this node that a login may join."""

    job_id: int
    attempt: int
    account: str
    cgroup: dict[str, Any] | None
    suspended: bool


def holdings(workdir: Path) -> list[Holding]:
    """The jobs that run here and the shares held here, oldest first."""
    found: list[Holding] = []
    for jobdir in sorted((workdir / "jobs").glob("*.*")):
        spec = read_json(jobdir / "spec.json")
        if spec is None or (jobdir / "exit.json").exists():
            continue
        job_id, _dot, attempt = jobdir.name.partition(".")
        account = spec.get("account") or (spec.get("env") or {}).get("USER", "")
        found.append(Holding(int(job_id), int(attempt), str(account), spec.get("cgroup"),
                             (jobdir / "suspended").exists()))  # fmt: skip
    found += [
        Holding(share.job_id, share.attempt, share.account, share.cgroup, share.suspended)
        for share in Shares.read(workdir).values()
    ]
    return sorted(found, key=lambda h: (h.job_id, h.attempt))


def move(pid: int, holding: Holding) -> None:
    """Move ``pid`` into the job's cgroups (its freezer too while it is suspended)."""
    cgroup = holding.cgroup or {}
    directories = list((cgroup.get("dirs") or {}).values())
    freezer = cgroup.get("freezer")
    if holding.suspended and freezer and os.path.isdir(freezer):
        directories.append(freezer)
    for directory in directories:
        Path(directory, "cgroup.procs").write_text(str(pid))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="berth-adopt",
        description="Place a login's process in the Berth job its user runs on this node "
        "(from PAM: pam_exec; exit status 1 when the user has no job here).",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/var/lib/berth-agent"),
                        help="the agent's --workdir (default /var/lib/berth-agent)")  # fmt: skip
    parser.add_argument("--user", default=os.environ.get("PAM_USER"),
                        help="whose job (default: $PAM_USER)")  # fmt: skip
    parser.add_argument("--pid", type=int,
                        help="the process to adopt (default under PAM: this command's parent)")  # fmt: skip
    parser.add_argument("--job", type=int, help="which of the user's jobs (default: the newest)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    def say(message: str) -> None:
        print(f"berth-adopt: {message}", file=sys.stderr)

    if not args.user:
        say("give --user (or run from PAM, which sets $PAM_USER)")
        return 2
    pid = args.pid if args.pid is not None else (os.getppid() if "PAM_TYPE" in os.environ else None)
    if pid is None:
        say("give --pid (or run from PAM: the process adopted is then this one's parent)")
        return 2
    if args.user == "root":
        return 0  # root's logins are the operators': never confined to a job
    mine = [h for h in holdings(args.workdir) if h.account == args.user]
    if args.job is not None:
        mine = [h for h in mine if h.job_id == args.job]
    if not mine:
        which = f"job {args.job} of {args.user}" if args.job is not None else f"job of {args.user}"
        say(f"no {which} runs on this node (agent work dir {args.workdir})")
        return 1
    chosen = mine[-1]
    if chosen.cgroup is None:
        say(f"job {chosen.job_id} is not confined on this node: process {pid} stays where it is")
        return 0
    try:
        move(pid, chosen)
    except OSError as error:
        say(f"cannot move process {pid} into job {chosen.job_id}'s cgroup: {error}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
