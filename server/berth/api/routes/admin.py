"""Operator endpoints: nodes, holds (account coordinators too), political priority, the
policy, dry runs."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter

from berth.api.agent_schemas import NodeTokenIn, NodeTokenOut
from berth.api.deps import Daemon, DaemonDep, JobId, OperatorDep, PrincipalDep
from berth.api.principals import Principal, Role, digest, new_token
from berth.api.schemas import (
    DryRunIn,
    DryRunOut,
    HoldIn,
    JobOut,
    NodeAdd,
    NodeChange,
    NodeOut,
    NodesChange,
    NodesOut,
    PolicyIn,
    PolicyOut,
    PriorityIn,
)
from berth.core.policies import POLICIES, POLICY_OPTIONS, policy_problem
from berth.service.cluster_commands import (
    AddNode,
    ChangeNodes,
    ChangePolicy,
    IssueNodeToken,
    MarkNodesDown,
)
from berth.service.commands import HoldJob, ReleaseJob, SetPriority
from berth.service.engine import Engine
from berth.service.model import NodeRecord, RequestError

router = APIRouter(prefix="/v1/admin", tags=["admin"])

#: A node marked down by an operator who gave no reason.
OPERATOR_DOWN = "marked down by an operator"


@router.post("/nodes", response_model=NodeOut, status_code=201, summary="Add a node")
async def add_node(body: NodeAdd, daemon: DaemonDep, who: OperatorDep) -> NodeOut:
    return await daemon.coordinator.call(
        AddNode(body.name, body.resources), NodeOut.of, by=who.user
    )


@router.post(
    "/nodes/{action}",
    response_model=NodesOut,
    summary="Drain, resume or mark down several nodes at once (one replan for all; a "
    "drain that would break a guarantee is refused as a whole)",
)
async def change_nodes(
    action: Literal["drain", "resume", "down"],
    body: NodesChange,
    daemon: DaemonDep,
    who: OperatorDep,
) -> NodesOut:
    names = tuple(body.names)
    command: ChangeNodes | MarkNodesDown = (
        MarkNodesDown(names, body.reason or OPERATOR_DOWN)
        if action == "down"
        else ChangeNodes(action, names, body.reason, body.force)
    )
    return await daemon.coordinator.call(command, _nodes_out, by=who.user)


def _nodes_out(nodes: list[NodeRecord]) -> NodesOut:
    return NodesOut(nodes=[NodeOut.of(node) for node in nodes])


def _node_out(nodes: list[NodeRecord]) -> NodeOut:
    (node,) = nodes
    return NodeOut.of(node)


@router.post(
    "/nodes/{name}/drain",
    response_model=NodeOut,
    summary="Drain a node: running jobs go on, no new ones; refused if a guarantee would break",
)
async def drain(name: str, body: NodeChange, daemon: DaemonDep, who: OperatorDep) -> NodeOut:
    return await daemon.coordinator.call(
        ChangeNodes("drain", (name,), body.reason, body.force), _node_out, by=who.user
    )


@router.post(
    "/nodes/{name}/resume", response_model=NodeOut, summary="Put a drained or down node back up"
)
async def resume(name: str, daemon: DaemonDep, who: OperatorDep) -> NodeOut:
    return await daemon.coordinator.call(ChangeNodes("resume", (name,)), _node_out, by=who.user)


@router.post(
    "/nodes/{name}/down", response_model=NodeOut, summary="Mark a node down: its jobs are killed"
)
async def down(name: str, body: NodeChange, daemon: DaemonDep, who: OperatorDep) -> NodeOut:
    reason = body.reason or OPERATOR_DOWN
    return await daemon.coordinator.call(MarkNodesDown((name,), reason), _node_out, by=who.user)


@router.post(
    "/node-tokens",
    response_model=NodeTokenOut,
    status_code=201,
    summary="Issue a node's agent token (shown once, valid a year unless asked otherwise; "
    "the node's older tokens stop working)",
)
async def node_token(body: NodeTokenIn, daemon: DaemonDep, who: OperatorDep) -> NodeTokenOut:
    issued = daemon.tokens.issued
    if issued is None:  # no signing key: a static token, kept as its digest
        token = new_token("node")
        await daemon.coordinator.call(IssueNodeToken(body.name, digest(token)), by=who.user)
        return NodeTokenOut(name=body.name, token=token)
    token, row = await issued.issue(body.name, "node", body.expires_in, who.user)
    await issued.revoke_others(body.name, "node", str(row["id"]), who.user)
    await daemon.coordinator.call(IssueNodeToken(body.name, None, str(row["id"])), by=who.user)
    return NodeTokenOut(
        name=body.name, token=token, id=str(row["id"]), expires_at=int(str(row["expires_at"]))
    )


async def _manages(daemon: Daemon, who: Principal, job_id: int) -> None:
    """Operators hold and release every job, an account's coordinator that account's
    jobs (404 for a job outside it, as for a job they cannot see); others: 403."""
    if who.operator:
        return
    if who.role is not Role.COORDINATOR:
        raise RequestError(
            "forbidden", f"user {who.user!r} is not an operator or an account coordinator"
        )

    def check(engine: Engine) -> None:
        record = engine.jobs.get(job_id)
        if record is None or not who.coordinates(record.account):
            raise RequestError("not_found", f"no job {job_id} in account {who.account!r}", "job_id")

    await daemon.coordinator.read(check)


@router.post(
    "/jobs/{job_id}/hold",
    response_model=JobOut,
    summary="Hold a pending job (it gives up its guarantee)",
)
async def hold(job_id: JobId, body: HoldIn, daemon: DaemonDep, who: PrincipalDep) -> JobOut:
    await _manages(daemon, who, job_id)
    hold = HoldJob(job_id, body.reason or f"held by {who.user}")
    return await daemon.coordinator.call(hold, JobOut.of, by=who.user)


@router.post(
    "/jobs/{job_id}/release", response_model=JobOut, summary="Release a held job (admitted again)"
)
async def release(job_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> JobOut:
    await _manages(daemon, who, job_id)
    return await daemon.coordinator.call(ReleaseJob(job_id), JobOut.of, by=who.user)


@router.put(
    "/jobs/{job_id}/priority", response_model=JobOut, summary="Set a job's political priority"
)
async def priority(job_id: JobId, body: PriorityIn, daemon: DaemonDep, who: OperatorDep) -> JobOut:
    return await daemon.coordinator.call(
        SetPriority(job_id, body.political), JobOut.of, by=who.user
    )


def _policy_out(engine: Engine) -> PolicyOut:
    return PolicyOut(
        policy=engine.partitions.policy_name,
        options=engine.partitions.policy_options,
        known={name: list(POLICY_OPTIONS.get(name, ())) for name in POLICIES},
    )


@router.get("/policy", response_model=PolicyOut, summary="The scheduling policy and its options")
async def get_policy(daemon: DaemonDep, _: OperatorDep) -> PolicyOut:
    return await daemon.coordinator.read(_policy_out)


@router.put(
    "/policy",
    response_model=PolicyOut,
    summary="Change the policy; refused (409) if it would break a guarantee, unless forced",
)
async def set_policy(body: PolicyIn, daemon: DaemonDep, who: OperatorDep) -> PolicyOut:
    change = ChangePolicy(body.policy, dict(body.options), body.force)
    return await daemon.coordinator.call(change, _policy_out, by=who.user)


@router.post(
    "/dry-run",
    response_model=DryRunOut,
    summary="Replay the live state forward under a policy in the emulator; live state is untouched",
)
async def dry_run(body: DryRunIn, daemon: DaemonDep, _: OperatorDep) -> DryRunOut:
    problem = policy_problem(body.policy, body.options)
    if problem is not None:
        option, message = problem
        raise RequestError("invalid", message, "policy" if option is None else f"options.{option}")
    if daemon.dry_run is None:
        raise RequestError("conflict", "this daemon was started without the emulator", "path")
    report = await daemon.dry_run(daemon.engine, body.policy, dict(body.options), daemon.now())
    return DryRunOut.model_validate(report)
