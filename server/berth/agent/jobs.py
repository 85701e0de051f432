"""The agent's jobs on disk: one directory per job attempt.

A job that was queued again after a node failure runs again as a new *attempt*; each
attempt has its own directory, ``WORKDIR/jobs/<id>.<attempt>``, named by its key. A directory holds ``spec.json`` (what to run, written by the agent), ``shepherd.json``
(the shepherd's and the job's pid with start times, written by the shepherd) and, once
the job has ended, ``exit.json``. The directory *is* the agent's memory: a restarted
agent rebuilds everything from it, adopting a job only if its shepherd is still the
process that started at the recorded time (a reused pid is never adopted). A job whose
shepherd vanished without writing ``exit.json`` (killed, or the host rebooted) is
recorded as ended with ``NODE_FAIL``, and what is left of its process group is killed.
Keys the daemon has acknowledged as ended go to ``WORKDIR/acknowledged`` so that a late
or repeated order can never start them again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.agent.confine import clear_stale
from berth.agent.launcher import Launcher
from berth.agent.proc import alive, flush_filesystem, read_json, write_json
from berth.agent.shepherd import spawn

log = logging.getLogger("berth.agent")

#: Seconds a directory may lack ``shepherd.json`` before its shepherd counts as lost
#: (the shepherd writes it first thing; this covers a slow start only).
SHEPHERD_START_GRACE = 10.0
#: Acknowledged job ids remembered (so a repeated order cannot start them again).
LEDGER_SIZE = 100_000


def _held(spec: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The GPUs and the cores a job's spec gives it on this node."""
    cores = (spec.get("limits") or {}).get("cores") or ()
    return tuple(spec.get("gpus") or ()), tuple(cores)


def job_key(job_id: int, attempt: int) -> str:
    """The name of one attempt of a job: ``<id>.<attempt>``."""
    return f"{job_id}.{attempt}"


@dataclass(slots=True)
class ShepherdHandle:
    """A shepherd this agent started: its pid and a pidfd of it (which names that
    process for good, so it is signalled and watched with no race against a reused
    pid). ``own``: the agent forked it itself (then it reaps it)."""

    pid: int
    pidfd: int
    own: bool = False

    def exited(self, wait: float = 0.0) -> bool:
        """Whether it has exited (waiting up to ``wait`` seconds); reaped if ours."""
        if not select.select([self.pidfd], [], [], wait)[0]:
            return False
        if self.own:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        return True

    def send(self, sig: signal.Signals) -> bool:
        try:
            signal.pidfd_send_signal(self.pidfd, sig)
        except ProcessLookupError:
            return False
        return True

    def close(self) -> None:
        os.close(self.pidfd)


@dataclass(slots=True)
class LocalJob:
    """One attempt of a job as the agent sees it on disk."""

    job_id: int
    attempt: int
    jobdir: Path
    shepherd: dict[str, Any] | None
    ended: dict[str, Any] | None
    suspended: bool = False
    gpus: tuple[int, ...] = ()
    #: The cores its cgroup pins it to (none: unconfined).
    cores: tuple[int, ...] = ()

    def report(self) -> dict[str, Any]:
        """The job as the agent reports it in a sync."""
        if self.ended is not None:
            return {"job_id": self.job_id, "attempt": self.attempt, **self.ended}
        if self.shepherd is None or "started_at" not in self.shepherd:
            self.shepherd = read_json(self.jobdir / "shepherd.json") or self.shepherd
        started = None if self.shepherd is None else self.shepherd.get("started_at")
        state = "SUSPENDED" if self.suspended else "RUNNING"
        return {"job_id": self.job_id, "attempt": self.attempt, "state": state,
                "started_at": started}  # fmt: skip

    @property
    def key(self) -> str:
        return job_key(self.job_id, self.attempt)


class LocalJobs:
    """The job directories of one agent."""

    def __init__(self, workdir: Path) -> None:
        self.root = workdir / "jobs"
        self.root.mkdir(parents=True, exist_ok=True)
        self.ledger_path = workdir / "acknowledged"
        self.acknowledged: set[str] = set()
        if self.ledger_path.exists():
            self.acknowledged = set(self.ledger_path.read_text().split())
        self.jobs: dict[str, LocalJob] = {}
        #: Shepherds this agent started, until they exit: key -> shepherd.
        self._children: dict[str, ShepherdHandle] = {}
        self._launcher = Launcher()
        self._created: dict[str, float] = {}
        for entry in sorted(self.root.iterdir()):
            job_id, dot, attempt = entry.name.partition(".")
            if job_id.isdigit() and dot and attempt.isdigit():
                self._adopt(int(job_id), int(attempt), entry)
        if any(job.ended is not None for job in self.jobs.values()):
            flush_filesystem(self.root)  # ends a shepherd wrote before this agent started

    # ------------------------------------------------------------------ restart
    def _adopt(self, job_id: int, attempt: int, jobdir: Path) -> None:
        """Take back a job directory found at start-up."""
        job = LocalJob(job_id, attempt, jobdir, read_json(jobdir / "shepherd.json"), None)
        job.ended = read_json(jobdir / "exit.json")
        marker = jobdir / "suspended"
        job.suspended = marker.exists()
        job.gpus, job.cores = _held(read_json(jobdir / "spec.json") or {})
        self.jobs[job.key] = job
        self._created[job.key] = jobdir.stat().st_mtime
        if job.ended is None:
            self._check_lost(job)

    def _check_lost(self, job: LocalJob) -> None:
        """Record the job as ended if its shepherd is gone without a word."""
        if job.ended is not None:
            return
        if job.shepherd is None:
            job.shepherd = read_json(job.jobdir / "shepherd.json")
        if job.shepherd is None:
            if time.time() - self._created.get(job.key, 0.0) < SHEPHERD_START_GRACE:
                return  # still starting
            self._lost(job, "its shepherd never started")
            return
        if alive(job.shepherd["shepherd_pid"], job.shepherd.get("shepherd_ticks")):
            return
        job.ended = read_json(job.jobdir / "exit.json")  # it may have just finished
        if job.ended is None:
            self._lost(job, "its shepherd died without recording the end (host restart?)")

    def _lost(self, job: LocalJob, reason: str) -> None:
        shepherd = job.shepherd or {}
        pid, ticks = shepherd.get("pid"), shepherd.get("ticks")
        if pid is not None and alive(pid, ticks):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # the job's own group: nothing outlives it
        cgroup = (read_json(job.jobdir / "spec.json") or {}).get("cgroup")
        if cgroup:  # and whatever is left in its cgroup, which goes too
            clear_stale(cgroup)
        ended = {
            "state": "NODE_FAIL",
            "reason": reason,
            "exit_code": None,
            "signal": None,
            "started_at": shepherd.get("started_at"),
            "ended_at": time.time(),
        }
        write_json(job.jobdir / "exit.json", ended)
        job.ended = ended

    # ------------------------------------------------------------------ orders
    def launch(self, job_id: int, attempt: int, spec: dict[str, Any]) -> None:
        """Start ``spec`` under a shepherd in a session of its own."""
        key = job_key(job_id, attempt)
        jobdir = self.root / key
        # Others may pass through (to run the job's script) but not list it.
        jobdir.mkdir(mode=0o711, exist_ok=True)
        # Processes die with the host, so what describes them need not wait for the disk.
        write_json(jobdir / "spec.json", spec, durable=False)
        self._children[key] = self._spawn(jobdir)
        self._created[key] = time.time()
        gpus, cores = _held(spec)
        self.jobs[key] = LocalJob(job_id, attempt, jobdir, None, None, gpus=gpus, cores=cores)

    def _spawn(self, jobdir: Path) -> ShepherdHandle:
        """A shepherd for ``jobdir``, from the launcher (or forked here if it cannot)."""
        try:
            return ShepherdHandle(*self._launcher.spawn(jobdir))
        except OSError as error:
            log.warning("launcher: %s; forking the shepherd from the agent", error)
            pid = spawn(jobdir)
            return ShepherdHandle(pid, os.pidfd_open(pid), own=True)

    def refuse(self, job_id: int, attempt: int, reason: str) -> None:
        """Record an order that cannot run here as ended ``FAILED`` with ``reason``."""
        key = job_key(job_id, attempt)
        jobdir = self.root / key
        jobdir.mkdir(exist_ok=True)
        ended = {"state": "FAILED", "reason": reason, "exit_code": None, "signal": None,
                 "started_at": None, "ended_at": time.time()}  # fmt: skip
        write_json(jobdir / "exit.json", ended)
        self.jobs[key] = LocalJob(job_id, attempt, jobdir, None, ended)

    def gpus_in_use(self) -> set[int]:
        return {g for job in self.jobs.values() if job.ended is None for g in job.gpus}

    def cores_in_use(self) -> dict[int, int]:
        """How many running jobs each core is pinned for."""
        held: dict[int, int] = {}
        for job in self.jobs.values():
            if job.ended is None:
                for core in job.cores:
                    held[core] = held.get(core, 0) + 1
        return held

    def signal(self, key: str, sig: signal.Signals, reason: str = "") -> bool:
        """Send ``sig`` to the job's shepherd (verified by its start time)."""
        job = self.jobs.get(key)
        if job is None or job.ended is not None:
            return False
        child = self._children.get(key)
        if child is not None:  # started here: its pidfd, even before shepherd.json
            if reason:
                (job.jobdir / "cancel").write_text(reason)
            return child.send(sig)
        if job.shepherd is None:
            job.shepherd = read_json(job.jobdir / "shepherd.json")
        if job.shepherd is None:
            return False
        pid, verified = job.shepherd["shepherd_pid"], job.shepherd.get("shepherd_ticks")
        if reason:
            (job.jobdir / "cancel").write_text(reason)
        if not alive(pid, verified):
            return False
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return False
        return True

    def cancel(self, key: str, reason: str) -> bool:
        return self.signal(key, signal.SIGTERM, reason)

    def suspend(self, key: str, suspended: bool) -> None:
        job = self.jobs.get(key)
        if job is None or job.ended is not None or job.suspended == suspended:
            return
        if self.signal(key, signal.SIGUSR1 if suspended else signal.SIGUSR2):
            job.suspended = suspended
            marker = job.jobdir / "suspended"
            if suspended:
                marker.touch()
            else:
                marker.unlink(missing_ok=True)

    def forget(self, keys: list[str]) -> None:
        """The daemon acknowledged these ends: drop their directories, remember the keys."""
        fresh = [k for k in keys if k in self.jobs and self.jobs[k].ended is not None]
        if not fresh:
            return
        self.acknowledged.update(fresh)
        with open(self.ledger_path, "a") as ledger:
            ledger.write("".join(f"{k}\n" for k in fresh))
            ledger.flush()
            os.fsync(ledger.fileno())
        if len(self.acknowledged) > LEDGER_SIZE:  # keep the newest ids, rewrite the file
            newest = sorted(self.acknowledged, key=lambda k: tuple(map(int, k.split("."))))
            self.acknowledged = set(newest[-LEDGER_SIZE:])
            write_text = "".join(f"{k}\n" for k in newest[-LEDGER_SIZE:])
            self.ledger_path.write_text(write_text)
        for key in fresh:
            job = self.jobs.pop(key)
            child = self._children.pop(key, None)
            if child is not None:
                child.close()
            self._created.pop(key, None)
            shutil.rmtree(job.jobdir, ignore_errors=True)

    # ------------------------------------------------------------------ watching
    def refresh(self) -> list[str]:
        """Look for ends; the keys of jobs that ended since the last call."""
        for key, child in list(self._children.items()):
            if child.exited():
                child.close()
                del self._children[key]
        newly: list[str] = []
        for job in self.jobs.values():
            if job.ended is not None or job.key in self._children:
                continue  # a live shepherd of ours writes the end, then exits
            job.ended = read_json(job.jobdir / "exit.json")
            if job.ended is None:
                self._check_lost(job)
            if job.ended is not None:
                newly.append(job.key)
        if newly:  # the shepherds wrote their ends unflushed: on disk before reported
            flush_filesystem(self.root)
        return newly

    def close(self) -> None:
        """Let the shepherds whose jobs have ended exit (they do right after writing the
        end), stop the launcher, and let go of the rest (they keep running)."""
        for key, child in list(self._children.items()):
            job = self.jobs.get(key)
            if job is not None and job.ended is not None:
                child.exited(wait=5)
            child.close()
            del self._children[key]
        self._launcher.close()

    def running(self) -> list[str]:
        return [k for k, j in self.jobs.items() if j.ended is None]

    def reports(self) -> list[dict[str, Any]]:
        return [job.report() for job in self.jobs.values()]

    def known(self, key: str) -> bool:
        """Whether the agent has ever had this attempt (so it must never start it again)."""
        return key in self.jobs or key in self.acknowledged
