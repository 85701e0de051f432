"""What a job used, as its shepherd reports it with the job's end.

CPU seconds come from the kernel's account of the shepherd's waited-for children: every
process of the job, since the shepherd is a child subreaper and reaps orphans too (no
``cpuacct`` cgroup is needed for it). Peak memory comes from the job's cgroup where it
has one, else from the largest single process. An out-of-memory kill in the cgroup
makes the job's end ``OUT_OF_MEMORY``, with the limit in its reason.
"""

from __future__ import annotations

import resource
from typing import Any

from berth.agent.confine import JobCgroup


def measured_usage(cgroup: JobCgroup | None, spec: dict[str, Any]) -> dict[str, int | float]:
    """The job's usage (``cpu_seconds``, ``peak_memory_bytes``, ``gpus``), and
    ``oom_kills`` where its cgroup counts them; read once the job's processes are gone."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    usage: dict[str, int | float] = {
        "cpu_seconds": children.ru_utime + children.ru_stime,
        "peak_memory_bytes": children.ru_maxrss * 1024,
    }
    if cgroup is not None:
        usage.update(cgroup.usage())
    usage["cpu_seconds"] = round(float(usage["cpu_seconds"]), 3)
    gpus = spec.get("gpus") or []
    if gpus:
        usage["gpus"] = len(gpus)
    return usage


def oom_reason(spec: dict[str, Any]) -> str:
    """The reason of an ``OUT_OF_MEMORY`` end: the limit, and the ``mem_gb`` asked."""
    limits = spec.get("limits") or {}
    limit = limits.get("memory_bytes")
    asked = f" (mem_gb={limits['mem_gb']})" if limits.get("mem_gb") else ""
    size = f"{int(limit) / 2**30:g} GiB" if limit else "its memory limit"
    return f"killed by the out-of-memory killer on reaching its memory limit of {size}{asked}"
