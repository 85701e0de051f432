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
from berth.emulate.traces.opening import open_text
from berth.emulate.workload import TraceJob, Workload, WorkloadError

SWF_FIELDS = 18


def _number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return int(float(text))


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
    with open_text(path) as stream:
        for line_number, line in enumerate(stream, start=1):
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
            try:
                job_id, submit, runtime = _number(fields[0]), _number(fields[1]), _number(fields[3])
                allocated, requested = _number(fields[4]), _number(fields[7])
                requested_time, user = _number(fields[8]), _number(fields[11])
            except ValueError as error:
                raise WorkloadError(f"{path}:{line_number}: not a number ({error})") from None
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
