"""Partition endpoints: list and show partitions, a gang partition's matrix, and the
operator's create, change, drain, resume and delete."""

from __future__ import annotations

from fastapi import APIRouter, Response

from berth.api.deps import DaemonDep, OperatorDep, PrincipalDep
from berth.api.partition_schemas import (
    MatrixOut,
    PartitionChange,
    PartitionIn,
    PartitionList,
    PartitionOut,
    default_out,
)
from berth.service.commands import (
    ChangePartition,
    CreatePartition,
    DeletePartition,
    DrainPartition,
)
from berth.service.engine import Engine
from berth.service.partitions import DEFAULT_PARTITION

router = APIRouter(tags=["partitions"])


def _default(engine: Engine) -> PartitionOut:
    unfinished = [r for r in engine.jobs.values() if r.partition is None and not r.final]
    return default_out(
        engine.policy_name, engine.policy_options, sorted(engine.pool().nodes), unfinished
    )


@router.get("/v1/partitions", response_model=PartitionList, summary="Every partition")
async def list_partitions(daemon: DaemonDep, _: PrincipalDep) -> PartitionList:
    def view(engine: Engine) -> PartitionList:
        gang = [PartitionOut.of_gang(engine.gang[n]) for n in sorted(engine.gang)]
        return PartitionList(partitions=[_default(engine), *gang])

    return await daemon.coordinator.read(view)


@router.get("/v1/partitions/{name}", response_model=PartitionOut, summary="One partition")
async def show_partition(name: str, daemon: DaemonDep, _: PrincipalDep) -> PartitionOut:
    def view(engine: Engine) -> PartitionOut:
        if name == DEFAULT_PARTITION:
            return _default(engine)
        return PartitionOut.of_gang(engine.partition(name))

    return await daemon.coordinator.read(view)


@router.get(
    "/v1/partitions/{name}/matrix",
    response_model=MatrixOut,
    summary="A gang partition's matrix: rows x processors, with the job in each cell",
)
async def matrix(name: str, daemon: DaemonDep, _: PrincipalDep) -> MatrixOut:
    return await daemon.coordinator.read(lambda engine: MatrixOut.of(engine.partition(name)))


@router.post(
    "/v1/admin/partitions",
    response_model=PartitionOut,
    status_code=201,
    summary="Create a gang partition from idle nodes of the default partition",
)
async def create(body: PartitionIn, daemon: DaemonDep, _: OperatorDep) -> PartitionOut:
    return await daemon.coordinator.call(
        CreatePartition(body.spec(), body.force),
        PartitionOut.of_gang,
    )


@router.patch(
    "/v1/admin/partitions/{name}",
    response_model=PartitionOut,
    summary="Change a gang partition's slot length or row limit (its scheme only when empty)",
)
async def change(
    name: str, body: PartitionChange, daemon: DaemonDep, _: OperatorDep
) -> PartitionOut:
    command = ChangePartition(name, body.scheme, body.slot_seconds, body.max_rows, body.no_max_rows)
    return await daemon.coordinator.call(command, PartitionOut.of_gang)


@router.post(
    "/v1/admin/partitions/{name}/drain",
    response_model=PartitionOut,
    summary="Drain a partition: it takes no new jobs; those it has go on",
)
async def drain(name: str, daemon: DaemonDep, _: OperatorDep) -> PartitionOut:
    return await daemon.coordinator.call(DrainPartition(name, True), PartitionOut.of_gang)


@router.post(
    "/v1/admin/partitions/{name}/resume",
    response_model=PartitionOut,
    summary="Open a drained partition to new jobs again",
)
async def resume(name: str, daemon: DaemonDep, _: OperatorDep) -> PartitionOut:
    return await daemon.coordinator.call(DrainPartition(name, False), PartitionOut.of_gang)


@router.delete(
    "/v1/admin/partitions/{name}",
    status_code=204,
    summary="Delete an empty partition; its nodes return to the default partition",
)
async def delete(name: str, daemon: DaemonDep, _: OperatorDep) -> Response:
    await daemon.coordinator.call(DeletePartition(name))
    return Response(status_code=204)
