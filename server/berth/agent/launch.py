"""From the daemon's order to a shepherd's ``spec.json``: account, directory, files, env.

Who a job runs as: an agent that is not root runs every job as its own user. An agent
running as root runs each job as the local account named like the submitting user, and
refuses (the job ends ``FAILED`` with the reason) when there is no such account or it is
root's: a job never runs as root. A root agent started with ``--run-as ACCOUNT`` runs
every job as that one account instead (HTCondor's "nobody" model, for nodes without the
users' accounts). The working directory is the job's ``chdir`` (``berth
submit`` sends the directory it was called from, as sbatch does), else the account's
home. Output goes to ``berth-<id>.out`` / ``.err`` there unless ``output`` / ``error``
say otherwise; ``%j`` in them becomes the job id and ``%x`` its name.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from typing import Any

from berth.agent.cgroups import Layout, pick_cores

#: Environment variables of the agent that a job must not inherit.
PRIVATE = ("BERTH_AGENT_TOKEN", "BERTH_TOKEN")


class LaunchRefused(Exception):
    """The order cannot run here; the message says why (it becomes the job's reason)."""


@dataclass(frozen=True, slots=True)
class Account:
    uid: int | None  # None: the agent's own user
    gid: int | None
    groups: list[int] | None
    home: str
    name: str


def account_for(user: str, run_as: str | None = None) -> Account:
    """The account a job of ``user`` runs as on this node."""
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid())
        return Account(None, None, None, me.pw_dir, me.pw_name)
    local = run_as or user
    try:
        entry = pwd.getpwnam(local)
    except KeyError:
        raise LaunchRefused(f"user {local!r} has no local account on this node") from None
    if entry.pw_uid == 0:
        raise LaunchRefused(f"user {local!r} maps to root here; jobs never run as root")
    groups = os.getgrouplist(entry.pw_name, entry.pw_gid)
    return Account(entry.pw_uid, entry.pw_gid, groups, entry.pw_dir, entry.pw_name)


def _expand(pattern: str, job_id: int, name: str, array: tuple[str, str] = ("", "")) -> str:
    """``%j`` the job id, ``%x`` its name; an array's task: ``%A`` the array's id, ``%a``
    the task's index."""
    expanded = pattern.replace("%j", str(job_id)).replace("%x", name)
    return expanded.replace("%A", array[0]).replace("%a", array[1])


def build_spec(
    order: dict[str, Any],
    node: str,
    gpus: list[int],
    grace: float,
    fallback_dir: str,
    run_as: str | None = None,
) -> dict[str, Any]:
    """The shepherd's spec for ``order`` on ``node``; :class:`LaunchRefused` if it cannot."""
    job_id = int(order["job_id"])
    name = str(order.get("name") or f"job{job_id}")
    account = account_for(str(order["user"]), run_as)
    cwd = order.get("chdir") or account.home
    if not cwd or not os.path.isabs(cwd):
        cwd = fallback_dir
    array = (str(order.get("array_job_id", "")), str(order.get("array_task_id", "")))
    stdout = _expand(order.get("output") or f"berth-{job_id}.out", job_id, name, array)
    stderr = _expand(order.get("error") or f"berth-{job_id}.err", job_id, name, array)
    env = {k: v for k, v in os.environ.items() if k not in PRIVATE}
    if account.uid is not None:
        env.update(HOME=account.home, USER=account.name, LOGNAME=account.name)
    nodes = list(order["nodes"])
    env.update(
        BERTH_JOB_ID=str(job_id),
        BERTH_JOB_NAME=name,
        BERTH_JOB_USER=str(order["user"]),
        BERTH_NODELIST=",".join(nodes),
        BERTH_NUM_NODES=str(len(nodes)),
        BERTH_CPUS_ON_NODE=str(order.get("cpus", 0)),
        BERTH_NODENAME=node,
        BERTH_SUBMIT_TIME=str(order.get("submit_time", "")),
    )
    if order.get("array_job_id") is not None:
        env.update(BERTH_ARRAY_JOB_ID=array[0], BERTH_ARRAY_TASK_ID=array[1])
    if gpus:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, gpus))
    script = order.get("script")
    if order.get("argv") is not None and script is None:
        raise LaunchRefused("the daemon sent no batch script for this job")
    return {
        "script": script,
        "argv": [str(a) for a in order.get("argv") or ()],
        "job_id": job_id,
        "command": order.get("command") or "true",
        "cwd": cwd,
        "stdout": os.path.join(cwd, stdout),
        "stderr": os.path.join(cwd, stderr),
        "env": env,
        "time_limit": float(order["time_limit"]),
        "grace": grace,
        "account": account.name,
        "uid": account.uid,
        "gid": account.gid,
        "groups": account.groups,
        "gpus": gpus,
    }


def confinement(
    layout: Layout,
    key: str,
    order: dict[str, Any],
    node: dict[str, int],
    gpus: list[int],
    held: dict[int, int],
    pids_max: int,
) -> dict[str, Any]:
    """The spec's ``cgroup`` and ``limits`` for one job: its cores (free ones first),
    a cpu quota of the cpus it holds here where its cores are shared (a node declaring
    more cpus than it has cores; otherwise its own cores hold it, at no cost), its
    ``mem_gb`` (the node's memory when it asked for none: a job never takes more than
    the node has), the task limit, and the node's GPUs it was not given."""
    cpus = int(order.get("cpus") or 0)
    mem_gb = int(order.get("mem_gb") or 0)
    memory_gb = mem_gb or int(node.get("mem_gb", 0))
    cores = pick_cores(layout.cores, held, cpus)
    shared = len(cores) < cpus or any(held.get(core, 0) for core in cores)
    limits = {
        "cores": cores,
        "cpus": cpus if shared else 0,
        "mem_gb": mem_gb,
        "memory_bytes": memory_gb * 2**30 if memory_gb else None,
        "pids_max": pids_max,
        "hidden_gpus": [g for g in range(int(node.get("gpus", 0))) if g not in gpus],
    }
    spec = layout.spec(key, devices=bool(limits["hidden_gpus"]), cpu=shared)
    return {"cgroup": spec, "limits": limits}
