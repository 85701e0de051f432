"""One job's cgroups, held by its shepherd: limits, entering, freezing, killing, usage.

The shepherd builds the job's cgroups from ``spec.json`` (the agent chose the cores and
the limits), *enters* them and starts the command, which is born inside, so nothing it
forks escapes. The shepherd stays in them for the job's life (one task of the job's
``pids_max``; it leaves before removing them): moving it out again on every start cost
a millisecond of the launch path for nothing. What is confined:

* ``cpuset``: the job's cores (as many as the cpus it holds on this node);
* ``cpu``: a quota of that many cpus, which still holds where cores must be shared
  (a node declaring more cpus than it has cores);
* ``memory``: its ``mem_gb``, swap included (none beyond it); the shepherd is exempt
  from the out-of-memory killer, so the job's own processes are the ones it picks;
* ``pids``: at most ``pids_max`` tasks (a fork bomb stays in its cgroup);
* ``devices`` (nodes with GPUs): the node's GPUs not given to the job cannot be
  opened (v1: ``devices.deny``; v2: an eBPF filter, :mod:`berth.agent.devices`).

Suspending *freezes* the job: its processes (every one in its cgroups but the shepherd)
move to a freezer cgroup made then (v1 ``freezer``; v2 a child cgroup, ``held``), which
is frozen; a process forked during the move is caught by looking again once frozen. At
the end the shepherd reads the job's peak memory and whether the out-of-memory killer
struck, kills what is left, leaves, and removes the cgroups.
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
#: Rounds of moving a job's processes into its freezer before giving up (each round
#: catches what forked during the last; a frozen process cannot fork).
FREEZE_ROUNDS = 50


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


def _members(directory: str | None) -> list[int]:
    text = _read(directory, "cgroup.procs") if directory else None
    return [int(pid) for pid in (text or "").split()]


class JobCgroup:
    """The cgroup (v2) or cgroups (v1, one per controller) of one job."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.version = int(spec["version"])
        self.dirs: dict[str, str] = dict(spec["dirs"])
        self.homes: dict[str, str] = dict(spec.get("homes") or {})
        self.freezer: str | None = spec.get("freezer")
        #: v2: hide devices with an eBPF filter (:mod:`berth.agent.devices`).
        self.device_filter = bool(spec.get("device_filter"))
        #: Never killed nor frozen by this object: the shepherd holding it.
        self.keeper = os.getpid()

    def _dir(self, controller: str) -> str | None:
        """The directory that holds ``controller``'s files, if this job has it."""
        if self.version == 2:
            return self.dirs.get("unified")
        return self.dirs.get(controller)

    # ------------------------------------------------------------------ building
    def create(self, limits: dict[str, Any]) -> None:
        """Make the cgroups and write their limits (``OSError`` if the kernel refuses)."""
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
        hidden = [int(gpu) for gpu in limits.get("hidden_gpus") or ()]
        for gpu in hidden if v1 else ():
            self._set("devices", "devices.deny", f"c {NVIDIA_MAJOR}:{gpu} rwm")
        if hidden and self.device_filter and (unified := self._dir("devices")) is not None:
            from berth.agent.devices import deny  # ctypes: only for jobs that need it

            deny(unified, [(NVIDIA_MAJOR, gpu) for gpu in hidden])

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
        """Move the calling process (the shepherd) in: what it starts now is born in the
        job's cgroups. It is then spared by the out-of-memory killer (as root)."""
        me = str(os.getpid())
        for directory in self.dirs.values():
            _write(directory, "cgroup.procs", me)

    def spare_keeper(self) -> None:
        """The out-of-memory killer never picks the shepherd (its job's processes are
        what the limit is for); set after the job started, which must not inherit it."""
        with contextlib.suppress(OSError):
            Path("/proc/self/oom_score_adj").write_text("-1000")

    def leave(self) -> None:
        """Move the calling process back to where the agent's shepherds live."""
        me = str(os.getpid())
        for home in self.homes.values():
            with contextlib.suppress(OSError):
                _write(home, "cgroup.procs", me)

    # ------------------------------------------------------------------ the job
    def pids(self) -> list[int]:
        """Every process of the job (the shepherd aside)."""
        found = set(_members(next(iter(self.dirs.values()), None))) | set(_members(self.freezer))
        found.discard(self.keeper)
        return sorted(found)

    def freeze(self, frozen: bool, wait: float = 2.0) -> bool:
        """Freeze (moving the job's processes into its freezer first) or thaw every
        process of the job; False if there is no freezer or it did not settle."""
        if self.freezer is None:
            return False
        try:
            if frozen:
                os.makedirs(self.freezer, exist_ok=True)
                for _ in range(FREEZE_ROUNDS):
                    moved = self._move_into_freezer()
                    self._set_frozen(True)
                    if not self._settle(True, wait) or not moved:
                        break
                return self._settled(True) and not self._outside_freezer()
            self._set_frozen(False)
        except OSError:
            return False
        return self._settle(False, wait)

    def _outside_freezer(self) -> list[int]:
        inside = set(_members(self.freezer))
        return [pid for pid in self.pids() if pid not in inside]

    def _move_into_freezer(self) -> bool:
        """Move the job's processes not yet in its freezer there; whether any moved."""
        assert self.freezer is not None
        outside = self._outside_freezer()
        for pid in outside:
            with contextlib.suppress(ProcessLookupError, OSError):
                _write(self.freezer, "cgroup.procs", str(pid))
        return bool(outside)

    def _set_frozen(self, frozen: bool) -> None:
        assert self.freezer is not None
        if self.version == 2:
            _write(self.freezer, "cgroup.freeze", "1" if frozen else "0")
        else:
            _write(self.freezer, "freezer.state", "FROZEN" if frozen else "THAWED")

    def _settled(self, frozen: bool) -> bool:
        assert self.freezer is not None
        if self.version == 2:
            state = _field(_read(self.freezer, "cgroup.events"), "frozen") == 1
        else:
            state = (_read(self.freezer, "freezer.state") or "").strip() == "FROZEN"
        return state == frozen

    def _settle(self, frozen: bool, wait: float) -> bool:
        deadline = time.monotonic() + wait
        while not self._settled(frozen):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def kill_all(self) -> bool:
        """SIGKILL every process of the job (thawed first: a frozen v1 task dies only
        once it runs); True once none is left."""
        if self.freezer is not None and os.path.isdir(self.freezer):
            with contextlib.suppress(OSError):
                self._set_frozen(False)
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return not self.pids()

    def usage(self) -> dict[str, int | float]:
        """Peak memory (bytes) and out-of-memory kills, where the kernel keeps them for
        this job's cgroup (keys are left out where it does not)."""
        found: dict[str, int | float] = {}
        memory = self._dir("memory")
        if memory is None:
            return found
        v2 = self.version == 2
        peak = _read(memory, "memory.peak" if v2 else "memory.max_usage_in_bytes")
        if peak is not None and peak.strip().isdigit():
            found["peak_memory_bytes"] = int(peak)
        events = _read(memory, "memory.events" if v2 else "memory.oom_control")
        kills = _field(events, "oom_kill")
        if kills is not None:
            found["oom_kills"] = kills
        return found

    def remove(self, wait: float = 2.0) -> None:
        """Leave, and remove the job's cgroups (the kernel refuses while a task is still
        leaving: looked at again for up to ``wait`` seconds)."""
        self.leave()
        deadline = time.monotonic() + wait
        for directory in [*([self.freezer] if self.freezer else []), *self.dirs.values()]:
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
    """Kill and remove a job's cgroups whose shepherd is gone (the agent's clean-up)."""
    job = JobCgroup(spec)
    job.keeper = -1  # the shepherd is gone: every process in them goes
    for _ in range(100):
        if job.kill_all():
            break
        time.sleep(0.01)
    job.homes = {}  # the caller is the agent: it never entered
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
                held = os.path.join(directory, "held")  # v2: the freezer inside
                freezer = held if os.path.isdir(held) else None
                if os.path.exists(os.path.join(directory, "freezer.state")):
                    freezer = directory  # v1: this is the freezer hierarchy's
                version = 2 if os.path.exists(os.path.join(directory, "cgroup.freeze")) else 1
                clear_stale({"version": version, "dirs": {"any": directory}, "freezer": freezer})
        with contextlib.suppress(OSError):
            os.rmdir(base)
