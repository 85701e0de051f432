"""Request and response bodies (pydantic v2). Times are integer cluster seconds (Unix
time unless the daemon runs an emulated cluster with ``--time-scale``)."""

from __future__ import annotations

from typing import Annotated, Self

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from berth.service.model import JobRecord, JobState, NodeRecord
from berth.service.partitions.specs import DEFAULT_PARTITION
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
#: Nodes one request may drain, resume or mark down (a center's whole cluster).
MAX_NODES_CHANGED = 10_000
PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=64)]

#: Accounts are named like partitions: letters, digits, ``.``, ``_`` and ``-``.
ACCOUNT_PATTERN = r"^[A-Za-z0-9._-]+$"
#: A query parameter choosing the jobs in some states (repeated: ``state=A&state=B``).
StatesQuery = Annotated[
    list[JobState] | None,
    Query(max_length=len(JobState), description="only jobs in these states (repeat it)"),
]
#: A query parameter choosing the jobs of one partition (``default`` too).
PartitionQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=100, description="only jobs of this partition (default too)"),
]
#: A query parameter choosing the jobs charged to one account.
AccountQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=100, pattern=ACCOUNT_PATTERN, description="only this account"),
]


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
    array_job_id: int | None = Field(None, description="a job array's task: the array's id")
    array_task_id: int | None = Field(None, description="a job array's task: its index")
    usage: dict[str, float] | None = Field(
        None,
        description="measured on its node (agents): cpu_seconds, peak_memory_bytes, gpus",
    )
    dependency: str | None = Field(None, description="what it waits for, as submitted")
    begin_time: int | None = Field(None, description="it starts no earlier than this")
    hold: str | None = Field(
        None,
        description="who holds it, while held: user (its user may release it: berth release) "
        "or admin (only an operator or its account's coordinator may)",
    )
    waits_for: str | None = Field(
        None,
        description="what it still waits for, resolved: afterok:12,throttle:14 (throttle: "
        "its array's %N)",
    )
    kill_on_invalid_dep: bool = Field(
        True, description="a dependency that can never be satisfied cancels it (else: held)"
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
            array_job_id=job.array_job_id,
            array_task_id=job.array_task_id,
            dependency=job.dependency,
            begin_time=job.begin_time,
            hold=job.hold,
            waits_for=job.needs,
            kill_on_invalid_dep=job.kill_on_invalid_dep,
        )


class SubmitOut(BaseModel):
    accepted: bool
    reason: str
    job: JobOut
    array_tasks: list[int] | None = Field(
        None, description="a job array: every task's job id, by index (job is the first)"
    )
    rejected_tasks: int = Field(0, description="a job array: how many tasks were rejected")

    @classmethod
    def of(cls, job: JobRecord) -> SubmitOut:
        accepted = job.state is not JobState.REJECTED
        return cls(
            accepted=accepted,
            reason=job.state_reason,
            job=JobOut.of(job),
            array_tasks=None,
            rejected_tasks=0,
        )

    @classmethod
    def of_array(cls, tasks: list[JobRecord]) -> SubmitOut:
        """An array's answer: its first task, and how many tasks were rejected (an
        array is accepted when any of its tasks is)."""
        rejected = [t for t in tasks if t.state is JobState.REJECTED]
        first = tasks[0]
        return cls(
            accepted=len(rejected) < len(tasks),
            reason=first.state_reason if len(rejected) < len(tasks) else rejected[0].state_reason,
            job=JobOut.of(first),
            array_tasks=[t.id for t in tasks],
            rejected_tasks=len(rejected),
        )


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
    now: int = Field(
        description="the cluster's time of this page (an emulating daemon's clock may run "
        "faster than the wall's): what its waiting jobs' predicted starts are from"
    )


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
    account: str | None = Field(None, description="a coordinator's account")
    expires_at: int | None = Field(None, description="when a signed token expires (Unix time)")


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


class Dependency(BaseModel):
    job_id: int
    kind: str = Field(description="after, afterany, afterok, afternotok, or throttle (%N)")
    job_state: str | None
    promised: int | None = Field(
        description="its promised start (after) or end: the guarantee, or the time limit "
        "once it runs; null: no promise yet"
    )


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
    dependencies: list[Dependency] = Field(
        default_factory=list, description="the jobs it still waits for (--dependency, %N)"
    )
    waits_for_job: int | None = Field(
        default=None, description="the job whose promised end (or start) sets its earliest start"
    )
    not_before: int | None = Field(
        default=None,
        description="the earliest start its dependencies allow (null: not known yet)",
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


class NodesChange(BaseModel):
    """Several nodes changed at once (``POST /v1/admin/nodes/drain`` ...)."""

    model_config = ConfigDict(extra="forbid")
    names: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1, max_length=MAX_NODES_CHANGED
    )
    reason: str = Field("", max_length=1000)
    force: bool = False


class NodesOut(BaseModel):
    nodes: list[NodeOut]


class HoldIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(None, max_length=1000, description="why (default: who held it)")


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
