"""A node's share of jobs whose command runs on another node, held for adoption.

Berth runs a job's command once, on the first node of its allocation (Slurm's batch
model); the other nodes of a multi-node job hold their share of it for the processes it
starts there (an MPI launcher's ``ssh``). The agent on each such node holds the share as
it would hold a job started there: its cores are picked and kept from other jobs, its
GPUs are given to no one else, and, where cgroups can be used, it gets a cgroup of its
own, ``berth-<node>/job-<id>.<attempt>``, with the same limits (cores, memory, tasks,
devices), but no process. Processes reach it through :mod:`berth.agent.adopt` (run from
PAM when the job's user logs in, as Slurm's ``pam_slurm_adopt`` does), and are then
confined to the share, frozen with the job and killed when it ends: a share the daemon
no longer wishes for is released (whatever is in its cgroup is killed, the cgroup
removed). Each share is a file, ``WORKDIR/shares/<id>.<attempt>.json``, so a restarted
agent keeps holding it.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.agent.confine import JobCgroup, clear_stale
from berth.agent.proc import read_json, write_json

log = logging.getLogger("berth.agent")


@dataclass(slots=True)
class Share:
    """One job's share of this node: who may be adopted into it, and what it holds."""

    job_id: int
    attempt: int
    #: The local account whose logins join it ("": none, the job's user has no account).
    account: str
    gpus: tuple[int, ...]
    cores: tuple[int, ...]
    #: Its cgroup (``None``: held unconfined) and the limits written there.
    cgroup: dict[str, Any] | None
    limits: dict[str, Any]
    suspended: bool = False

    def record(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "attempt": self.attempt,
            "account": self.account,
            "gpus": list(self.gpus),
            "cores": list(self.cores),
            "cgroup": self.cgroup,
            "limits": self.limits,
            "suspended": self.suspended,
        }

    @classmethod
    def from_record(cls, found: dict[str, Any]) -> Share:
        return cls(
            int(found["job_id"]),
            int(found["attempt"]),
            str(found.get("account") or ""),
            tuple(found.get("gpus") or ()),
            tuple(found.get("cores") or ()),
            found.get("cgroup"),
            dict(found.get("limits") or {}),
            bool(found.get("suspended")),
        )

    def report(self) -> dict[str, Any]:
        """The share as the agent reports it in a sync."""
        return {"job_id": self.job_id, "attempt": self.attempt, "suspended": self.suspended}


class Shares:
    """The shares one agent holds, on disk under ``WORKDIR/shares``."""

    def __init__(self, workdir: Path) -> None:
        self.root = workdir / "shares"
        self.root.mkdir(parents=True, exist_ok=True)
        self.held = self.read(workdir)

    @staticmethod
    def read(workdir: Path) -> dict[str, Share]:
        """The shares recorded under ``workdir``, by key (also for ``berth-adopt``)."""
        held: dict[str, Share] = {}
        for path in sorted((workdir / "shares").glob("*.json")):
            found = read_json(path)
            if found is not None:
                held[path.stem] = Share.from_record(found)
        return held

    def __contains__(self, key: str) -> bool:
        return key in self.held

    def holding(self) -> list[str]:
        """The keys of the shares held (a copy: releasing one while walking it is safe)."""
        return list(self.held)

    def hold(self, key: str, share: Share) -> None:
        """Hold ``share``: make its cgroup (where it has one) and remember it on disk.
        A cgroup the kernel refuses is logged and the share held unconfined."""
        if share.cgroup is not None:
            try:
                JobCgroup(share.cgroup).create(share.limits)
            except OSError as error:
                log.warning("job %s: its share here is not confined: %s", key, error)
                with contextlib.suppress(OSError):
                    clear_stale(share.cgroup)
                share.cgroup = None
        # What it holds must survive the agent (its processes outlive it), not the host.
        write_json(self.root / f"{key}.json", share.record(), durable=False)
        self.held[key] = share

    def release(self, key: str) -> None:
        """The job ended or left this node: kill what was adopted into its share and
        remove its cgroup, then forget it."""
        share = self.held.pop(key, None)
        if share is None:
            return
        if share.cgroup is not None:
            clear_stale(share.cgroup)
        (self.root / f"{key}.json").unlink(missing_ok=True)

    def suspend(self, key: str, suspended: bool) -> None:
        """Freeze or thaw what was adopted into the share (nothing to do unconfined:
        without a cgroup nothing was adopted)."""
        share = self.held.get(key)
        if share is None or share.suspended == suspended:
            return
        if share.cgroup is not None:
            group = JobCgroup(share.cgroup)
            group.keeper = -1  # no shepherd is in a share: every process is the job's
            if not group.freeze(suspended):
                log.warning("job %s: its share here did not %s", key,
                            "freeze" if suspended else "thaw")  # fmt: skip
        share.suspended = suspended
        write_json(self.root / f"{key}.json", share.record(), durable=False)

    def gpus_in_use(self) -> set[int]:
        return {gpu for share in self.held.values() for gpu in share.gpus}

    def cores_held(self) -> dict[int, int]:
        """How many shares each core is kept for."""
        held: dict[int, int] = {}
        for share in self.held.values():
            for core in share.cores:
                held[core] = held.get(core, 0) + 1
        return held

    def reports(self) -> list[dict[str, Any]]:
        return [share.report() for share in self.held.values()]
