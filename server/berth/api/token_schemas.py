"""Request and response bodies of the token endpoints (``/v1/admin/tokens``,
``/v1/auth/token``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from berth.api.schemas import ACCOUNT_PATTERN
from berth.service.identity.issued import LONGEST

UserName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._@-]+$")]
IssuedRole = Literal["user", "viewer", "coordinator", "operator"]


class TokenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: UserName
    role: IssuedRole = "user"
    account: Annotated[str | None, Field(max_length=100, pattern=ACCOUNT_PATTERN)] = Field(
        None, description="a coordinator's account: whose jobs they may hold, release, cancel"
    )
    expires_in: int = Field(
        30 * 86400, ge=1, le=LONGEST, description="seconds the token is valid (default 30 days)"
    )


class ShortTokenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expires_in: int = Field(900, ge=1, le=3600, description="seconds (default 15 minutes)")


class TokenOut(BaseModel):
    id: str
    user: str
    role: str
    account: str | None
    issuer: str
    issued_at: int
    expires_at: int
    issued_by: str
    revoked_at: int | None = None
    revoked_by: str | None = None


class IssuedTokenOut(TokenOut):
    token: str = Field(description="shown once: the daemon keeps only what it says")


class TokenList(BaseModel):
    tokens: list[TokenOut]
