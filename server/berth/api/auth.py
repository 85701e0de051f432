"""Bearer tokens mapped to a user and a role (``user`` or ``operator``).

No token or an unknown one: 401. Users see and cancel only their own jobs; operator
endpoints answer 403 to users. Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from enum import StrEnum

from berth.service.model import RequestError


class Role(StrEnum):
    USER = "user"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Principal:
    user: str
    role: Role

    @property
    def operator(self) -> bool:
        return self.role is Role.OPERATOR

    def may_see(self, owner: str) -> bool:
        return self.operator or owner == self.user


class Tokens:
    """The token table: token -> principal."""

    def __init__(self, table: dict[str, Principal]) -> None:
        self._table = dict(table)

    def __len__(self) -> int:
        return len(self._table)

    def token_for(self, role: Role) -> str | None:
        """Some token with ``role`` (the demo uses it to call its own daemon)."""
        return next((t for t, p in self._table.items() if p.role is role), None)

    def resolve(self, header: str | None) -> Principal:
        if not header:
            raise RequestError(
                "unauthorized", "missing bearer token (Authorization: Bearer <token>)"
            )
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise RequestError("unauthorized", "expected 'Authorization: Bearer <token>'")
        token = token.strip()
        found: Principal | None = None
        for known, principal in self._table.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = principal
        if found is None:
            raise RequestError("unauthorized", "unknown bearer token")
        return found


def parse_tokens(text: str) -> dict[str, Principal]:
    """``token:user:role,token2:user2:role2`` (role defaults to ``user``)."""
    table: dict[str, Principal] = {}
    for item in filter(None, (part.strip() for part in text.replace("\n", ",").split(","))):
        token, _, rest = item.partition(":")
        user, _, role = rest.partition(":")
        if not token or not user:
            raise ValueError(f"token entries are TOKEN:USER[:ROLE], got {item!r}")
        try:
            table[token] = Principal(user, Role(role or "user"))
        except ValueError:
            raise ValueError(f"role must be 'user' or 'operator', got {role!r}") from None
    return table
