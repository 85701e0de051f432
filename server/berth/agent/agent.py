"""The agent's loop: register, then a level-triggered sync with the daemon, forever.

Every request carries the whole truth of the node (each job it holds: running,
suspended, or ended with its exit status); every answer carries the whole wish of the
daemon (each job that should run here, and whether suspended) plus the ended jobs it has
recorded. The agent then converges: it starts what should run and never ran here,
cancels what runs but should not, suspends or resumes, and forgets acknowledged ends.
A message lost or repeated changes nothing; a restart on either side converges.

Two threads share the work: one long-polls (the daemon answers at once when it has
something new for this node, else after ``sync_wait`` seconds), the other watches the
job directories every 0.1 s and syncs as soon as a job ends, so ends reach the daemon
at once. The watcher also fences: after ``fence_seconds`` without a successful sync
the agent cancels its jobs, because the daemon has by then declared the node down and
may have started their work elsewhere.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.agent import cgroups
from berth.agent.confine import clear_stale
from berth.agent.daemon_link import DaemonLink
from berth.agent.jobs import LocalJobs, job_key
from berth.agent.launch import LaunchRefused, account_for, build_spec, confinement
from berth.agent.proc import boot_id
from berth.agent.shares import Share, Shares

log = logging.getLogger("berth.agent")

#: Seconds between retries while the daemon cannot be reached (doubling, up to 5 s).
RETRY_FIRST, RETRY_MAX = 0.2, 5.0


class AgentRefused(Exception):
    """The daemon refused the agent for good (bad token, wrong name): stop and say why."""


@dataclass(slots=True)
class AgentConfig:
    url: str
    token: str
    name: str
    resources: dict[str, int]
    workdir: Path
    boot_id: str = field(default_factory=boot_id)
    #: A root agent runs every job as this account instead of the submitter's.
    run_as: str | None = None
    #: Confine jobs in cgroups where the agent can (False: never; jobs run unconfined).
    cgroups: bool = True
    #: The most tasks (processes and threads) one job may have on this node.
    pids_max: int = 4096
    #: Stop when the process with this pid (the one that started the agent: a demo, a
    #: test rig) is no longer its parent; ``None``: run on whatever its parent does.
    parent: int | None = None


class Agent:
    """One node's agent."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        config.workdir.mkdir(parents=True, exist_ok=True)
        self.jobs = LocalJobs(config.workdir)
        #: This node's share of jobs whose command runs on another node.
        self.shares = Shares(config.workdir)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        #: The poller's link, whose held sync a stop interrupts.
        self._polling: DaemonLink | None = None
        self.ended_unsent = threading.Event()
        #: Set when the daemon no longer knows this agent: register again at once.
        self.reregister = threading.Event()
        self.sync_wait = 10.0
        self.fence_seconds = 1800.0
        self.kill_grace = 30.0
        self.last_contact = time.monotonic()
        self.fenced = False
        self.registered = False
        total = config.resources.get("gpus", 0)
        self.gpu_count = int(total)
        self.confinement = (
            cgroups.probe(config.name)
            if config.cgroups
            else cgroups.Probe(None, "turned off (--no-cgroups)")
        )
        if self.confinement.layout is not None:
            self._clear_stale_cgroups(self.confinement.layout)

    def _clear_stale_cgroups(self, layout: cgroups.Layout) -> None:
        """Kill and remove the cgroups of jobs whose shepherds are gone (a share's cgroup
        has no shepherd: it stays while the share is held)."""
        kept = set(self.jobs.running()) | set(self.shares.holding())
        for key in cgroups.stale_jobs(layout):
            if key not in kept:
                log.warning("removing the cgroup of job %s: its shepherd is gone", key)
                clear_stale(layout.spec(key, devices=True))

    # ------------------------------------------------------------------ protocol
    def _body(self, wait: float) -> dict[str, Any]:
        return {
            "name": self.config.name,
            "boot_id": self.config.boot_id,
            "resources": self.config.resources,
            "jobs": self.jobs.reports(),
            "shares": self.shares.reports(),
            "wait": wait,
            "confinement": self.confinement.describe(),
        }

    def exchange(self, link: DaemonLink, path: str, wait: float) -> bool:
        """One request and the convergence on its answer; False if it did not get through."""
        with self.lock:
            self.jobs.refresh()
            body = self._body(wait)
        try:
            status, answer = link.post(path, body, timeout=wait + 30.0)
        except OSError as error:
            if not self.stopping.is_set():  # (a stop interrupts the held sync)
                log.warning("daemon unreachable at %s: %s", self.config.url, error)
            return False
        if status in (401, 403):
            raise AgentRefused(_message(answer, status))
        unknown = _error(answer).get("unknown_jobs")
        if status == 409 and unknown:
            self._disown([str(k) for k in unknown], _message(answer, status))
            return False
        if status != 200 or not isinstance(answer, dict):
            log.warning(
                "the daemon refused the %s (%s): %s", path, status, _message(answer, status)
            )
            if _error(answer).get("register"):
                self.registered = False  # the daemon does not know this agent (it restarted)
                self.reregister.set()
            return False
        with self.lock:
            self.last_contact = time.monotonic()
            self.fenced = False
            self._apply_settings(answer)
            self._converge(answer)
        return True

    def _apply_settings(self, answer: dict[str, Any]) -> None:
        settings = answer.get("settings") or {}
        self.sync_wait = float(settings.get("sync_wait", self.sync_wait))
        self.fence_seconds = float(settings.get("fence_seconds", self.fence_seconds))
        self.kill_grace = float(settings.get("kill_grace", self.kill_grace))

    def _converge(self, answer: dict[str, Any]) -> None:
        orders = {
            job_key(int(order["job_id"]), int(order.get("attempt", 0))): order
            for order in answer.get("jobs", [])
        }
        wanted = {k: o for k, o in orders.items() if o.get("run", True)}
        # The nodes of the allocation that do not run the command hold a share of it.
        shared = {k: o for k, o in orders.items() if not o.get("run", True)}
        for key in self.jobs.running():
            if key not in wanted:
                self.jobs.cancel(key, "cancelled: the daemon no longer wants it here")
        for key in self.shares.holding():
            if key not in shared:
                self.shares.release(key)
        for key, order in wanted.items():
            if not self.jobs.known(key):
                self._launch(order)
            self.jobs.suspend(key, bool(order.get("suspended")))
        for key, order in shared.items():
            if key not in self.shares:
                self._hold(key, order)
            self.shares.suspend(key, bool(order.get("suspended")))
        self.jobs.forget([str(k) for k in answer.get("acknowledged", [])])

    def _placement(self, key: str, order: dict[str, Any]) -> tuple[list[int], dict[str, Any]]:
        """The GPUs an order gets here and, where jobs are confined, its cgroup and
        limits (cores not held by another job or share first); :class:`LaunchRefused`
        if the GPUs it holds here are not free."""
        wanted_gpus = int(order.get("gpus", 0))
        in_use = self.jobs.gpus_in_use() | self.shares.gpus_in_use()
        free = [g for g in range(self.gpu_count) if g not in in_use]
        if wanted_gpus > len(free):
            raise LaunchRefused(f"asks for {wanted_gpus} GPUs, {len(free)} are free here")
        gpus = free[:wanted_gpus]
        if self.confinement.layout is None:
            return gpus, {}
        held = self.jobs.cores_in_use()
        for core, count in self.shares.cores_held().items():
            held[core] = held.get(core, 0) + count
        return gpus, confinement(
            self.confinement.layout,
            key,
            order,
            self.config.resources,
            gpus,
            held,
            self.config.pids_max,
        )

    def _hold(self, key: str, order: dict[str, Any]) -> None:
        """Hold this node's share of a job whose command runs on another node."""
        try:
            name = account_for(str(order["user"]), self.config.run_as).name
        except LaunchRefused as refusal:  # nobody can be adopted into it; it still holds
            log.warning("job %s: %s; its share here admits no login", order["job_id"], refusal)
            name = ""
        try:
            gpus, confined = self._placement(key, order)
        except LaunchRefused as refusal:
            log.warning("job %s: its share here: %s", order["job_id"], refusal)
            gpus, confined = [], {}
        limits = confined.get("limits") or {}
        share = Share(
            int(order["job_id"]),
            int(order.get("attempt", 0)),
            name,
            tuple(gpus),
            tuple(limits.get("cores") or ()),
            confined.get("cgroup"),
            limits,
        )
        self.shares.hold(key, share)
        log.info("job %s: holding its share here (its command runs on %s)",
                 order["job_id"], (order.get("nodes") or ["another node"])[0])  # fmt: skip

    def _launch(self, order: dict[str, Any]) -> None:
        job_id, attempt = int(order["job_id"]), int(order.get("attempt", 0))
        try:
            gpus, confined = self._placement(job_key(job_id, attempt), order)
            spec = build_spec(
                order,
                self.config.name,
                gpus,
                self.kill_grace,
                str(self.config.workdir),
                self.config.run_as,
            )
            spec.update(confined)
        except LaunchRefused as refusal:
            log.warning("job %s refused: %s", job_id, refusal)
            self.jobs.refuse(job_id, attempt, str(refusal))
            self.ended_unsent.set()
            return
        self.jobs.launch(job_id, attempt, spec)
        what = spec["command"] if spec.get("script") is None else "its batch script"
        log.info("job %s started: %s", job_id, what)

    def _disown(self, keys: list[str], message: str) -> None:
        """The daemon never placed these jobs here: cancel them and forget them."""
        log.warning("%s; cancelling them here", message)
        with self.lock:
            for key in keys:
                self.jobs.cancel(key, "the daemon never placed this job here")
            deadline = time.monotonic() + self.kill_grace + 5
            while any(k in self.jobs.running() for k in keys) and time.monotonic() < deadline:
                time.sleep(0.05)
                self.jobs.refresh()
            self.jobs.forget(keys)

    # ------------------------------------------------------------------ threads
    def _poller(self) -> None:
        link = self._polling = DaemonLink(self.config.url, self.config.token)
        delay = RETRY_FIRST
        while not self.stopping.is_set():
            if not self.registered:
                self.registered = self.exchange(link, "/v1/agents/register", 0.0)
                if self.registered:
                    log.info("registered with %s as %s", self.config.url, self.config.name)
                ok = self.registered
            else:
                ok = self.exchange(link, "/v1/agents/sync", self.sync_wait)
            if ok:
                delay = RETRY_FIRST
            elif self.reregister.is_set():
                self.reregister.clear()
            else:
                self.stopping.wait(delay)
                delay = min(delay * 2, RETRY_MAX)
        link.close()

    def _watcher(self) -> None:
        link = DaemonLink(self.config.url, self.config.token)
        parent = self.config.parent
        while not self.stopping.wait(0.1):
            if parent is not None and os.getppid() != parent:
                log.warning("the process that started this agent (%d) has ended: stopping", parent)
                self.stop()
                break
            with self.lock:
                ended = self.jobs.refresh()
                silent = time.monotonic() - self.last_contact
                if silent > self.fence_seconds and not self.fenced:
                    self._fence(silent)
            if (ended or self.ended_unsent.is_set()) and self.registered:
                self.ended_unsent.clear()
                try:
                    if not self.exchange(link, "/v1/agents/sync", 0.0):
                        self.ended_unsent.set()
                except AgentRefused as refusal:  # the poller stops the agent on its next turn
                    log.error("the daemon refused this agent: %s", refusal)
                    self.ended_unsent.set()
        link.close()

    def _fence(self, silent: float) -> None:
        running = self.jobs.running()
        if running:
            log.error(
                "no contact with the daemon for %.0f s (fence %.0f s): cancelling %d job(s)",
                silent,
                self.fence_seconds,
                len(running),
            )
        for job_id in running:
            self.jobs.cancel(job_id, f"fenced: no contact with the daemon for {silent:.0f} s")
        for key in self.shares.holding():  # what jobs of other nodes started here goes too
            self.shares.release(key)
        self.fenced = True

    def stop(self) -> None:
        """Stop serving now: a sync the daemon holds is not waited for (it held a stop
        up to ``sync_wait`` seconds)."""
        self.stopping.set()
        if self._polling is not None:
            self._polling.interrupt()

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT; jobs keep running when the agent stops."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())
        log.info(
            "agent %s: %s, work dir %s, %d job(s) adopted",
            self.config.name,
            ",".join(f"{k}={v}" for k, v in self.config.resources.items()),
            self.config.workdir,
            len(self.jobs.running()),
        )
        layout = self.confinement.layout
        if layout is None:
            log.warning("jobs run unconfined: %s", self.confinement.reason)
        else:
            log.info("jobs are confined: %s, cores %s", layout.describe(), list(layout.cores))
            declared = int(self.config.resources.get("cpus", 0))
            if declared > len(layout.cores):
                log.warning(
                    "this node declares %d cpus on %d cores: jobs share cores (their cpu "
                    "quota still holds where the cpu controller is there)",
                    declared,
                    len(layout.cores),
                )
        watcher = threading.Thread(target=self._watcher, name="watcher", daemon=True)
        watcher.start()
        try:
            self._poller()
        finally:
            self.stopping.set()
            watcher.join(timeout=2)
            with self.lock:
                self.jobs.close()  # the launcher leaves; the jobs run on
            if self.confinement.layout is not None:
                cgroups.release(self.confinement.layout)  # where no job is left


def _error(answer: Any) -> dict[str, Any]:
    """The ``error`` object of a refusal (``{}`` if there is none)."""
    error = answer.get("error") if isinstance(answer, dict) else None
    return error if isinstance(error, dict) else {}


def _message(answer: Any, status: int) -> str:
    return str(_error(answer).get("message") or f"HTTP {status}")


def host_resources() -> dict[str, int]:
    """cpus from the OS and mem_gb from /proc/meminfo (whole GiB)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    resources = {"cpus": int(cpus or 1)}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                resources["mem_gb"] = max(int(line.split()[1]) // (1024 * 1024), 1)
    except OSError:
        pass
    return resources


def default_name() -> str:
    return socket.gethostname().split(".")[0]
