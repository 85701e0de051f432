"""The bodies node agents and operators exchange with the daemon about agents: an
agent's register and sync (the whole truth of its node, each job's end and measured
usage), the daemon's answer (the whole wish for the node), and the agents' status."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from berth.api.schemas import MAX_RESOURCE_KINDS, Capacity, NodeName, ResourceName
from berth.service.handlers.agents import AgentReport, JobReport


class UsageIn(BaseModel):
    """What a job used, as its agent measured it at its end (a measurement this daemon
    does not know, from a newer agent, is left out rather than refusing the sync)."""

    model_config = ConfigDict(extra="ignore")

    cpu_seconds: float | None = Field(None, ge=0, le=1e12, allow_inf_nan=False)
    peak_memory_bytes: int | None = Field(None, ge=0, le=1 << 60)
    gpus: int | None = Field(None, ge=0, le=1 << 20)

    def measured(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.model_dump().items() if v is not None}


class JobReportIn(BaseModel):
    """One job attempt an agent holds: running, suspended, or ended and how."""

    model_config = ConfigDict(extra="forbid")

    job_id: int = Field(..., ge=1, le=(1 << 62))
    attempt: int = Field(0, ge=0, le=1_000_000)
    state: Literal["RUNNING", "SUSPENDED", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED",
                   "NODE_FAIL", "OUT_OF_MEMORY"]  # fmt: skip
    reason: str | None = Field(None, max_length=2000)
    exit_code: int | None = Field(None, ge=0, le=255)
    signal: int | None = Field(None, ge=1, le=128)
    started_at: float | None = Field(None, ge=0, le=1e12, allow_inf_nan=False)
    ended_at: float | None = Field(None, ge=0, le=1e12, allow_inf_nan=False)
    usage: UsageIn | None = None


class ShareIn(BaseModel):
    """A node's share of a job whose command runs on another node, as its agent holds it."""

    model_config = ConfigDict(extra="forbid")

    job_id: int = Field(..., ge=1, le=(1 << 62))
    attempt: int = Field(0, ge=0, le=1_000_000)
    suspended: bool = False


class AgentIn(BaseModel):
    """A node agent's register or sync request: the whole truth of its node."""

    model_config = ConfigDict(extra="forbid")

    name: NodeName
    boot_id: str = Field(..., min_length=1, max_length=100)
    resources: dict[ResourceName, Capacity] = Field(
        ..., min_length=1, max_length=MAX_RESOURCE_KINDS
    )
    jobs: list[JobReportIn] = Field(default_factory=list, max_length=100_000)
    shares: list[ShareIn] | None = Field(
        None, max_length=100_000, description="shares held for jobs run by other nodes"
    )
    wait: float = Field(0.0, ge=0.0, le=300.0, description="hold the answer this long at most")
    confinement: str = Field(
        "", max_length=300, description="how the agent confines jobs (cgroup v1/v2, or why not)"
    )

    def report(self, register: bool) -> AgentReport:
        jobs = tuple(
            JobReport(
                j.job_id,
                j.attempt,
                j.state,
                j.reason or "",
                j.exit_code,
                j.signal,
                j.started_at,
                None if j.usage is None else j.usage.measured(),
            )
            for j in self.jobs
        )
        shares = (
            None
            if self.shares is None
            else {f"{s.job_id}.{s.attempt}": s.suspended for s in self.shares}
        )
        return AgentReport(
            self.name, self.boot_id, dict(self.resources), jobs, register, self.confinement, shares
        )


class OrderOut(BaseModel):
    job_id: int
    attempt: int
    run: bool = Field(description="this node runs the command (the first of the allocation)")
    suspended: bool
    name: str
    user: str
    command: str | None
    time_limit: int
    submit_time: int
    nodes: list[str]
    cpus: int
    mem_gb: int = Field(0, description="memory it holds on this node (its cgroup's limit)")
    gpus: int
    chdir: str | None
    output: str | None
    error: str | None
    script: str | None = Field(None, description="the batch script to run (until it is held)")
    argv: list[str] | None = Field(None, description="the batch script's arguments")
    array_job_id: int | None = Field(None, description="a job array's task: the array's id")
    array_task_id: int | None = Field(None, description="a job array's task: its index")


class AgentOut(BaseModel):
    """The whole wish of the daemon for the node."""

    node: str
    jobs: list[OrderOut]
    acknowledged: list[str] = Field(description="job attempts (id.attempt) the agent may forget")
    settings: dict[str, float]


class NodeTokenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: NodeName
    expires_in: int = Field(
        365 * 86400, ge=60, le=10 * 365 * 86400, description="seconds it is valid (one year)"
    )


class NodeTokenOut(BaseModel):
    name: str
    token: str = Field(description="shown once; the daemon keeps only what it says")
    id: str | None = Field(default=None, description="its id in the token register (to revoke)")
    expires_at: int | None = None


class AgentStatus(BaseModel):
    name: str
    state: str
    reason: str
    boot_id: str
    seconds_since_heard: float | None
    running_jobs: int
    confinement: str = Field("", description="how its jobs are confined (cgroups), or why not")


class AgentsOut(BaseModel):
    agents: list[AgentStatus]
    total: int = Field(0, description="agents' nodes in all (``agents`` is one page)")
    launch_delay_seconds: dict[str, float | int] = Field(
        description="from a start's commit to its process running: count, p50, p99, max"
    )
