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

from collections.abc import Mapping
from typing import TYPE_CHECKING

from berth.api.principals import Principal, Role, digest
from berth.service.identity.signed import looks_signed
from berth.service.model import RequestError

if TYPE_CHECKING:
    from berth.service.identity.issued import IssuedTokens


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
