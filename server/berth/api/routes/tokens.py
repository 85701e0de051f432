"""Token endpoints: operators issue, list and revoke signed tokens; anyone turns their
own token into a short-lived one for the dashboard (``berth ui-login``).

Each issue and revocation is recorded first (the register, in the database), then
announced as an event naming the operator (``token.issued``, ``token.revoked``); the
token itself is shown once and never stored.
"""

from __future__ import annotations

from fastapi import APIRouter

from berth.api.deps import Daemon, DaemonDep, NodeOrAnyone, OperatorDep
from berth.api.principals import Principal, Role
from berth.api.token_schemas import IssuedTokenOut, ShortTokenIn, TokenIn, TokenList, TokenOut
from berth.service.cluster_commands import RecordEvent
from berth.service.identity.issued import IssuedTokens
from berth.service.model import RequestError

router = APIRouter(tags=["tokens"])


def _register(daemon: Daemon) -> IssuedTokens:
    issued = daemon.tokens.issued
    if issued is None:
        raise RequestError("conflict", "this daemon issues no tokens (no signing key)", "path")
    return issued


def _operator_only(who: Principal) -> None:
    if not who.operator:  # a viewer reads what operators read, but not the tokens
        raise RequestError("forbidden", f"user {who.user!r} is not an operator")


@router.post(
    "/v1/admin/tokens",
    response_model=IssuedTokenOut,
    status_code=201,
    summary="Issue a signed token for a user (shown once), valid until it expires or is revoked",
)
async def issue(body: TokenIn, daemon: DaemonDep, who: OperatorDep) -> IssuedTokenOut:
    _operator_only(who)
    if body.role == "coordinator" and body.account is None:
        raise RequestError("invalid", "a coordinator token needs the account it coordinates",
                           "account")  # fmt: skip
    token, row = await _register(daemon).issue(
        body.user, body.role, body.expires_in, who.user, body.account
    )
    event = {"token_id": row["id"], "user": body.user, "role": body.role,
             "account": body.account, "expires_at": row["expires_at"]}  # fmt: skip
    await daemon.coordinator.call(RecordEvent("token.issued", event), by=who.user)
    return IssuedTokenOut.model_validate({**row, "token": token})


@router.get("/v1/admin/tokens", response_model=TokenList, summary="The issued tokens not expired")
async def listing(daemon: DaemonDep, who: OperatorDep) -> TokenList:
    _operator_only(who)
    rows = await _register(daemon).listing()
    return TokenList(tokens=[TokenOut.model_validate(row) for row in rows])


@router.post(
    "/v1/admin/tokens/{token_id}/revoke",
    response_model=TokenOut,
    summary="Revoke an issued token: refused from now on by every daemon of the group",
)
async def revoke(token_id: str, daemon: DaemonDep, who: OperatorDep) -> TokenOut:
    _operator_only(who)
    row = await _register(daemon).revoke(token_id, who.user)
    event = {"token_id": token_id, "user": row["user"], "role": row["role"]}
    await daemon.coordinator.call(RecordEvent("token.revoked", event), by=who.user)
    return TokenOut.model_validate(row)


@router.post(
    "/v1/auth/token",
    response_model=IssuedTokenOut,
    status_code=201,
    summary="A short-lived token for the caller (the dashboard's sign-in link: berth ui-login)",
)
async def short_lived(body: ShortTokenIn, daemon: DaemonDep, who: NodeOrAnyone) -> IssuedTokenOut:
    if who.role is Role.NODE:  # a viewer may: it signs a wall's dashboard in
        raise RequestError("forbidden", "a node token may only call /v1/agents")
    token, row = await _register(daemon).issue(
        who.user, who.role.value, body.expires_in, who.user, who.account
    )
    return IssuedTokenOut.model_validate({**row, "token": token})
