"""What a submission carries: totals or slots, limits, the command or batch script and
its arguments, a job array's tasks, where the job writes. Checked here (each refusal a
422 naming its field); :meth:`JobSubmit.request` gives the engine's request."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from berth.api.schemas import (
    ACCOUNT_PATTERN,
    MAX_RESOURCE_KINDS,
    MAX_SCRIPT_CHARACTERS,
    MAX_TIME_LIMIT,
    Amount,
    ResourceName,
)
from berth.core.shapes import Shape
from berth.service.model import JobRequest, RequestError
from berth.service.partitions.specs import DEFAULT_PARTITION


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
    begin_time: int | None = Field(
        None, ge=0, le=1 << 62, description="start no earlier than this time (sbatch --begin)"
    )
    hold: bool = Field(
        False,
        description="held from the start (sbatch --hold): it waits, with no guarantee, until "
        "its user (or an operator) releases it",
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
    array: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="a job array's task indices: 0-99, 1,3,5-9 or 0-99:4 (one job per task), "
        "optionally with %N: at most N tasks running at once",
    )
    dependency: str | None = Field(
        None,
        min_length=1,
        max_length=10_000,
        description="what it waits for, as Slurm writes it: afterok:12:13,afterany:14,"
        "afternotok:15,after:16,singleton (an array's id: all its tasks; A_T: one task)",
    )
    kill_on_invalid_dep: bool = Field(
        True,
        description="cancel the job when a dependency can never be satisfied (false: hold it)",
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
            dependency=self.dependency,
            kill_on_invalid_dep=self.kill_on_invalid_dep,
            begin_time=self.begin_time,
            hold=self.hold,
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
