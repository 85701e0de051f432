"""One job's cgroup, held by its shepherd: limits, entering, freezing, killing, usage.

The shepherd builds the job's cgroup from ``spec.json`` (the agent chose the cores and
the limits), *enters* it, starts the command (which is born inside, so nothing it forks
escapes), and *leaves* it again: the shepherd itself must stay outside, or freezing the
job would freeze its shepherd. What is confined:

* ``cpuset``: the job's cores (as many as the cpus it holds on this node);
* ``cpu``: a quota of that many cpus, which still holds where cores must be shared
  (a node declaring more cpus than it has cores);
* ``memory``: its ``mem_gb``, swap included (none beyond it);
* ``pids``: at most ``pids_max`` tasks (a fork bomb stays in its cgroup);
* ``devices`` (v1 only): the node's GPUs not given to the job cannot be opened.

At the end the shepherd reads the job's CPU time, its peak memory and whether the
out-of-memory killer struck, kills what is left, and removes the cgroup.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from pathlib import Path
from typing import Any

#: The character-device major number of NVIDIA GPUs (``/dev/nvidiaN`` is ``195:N``).
NVIDIA_MAJOR = 195
CPU_PERIOD_US = 100_000


def _write(directory: str, name: str, value: str) -> None:
    Path(directory, name).write_text(value)


def _read(directory: str, name: str) -> str | None:
    try:
        return Path(directory, name).read_text()
    except OSError:
        return None


def _field(text: str | None, key: str) -> int | None:
    """The value of ``key`` in a flat-keyed file (``oom_kill 2``)."""
    for line in (text or "").splitlines():
        name, _space, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return None


class JobCgroup:
    """The cgroup (v2) or cgroups (v1, one per controller) of one job."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.version = int(spec["version"])
        self.dirs: dict[str, str] = dict(spec["dirs"])
        self.homes: dict[str, str] = dict(spec.get("homes") or {})

    def _dir(self, controller: str) -> str | None:
        """The directory that holds ``controller``'s files, if this job has it."""
        if self.version == 2:
            return self.dirs.get("unified")
        return self.dirs.get(controller)

    # ------------------------------------------------------------------ building
    def create(self, limits: dict[str, Any]) -> None:
        """Make the cgroup and write its limits (``OSError`` if the kernel refuses)."""
        for directory in self.dirs.values():
            os.makedirs(directory, exist_ok=True)
        v1 = self.version == 1
        cores = ",".join(map(str, limits.get("cores") or ()))
        if cores:
            self._set("cpuset", "cpuset.cpus", cores)
            if v1 and (cpuset := self._dir("cpuset")) is not None:  # no task without mems
                mems = _read(os.path.dirname(cpuset), "cpuset.mems") or "0"
                _write(cpuset, "cpuset.mems", mems.strip())
        cpus = float(limits.get("cpus") or 0)
        if cpus > 0:
            quota = str(int(cpus * CPU_PERIOD_US))
            if v1:
                self._set("cpu", "cpu.cfs_period_us", str(CPU_PERIOD_US))
                self._set("cpu", "cpu.cfs_quota_us", quota)
            else:
                self._set("cpu", "cpu.max", f"{quota} {CPU_PERIOD_US}")
        memory_bytes = str(int(limits.get("memory_bytes") or 0))
        if memory_bytes != "0":
            self._set("memory", "memory.limit_in_bytes" if v1 else "memory.max", memory_bytes)
            swap = ("memory.memsw.limit_in_bytes", memory_bytes) if v1 else ("memory.swap.max", "0")
            with contextlib.suppress(OSError):  # absent without swap accounting
                self._set("memory", *swap)
        if limits.get("pids_max"):
            self._set("pids", "pids.max", str(int(limits["pids_max"])))
        for gpu in limits.get("hidden_gpus") or () if v1 else ():
            self._set("devices", "devices.deny", f"c {NVIDIA_MAJOR}:{int(gpu)} rwm")

    def _set(self, controller: str, name: str, value: str) -> None:
        """Write one interface file of ``controller``, where this job has it (v2 shows a
        controller's files only where the parent enabled it)."""
        directory = self._dir(controller)
        if directory is None:
            return
        if self.version == 2 and not os.path.exists(os.path.join(directory, name)):
            return
        _write(directory, name, value)

    def enter(self) -> None:
        """Move the calling process in: what it starts now is born in the cgroup."""
        me = str(os.getpid())
        for directory in self.dirs.values():
            _write(directory, "cgroup.procs", me)

    def leave(self) -> None:
        """Move the calling process back to where the agent's shepherds live."""
        me = str(os.getpid())
        for home in self.homes.values():
            with contextlib.suppress(OSError):
                _write(home, "cgroup.procs", me)

    # ------------------------------------------------------------------ the job
    def can_freeze(self) -> bool:
        return self.version == 2 or "freezer" in self.dirs

    def freeze(self, frozen: bool, wait: float = 2.0) -> bool:
        """Freeze or thaw every process of the job; False if there is no freezer or it
        did not settle within ``wait`` seconds."""
        if self.version == 2:
            directory, name, value = self.dirs["unified"], "cgroup.freeze", "1" if frozen else "0"
        elif "freezer" in self.dirs:
            directory, name = self.dirs["freezer"], "freezer.state"
            value = "FROZEN" if frozen else "THAWED"
        else:
            return False
        try:
            _write(directory, name, value)
        except OSError:
            return False
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self._frozen() == frozen:
                return True
            time.sleep(0.005)
        return False

    def _frozen(self) -> bool | None:
        if self.version == 2:
            return _field(_read(self.dirs["unified"], "cgroup.events"), "frozen") == 1
        state = (_read(self.dirs["freezer"], "freezer.state") or "").strip()
        return state == "FROZEN"

    def pids(self) -> list[int]:
        """Every process in the cgroup."""
        directory = next(iter(self.dirs.values()), None)
        text = _read(directory, "cgroup.procs") if directory is not None else None
        return [int(pid) for pid in (text or "").split()]

    def kill_all(self) -> bool:
        """SIGKILL every process in the cgroup (thawed first: a frozen v1 task dies only
        once it runs); True once it is empty."""
        if self.can_freeze() and self._frozen():
            self.freeze(False, wait=0.5)
        if self.version == 2:
            with contextlib.suppress(OSError):
                _write(self.dirs["unified"], "cgroup.kill", "1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return not self.pids()

    def usage(self) -> dict[str, int | float]:
        """CPU seconds, peak memory (bytes) and out-of-memory kills, where the kernel
        keeps them for this cgroup (keys are left out where it does not)."""
        found: dict[str, int | float] = {}
        if self.version == 2:
            directory = self.dirs["unified"]
            usec = _field(_read(directory, "cpu.stat"), "usage_usec")
            if usec is not None:
                found["cpu_seconds"] = usec / 1e6
            peak = _read(directory, "memory.peak")
            if peak is not None and peak.strip().isdigit():
                found["peak_memory_bytes"] = int(peak)
            kills = _field(_read(directory, "memory.events"), "oom_kill")
        else:
            cpuacct = self.dirs.get("cpuacct")
            nanoseconds = _read(cpuacct, "cpuacct.usage") if cpuacct else None
            if nanoseconds is not None and nanoseconds.strip().isdigit():
                found["cpu_seconds"] = int(nanoseconds) / 1e9
            memory = self.dirs.get("memory")
            peak = _read(memory, "memory.max_usage_in_bytes") if memory else None
            if peak is not None and peak.strip().isdigit():
                found["peak_memory_bytes"] = int(peak)
            kills = _field(_read(memory, "memory.oom_control"), "oom_kill") if memory else None
        if kills is not None:
            found["oom_kills"] = kills
        return found

    def remove(self, wait: float = 2.0) -> None:
        """Remove the job's cgroup (the kernel refuses while a task is still leaving)."""
        deadline = time.monotonic() + wait
        for directory in self.dirs.values():
            while True:
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError as error:
                    if error.errno != errno.EBUSY or time.monotonic() > deadline:
                        break
                    self.kill_all()
                    time.sleep(0.01)


def clear_stale(spec: dict[str, Any]) -> None:
    """Kill and remove a job cgroup whose shepherd is gone (the agent's clean-up)."""
    job = JobCgroup(spec)
    for _ in range(100):
        if job.kill_all():
            break
        time.sleep(0.01)
    job.remove()


def clear_tree(bases: list[str]) -> None:
    """Kill every job left under an agent's bases and remove them all (tests, and an
    operator clearing a node): each ``job-*`` cgroup, then the bases."""
    for base in bases:
        with contextlib.suppress(OSError):
            for entry in os.listdir(base):
                directory = os.path.join(base, entry)
                if not entry.startswith("job-"):
                    continue
                if os.path.exists(os.path.join(directory, "cgroup.freeze")):
                    clear_stale({"version": 2, "dirs": {"unified": directory}})
                else:  # v1: one controller's directory ("freezer" if it can thaw)
                    frozen = os.path.exists(os.path.join(directory, "freezer.state"))
                    clear_stale(
                        {"version": 1, "dirs": {"freezer" if frozen else "other": directory}}
                    )
        with contextlib.suppress(OSError):
            os.rmdir(base)
