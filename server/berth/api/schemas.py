"""Request and response bodies (pydantic v2). Times are integer cluster seconds (Unix
time unless the daemon runs an emulated cluster with ``--time-scale``)."""

from __future__ import annotations

from typing import Annotated, Self

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from berth.core.shapes import Shape
from berth.service.model import JobRecord, JobRequest, JobState, NodeRecord, RequestError
from berth.service.partitions import DEFAULT_PARTITION
from berth.service.rows import shape_row

#: The longest batch script accepted (each waiting job's is kept in the daemon's memory).
MAX_SCRIPT_CHARACTERS = 64 * 1024
#: The longest time limit accepted: ten years.
MAX_TIME_LIMIT = 10 * 365 * 24 * 3600

Amount = Annotated[int, Field(ge=0, le=(1 << 49) - 1)]
Capacity = Annotated[int, Field(ge=1, le=(1 << 49) - 1)]
#: A resource's name: ``cpus``, ``mem_gb``, ``gpu.a100`` ... (no space, no control code).
ResourceName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$")
]
#: The most resource kinds one request may name.
MAX_RESOURCE_KINDS = 64
#: A policy option: a short name, and a number or a short string.
OptionName = Annotated[str, StringConstraints(min_length=1, max_length=64)]
OptionValue = Annotated[str, StringConstraints(max_length=200)] | int | float
MAX_OPTIONS = 32
PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=64)]

#: Accounts are named like partitions: letters, digits, ``.``, ``_`` and ``-``.
ACCOUNT_PATTERN = r"^[A-Za-z0-9._-]+$"
#: A query parameter choosing the jobs charged to one account.
AccountQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=100, pattern=ACCOUNT_PATTERN, description="only this account"),
]


class SlotsIn(BaseModel):
    """Whole slots: ``count`` of them, each ``per_slot`` on one node."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(..., ge=1, le=1_000_000, description="how many slots")
    per_slot: dict[ResourceName, Amount] = Field(
        ...,
        min_length=1,
        max_length=MAX_RESOURCE_KINDS,
        description='resources of one slot, e.g. {"cpus": 4, "mem_gb": 16}',
    )


class NodesIn(BaseModel):
    """Which nodes the slots go on."""

    model_config = ConfigDict(extra="forbid")

    count: int | None = Field(None, ge=1, le=100_000, description="exactly this many nodes")
    exclusive: bool = Field(False, description="whole nodes, shared with no other job")


class JobSubmit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("job", min_length=1, max_length=200)
    resources: dict[ResourceName, Amount] | None = Field(
        None,
        max_length=MAX_RESOURCE_KINDS,
        description='totals of each named resource, e.g. {"cpus": 64, "mem_gb": 256} '
        "(or give slots)",
    )
    slots: SlotsIn | None = Field(None, description="whole slots on nodes instead of totals")
    nodes: NodesIn | None = Field(None, description="node count and exclusivity (with slots)")
    time_limit: int = Field(
        ..., ge=1, le=MAX_TIME_LIMIT, description="runtime estimate in seconds; also the kill limit"
    )
    deadline: int | None = Field(
        None, ge=0, le=1 << 62, description="complete by this time (admission checks it)"
    )
    priority: float | None = Field(None, ge=0.0, le=1.0, description="user priority in [0, 1]")
    command: str | None = Field(None, max_length=10_000, description="what real nodes run")
    script: str | None = Field(
        None,
        min_length=3,
        max_length=MAX_SCRIPT_CHARACTERS,
        description="a batch script run as the job (starts with #! and an interpreter)",
    )
    argv: list[Annotated[str, StringConstraints(max_length=4096)]] | None = Field(
        None, max_length=256, description="the script's arguments"
    )
    emulated_runtime: int | None = Field(
        None, ge=1, le=MAX_TIME_LIMIT, description="emulated nodes: how long it really runs"
    )
    chdir: str | None = Field(
        None,
        max_length=4096,
        pattern=r"^/",
        description="absolute working directory on the node (default: the user's home)",
    )
    output: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="stdout file, relative to chdir (default berth-%j.out; %j id, %x name)",
    )
    error: str | None = Field(
        None, min_length=1, max_length=4096, description="stderr file (default berth-%j.err)"
    )
    requeue: bool = Field(False, description="queue the job again if a node it runs on fails")
    partition: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="the partition to run in (default: the default partition)",
    )
    account: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        pattern=ACCOUNT_PATTERN,
        description="the account its use is charged to (default: the user's name)",
    )

    def request(self, user: str, idempotency_key: str | None) -> JobRequest:
        """The engine's request; resources and slots are exclusive (422 naming both)."""
        shape = None
        if self.slots is not None:
            if self.resources is not None:
                raise RequestError("invalid", "give resources (totals) or slots, not both", "slots")
            nodes = self.nodes or NodesIn(count=None, exclusive=False)
            shape = Shape(self.slots.count, dict(self.slots.per_slot), nodes.count, nodes.exclusive)
            resources = {n: a * self.slots.count for n, a in self.slots.per_slot.items()}
        elif self.resources is None:
            raise RequestError("invalid", "a job needs resources (totals) or slots", "resources")
        elif self.nodes is not None:
            raise RequestError("invalid", "nodes goes with slots (give slots, not totals)", "nodes")
        else:
            resources = dict(self.resources)
        self._check_script()
        return JobRequest(
            name=self.name,
            user=user,
            resources=resources,
            shape=shape,
            time_limit=self.time_limit,
            deadline=self.deadline,
            priority=self.priority,
            command=self.command,
            script=self.script,
            argv=tuple(self.argv or ()),
            emulated_runtime=self.emulated_runtime,
            idempotency_key=idempotency_key,
            chdir=self.chdir,
            output=self.output,
            error=self.error,
            requeue=self.requeue,
            partition=None if self.partition == DEFAULT_PARTITION else self.partition,
            account=self.account,
        )

    def _check_script(self) -> None:
        if self.script is None:
            if self.argv is not None:
                raise RequestError("invalid", "argv goes with a script", "argv")
            return
        if self.command is not None:
            raise RequestError("invalid", "give a command or a script, not both", "script")
        if not self.script.startswith("#!"):
            raise RequestError(
                "invalid",
                "a script's first line must start with #! and an interpreter (#!/bin/bash)",
                "script",
            )


class JobOut(BaseModel):
    job_id: int
    name: str
    user: str
    job_state: str
    state_reason: str
    resources: dict[str, int]
    time_limit: int
    deadline: int | None
    priority: float | None
    political_priority: float | None
    command: str | None
    emulated_runtime: int | None
    submit_time: int
    start_time: int | None
    end_time: int | None
    guaranteed_start: int | None
    guaranteed_end: int | None
    planned_start: int | None
    nodes: dict[str, dict[str, int]]
    slots: dict[str, object] | None = Field(
        None, description="the slots asked for (count, per_slot, nodes, exclusive), if any"
    )
    chdir: str | None = None
    output: str | None = None
    error: str | None = None
    requeue: bool = False
    requeued: int = Field(0, description="times queued again after a node failure")
    exit_code: int | None = Field(None, description="the command's exit status (node agents)")
    exit_signal: int | None = Field(None, description="the signal that killed the command")
    partition: str = Field(DEFAULT_PARTITION, description="the partition the job runs in")
    suspended: bool = Field(False, description="gang partitions: stopped until its row runs")
    suspended_seconds: int = Field(0, description="time spent suspended (not run time)")
    account: str = Field("", description="the account its use is charged to")
    batch_script: bool = Field(
        False, description="it runs a batch script (GET /v1/jobs/{id}/script shows it)"
    )
    argv: list[str] | None = Field(None, description="the batch script's arguments")
    usage: dict[str, float] | None = Field(
        None,
        description="measured on its node (agents): cpu_seconds, peak_memory_bytes, gpus",
    )

    @classmethod
    def of(cls, job: JobRecord) -> Self:
        return cls(
            job_id=job.id,
            name=job.name,
            user=job.user,
            job_state=job.state.value,
            state_reason=job.state_reason,
            resources=job.resources,
            time_limit=job.time_limit,
            deadline=job.deadline,
            priority=job.priority,
            political_priority=job.political_priority,
            command=job.command,
            emulated_runtime=job.emulated_runtime,
            submit_time=job.submit_time,
            start_time=job.start_time,
            end_time=job.end_time,
            guaranteed_start=job.guaranteed_start,
            guaranteed_end=job.guaranteed_end,
            planned_start=job.planned_start,
            nodes=job.allocation,
            slots=None if job.shape is None else shape_row(job.shape),
            chdir=job.chdir,
            output=job.output,
            error=job.error,
            requeue=job.requeue,
            requeued=job.requeued,
            exit_code=job.exit_code,
            exit_signal=job.exit_signal,
            partition=job.partition or DEFAULT_PARTITION,
            suspended=job.suspended_at is not None,
            suspended_seconds=job.suspended_for,
            account=job.account or job.user,
            usage=job.usage,
            batch_script=job.script is not None,
            argv=job.argv,
        )


class SubmitOut(BaseModel):
    accepted: bool
    reason: str
    job: JobOut

    @classmethod
    def of(cls, job: JobRecord) -> SubmitOut:
        accepted = job.state is not JobState.REJECTED
        return cls(accepted=accepted, reason=job.state_reason, job=JobOut.of(job))


class ListedJob(JobOut):
    """A job in a list, with where it stands in the queue when it waits."""

    predicted_start: int | None = Field(None, description="waiting: the predicted start")
    queued_before: int | None = Field(
        None, description="waiting: how many waiting jobs are predicted to start no later"
    )


class JobList(BaseModel):
    jobs: list[ListedJob]
    total: int
    limit: int
    offset: int


class JobHistory(BaseModel):
    jobs: list[JobOut]
    next_before: int | None = Field(
        description="pass as ``before`` for the next page; null on the last page"
    )


class JobEvents(BaseModel):
    job_id: int
    events: list[dict[str, object]] = Field(
        description="each event's id, kind, cluster time and details (as on the stream)"
    )
    next_after: int | None = Field(
        description="pass as ``after`` for the next page; null on the last page"
    )


class WhoAmI(BaseModel):
    user: str
    role: str


class Blocking(BaseModel):
    resources: dict[str, dict[str, int]]
    jobs_ahead: int
    jobs_ahead_ids: list[int]
    running_jobs_to_end: list[int]


class GangStart(BaseModel):
    partition: str
    rows: list[int] = Field(description="the matrix rows the job runs in")
    row_count: int
    slot_seconds: int
    running_now: bool
    next_slot: int | None = Field(description="when its next slot starts (a forecast)")
    completion_forecast: int | None
    completion_basis: str


class StartOut(BaseModel):
    job_id: int
    job_state: str
    guaranteed_start: int | None
    guaranteed_end: int | None
    predicted_start: int | None
    start_time: int | None
    based_on: str
    computed_at: int
    blocked_by: Blocking | None
    gang: GangStart | None = Field(
        None, description="gang partitions: the job's rows, next slot and completion forecast"
    )


class WhatIfOut(BaseModel):
    accepted: bool
    reason: str
    predicted_start: int | None = None
    guaranteed_start: int | None = None
    guaranteed_end: int | None = None


class Window(BaseModel):
    job_id: int
    name: str = ""
    user: str
    job_state: str
    start: int | None
    end: int | None
    guaranteed_start: int | None
    deadline: int | None = None
    resources: dict[str, int]
    nodes: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="where the job runs, or where its reservation is held (node clusters; "
        "empty while the plan holds it on the pool as a whole)",
    )
    partition: str = DEFAULT_PARTITION


class ScheduleOut(BaseModel):
    now: int
    policy: str
    running: list[Window]
    planned: list[Window]
    planned_total: int = Field(0, description="planned jobs in all (``planned`` is one page)")
    limit: int = 1000
    offset: int = 0


class NodeOut(BaseModel):
    name: str
    state: str
    reason: str
    resources: dict[str, int]
    used: dict[str, int]

    @classmethod
    def of(cls, node: NodeRecord) -> NodeOut:
        return cls(
            name=node.name,
            state=node.state.value,
            reason=node.reason,
            resources=node.resources,
            used={r: a for r, a in node.used.items() if a},
        )


class ClusterOut(BaseModel):
    now: int
    policy: str
    capacity: dict[str, int]
    schedulable: dict[str, int]
    used: dict[str, int]
    nodes: list[NodeOut]
    node_total: int = Field(0, description="nodes in all (``nodes`` is one page)")
    limit: int = 1000
    offset: int = 0
    pending: int
    running: int


class NodeAdd(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(..., min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$")
    resources: dict[ResourceName, Capacity] = Field(
        ..., min_length=1, max_length=MAX_RESOURCE_KINDS
    )


class NodeChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field("", max_length=1000)
    force: bool = False


class HoldIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field("held by an operator", max_length=1000)


class PriorityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    political: float | None = Field(..., ge=0.0, le=1.0)


class PolicyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: PolicyName
    options: dict[OptionName, OptionValue] = Field(default_factory=dict, max_length=MAX_OPTIONS)
    force: bool = False


class PolicyOut(BaseModel):
    policy: str
    options: dict[str, object]
    known: dict[str, list[str]]


class DryRunIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: PolicyName
    options: dict[OptionName, OptionValue] = Field(default_factory=dict, max_length=MAX_OPTIONS)


class DryRunJob(BaseModel):
    job_id: int
    predicted_start: int | None
    predicted_end: int | None
    status: str


class DryRunOut(BaseModel):
    policy: str
    now: int
    jobs: list[DryRunJob]
    metrics: dict[str, object]


NodeName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$")]
