"""Reader for JSONL workloads with K named resources, one job per line.

A job line::

    {"id": 1, "submit": 0, "runtime": 60, "estimate": 300,
     "resources": {"cpus": 4, "mem_gb": 16}}

with optional ``"deadline"`` (absolute seconds), ``"user"``, ``"name"`` and
``"priority"`` (a number, or a map such as ``{"user": 1.0, "political": 0.5}``), and a
workflow's ``"array"`` and ``"dependency"`` (:mod:`berth.emulate.traces.workflow`). Instead of ``resources``, a job
may ask for whole slots on nodes as the daemon's API takes them: ``"slots": {"count": 8,
"per_slot": {"cpus": 4}}`` with optional ``"nodes": {"count": 2, "exclusive": false}``.

An optional first line declares the cluster: ``{"capacity": {"cpus": 128, "mem_gb":
512}}`` (one pool; ``--capacity`` overrides it), or ``{"nodes": [...]}``, named nodes as
the daemon adds them (``{"name": "n001", "resources": {"cpus": 64}}``) or groups
(``{"count": 16, "resources": {"cpus": 64}}``, named node001, node002, ...), which the
node planner replays on (``--nodes`` overrides it). Blank lines and lines starting with
``#`` are ignored. Every error names the file, the line and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from berth.core.model import MIN_DURATION, Job
from berth.core.shapes import Shape, node_names
from berth.emulate.traces.opening import reading
from berth.emulate.traces.workflow import Workflow
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


def _shape(where: str, record: Mapping[str, Any]) -> tuple[dict[str, int], Shape | None]:
    """A job's totals and, when it asks for ``slots``, its shape (as the API reads them)."""
    slots, nodes = record.get("slots"), record.get("nodes")
    if slots is None:
        if nodes is not None:
            raise WorkloadError(f"{where}: field 'nodes' goes with 'slots', not 'resources'")
        return _amounts(where, record.get("resources"), "resources"), None
    if "resources" in record:
        raise WorkloadError(f"{where}: give 'resources' (totals) or 'slots', not both")
    if not isinstance(slots, dict) or set(slots) - {"count", "per_slot"}:
        raise WorkloadError(f'{where}: field \'slots\' must be {{"count": N, "per_slot": {{...}}}}')
    count = _integer(where, slots, "count", 1)
    per_slot = _amounts(where, slots.get("per_slot"), "slots.per_slot")
    spread, exclusive = None, False
    if nodes is not None:
        if not isinstance(nodes, dict) or set(nodes) - {"count", "exclusive"}:
            raise WorkloadError(f'{where}: field \'nodes\' must be {{"count": N, "exclusive": B}}')
        if nodes.get("count") is not None:
            spread = _integer(where, nodes, "count", 1)
        exclusive = nodes.get("exclusive", False)
        if not isinstance(exclusive, bool):
            raise WorkloadError(f"{where}: nodes.exclusive must be true or false")
    totals = {name: amount * count for name, amount in per_slot.items()}
    return totals, Shape(count, per_slot, spread, exclusive)


def _node_list(where: str, value: Any) -> dict[str, dict[str, int]]:
    """The ``{"nodes": [...]}`` line: named nodes, or groups of alike nodes."""
    if not isinstance(value, list) or not value:
        raise WorkloadError(f"{where}: field 'nodes' must be a non-empty list of nodes")
    listed: list[tuple[str | None, dict[str, int]]] = []  # (numbered at the end)
    named: set[str] = set()
    for at, entry in enumerate(value):
        field = f"nodes[{at}]"
        if not isinstance(entry, dict) or set(entry) - {"name", "count", "resources"}:
            raise WorkloadError(
                f'{where}: {field} must be {{"name": ..., "resources": {{...}}}} '
                'or {"count": N, "resources": {...}}'
            )
        resources = _amounts(where, entry.get("resources"), f"{field}.resources")
        if "name" in entry:
            name = entry["name"]
            if not isinstance(name, str) or not name or name in named:
                raise WorkloadError(f"{where}: {field}.name must be a new non-empty string")
            named.add(name)
            listed.append((name, resources))
        else:
            listed += ((None, dict(resources)) for _ in range(_integer(where, entry, "count", 1)))
    numbered = node_names(len(listed))
    return {
        numbered[at] if name is None else name: amounts for at, (name, amounts) in enumerate(listed)
    }


def _estimate(where: str, record: Mapping[str, Any]) -> int:
    """The runtime estimate: ``estimate``, or ``time_limit`` as the daemon's API calls it
    (a job's body pasted from a submission replays as it was asked)."""
    if "time_limit" not in record:
        return _integer(where, record, "estimate", 0)
    if "estimate" in record:
        raise WorkloadError(f"{where}: give 'estimate' or 'time_limit' (the same), not both")
    return _integer(where, record, "time_limit", 1)


def parse_job(where: str, record: Mapping[str, Any]) -> TraceJob:
    """One validated job from a decoded JSONL record."""
    unknown = set(record) - {
        "id", "submit", "runtime", "estimate", "time_limit", "resources", "slots", "nodes",
        "deadline", "user", "priority", "name", "array", "dependency",
    }  # fmt: skip
    if unknown:
        raise WorkloadError(f"{where}: unknown field(s) {sorted(unknown)}")
    job_id = _integer(where, record, "id", 0)
    submit = _integer(where, record, "submit", 0)
    runtime = _integer(where, record, "runtime", 0)
    estimate = _estimate(where, record)
    deadline = record.get("deadline")
    if deadline is not None:
        deadline = _integer(where, record, "deadline", submit)
    user = record.get("user")
    resources, shape = _shape(where, record)
    job = Job(
        id=job_id,
        submit=submit,
        estimate=max(estimate, MIN_DURATION),
        resources=resources,
        deadline=deadline,
        user=None if user is None else str(user),
        priority=_priority(where, record.get("priority")),
        shape=shape,
    )
    return TraceJob(job, max(runtime, MIN_DURATION))


def read_jsonl(path: str | Path) -> Workload:
    """Read a JSONL workload; raises :class:`WorkloadError` naming the line and field."""
    jobs: list[TraceJob] = []
    capacity: dict[str, int] = {}
    nodes: dict[str, dict[str, int]] | None = None
    seen: set[int] = set()
    workflow = Workflow()
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
            if len(record) == 1 and ("capacity" in record or "nodes" in record):
                if jobs or capacity or nodes:
                    raise WorkloadError(f"{where}: the capacity or nodes line must come first")
                if "capacity" in record:
                    capacity = _amounts(where, record["capacity"], "capacity")
                else:
                    nodes = _node_list(where, record["nodes"])
                continue
            for trace_job in workflow.expand(where, record, parse_job(where, record)):
                if trace_job.job.id in seen:
                    raise WorkloadError(f"{where}: duplicate job id {trace_job.job.id}")
                seen.add(trace_job.job.id)
                jobs.append(trace_job)
    jobs.sort(key=lambda t: (t.job.submit, t.job.id))
    return Workload(jobs=jobs, capacity=capacity, source=str(path), nodes=nodes)


def write_jsonl(
    jobs: Sequence[TraceJob],
    capacity: Mapping[str, int],
    stream: TextIO,
    comments: Sequence[str] = (),
    nodes: Mapping[str, Mapping[str, int]] | None = None,
) -> None:
    """Write a workload that :func:`read_jsonl` reads back: comments, the cluster (named
    ``nodes`` if given, else ``capacity``), jobs (with their slots when they have any)."""
    for comment in comments:
        stream.write(f"# {comment}\n")
    if nodes:
        listed = [{"name": name, "resources": dict(amounts)} for name, amounts in nodes.items()]
        stream.write(json.dumps({"nodes": listed}) + "\n")
    else:
        stream.write(json.dumps({"capacity": dict(capacity)}) + "\n")
    for trace_job in jobs:
        job = trace_job.job
        record: dict[str, object] = {
            "id": job.id,
            "submit": job.submit,
            "runtime": trace_job.runtime,
            "estimate": job.estimate,
        }
        shape = job.shape
        if shape is None:
            record["resources"] = dict(job.resources)
        else:
            record["slots"] = {"count": shape.count, "per_slot": dict(shape.per_slot)}
            if shape.nodes is not None or shape.exclusive:
                record["nodes"] = {"count": shape.nodes, "exclusive": shape.exclusive}
        if job.deadline is not None:
            record["deadline"] = job.deadline
        if job.user is not None:
            record["user"] = job.user
        if job.priority:
            record["priority"] = dict(job.priority)
        stream.write(json.dumps(record) + "\n")
