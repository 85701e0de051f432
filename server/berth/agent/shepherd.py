"""The shepherd: one small process per job that starts it, watches it and records its end.

The agent's launcher (:mod:`berth.agent.launcher`) forks the shepherd (:func:`spawn`)
into a session of its own, so the shepherd (and the job) outlive an agent that dies or
restarts; forking an already-loaded process costs a few milliseconds where starting a
new interpreter costs tens (``python -m berth.agent.shepherd JOBDIR`` does the same by
hand). The shepherd reads
``JOBDIR/spec.json``, starts the command in a new process group, records
``JOBDIR/shepherd.json`` (its own and the job's pid with their start times, so a reused
pid is never mistaken for them), then waits for one of:

* the job exits: ``COMPLETED`` (status 0) or ``FAILED`` (exit code or signal kept);
* its time limit passes (time suspended does not count): ``TIMEOUT``;
* ``SIGTERM`` from the agent (a cancel, or the agent fencing itself): ``CANCELLED``;
* ``SIGUSR1`` / ``SIGUSR2`` from the agent: freeze / thaw the job's cgroup, or without
  a freezer stop / continue the whole group.

Where the agent found cgroups, the job is born in a cgroup of its own
(:mod:`berth.agent.confine`) that holds it to its cores, memory and task count.
Ending the job is: ``SIGCONT`` and ``SIGTERM`` to the group (and to every process of its
cgroup), the grace period, then ``SIGKILL``. When the main process is gone, whatever it
left behind is killed too: the rest of its process group, every descendant that moved
to a session of its own (the shepherd is a child subreaper), and whatever is left in its
cgroup. No process of the job survives its end. Its usage is read (CPU seconds from the
kernel's account of the processes the shepherd reaped, peak memory from its cgroup or
else its largest process), a job the out-of-memory killer struck ends
``OUT_OF_MEMORY``, and the cgroup is removed.
Last, the end is written to ``JOBDIR/exit.json`` atomically (the agent flushes the ends
it finds to disk, many in one ``syncfs``, before it reports them); the agent reports it to
the daemon and deletes the directory only once the daemon has acknowledged it.

Why one module of over 400 lines: the shepherd is one process with one job, and every
path that ends a job (exit, limit, cancel, a lost agent) must leave no process behind;
those paths are easiest to check against each other in one file.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from berth.agent.accounting import measured_usage, oom_reason
from berth.agent.confine import JobCgroup
from berth.agent.proc import my_children, read_json, start_ticks, write_json
from berth.agent.process_control import as_account, become_subreaper, close_output, signal_group

#: Signals the shepherd takes synchronously (blocked, then waited for).
WATCHED = {
    signal.SIGCHLD,
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGUSR1,
    signal.SIGUSR2,
}


class Shepherd:
    """Runs one job from its directory; :meth:`run` returns once ``exit.json`` is written."""

    def __init__(self, jobdir: Path) -> None:
        self.jobdir = jobdir
        spec = read_json(jobdir / "spec.json")
        if spec is None:
            raise SystemExit(f"shepherd: no readable spec.json in {jobdir}")
        self.spec: dict[str, Any] = spec
        self.time_limit = float(spec["time_limit"])
        self.grace = float(spec.get("grace", 30))
        self.pid = 0
        self.process: subprocess.Popen[bytes] | None = None
        #: The main process's return code (negative: the signal that killed it).
        self.status: int | None = None
        self.started_at = 0.0
        self.suspended_since: float | None = None
        self.suspended_total = 0.0
        #: Signals delivered while they were not blocked (as the job started), in order.
        self.caught: list[int] = []
        #: ``shepherd.lock``, held while this shepherd lives.
        self._lock: int | None = None
        #: The job's cgroup (None: the agent found none; the job runs unconfined).
        self.cgroup = JobCgroup(spec["cgroup"]) if spec.get("cgroup") else None
        #: Whether a suspend froze the cgroup (else it stopped the process group).
        self.frozen = False

    def _catch(self, number: int, _frame: object) -> None:
        self.caught.append(number)

    # ------------------------------------------------------------------ start
    def _start(self) -> str | None:
        """Start the command; a reason string if it could not be started."""
        spec = self.spec
        cwd = spec["cwd"]
        if not os.path.isdir(cwd):
            return f"working directory {cwd} does not exist on this node"
        try:
            with as_account(spec):  # what the job's account may not reach is refused
                if not os.access(cwd, os.X_OK, effective_ids=True):
                    return f"working directory {cwd} is not open to the job's account"
                stdout = open(spec["stdout"], "ab")  # noqa: SIM115 - handed to the child
                stderr = (
                    stdout if spec["stderr"] == spec["stdout"] else open(spec["stderr"], "ab")  # noqa: SIM115
                )
        except OSError as error:
            return f"cannot open the output file: {error}"

        try:
            step = "confine the job in its cgroup"
            if self.cgroup is not None:
                self.cgroup.create(spec.get("limits") or {})
                self.cgroup.enter()  # the job is born inside (the shepherd stays)
            step = "write the batch script"
            argv = self._command()
        except OSError as error:
            close_output(stdout, stderr)
            return f"cannot {step}: {error}"
        # The job must start with the default signal mask, which it inherits: the
        # watched signals are unblocked for the moment of the start only (one caught
        # then is kept by _caught and handled first). No Python runs in the child
        # (no preexec_fn), so the start needs no fork of this whole interpreter.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=spec["env"],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                process_group=0,
                user=spec.get("uid"),
                group=spec.get("gid"),
                extra_groups=spec.get("groups"),
                close_fds=True,
            )
        except OSError as error:
            return f"cannot start the command: {error}"
        finally:
            signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
            if self.cgroup is not None:
                self.cgroup.spare_keeper()
            close_output(stdout, stderr)
        # Kept (with its returncode set once reaped): a Popen dropped while its child
        # runs is handed to subprocess, which would reap the child itself.
        self.process = process
        self.pid = process.pid
        self.started_at = time.time()
        self._record(pid=self.pid, ticks=start_ticks(self.pid), started_at=self.started_at)
        return None

    def _command(self) -> list[str]:
        """What to start: the batch script (written to ``JOBDIR/script``, the job's
        account's own, and run by its ``#!`` interpreter with its arguments), or
        ``/bin/sh -c COMMAND``."""
        script = self.spec.get("script")
        if script is None:
            return ["/bin/sh", "-c", self.spec["command"]]
        path = self.jobdir / "script"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o500)
        with open(descriptor, "wb") as handle:
            handle.write(script.encode())
            if self.spec.get("uid") is not None:
                os.fchown(handle.fileno(), self.spec["uid"], self.spec["gid"])
        return [str(path), *self.spec.get("argv", [])]

    def _record(self, **job: object) -> None:
        """``shepherd.json``: who we are and the job we started (the agent allows a new
        shepherd some seconds to write it)."""
        me = os.getpid()
        write_json(
            self.jobdir / "shepherd.json",
            {"shepherd_pid": me, "shepherd_ticks": start_ticks(me), **job},
            durable=False,  # pids mean nothing after a host restart
        )

    # ------------------------------------------------------------------ watch
    def _run_left(self) -> float:
        """Seconds of run time left before the time limit."""
        now = time.time()
        suspended = self.suspended_total
        if self.suspended_since is not None:
            suspended += now - self.suspended_since
        return self.time_limit - (now - self.started_at - suspended)

    def _reap(self) -> None:
        """Collect every exited child (the job's main process, and descendants that
        were re-parented to us); note the main process's status. One ``waitpid(-1)``
        collects them all: asking Popen first and then reaping the rest would lose the
        main process's status when it exits in between (Popen then reports 0)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid and self.status is None:
                self.status = os.waitstatus_to_exitcode(status)  # negative: a signal
                if self.process is not None:
                    self.process.returncode = self.status

    def _wait_for_main(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the main process to end."""
        deadline = time.monotonic() + seconds
        while self.status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if signal.sigtimedwait({signal.SIGCHLD}, left) is not None:
                self._reap()

    def _end(self) -> None:
        """SIGCONT and SIGTERM to the group and the cgroup, the grace period, then
        SIGKILL."""
        self._thaw()
        signal_group(self.pid, signal.SIGTERM)
        for pid in self.cgroup.pids() if self.cgroup is not None else ():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        self._reap()
        self._wait_for_main(self.grace)
        signal_group(self.pid, signal.SIGKILL)

    def _thaw(self) -> None:
        if self.frozen and self.cgroup is not None:
            self.cgroup.freeze(False)
            self.frozen = False
        signal_group(self.pid, signal.SIGCONT)

    def _sweep(self) -> None:
        """Kill whatever of the job is left: its group, then re-parented descendants."""
        for _ in range(500):
            signal_group(self.pid, signal.SIGKILL)
            self._reap()
            # Once the group is empty its members are reaped, so any child of theirs has
            # already been re-parented to us: the scan below, made after, sees it.
            try:
                os.killpg(self.pid, 0)
                group_empty = False
            except (ProcessLookupError, PermissionError):
                group_empty = True
            strays = [c for c in my_children() if start_ticks(c) is not None]
            for child in strays:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(os.getpgid(child), signal.SIGKILL)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            emptied = self.cgroup is None or self.cgroup.kill_all()
            if group_empty and not strays and emptied and self.status is not None:
                return
            time.sleep(0.01)  # let the killed die before looking again

    def watch(self) -> tuple[str, str]:
        """Wait for the job's end; ``(state, reason)``."""
        self._reap()  # a SIGCHLD while the start had signals unblocked is not queued
        for number in self.caught:
            if (ended := self._on_signal(number)) is not None:
                return ended
        while self.status is None:
            timeout = max(self._run_left(), 0.0) if self.suspended_since is None else None
            if timeout == 0.0:
                self._end()
                return "TIMEOUT", f"killed on reaching its time limit of {self.time_limit:g} s"
            info = (
                signal.sigtimedwait(WATCHED, timeout)
                if timeout is not None
                else signal.sigwaitinfo(WATCHED)
            )
            if info is None:
                continue  # the time limit: handled at the top of the loop
            if (ended := self._on_signal(info.si_signo)) is not None:
                return ended
        status = self.status
        if status == 0:
            return "COMPLETED", "exited with status 0"
        if status > 0:
            return "FAILED", f"exited with status {status}"
        return "FAILED", f"killed by signal {signal.Signals(-status).name}"

    def _on_signal(self, number: int) -> tuple[str, str] | None:
        """Act on one watched signal; the job's end if it ends it (a cancel)."""
        if number == signal.SIGCHLD:
            self._reap()
        elif number == signal.SIGUSR1 and self.suspended_since is None:
            # A frozen cgroup holds every process of the job, also a child that left
            # the process group or catches SIGSTOP's companions; without one, SIGSTOP.
            self.frozen = self.cgroup is not None and self.cgroup.freeze(True)
            if not self.frozen:
                if self.cgroup is not None:
                    self.cgroup.freeze(False)  # whatever froze before it failed
                signal_group(self.pid, signal.SIGSTOP)
            self.suspended_since = time.time()
        elif number == signal.SIGUSR2 and self.suspended_since is not None:
            self._thaw()
            self.suspended_total += time.time() - self.suspended_since
            self.suspended_since = None
        elif number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            reason_file = self.jobdir / "cancel"
            reason = reason_file.read_text().strip() if reason_file.exists() else ""
            self._end()
            return "CANCELLED", reason or "cancelled"
        return None

    def _sole(self) -> bool:
        """Whether this is the job's only shepherd, and its job has not run: it holds
        ``JOBDIR/shepherd.lock`` (``flock``, for its whole life) and finds no
        ``exit.json``. A launcher given up as stuck may still have started one; the
        agent's second start of the same job must then do nothing."""
        lock = os.open(self.jobdir / "shepherd.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            return False
        self._lock = lock  # kept open (not inherited by the job): the lock lasts
        return not (self.jobdir / "exit.json").exists()

    def run(self) -> None:
        if not self._sole():
            return
        signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
        # Blocked signals wait for watch(); these handlers only see the ones that come
        # while the job starts, and keep them instead of dying of SIGUSR1 or SIGTERM.
        for number in WATCHED - {signal.SIGCHLD}:
            signal.signal(number, self._catch)
        # Not the reaper of the process forked from (the launcher's): the job's exit
        # status is Popen's to collect.
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        become_subreaper()
        problem = self._start()
        usage: dict[str, int | float] = {}
        if problem is not None:
            state, reason = "FAILED", problem
        else:
            state, reason = self.watch()
            self._sweep()
            usage = measured_usage(self.cgroup, self.spec)
            if usage.pop("oom_kills", 0) and state not in ("CANCELLED", "TIMEOUT"):
                state, reason = "OUT_OF_MEMORY", oom_reason(self.spec)
        if self.cgroup is not None:
            self.cgroup.remove()
        status = self.status
        write_json(
            self.jobdir / "exit.json",
            {
                "state": state,
                "reason": reason,
                "exit_code": status if status is not None and status >= 0 else None,
                "signal": -status if status is not None and status < 0 else None,
                "started_at": self.started_at or None,
                "ended_at": time.time(),
                "usage": usage,
            },
            # Not flushed here: the agent flushes every end it finds in one go (one
            # syncfs a round instead of two fsyncs a job) before it reports them.
            durable=False,
        )


def spawn(jobdir: Path) -> int:
    """Fork a shepherd for ``jobdir`` in a new session; its pid (the caller reaps it).

    The child takes nothing of the agent but this code: it closes every inherited file
    (the agent's connections), points stdio at ``/dev/null``, runs the job and leaves
    with ``os._exit`` (no ``atexit``, no flushing the agent's buffers). It never logs or
    imports, so no lock another agent thread held at the fork matters; should the
    shepherd itself fail, it says why in ``JOBDIR/shepherd.err``."""
    # The child starts with the agent's signals blocked, so a suspend or a cancel sent
    # the moment it exists waits for its watch instead of killing it (the default
    # action of SIGUSR1).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return pid
    status = 1
    try:
        # A collection would touch every object the agent holds and copy each page
        # they sit on: the shepherd allocates little and lives as long as its job.
        gc.disable()
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        Shepherd(jobdir).run()
        status = 0
    except BaseException as error:  # report and leave, whatever it was
        with contextlib.suppress(OSError):
            (jobdir / "shepherd.err").write_text(f"shepherd failed: {error!r}\n")
    finally:
        os._exit(status)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m berth.agent.shepherd JOBDIR")
    Shepherd(Path(sys.argv[1])).run()


if __name__ == "__main__":
    main()
