"""Process facts from ``/proc`` and atomic JSON files: what the agent and shepherd share.

A pid alone never identifies a process (pids are reused), so every process the agent
keeps track of is named by ``(pid, start ticks)``, the start time in clock ticks since
boot from ``/proc/<pid>/stat``; a process is "the same" only if both match. Status
files are written to a temporary name, flushed to disk and renamed, so a reader sees
the whole file or none of it, even across a crash.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def start_ticks(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), ``None`` if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat[stat.rindex(b")") + 2 :].split()
    if fields[0] == b"Z":  # a zombie is dead for our purposes
        return None
    return int(fields[19])


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def my_children() -> list[int]:
    """This (single-threaded) process's children, zombies included: the kernel's list
    when it keeps one (``/proc/self/task/<tid>/children``), else a scan of ``/proc``."""
    me = os.getpid()
    try:
        text = Path(f"/proc/{me}/task/{me}/children").read_text()
    except OSError:
        return children_of(me)
    return [int(pid) for pid in text.split()]


def children_of(pid: int) -> list[int]:
    """Every process whose parent is ``pid`` (zombies included); reads all of /proc."""
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(int(e)) == pid]


def alive(pid: int, ticks: int | None) -> bool:
    """Whether ``pid`` still runs and is the process that started at ``ticks``."""
    return ticks is not None and start_ticks(pid) == ticks


def boot_id() -> str:
    """The kernel's id for this boot: it changes when the host restarts."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-boot"


def flush_filesystem(path: Path) -> None:
    """Write everything pending on ``path``'s file system to disk (``syncfs``): one
    journal commit for every file written since, where an ``fsync`` per file costs one
    each."""
    import ctypes

    descriptor = os.open(path, os.O_RDONLY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syncfs(descriptor) != 0:
            os.sync()
    except (OSError, AttributeError):  # no syncfs here: everything, then
        os.sync()
    finally:
        os.close(descriptor)


def write_json(path: Path, data: dict[str, Any], durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically; ``durable``: also to disk before returning
    (what only matters while the host is up, such as a pid, need not wait for the disk)."""
    temporary = path.with_name(path.name + ".tmp")
    # Readable by the agent's account only: a job's spec holds its environment.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(descriptor, "w") as handle:
        json.dump(data, handle)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    if not durable:
        return
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or ``None`` if it is missing or not complete."""
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
