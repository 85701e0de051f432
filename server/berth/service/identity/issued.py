"""The register of tokens the daemons issued: issue, list, revoke, and believe.

:class:`IssuedTokens` signs a token with the daemon's key and records what it says in
the :class:`~berth.service.ports.TokenStore` before handing it out (shown once: the
store never holds the token itself); revokes by id (the revocation is committed, then
this daemon refuses the token at once); and keeps the set of revoked ids that every
presented token is checked against, refreshed from the store at least every
:data:`REFRESH_SECONDS`, so another daemon of the HA group (a standby, or the next
leader) refuses a token revoked here within that time. It also accepts the tokens of
the other daemons' keys and of the login nodes' ``berth authd`` keys. The store's
blocking calls run in a worker thread; the checks on the loop use memory only.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable

from berth.service.identity.signed import (
    ROLES,
    Claims,
    Signer,
    TrustedKey,
    Verifier,
    load_public,
    public_pem,
)
from berth.service.model import RequestError
from berth.service.ports import TokenStore

log = logging.getLogger("berth.identity")

#: How often a daemon reads the revocations and keys of its group (seconds).
REFRESH_SECONDS = 0.25
#: Roles a daemon's own key vouches for; a login node's authd key: users only.
DAEMON_ROLES = frozenset(ROLES)
AUTHD_ROLES = frozenset({"user"})
#: The longest life an issued token may have (seconds): ten years.
LONGEST = 10 * 365 * 86400


class IssuedTokens:
    """Tokens issued by the daemons of one database, and the keys they trust."""

    def __init__(
        self,
        store: TokenStore,
        signer: Signer | None,
        authd_keys: list[TrustedKey] | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.signer = signer
        self.wall = wall
        self.verifier = Verifier(authd_keys or [])
        #: Ids of revoked tokens (every presented token is checked). Only ever grows:
        #: a revocation is never undone, and the refresh in a worker thread must not
        #: drop one made here meanwhile (hence the lock, and a new set each time).
        self.revoked: frozenset[str] = frozenset()
        self._revoking = threading.Lock()
        self._store_failing = False

    def now(self) -> int:
        return int(self.wall())

    # ------------------------------------------------------------------ believing
    def claims(self, token: str) -> Claims:
        """What a signed token says, if believed now (401 naming why not)."""
        return self.verifier.claims(token, self.now(), self.revoked)

    def refresh(self) -> None:
        """Read the group's revocations and daemon keys (blocking)."""
        revoked = self.store.revoked(self.now())
        for row in self.store.public_keys():
            if str(row["id"]) not in self.verifier.trusted and row["source"] == "daemon":
                public = load_public(str(row["public_key"]))
                self.verifier.trust(TrustedKey(str(row["id"]), public, DAEMON_ROLES))
        self._add_revoked(revoked)

    def _add_revoked(self, token_ids: set[str] | frozenset[str]) -> None:
        with self._revoking:
            if not token_ids <= self.revoked:
                self.revoked = self.revoked | token_ids

    async def keep_fresh(self) -> None:
        """Refresh every :data:`REFRESH_SECONDS` until cancelled (a store error is
        retried at the next turn: the last known revocations stay in force)."""
        while True:
            try:
                await asyncio.to_thread(self.refresh)
            except Exception as error:  # the database is away: keep what is known
                if not self._store_failing:  # one line when it fails, one when it is back
                    log.warning("cannot read token revocations (trying again): %s", error)
                self._store_failing = True
            else:
                if self._store_failing:
                    log.warning("token revocations are read again")
                self._store_failing = False
            await asyncio.sleep(REFRESH_SECONDS)

    def publish_key(self, name: str) -> None:
        """Record this daemon's public key for the group, and trust it (blocking)."""
        assert self.signer is not None
        row = {"id": self.signer.key_id, "public_key": public_pem(self.signer.key),
               "source": "daemon", "name": name, "added_at": self.now()}  # fmt: skip
        self.store.save_key(row)
        self.verifier.trust(
            TrustedKey(self.signer.key_id, self.signer.key.public_key(), DAEMON_ROLES)
        )

    # ------------------------------------------------------------------ issuing
    async def issue(
        self, user: str, role: str, lifetime: int, by: str, account: str | None = None
    ) -> tuple[str, dict[str, object]]:
        """A new token for ``user`` (the token, shown once, and its row), recorded first."""
        if self.signer is None:
            raise RequestError("conflict", "this daemon has no signing key", "role")
        if not 0 < lifetime <= LONGEST:
            raise RequestError(
                "invalid", f"expires_in must be between 1 s and {LONGEST // 86400} days",
                "expires_in",
            )  # fmt: skip
        now = self.now()  # the token's iat and the row's issued_at: the same second
        token, claims = self.signer.sign(user, role, now, lifetime, account)
        row: dict[str, object] = {
            "id": claims.token_id, "user": user, "role": role, "account": account,
            "issuer": claims.issuer, "issued_at": now, "expires_at": claims.expires,
            "issued_by": by, "revoked_at": None, "revoked_by": None,
        }  # fmt: skip
        await asyncio.to_thread(self.store.save_token, row)
        return token, row

    async def listing(self) -> list[dict[str, object]]:
        """The issued tokens not yet expired, oldest first."""
        return await asyncio.to_thread(self.store.tokens, self.now())

    async def revoke_others(self, user: str, role: str, keep: str, by: str) -> list[str]:
        """Revoke every active token of ``user`` with ``role`` but ``keep`` (a node's
        older tokens, once it has a new one); the ids revoked."""
        rows = await self.listing()
        older = [str(r["id"]) for r in rows if r["user"] == user and r["role"] == role
                 and r["revoked_at"] is None and r["id"] != keep]  # fmt: skip
        for token_id in older:
            await self.revoke(token_id, by)
        return older

    async def revoke(self, token_id: str, by: str) -> dict[str, object]:
        """Revoke token ``token_id`` (404 if unknown; 409 if already revoked)."""
        row = await asyncio.to_thread(self.store.token, token_id)
        if row is None:
            raise RequestError("not_found", f"no issued token {token_id!r}", "token_id")
        if row["revoked_at"] is not None:
            raise RequestError(
                "conflict", f"token {token_id} was already revoked by {row['revoked_by']}",
                "token_id",
            )  # fmt: skip
        row = {**row, "revoked_at": self.now(), "revoked_by": by}
        await asyncio.to_thread(self.store.save_token, row)
        self._add_revoked({token_id})  # committed: refused here from now on
        return row
