"""Partition endpoints: list and show partitions, a gang partition's matrix, and the
operator's create, change, drain, resume and delete."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Response

from berth.api.deps import DaemonDep, OperatorDep, PageDep, PrincipalDep
from berth.api.partition_schemas import (
    MatrixOut,
    PartitionChange,
    PartitionIn,
    PartitionList,
    PartitionOut,
)
from berth.service.cluster_commands import (
    ChangePartition,
    CreatePartition,
    DeletePartition,
    DrainPartition,
)
from berth.service.engine import Engine

router = APIRouter(tags=["partitions"])


def _summary(name: str) -> Callable[[Engine], PartitionOut]:
    return lambda engine: PartitionOut.model_validate(engine.partitions.partition_summary(name))


@router.get("/v1/partitions", response_model=PartitionList, summary="Every partition")
async def list_partitions(daemon: DaemonDep, _: PrincipalDep, page: PageDep) -> PartitionList:
    def view(engine: Engine) -> PartitionList:
        names = engine.partitions.partition_names()
        shown = [_summary(name)(engine) for name in page.of(names)]
        return PartitionList(partitions=shown, total=len(names))

    return await daemon.coordinator.read(view)


@router.get("/v1/partitions/{name}", response_model=PartitionOut, summary="One partition")
async def show_partition(name: str, daemon: DaemonDep, _: PrincipalDep) -> PartitionOut:
    def view(engine: Engine) -> PartitionOut:
        if name not in engine.partitions.partition_names():
            engine.partitions.partition(name)  # not found, naming the partitions there are
        return _summary(name)(engine)

    return await daemon.coordinator.read(view)


@router.get(
    "/v1/partitions/{name}/matrix",
    response_model=MatrixOut,
    summary="A gang partition's matrix: rows x processors, with the job in each cell",
)
async def matrix(name: str, daemon: DaemonDep, _: PrincipalDep) -> MatrixOut:
    return await daemon.coordinator.read(
        lambda engine: MatrixOut.of(engine.partitions.partition(name))
    )


@router.post(
    "/v1/admin/partitions",
    response_model=PartitionOut,
    status_code=201,
    summary="Create a partition (gang or backfilling) from idle nodes of the default partition",
)
async def create(body: PartitionIn, daemon: DaemonDep, who: OperatorDep) -> PartitionOut:
    return await daemon.coordinator.call(
        CreatePartition(body.spec(), body.force), PartitionOut.model_validate, by=who.user
    )


@router.patch(
    "/v1/admin/partitions/{name}",
    response_model=PartitionOut,
    summary="Change a partition's policy (backfilling; refused if a guarantee would break, "
    "unless forced), or a gang partition's slot length, row limit and (when empty) scheme",
)
async def change(
    name: str, body: PartitionChange, daemon: DaemonDep, who: OperatorDep
) -> PartitionOut:
    command = ChangePartition(
        name,
        body.scheme,
        body.slot_seconds,
        body.max_rows,
        body.no_max_rows,
        body.policy,
        None if body.options is None else dict(body.options),
        body.force,
    )
    return await daemon.coordinator.call(command, PartitionOut.model_validate, by=who.user)


@router.post(
    "/v1/admin/partitions/{name}/drain",
    response_model=PartitionOut,
    summary="Drain a partition: it takes no new jobs; those it has go on",
)
async def drain(name: str, daemon: DaemonDep, who: OperatorDep) -> PartitionOut:
    return await daemon.coordinator.call(
        DrainPartition(name, True), PartitionOut.model_validate, by=who.user
    )


@router.post(
    "/v1/admin/partitions/{name}/resume",
    response_model=PartitionOut,
    summary="Open a drained partition to new jobs again",
)
async def resume(name: str, daemon: DaemonDep, who: OperatorDep) -> PartitionOut:
    return await daemon.coordinator.call(
        DrainPartition(name, False), PartitionOut.model_validate, by=who.user
    )


@router.delete(
    "/v1/admin/partitions/{name}",
    status_code=204,
    summary="Delete an empty partition; its nodes return to the default partition",
)
async def delete(name: str, daemon: DaemonDep, who: OperatorDep) -> Response:
    await daemon.coordinator.call(DeletePartition(name), by=who.user)
    return Response(status_code=204)
