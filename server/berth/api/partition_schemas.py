"""Request and response bodies of the partition endpoints (pydantic v2)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from berth.api.schemas import MAX_OPTIONS, NodeName, OptionName, OptionValue, PolicyName
from berth.core.catalog import GANG_SCHEMES
from berth.service.model import RequestError
from berth.service.partitions.gang import DEFAULT_SLOT_SECONDS, GangPartition, GangSpec
from berth.service.partitions.specs import BackfillSpec

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
    nodes: list[NodeName] = Field(..., min_length=1, max_length=10_000)
    policy: PolicyName = Field(
        "gang", description="gang, or any backfilling policy (conservative, easy, qops, ...)"
    )
    options: dict[OptionName, OptionValue | None] = Field(
        default_factory=dict,
        max_length=MAX_OPTIONS,
        description="gang: scheme, slot_seconds, max_rows; otherwise the policy's options",
    )
    force: bool = Field(False, description="take the nodes even if a guarantee breaks")

    def spec(self) -> GangSpec | BackfillSpec:
        if self.policy != "gang":
            options: dict[str, object] = {k: v for k, v in self.options.items() if v is not None}
            return BackfillSpec(self.name, list(self.nodes), self.policy, options)
        try:
            gang = GangOptions.model_validate(self.options)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise RequestError("invalid", first["msg"], f"options.{where}") from None
        return GangSpec(self.name, list(self.nodes), gang.scheme, gang.slot_seconds, gang.max_rows)


class PartitionChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: PolicyName | None = Field(None, description="backfilling partitions: a new policy")
    options: dict[OptionName, OptionValue] | None = Field(
        None, max_length=MAX_OPTIONS, description="backfilling partitions: the policy's options"
    )
    force: bool = Field(False, description="switch even if a guarantee breaks")
    scheme: Scheme | None = Field(None, description="gang: only while it has no job")
    slot_seconds: int | None = Field(None, ge=1, le=86_400)
    max_rows: int | None = Field(None, ge=1, le=1000)
    no_max_rows: bool = Field(False, description="gang: remove the row limit")


class PartitionOut(BaseModel):
    name: str
    policy: str
    options: dict[str, object]
    nodes: list[str]
    drained: bool
    processors: int | None = Field(None, description="gang: cpus in the matrix")
    rows: int | None = Field(None, description="gang: rows in the matrix now")
    pending: int
    running: int = Field(description="started and not ended (suspended ones included)")
    suspended: int


class PartitionList(BaseModel):
    partitions: list[PartitionOut]
    total: int = Field(0, description="partitions in all (``partitions`` is one page)")


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
