"""Request and response bodies of the partition endpoints (pydantic v2)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from berth.core.catalog import GANG_SCHEMES
from berth.service.gang import DEFAULT_SLOT_SECONDS, GangPartition, GangSpec
from berth.service.model import JobRecord, JobState

Name = Field(..., min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$")
Scheme = Literal["bc", "br", "brms", "brmms"]
assert set(GANG_SCHEMES) == {"bc", "br", "brms", "brmms"}  # the Literal above follows it


class GangOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scheme: Scheme = Field("brmms", description="Zhou, Brent and Walsh's allocation scheme")
    slot_seconds: int = Field(
        DEFAULT_SLOT_SECONDS, ge=1, le=86_400, description="length of a time slot"
    )
    max_rows: int | None = Field(
        None, ge=1, le=1000, description="most rows (jobs beyond wait in order); none: no limit"
    )


class PartitionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Name
    nodes: list[str] = Field(..., min_length=1, max_length=10_000)
    policy: Literal["gang"] = Field(
        "gang", description="gang (the default partition runs the backfilling policy)"
    )
    options: GangOptions = Field(default_factory=lambda: GangOptions.model_validate({}))
    force: bool = Field(False, description="take the nodes even if a guarantee breaks")

    def spec(self) -> GangSpec:
        return GangSpec(
            self.name,
            list(self.nodes),
            self.options.scheme,
            self.options.slot_seconds,
            self.options.max_rows,
        )


class PartitionChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scheme: Scheme | None = Field(None, description="only while the partition has no job")
    slot_seconds: int | None = Field(None, ge=1, le=86_400)
    max_rows: int | None = Field(None, ge=1, le=1000)
    no_max_rows: bool = Field(False, description="remove the row limit")


class PartitionOut(BaseModel):
    name: str
    policy: str
    options: dict[str, object]
    nodes: list[str]
    drained: bool
    processors: int | None = Field(None, description="gang: cpus in the matrix")
    rows: int | None = Field(None, description="gang: rows in the matrix now")
    pending: int
    running: int
    suspended: int

    @classmethod
    def of_gang(cls, part: GangPartition) -> PartitionOut:
        spec = part.spec
        started = part.started
        return cls(
            name=spec.name,
            policy="gang",
            options={
                "scheme": spec.scheme,
                "slot_seconds": spec.slot_seconds,
                "max_rows": spec.max_rows,
            },
            nodes=list(spec.nodes),
            drained=spec.drained,
            processors=part.processors,
            rows=len(part.rotation.scheduler.matrix.rows),
            pending=sum(1 for j in part.jobs() if j not in started),
            running=len(started),
            suspended=len(started - part.active),
        )


def default_out(
    policy: str, options: dict[str, object], nodes: list[str], jobs: list[JobRecord]
) -> PartitionOut:
    """The default partition: the daemon's policy over every node no partition names."""
    return PartitionOut(
        name="default",
        policy=policy,
        options=dict(options),
        nodes=nodes,
        drained=False,
        processors=None,
        rows=None,
        pending=sum(1 for r in jobs if r.state is JobState.PENDING),
        running=sum(1 for r in jobs if r.state is JobState.RUNNING),
        suspended=0,
    )


class PartitionList(BaseModel):
    partitions: list[PartitionOut]


class Processor(BaseModel):
    index: int
    node: str


class MatrixOut(BaseModel):
    """Rows x processors: each cell the job that runs there in that row, or null."""

    name: str
    scheme: str
    slot_seconds: int
    processors: list[Processor]
    rows: list[list[int | None]]
    running_row: int | None = Field(description="the row running this slot, if any")
    last_boundary: int | None
    next_boundary: int | None
    waiting: list[int] = Field(description="jobs received, not yet in the matrix, in order")

    @classmethod
    def of(cls, part: GangPartition) -> MatrixOut:
        processors = [
            Processor(index=i, node=node)
            for i, node in enumerate(n for n, count in part.cpus_of for _ in range(count))
        ]
        rows = part.grid()
        pointer = part.rotation.pointer
        running = (pointer - 1) % len(rows) if rows and part.active else None
        return cls(
            name=part.spec.name,
            scheme=part.spec.scheme,
            slot_seconds=part.spec.slot_seconds,
            processors=processors,
            rows=rows,
            running_row=running,
            last_boundary=part.last_boundary,
            next_boundary=part.due(),
            waiting=part.waiting(),
        )
