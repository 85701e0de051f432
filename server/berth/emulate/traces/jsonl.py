"""Reader for JSONL workloads with K named resources, one job per line.

A job line::

    {"id": 1, "submit": 0, "runtime": 60, "estimate": 300,
     "resources": {"cpus": 4, "mem_gb": 16}}

with optional ``"deadline"`` (absolute seconds), ``"user"`` and ``"priority"`` (a number,
or a map such as ``{"user": 1.0, "political": 0.5}``). An optional first line
``{"capacity": {"cpus": 128, "mem_gb": 512}}`` declares the cluster; ``--capacity``
overrides it. Blank lines and lines starting with ``#`` are ignored. Every error names
the file, the line and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from berth.core.model import MIN_DURATION, Job
from berth.emulate.traces.opening import reading
from berth.emulate.workload import TraceJob, Workload, WorkloadError


def _integer(where: str, record: Mapping[str, Any], key: str, minimum: int) -> int:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WorkloadError(f"{where}: field {key!r} must be an integer, got {value!r}")
    if value < minimum:
        raise WorkloadError(f"{where}: field {key!r} must be >= {minimum}, got {value}")
    return value


def _amounts(where: str, value: Any, key: str) -> dict[str, int]:
    if not isinstance(value, dict) or not value:
        raise WorkloadError(f"{where}: field {key!r} must be a non-empty object of amounts")
    amounts: dict[str, int] = {}
    for name, amount in value.items():
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise WorkloadError(
                f"{where}: {key}.{name} must be a non-negative integer, got {amount!r}"
            )
        amounts[str(name)] = amount
    return amounts


def _number(value: Any) -> bool:
    """A number, infinities included (political ``-Infinity``: over quota); not NaN."""
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def _priority(where: str, value: Any) -> dict[str, float]:
    if value is None:
        return {}
    if _number(value):
        return {"user": float(value)}
    if isinstance(value, dict) and all(_number(v) for v in value.values()):
        return {str(k): float(v) for k, v in value.items()}
    raise WorkloadError(f"{where}: field 'priority' must be a number or an object of numbers")


def parse_job(where: str, record: Mapping[str, Any]) -> TraceJob:
    """One validated job from a decoded JSONL record."""
    unknown = set(record) - {
        "id", "submit", "runtime", "estimate", "resources", "deadline", "user", "priority",
    }  # fmt: skip
    if unknown:
        raise WorkloadError(f"{where}: unknown field(s) {sorted(unknown)}")
    job_id = _integer(where, record, "id", 0)
    submit = _integer(where, record, "submit", 0)
    runtime = _integer(where, record, "runtime", 0)
    estimate = _integer(where, record, "estimate", 0)
    deadline = record.get("deadline")
    if deadline is not None:
        deadline = _integer(where, record, "deadline", submit)
    user = record.get("user")
    job = Job(
        id=job_id,
        submit=submit,
        estimate=max(estimate, MIN_DURATION),
        resources=_amounts(where, record.get("resources"), "resources"),
        deadline=deadline,
        user=None if user is None else str(user),
        priority=_priority(where, record.get("priority")),
    )
    return TraceJob(job, max(runtime, MIN_DURATION))


def read_jsonl(path: str | Path) -> Workload:
    """Read a JSONL workload; raises :class:`WorkloadError` naming the line and field."""
    jobs: list[TraceJob] = []
    capacity: dict[str, int] = {}
    seen: set[int] = set()
    with reading(path) as lines:
        for line_number, line in lines:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            where = f"{path}:{line_number}"
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise WorkloadError(f"{where}: not valid JSON ({error.msg})") from None
            except RecursionError:
                raise WorkloadError(f"{where}: JSON nested too deeply") from None
            if not isinstance(record, dict):
                raise WorkloadError(f"{where}: each line must be a JSON object")
            if "capacity" in record and len(record) == 1:
                if jobs or capacity:
                    raise WorkloadError(f"{where}: the capacity line must come first")
                capacity = _amounts(where, record["capacity"], "capacity")
                continue
            trace_job = parse_job(where, record)
            if trace_job.job.id in seen:
                raise WorkloadError(f"{where}: duplicate job id {trace_job.job.id}")
            seen.add(trace_job.job.id)
            jobs.append(trace_job)
    jobs.sort(key=lambda t: (t.job.submit, t.job.id))
    return Workload(jobs=jobs, capacity=capacity, source=str(path))


def write_jsonl(
    jobs: Sequence[TraceJob],
    capacity: Mapping[str, int],
    stream: TextIO,
    comments: Sequence[str] = (),
) -> None:
    """Write a workload that :func:`read_jsonl` reads back: comments, capacity, jobs."""
    for comment in comments:
        stream.write(f"# {comment}\n")
    stream.write(json.dumps({"capacity": dict(capacity)}) + "\n")
    for trace_job in jobs:
        job = trace_job.job
        record: dict[str, object] = {
            "id": job.id,
            "submit": job.submit,
            "runtime": trace_job.runtime,
            "estimate": job.estimate,
            "resources": dict(job.resources),
        }
        if job.deadline is not None:
            record["deadline"] = job.deadline
        if job.user is not None:
            record["user"] = job.user
        if job.priority:
            record["priority"] = dict(job.priority)
        stream.write(json.dumps(record) + "\n")
