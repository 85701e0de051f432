"""Bearer tokens mapped to a user, a role and (for coordinators) an account.

Roles: ``user`` sees and cancels only their own jobs; ``viewer`` (a dashboard on a
wall) sees everything and changes nothing (403 on every write); ``coordinator`` is a
user who may also see, hold, release and cancel the jobs of their account; ``operator``
may do everything; a ``node`` token (one per node, ``berth admin node-token NAME``) may
only speak for its own node on ``/v1/agents``, and everything else answers it 403.
No token or an unknown one: 401.

Two kinds of token: signed ones (JSON Web Tokens, checked for their signature, expiry
and revocation by :mod:`berth.service.identity`: issued by a daemon or by ``berth
authd`` on a login node), and the static tokens of the configuration (which carry no
account). Static tokens are kept as SHA-256 digests only: the configured ones are
hashed when read (an entry may also give ``sha256:HEX`` instead of the token), and
older node tokens are stored as digests. A presented token is looked up by its digest:
the time a lookup takes depends on the digest only, which an attacker cannot steer.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from berth.service.identity.signed import looks_signed
from berth.service.model import RequestError

if TYPE_CHECKING:
    from berth.service.identity.issued import IssuedTokens


class Role(StrEnum):
    USER = "user"
    VIEWER = "viewer"
    COORDINATOR = "coordinator"
    OPERATOR = "operator"
    NODE = "node"


@dataclass(frozen=True, slots=True)
class Principal:
    user: str
    role: Role
    #: A coordinator's account (whose jobs they manage); what a signed token names.
    account: str | None = None
    #: The signed token's id and expiry (``None``: a static token).
    token_id: str | None = None
    expires: int | None = None

    @property
    def operator(self) -> bool:
        return self.role is Role.OPERATOR

    @property
    def sees_everything(self) -> bool:
        """Operators and viewers see every job."""
        return self.role is Role.OPERATOR or self.role is Role.VIEWER

    def coordinates(self, account: str | None) -> bool:
        """Whether this is the coordinator of ``account``."""
        return self.role is Role.COORDINATOR and account is not None and account == self.account

    def may_see(self, owner: str, account: str | None = None) -> bool:
        """A job of ``owner`` in ``account``: one's own, one's account's (coordinators),
        or any (operators, viewers). Seeing is managing (cancel, hold) but for viewers,
        whom every write refuses."""
        return self.sees_everything or owner == self.user or self.coordinates(account)

    def whose_jobs(self, user: str | None, account: str | None) -> str | None:
        """Whose jobs a list asked for ``user`` in ``account`` may show (``None``:
        anyone's): anyone's for operators and viewers, and for a coordinator listing
        their account; else only the caller's (403 naming ``user`` for another's)."""
        if self.sees_everything or self.coordinates(account):
            return user
        if user is not None and user != self.user:
            raise RequestError("forbidden", "users may list only their own jobs", "user")
        return self.user


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
        issued: IssuedTokens | None = None,
    ) -> None:
        self._table = dict(table)
        #: The signed tokens' register (``None``: only static tokens are accepted).
        self.issued = issued
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
        presented_token = token.strip()
        if self.issued is not None and looks_signed(presented_token):
            claims = self.issued.claims(presented_token)
            return Principal(
                claims.user, Role(claims.role), claims.account, claims.token_id, claims.expires
            )
        # Looked up by digest: how long a lookup takes can only tell about the digest,
        # which nobody can steer towards a known one without the token itself.
        presented = digest(presented_token)
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
            known = ", ".join(repr(r.value) for r in Role)
            raise ValueError(f"role must be one of {known}, got {role!r}") from None
    return table
