"""What a job used beside what it held, as ``seff`` prints it: CPU efficiency (CPU
seconds used / cpus held x elapsed) and memory efficiency (peak memory / memory asked).
Used by ``berth show`` and ``berth usage``; the measurements come from the job's node
(its cgroup, or its processes) and are absent on emulated nodes."""

from __future__ import annotations

from typing import Any


def size(count: float) -> str:
    """Bytes as people read them: ``812 KiB``, ``1.50 GiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            value = count / scale
            return f"{value:.2f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{int(count)} B"


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole > 0 else "-"


def job_lines(job: dict[str, Any]) -> list[tuple[str, str]]:
    """``berth show``'s usage lines for one job: ``(label, text)``."""
    usage = job.get("usage")
    if not usage:
        if job.get("end_time") is None:
            return [("usage", "measured at its end")]
        if job.get("start_time") is None:
            return [("usage", "none: it never started")]
        # (a real node measures every command it ran; a launch that failed ran none)
        return [("usage", "not measured (emulated nodes, or its command never ran)")]
    lines = []
    start, end = job.get("start_time"), job.get("end_time")
    elapsed = max(end - start, 0) if start is not None and end is not None else 0
    cpus = int(job.get("resources", {}).get("cpus", 0))
    if "cpu_seconds" in usage:
        used = float(usage["cpu_seconds"])
        held = cpus * elapsed
        lines.append(
            (
                "cpu_used",
                f"{used:.1f} s of {held} cpu-seconds held: efficiency {percent(used, held)}",
            )
        )
    if "peak_memory_bytes" in usage:
        peak = float(usage["peak_memory_bytes"])
        asked = int(job.get("resources", {}).get("mem_gb", 0)) * 2**30
        of = f" of {size(asked)} asked: efficiency {percent(peak, asked)}" if asked else ""
        lines.append(("memory_peak", f"{size(peak)}{of}"))
    if "gpus" in usage:
        lines.append(("gpus_used", str(int(usage["gpus"]))))
    return lines


def usage_columns(row: dict[str, Any]) -> str:
    """``berth usage``'s measured columns for one row: used CPU-hours, CPU efficiency."""
    if not row.get("measured_jobs"):
        return f"{'-':>12} {'-':>8}"
    used = float(row.get("used_cpu_seconds", 0))
    held = float(row.get("measured_cpus_seconds", 0))
    return f"{used / 3600:>12,.1f} {percent(used, held):>8}"
