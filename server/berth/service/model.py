"""Records the live engine keeps: jobs, nodes, the events it emits, and its input.

A :class:`JobRecord` is the daemon's whole view of one job (the core's :class:`Job` plus
its name, owner, state, times, promises and node allocation); it is what the store
persists and the API shows. States use Slurm's names where one exists. No I/O here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from berth.core.model import Job
from berth.core.shapes import Shape


class JobState(StrEnum):
    """Lifecycle of a job; the last seven are final."""

    PENDING = "PENDING"
    HELD = "HELD"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"  # its command exited non-zero, was killed by a signal, or never started
    TIMEOUT = "TIMEOUT"  # killed on reaching its time limit
    CANCELLED = "CANCELLED"
    REJECTED = "REJECTED"  # refused at admission (or dropped when capacity was lost)
    NODE_FAIL = "NODE_FAIL"  # killed because a node it ran on went down
    OUT_OF_MEMORY = "OUT_OF_MEMORY"  # killed on reaching its memory limit (node agents)


def measured_cpu(
    resources: Mapping[str, int], start: int, end: int, usage: Mapping[str, float] | None
) -> dict[str, float]:
    """A measured job's CPU account: one job measured (``measured_jobs``), the CPU
    seconds it used (``used_cpu_seconds``) and the cpu-seconds it held
    (``measured_cpus_seconds``, the efficiency's denominator); nothing if its node did
    not measure it. ``/metrics`` and ``berth usage`` add these up."""
    if not usage or "cpu_seconds" not in usage:
        return {}
    return {
        "measured_jobs": 1.0,
        "used_cpu_seconds": float(usage["cpu_seconds"]),
        "measured_cpus_seconds": float(resources.get("cpus", 0) * max(end - start, 0)),
    }


FINAL_STATES = frozenset(
    {
        JobState.COMPLETED,
        JobState.FAILED,
        JobState.TIMEOUT,
        JobState.CANCELLED,
        JobState.REJECTED,
        JobState.NODE_FAIL,
        JobState.OUT_OF_MEMORY,
    }
)


class NodeState(StrEnum):
    """``up`` takes jobs; ``drained`` keeps its running jobs but takes no new ones;
    ``down`` has failed (its jobs were killed)."""

    UP = "up"
    DRAINED = "drained"
    DOWN = "down"


#: Why a job submitted held (sbatch ``--hold``) waits.
HELD_AT_SUBMISSION = "held at submission: waits until released (berth release)"


@dataclass(frozen=True, slots=True)
class JobRequest:
    """A submission as the engine receives it (already parsed; checked by the engine)."""

    name: str
    user: str
    resources: dict[str, int]
    time_limit: int
    deadline: int | None = None
    priority: float | None = None
    command: str | None = None
    emulated_runtime: int | None = None
    idempotency_key: str | None = None
    #: Slots asked for explicitly (``resources`` are then their totals).
    shape: Shape | None = None
    #: A batch script run as the job instead of ``command`` (node agents), and its
    #: arguments.
    script: str | None = None
    argv: tuple[str, ...] = ()
    #: Where the command runs and writes (node agents); ``None``: the agent's defaults.
    chdir: str | None = None
    output: str | None = None
    error: str | None = None
    #: Queue the job again if a node it runs on fails.
    requeue: bool = False
    #: The partition to run in (None: the default partition).
    partition: str | None = None
    #: The account its use is charged to (None: the user's own name).
    account: str | None = None
    #: A task of a job array: the array's id (its first task's job id) and its index.
    array_job_id: int | None = None
    array_task_id: int | None = None
    #: What it waits for, as the user wrote it (``afterok:12,singleton``), and whether a
    #: need that can never be satisfied cancels it (else it is held).
    dependency: str | None = None
    kill_on_invalid_dep: bool = True
    #: Start no earlier than this (sbatch ``--begin``; ``None``: as soon as it can).
    begin_time: int | None = None
    #: Held from the start by its user (sbatch ``--hold``): released by them, or by an
    #: operator or its account's coordinator.
    hold: bool = False


@dataclass(slots=True)
class JobRecord:
    """One job as the daemon knows it. Times are integer cluster seconds."""

    id: int
    name: str
    user: str
    resources: dict[str, int]
    time_limit: int
    submit_time: int
    state: JobState
    state_reason: str = ""
    deadline: int | None = None
    priority: float | None = None
    political_priority: float | None = None
    command: str | None = None
    emulated_runtime: int | None = None
    idempotency_key: str | None = None
    start_time: int | None = None
    end_time: int | None = None
    guaranteed_start: int | None = None
    guaranteed_end: int | None = None
    planned_start: int | None = None
    #: Where a waiting job's reservation is held (slots per node), so that a restart
    #: puts it back there; ``None``: no named placement planned (or not recorded).
    planned_nodes: dict[str, int] | None = None
    allocation: dict[str, dict[str, int]] = field(default_factory=dict)
    shape: Shape | None = None
    #: A batch script run as the job (``command`` is then None), and its arguments.
    script: str | None = None
    argv: list[str] | None = None
    chdir: str | None = None
    output: str | None = None
    error: str | None = None
    requeue: bool = False
    #: How the command ended on its node (agents): exit status, or the killing signal.
    exit_code: int | None = None
    exit_signal: int | None = None
    #: What it used, as its node measured it (agents): ``cpu_seconds``,
    #: ``peak_memory_bytes``, ``gpus``; ``None``: not measured (emulated nodes).
    usage: dict[str, float] | None = None
    #: Wall time (Unix seconds) at which an agent reported the process running.
    launched_at: float | None = None
    #: Times the job was queued again after a node failure.
    requeued: int = 0
    #: The partition it runs in (None: the default one).
    partition: str | None = None
    #: Gang partitions: the first processor of its block, when it was suspended (None:
    #: it is not), and the seconds it spent suspended before that (not run time).
    gang_offset: int | None = None
    suspended_at: int | None = None
    suspended_for: int = 0
    #: The account its use is charged to (``berth usage --by account``; "": the user's).
    account: str = ""
    #: A task of a job array: the array's id (its first task's job id) and its index.
    array_job_id: int | None = None
    array_task_id: int | None = None
    #: What it waits for: as written, as resolved at submission (``afterok:12,afterany:14``;
    #: see :mod:`berth.core.dependencies`), and whether an unsatisfiable need cancels it.
    dependency: str | None = None
    needs: str | None = None
    kill_on_invalid_dep: bool = True
    #: Start no earlier than this (sbatch ``--begin``; ``None``: as soon as it can).
    begin_time: int | None = None
    #: Who holds it, while held: ``"user"`` (its user, who may release it) or ``"admin"``
    #: (an operator or its account's coordinator: only they may); ``None`` otherwise.
    hold: str | None = None
    #: Not stored: the earliest start its predecessors' promises allow, while planned.
    not_before: int | None = None

    def measured_counts(self) -> dict[str, float]:
        """What an ended job adds to the daemon's usage counters (``/metrics``)."""
        if self.start_time is None:
            return {}
        end = self.end_time or self.start_time
        return measured_cpu(self.resources, self.start_time, end, self.usage)

    @classmethod
    def from_request(cls, job_id: int, request: JobRequest, now: int) -> JobRecord:
        return cls(
            id=job_id,
            name=request.name,
            user=request.user,
            resources=dict(request.resources),
            time_limit=request.time_limit,
            submit_time=now,
            state=JobState.PENDING,
            deadline=request.deadline,
            priority=request.priority,
            command=request.command,
            emulated_runtime=request.emulated_runtime,
            idempotency_key=request.idempotency_key,
            shape=request.shape,
            script=request.script,
            argv=list(request.argv) if request.script is not None else None,
            chdir=request.chdir,
            output=request.output,
            error=request.error,
            requeue=request.requeue,
            partition=request.partition,
            account=request.account or request.user,
            array_job_id=request.array_job_id,
            array_task_id=request.array_task_id,
            dependency=request.dependency,
            kill_on_invalid_dep=request.kill_on_invalid_dep,
            begin_time=request.begin_time,
            hold="user" if request.hold else None,  # (held on entering: see enter_job)
        )

    def as_request(self) -> JobRequest:
        """The request this job was made from (:meth:`from_request`'s inverse), without
        its array task: what an array's first task gives the tasks still to come."""
        return JobRequest(
            name=self.name,
            user=self.user,
            resources=dict(self.resources),
            time_limit=self.time_limit,
            deadline=self.deadline,
            priority=self.priority,
            command=self.command,
            emulated_runtime=self.emulated_runtime,
            idempotency_key=self.idempotency_key,
            shape=self.shape,
            script=self.script,
            argv=tuple(self.argv or ()),
            chdir=self.chdir,
            output=self.output,
            error=self.error,
            requeue=self.requeue,
            partition=self.partition,
            account=self.account,
            dependency=self.dependency,
            kill_on_invalid_dep=self.kill_on_invalid_dep,
            begin_time=self.begin_time,
            hold=self.hold == "user",
        )

    def as_job(self) -> Job:
        """The core's view: no name, state or real runtime."""
        priority: dict[str, float] = {}
        if self.priority is not None:
            priority["user"] = self.priority
        if self.political_priority is not None:
            priority["political"] = self.political_priority
        return Job(
            id=self.id,
            submit=self.submit_time,
            estimate=self.time_limit,
            resources=self.resources,
            deadline=self.deadline,
            user=self.user,
            priority=priority,
            shape=self.shape,
            not_before=self.earliest_start(),
        )

    def earliest_start(self) -> int | None:
        """The earliest start its plan must keep: its ``begin_time`` and what its
        predecessors' promises allow (``not_before``), the later."""
        begin, allowed = self.begin_time, self.not_before
        if begin is None:
            return allowed
        return begin if allowed is None or allowed < begin else allowed

    def drop_plan(self) -> None:
        """Forget the job's promise and plan: its guarantee, planned start and nodes."""
        self.guaranteed_start = self.guaranteed_end = self.planned_start = None
        self.planned_nodes = None

    def clear_run(self) -> None:
        """Forget the attempt a node failure ended, to queue the job again: its times,
        exit, usage, nodes and plan (its id and request stay; ``requeued`` counts it)."""
        self.requeued += 1
        self.start_time = self.end_time = self.launched_at = None
        self.exit_code = self.exit_signal = self.usage = None
        self.drop_plan()
        self.allocation = {}

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def limit_at(self) -> int | None:
        """When a running job reaches its time limit (time suspended does not count);
        None while it is suspended or not running."""
        if self.start_time is None or self.suspended_at is not None:
            return None
        return self.start_time + self.suspended_for + self.time_limit


@dataclass(slots=True)
class NodeRecord:
    """A node: its capacity, state and why; ``used`` is derived from job allocations."""

    name: str
    resources: dict[str, int]
    state: NodeState = NodeState.UP
    reason: str = ""
    used: dict[str, int] = field(default_factory=dict)

    def free(self, resource: str) -> int:
        return self.resources.get(resource, 0) - self.used.get(resource, 0)


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for the event stream: ``job.started``, ``node.down`` ..."""

    kind: str
    time: int
    job_id: int | None = None
    node: str | None = None
    detail: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "time": self.time}
        if self.job_id is not None:
            out["job_id"] = self.job_id
        if self.node is not None:
            out["node"] = self.node
        out.update(self.detail)
        return out


#: Cluster times before 1980 are offsets (traces, tests), not dates.
_FIRST_DATE = 315_532_800


def moment(seconds: int) -> str:
    """A cluster time for a person: a UTC date for Unix times, ``t=N`` for offsets."""
    if seconds < _FIRST_DATE:
        return f"t={seconds}"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


#: A time in a core reason (``berth.core.decisions.at``).
_CORE_TIME = re.compile(r"\bt=(-?\d+)\b")


def readable(reason: str) -> str:
    """A reason from the core with each of its times (``t=N``) as a :func:`moment`."""
    if "t=" not in reason:
        return reason
    return _CORE_TIME.sub(lambda found: moment(int(found.group(1))), reason)


#: Upper bounds (cluster seconds) of the start-lag histogram's buckets.
LAG_BUCKETS = (0, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


@dataclass(slots=True)
class StartLags:
    """How late jobs start after their planned start (a reservation reached while a
    batch or a compression slice was still running, or the clock's wake-up late), as a
    histogram over :data:`LAG_BUCKETS` (the last count: above every bucket)."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(LAG_BUCKETS) + 1))
    total: int = 0
    worst: int = 0

    def starts(self, record: JobRecord, now: int) -> bool:
        """``record`` starts at ``now``: note its lag behind its planned start; whether
        that plan broke its guarantee (the plan's fault, not a late wake-up's)."""
        planned, promised = record.planned_start, record.guaranteed_start
        if planned is None:
            return False
        if planned <= now:
            self.observe(now - planned)
        return promised is not None and planned > promised

    def observe(self, lag: int) -> None:
        at = next((i for i, bound in enumerate(LAG_BUCKETS) if lag <= bound), len(LAG_BUCKETS))
        self.counts[at] += 1
        self.total += lag
        self.worst = max(self.worst, lag)


class RequestError(Exception):
    """A command the engine refuses: ``field`` names the offending input, ``code`` the
    kind (``invalid``, ``not_found``, ``conflict``, ``forbidden``)."""

    def __init__(
        self,
        code: str,
        message: str,
        field: str | None = None,
        extra: dict[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        #: More machine-readable detail for the answer (say, the job ids concerned).
        self.extra = extra or {}
