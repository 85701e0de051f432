"""Records as plain rows and back: the one mapping the store and the engine share.

Rows are dicts of JSON-friendly values whose keys are the store's column names, so a
batch of changes can be copied off the live records and written from another thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from berth.core.shapes import Shape
from berth.service.model import (
    Event,
    JobRecord,
    JobState,
    NodeRecord,
    NodeState,
    measured_cpu,
)
from berth.service.ports import EventRow

JOB_COLUMNS = (
    "id",
    "name",
    "user",
    "resources",
    "time_limit",
    "submit_time",
    "state",
    "state_reason",
    "deadline",
    "priority",
    "political_priority",
    "command",
    "emulated_runtime",
    "idempotency_key",
    "start_time",
    "end_time",
    "guaranteed_start",
    "guaranteed_end",
    "planned_start",
    "allocation",
    "shape",
    "script",
    "argv",
    "chdir",
    "output",
    "error",
    "requeue",
    "exit_code",
    "exit_signal",
    "launched_at",
    "requeued",
    "partition",
    "gang_offset",
    "suspended_at",
    "suspended_for",
    "account",
    "planned_nodes",
    "usage",
    "array_job_id",
    "array_task_id",
    "dependency",
    "needs",
    "kill_on_invalid_dep",
    "begin_time",
    "hold",
)


def job_row(job: JobRecord) -> dict[str, object]:
    row: dict[str, object] = {name: getattr(job, name) for name in JOB_COLUMNS}
    row["state"] = job.state.value
    row["resources"] = dict(job.resources)
    row["allocation"] = {node: dict(amounts) for node, amounts in job.allocation.items()}
    row["shape"] = None if job.shape is None else shape_row(job.shape)
    row["planned_nodes"] = None if job.planned_nodes is None else dict(job.planned_nodes)
    return row


def shape_row(shape: Shape) -> dict[str, object]:
    """A slot request as JSON: ``{"count", "per_slot", "nodes", "exclusive"}``."""
    return {"count": shape.count, "per_slot": dict(shape.per_slot), "nodes": shape.nodes,
            "exclusive": shape.exclusive}  # fmt: skip


def job_from_row(row: dict[str, Any]) -> JobRecord:
    values: dict[str, Any] = {name: row.get(name) for name in JOB_COLUMNS}
    values["state"] = JobState(row["state"])
    values["resources"] = dict(row["resources"])
    values["allocation"] = {n: dict(a) for n, a in (row["allocation"] or {}).items()}
    values["requeue"] = bool(row.get("requeue"))
    values["kill_on_invalid_dep"] = row.get("kill_on_invalid_dep") is not False
    values["requeued"] = int(row.get("requeued") or 0)
    values["suspended_for"] = int(row.get("suspended_for") or 0)
    values["account"] = row.get("account") or row["user"]
    planned = row.get("planned_nodes")
    values["planned_nodes"] = None if planned is None else {n: int(k) for n, k in planned.items()}
    shape = row.get("shape")
    values["shape"] = (
        None
        if not shape
        else Shape(
            int(shape["count"]),
            dict(shape["per_slot"]),
            shape.get("nodes"),
            bool(shape.get("exclusive")),
        )
    )
    return JobRecord(**values)


def node_row(node: NodeRecord) -> dict[str, object]:
    return {
        "name": node.name,
        "resources": dict(node.resources),
        "state": node.state.value,
        "reason": node.reason,
    }


def node_from_row(row: dict[str, Any]) -> NodeRecord:
    return NodeRecord(
        name=row["name"],
        resources=dict(row["resources"]),
        state=NodeState(row["state"]),
        reason=row["reason"] or "",
    )


def event_row(number: int, event: Event, user: str | None, recorded_at: float) -> dict[str, object]:
    return {"id": number, "kind": event.kind, "time": event.time, "job_id": event.job_id,
            "node": event.node, "user": user, "detail": dict(event.detail),
            "recorded_at": recorded_at}  # fmt: skip


def event_from_row(row: dict[str, Any]) -> EventRow:
    event = Event(row["kind"], int(row["time"]), row["job_id"], row["node"], dict(row["detail"]))
    return EventRow(int(row["id"]), event, row["user"])


def tally_usage(
    ended: Iterable[tuple[str, Mapping[str, int], int, int, Mapping[str, float] | None]],
) -> dict[str, dict[str, float]]:
    """Usage per group from ``(group, resources, start, end, measured)`` of ended jobs:
    how many jobs, and each resource times the seconds it was held (``cpus`` ->
    ``cpus_seconds``); of the jobs their nodes measured (agents), how many
    (``measured_jobs``), the CPU seconds they used (``used_cpu_seconds``) and the
    cpu-seconds they held (``measured_cpus_seconds``: their efficiency's denominator)."""
    totals: dict[str, dict[str, float]] = {}
    for group, resources, start, end, measured in ended:
        mine = totals.setdefault(group, {"jobs": 0.0})
        mine["jobs"] += 1
        held = max(end - start, 0)
        for name, amount in resources.items():
            key = f"{name}_seconds"
            mine[key] = mine.get(key, 0.0) + amount * held
        for key, value in measured_cpu(resources, start, end, measured).items():
            mine[key] = mine.get(key, 0.0) + value
    return totals
