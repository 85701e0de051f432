"""Reader for the Standard Workload Format (Parallel Workloads Archive).

Mapping (``docs/semantics.md``): processors are the resource ``cpus``, whose capacity
defaults to the header's MaxProcs (else MaxNodes); a job asks for its requested
processors (field 8) if positive, else its allocated processors (field 5); its estimate
is the requested time (field 9) if positive, else its runtime (field 4). Jobs with a
negative runtime or no processors are skipped and counted. Runtime and estimate are
clamped to at least 1 s. Jobs are sorted by (submit time, job id).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from berth.core.model import MIN_DURATION, Job
from berth.emulate.traces.opening import reading
from berth.emulate.workload import TraceJob, Workload, WorkloadError

SWF_FIELDS = 18
#: The fields read, by their 0-based position: (number in the SWF definition, name).
FIELD_NAMES = {
    0: "1 (job number)",
    1: "2 (submit time)",
    3: "4 (run time)",
    4: "5 (allocated processors)",
    7: "8 (requested processors)",
    8: "9 (requested time)",
    11: "12 (user id)",
}


def _number(where: str, fields: list[str], index: int) -> int:
    """Field ``index`` as a whole number (SWF writes some as ``-1.00``)."""
    text = fields[index]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return int(float(text))
    except (ValueError, OverflowError):  # not a number, nan, inf
        raise WorkloadError(
            f"{where}: field {FIELD_NAMES[index]} must be a number, got {text[:40]!r}"
        ) from None


def _leading_int(value: str) -> int | None:
    """The first word of a header value as an int (``"338 (batch)"`` -> 338), if any."""
    words = value.split()
    return int(words[0]) if words and words[0].isdigit() else None


def read_swf(path: str | Path) -> Workload:
    """Read an SWF trace (``.swf`` or ``.swf.gz``) into a :class:`Workload`."""
    header: dict[str, str] = {}
    header_lines: list[str] = []
    jobs: list[TraceJob] = []
    skipped: Counter[str] = Counter()
    with reading(path) as lines:
        for line_number, line in lines:
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                header_lines.append(text)
                key, sep, value = text.lstrip("; ").partition(":")
                if sep and key and key not in header:
                    header[key.strip()] = value.strip()
                continue
            fields = text.split()
            if len(fields) != SWF_FIELDS:
                raise WorkloadError(
                    f"{path}:{line_number}: an SWF job line has {SWF_FIELDS} fields, found {len(fields)}"
                )
            where = f"{path}:{line_number}"
            job_id, submit, runtime, allocated, requested, requested_time, user = (
                _number(where, fields, index) for index in (0, 1, 3, 4, 7, 8, 11)
            )
            if runtime < 0:
                skipped["runtime unknown (field 4 < 0)"] += 1
                continue
            processors = requested if requested > 0 else allocated
            if processors <= 0:
                skipped["no processors (fields 8 and 5 <= 0)"] += 1
                continue
            runtime = max(runtime, MIN_DURATION)
            estimate = max(requested_time if requested_time > 0 else runtime, MIN_DURATION)
            job = Job(
                id=job_id,
                submit=submit,
                estimate=estimate,
                resources={"cpus": processors},
                user=str(user) if user >= 0 else None,
            )
            jobs.append(TraceJob(job, runtime, tuple(fields)))
    jobs.sort(key=lambda t: (t.job.submit, t.job.id))
    capacity: dict[str, int] = {}
    for key in ("MaxProcs", "MaxNodes"):
        declared = _leading_int(header.get(key, ""))
        if declared is not None and declared > 0:
            capacity = {"cpus": declared}
            break
    return Workload(
        jobs=jobs,
        capacity=capacity,
        skipped=skipped,
        unix_start=_leading_int(header.get("UnixStartTime", "")),
        timezone=header.get("TimeZoneString") or None,
        source=str(path),
        header=header_lines,
    )
