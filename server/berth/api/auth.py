"""Bearer tokens mapped to a user and a role (``user``, ``operator`` or ``node``).

No token or an unknown one: 401. Users see and cancel only their own jobs; operator
endpoints answer 403 to users. A ``node`` token (one per node, ``berth admin
node-token NAME``) may only speak for its own node on ``/v1/agents``; everything else
answers it 403. Tokens are kept as SHA-256 digests only: the configured ones are hashed
when read (an entry may also give ``sha256:HEX`` instead of the token), and node tokens
are stored as digests. A presented token is looked up by its digest: the time a lookup
takes depends on the digest only, which an attacker cannot steer.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from berth.service.model import RequestError


class Role(StrEnum):
    USER = "user"
    OPERATOR = "operator"
    NODE = "node"


@dataclass(frozen=True, slots=True)
class Principal:
    user: str
    role: Role

    @property
    def operator(self) -> bool:
        return self.role is Role.OPERATOR

    def may_see(self, owner: str) -> bool:
        return self.operator or owner == self.user


def new_token(kind: str) -> str:
    """A fresh random token, ``berth-KIND-`` and 43 URL-safe characters: the prefix says
    what it is (secret scanners can match it) and a token never starts with ``-``, which
    a command line would take for an option."""
    return f"berth-{kind}-{secrets.token_urlsafe(32)}"


def digest(token: str) -> str:
    """The SHA-256 hex digest a token is kept as."""
    return hashlib.sha256(token.encode()).hexdigest()


class Tokens:
    """The token table: digest -> principal, plus the node tokens the engine stores."""

    def __init__(
        self,
        table: dict[str, Principal],
        node_tokens: Mapping[str, str] | None = None,
        demo: dict[Role, str] | None = None,
    ) -> None:
        self._table = dict(table)
        #: digest -> node name; the live mapping the engine persists.
        self.node_tokens: Mapping[str, str] = node_tokens if node_tokens is not None else {}
        self._demo = dict(demo or {})

    def __len__(self) -> int:
        return len(self._table)

    def token_for(self, role: Role) -> str | None:
        """A token with ``role`` the daemon may use itself (the demo); only known for
        tokens it generated."""
        return self._demo.get(role)

    def resolve(self, header: str | None) -> Principal:
        if not header:
            raise RequestError(
                "unauthorized", "missing bearer token (Authorization: Bearer <token>)"
            )
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise RequestError("unauthorized", "expected 'Authorization: Bearer <token>'")
        # Looked up by digest: how long a lookup takes can only tell about the digest,
        # which nobody can steer towards a known one without the token itself.
        presented = digest(token.strip())
        found = self._table.get(presented)
        if found is not None:
            return found
        node = self.node_tokens.get(presented)
        if node is None:
            raise RequestError("unauthorized", "unknown bearer token")
        return Principal(node, Role.NODE)


def parse_tokens(text: str) -> dict[str, Principal]:
    """``token:user:role,token2:user2:role2`` (role defaults to ``user``) as a digest
    table; ``sha256:HEX:user:role`` gives the digest instead of the token."""
    table: dict[str, Principal] = {}
    for item in filter(None, (part.strip() for part in text.replace("\n", ",").split(","))):
        hashed = item.startswith("sha256:")
        if hashed:
            item = item.removeprefix("sha256:")
        token, _, rest = item.partition(":")
        user, _, role = rest.partition(":")
        if not token or not user:
            raise ValueError(f"token entries are TOKEN:USER[:ROLE], got {item!r}")
        if hashed and (len(token) != 64 or any(c not in "0123456789abcdef" for c in token)):
            raise ValueError(f"a sha256: entry needs 64 lowercase hex digits, got {token!r}")
        try:
            table[token if hashed else digest(token)] = Principal(user, Role(role or "user"))
        except ValueError:
            raise ValueError(f"role must be 'user', 'operator' or 'node', got {role!r}") from None
    return table
