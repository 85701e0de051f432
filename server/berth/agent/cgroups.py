"""Where an agent's jobs are confined: finding usable cgroups and laying out their tree.

An agent confines each job in a cgroup of its own, ``<base>/job-<id>.<attempt>``, under
a base of its own, ``berth-<node>``, beside the cgroup the agent was started in. Which
hierarchy is used, the first that works:

* **cgroup v2** (production machines: systemd with ``Delegate=yes``, or a root agent):
  the unified hierarchy, when it offers at least one of ``cpuset``, ``memory``,
  ``pids``, ``cpu``. v2 lets no cgroup with controllers for its children hold a process.
  Under systemd with ``DelegateSubgroup=agent`` (systemd 254 and later) the agent runs
  in a leaf of its delegated cgroup and its jobs' base goes beside it, in the delegated
  cgroup, which holds no process; otherwise an agent started in a non-root cgroup first
  moves that cgroup's processes into a leaf, ``berth-agents``, and its shepherds live
  there.
* **cgroup v1**: one hierarchy per controller (``cpuset``, ``memory``, ``freezer``,
  ``pids``, ``cpu``, ``cpuacct``, ``devices``), each that is mounted and writable.
* **none**: not root and nothing delegated, or no controller at all. The agent says so
  once at start and to the daemon (``berth admin agents``), and runs jobs unconfined.

This module only decides and prepares the tree; :mod:`berth.agent.confine` holds one
job's cgroup (limits, freezing, killing, usage), used by the job's shepherd.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The v1 controllers the agent uses, when mounted.
#: (No ``cpuacct``: a job's CPU time comes from the kernel's account of its processes,
#: which the shepherd reaps, so one cgroup fewer is made and moved into per job.)
V1_CONTROLLERS = ("cpuset", "memory", "freezer", "pids", "cpu", "devices")
#: The v2 controllers the agent enables for its jobs, when offered.
V2_CONTROLLERS = ("cpuset", "memory", "pids", "cpu")
#: The leaf of a v2 cgroup whose own processes had to move out of it.
V2_LEAF = "berth-agents"


@dataclass(frozen=True, slots=True)
class Layout:
    """An agent's cgroups: the version, each controller's base directory (v1), or the
    one base under ``"unified"`` (v2), and the cores its jobs may be pinned to."""

    version: int
    bases: dict[str, str]
    controllers: tuple[str, ...]
    cores: tuple[int, ...]
    #: Where the shepherds live (each job's shepherd returns there once the job started).
    homes: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the log and for ``berth admin agents``."""
        return f"cgroup v{self.version}: {', '.join(self.controllers)}"

    def spec(self, key: str, devices: bool = False, cpu: bool = True) -> dict[str, Any]:
        """What a job's shepherd needs to build, hold and remove its cgroups: ``dirs``,
        the cgroups that limit it (the shepherd lives in them too); ``freezer``, the one
        its processes move to when it is suspended (made then: most jobs never are);
        ``devices`` (v1) or ``device_filter`` (v2, an eBPF filter) only when GPUs must
        be hidden from it, ``cpu`` (v1) only when it needs a quota."""
        job = f"job-{key}"
        if self.version == 2:
            limits = os.path.join(self.bases["unified"], job)
            return {"version": 2, "dirs": {"unified": limits}, "homes": dict(self.homes),
                    "freezer": os.path.join(limits, "held"),
                    "device_filter": devices and "devices" in self.controllers}  # fmt: skip
        dirs = {
            name: os.path.join(base, job)
            for name, base in self.bases.items()
            if name != "freezer" and (devices or name != "devices") and (cpu or name != "cpu")
        }
        freezer = self.bases.get("freezer")
        return {"version": 1, "dirs": dirs, "homes": dict(self.homes),
                "freezer": None if freezer is None else os.path.join(freezer, job)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Probe:
    """The outcome of looking for cgroups: a layout, or why there is none."""

    layout: Layout | None
    reason: str

    def describe(self) -> str:
        if self.layout is not None:
            return self.layout.describe()
        return f"unconfined: {self.reason}"


def _mounts(mounts: Path) -> list[tuple[str, str, set[str]]]:
    """``(type, mount point, options)`` of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in mounts.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
                found.append((fields[2], fields[1], set(fields[3].split(","))))
    return found


def _own_paths(proc_cgroup: Path) -> dict[str, str]:
    """This process's cgroup in each hierarchy: controller (or ``"unified"``) -> path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in proc_cgroup.read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            if not controllers:
                paths["unified"] = path
            for name in controllers.split(","):
                if name:
                    paths[name] = path
    return paths


def _under(point: str, path: str) -> str:
    """The directory of cgroup ``path`` in the hierarchy mounted at ``point``."""
    return os.path.normpath(os.path.join(point, path.lstrip("/")))


def _make(directory: str) -> bool:
    """Create ``directory`` (a cgroup); False if this agent may not."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    return os.access(os.path.join(directory, "cgroup.procs"), os.W_OK)


def _copy(parent: str, child: str, names: tuple[str, ...]) -> None:
    """v1 cpuset: a cgroup takes no process until its cpus and mems are set."""
    for name in names:
        source = os.path.join(parent, name)
        target = os.path.join(child, name.replace("effective_", ""))
        value = Path(source).read_text().strip()
        if not Path(target).read_text().strip():
            Path(target).write_text(value)


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``0-3,8`` -> ``(0, 1, 2, 3, 8)``."""
    cores: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        first, _dash, last = part.partition("-")
        cores.extend(range(int(first), int(last or first) + 1))
    return tuple(cores)


def _affinity() -> tuple[int, ...]:
    if hasattr(os, "sched_getaffinity"):
        return tuple(sorted(os.sched_getaffinity(0)))
    return tuple(range(os.cpu_count() or 1))


def probe(
    name: str,
    mounts: Path = Path("/proc/self/mounts"),
    proc_cgroup: Path = Path("/proc/self/cgroup"),
) -> Probe:
    """Find the cgroups this agent can confine its jobs with, and prepare its base."""
    found = _mounts(mounts)
    own = _own_paths(proc_cgroup)
    for kind, point, _options in found:
        if kind != "cgroup2":
            continue
        layout = _v2(name, point, own.get("unified", "/"))
        if layout is not None:
            return Probe(layout, "")
    v1 = {
        controller: point
        for kind, point, options in found
        if kind == "cgroup"
        for controller in V1_CONTROLLERS
        if controller in options
    }
    if v1:
        layout = _v1(name, v1, own)
        if layout is not None:
            return Probe(layout, "")
        return Probe(None, "cgroups are not writable here (run the agent as root)")
    return Probe(None, "no cgroup controller is mounted")


def _offered(directory: str) -> tuple[str, ...]:
    """The controllers of :data:`V2_CONTROLLERS` a v2 cgroup may hand to its children."""
    try:
        offered = set(Path(directory, "cgroup.controllers").read_text().split())
    except OSError:
        return ()
    return tuple(c for c in V2_CONTROLLERS if c in offered)


def _delegated_parent(point: str, here: str) -> str | None:
    """The agent's parent cgroup, when it was delegated to the agent and holds no
    process itself (systemd's ``Delegate=yes`` with ``DelegateSubgroup=``): the jobs'
    cgroups then go beside the agent's, which stays a leaf across restarts."""
    parent = os.path.dirname(here)
    if here == point or os.path.normpath(parent) == os.path.normpath(point):
        return None  # the root's processes are the whole system's
    try:
        empty = not Path(parent, "cgroup.procs").read_text().split()
    except OSError:
        return None
    writable = os.access(os.path.join(parent, "cgroup.subtree_control"), os.W_OK)
    return parent if empty and writable and _offered(parent) else None


def _v2(name: str, point: str, own: str) -> Layout | None:
    here = _under(point, own)
    if not os.access(os.path.join(here, "cgroup.procs"), os.W_OK):
        return None
    top, home = here, here
    parent = _delegated_parent(point, here)
    if parent is not None:
        top = parent
    controllers = _offered(top)
    if not controllers:
        return None
    try:
        if top == here and own != "/":
            # A v2 cgroup that hands controllers to its children holds no process:
            # the agent's (and whatever shares its cgroup) move to a leaf.
            home = os.path.join(here, V2_LEAF)
            os.makedirs(home, exist_ok=True)
            for pid in Path(here, "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    Path(home, "cgroup.procs").write_text(pid)
        enable = " ".join(f"+{c}" for c in controllers)
        Path(top, "cgroup.subtree_control").write_text(enable)
        base = os.path.join(top, f"berth-{name}")
        os.makedirs(base, exist_ok=True)
        Path(base, "cgroup.subtree_control").write_text(enable)
    except OSError:
        return None
    cores = _affinity()
    if "cpuset" in controllers:
        with contextlib.suppress(OSError):
            cores = parse_cpu_list(Path(base, "cpuset.cpus.effective").read_text()) or cores
    from berth.agent.devices import filters_work  # ctypes: loaded by the agent only

    devices = ("devices",) if filters_work() else ()  # v2's device control is eBPF
    return Layout(
        2, {"unified": base}, (*controllers, "freeze", *devices), cores, {"unified": home}
    )


def _v1(name: str, points: dict[str, str], own: dict[str, str]) -> Layout | None:
    bases: dict[str, str] = {}
    homes: dict[str, str] = {}
    for controller, point in points.items():
        here = _under(point, own.get(controller, "/"))
        base = os.path.join(here, f"berth-{name}")
        if not _make(base):
            continue
        if controller == "cpuset":
            try:
                _copy(here, base, ("cpuset.effective_cpus", "cpuset.effective_mems"))
            except OSError:
                with contextlib.suppress(OSError):
                    os.rmdir(base)
                continue
        bases[controller] = base
        homes[controller] = here
    if not bases:
        return None
    cores = _affinity()
    if "cpuset" in bases:
        with contextlib.suppress(OSError):
            mine = set(parse_cpu_list(Path(bases["cpuset"], "cpuset.cpus").read_text()))
            cores = tuple(c for c in cores if c in mine) or cores
    controllers = tuple(c for c in V1_CONTROLLERS if c in bases)
    return Layout(1, bases, controllers, cores, homes)


def bases_of(
    name: str,
    mounts: Path = Path("/proc/self/mounts"),
    proc_cgroup: Path = Path("/proc/self/cgroup"),
) -> list[str]:
    """The base directories an agent named ``name`` made here, without making any (for
    clearing up after it)."""
    own = _own_paths(proc_cgroup)
    found: list[str] = []
    for kind, point, options in _mounts(mounts):
        if kind == "cgroup2":
            key: str | None = "unified"
        else:
            key = next((c for c in V1_CONTROLLERS if c in options), None)
        if key is None:
            continue
        base = os.path.join(_under(point, own.get(key, "/")), f"berth-{name}")
        if os.path.isdir(base) and base not in found:
            found.append(base)
    return found


def stale_jobs(layout: Layout) -> list[str]:
    """The job cgroups left under the agent's base (by a shepherd that died)."""
    keys: set[str] = set()
    for base in layout.bases.values():
        with contextlib.suppress(OSError):
            keys.update(e[4:] for e in os.listdir(base) if e.startswith("job-"))
    return sorted(keys)


def release(layout: Layout) -> None:
    """Remove the agent's base where no job cgroup is left in it (an agent leaving)."""
    for base in layout.bases.values():
        with contextlib.suppress(OSError):
            os.rmdir(base)


def pick_cores(cores: tuple[int, ...], held: dict[int, int], count: int) -> list[int]:
    """``count`` cores for a job: the free ones first, then (a node that declares more
    cpus than it has cores) the least shared; ``held`` counts the jobs on each core."""
    if count <= 0 or not cores:
        return []
    ranked = sorted(cores, key=lambda core: (held.get(core, 0), core))
    return sorted(ranked[: min(count, len(ranked))])
