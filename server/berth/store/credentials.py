"""The identity tables through SQLAlchemy Core: issued tokens, revocations, public keys.

:class:`SqlTokens` is the :class:`~berth.service.ports.TokenStore` of a daemon (leader or
standby: a standby reads the revocations too, so a revoked token is refused on every
daemon of an HA group). Writes are rare (an operator's command) and each is its own
transaction; the engine's batches are not involved.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from berth.store.tables import TOKEN_KEYS, TOKENS


class SqlTokens:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def save_token(self, row: dict[str, object]) -> None:
        """Insert a token's row, or update it (its revocation)."""
        with self._engine.begin() as connection:
            known = connection.execute(
                sa.select(TOKENS.c.id).where(TOKENS.c.id == row["id"])
            ).first()
            if known is None:
                connection.execute(TOKENS.insert().values(**row))
            else:
                connection.execute(TOKENS.update().where(TOKENS.c.id == row["id"]).values(**row))

    def token(self, token_id: str) -> dict[str, object] | None:
        with self._engine.connect() as connection:
            found = connection.execute(sa.select(TOKENS).where(TOKENS.c.id == token_id)).first()
        return None if found is None else dict(found._mapping)

    def tokens(self, alive_at: int) -> list[dict[str, object]]:
        """The tokens not yet expired at ``alive_at``, oldest first."""
        query = sa.select(TOKENS).where(TOKENS.c.expires_at > alive_at).order_by(TOKENS.c.issued_at)
        with self._engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]

    def revoked(self, alive_at: int) -> set[str]:
        """The ids of revoked tokens that have not expired by ``alive_at`` (an expired
        one is refused for its expiry anyway)."""
        query = sa.select(TOKENS.c.id).where(
            TOKENS.c.revoked_at.is_not(None), TOKENS.c.expires_at > alive_at
        )
        with self._engine.connect() as connection:
            return {str(row[0]) for row in connection.execute(query)}

    def save_key(self, row: dict[str, object]) -> None:
        """A public key to accept tokens from (kept if already known)."""
        with self._engine.begin() as connection:
            known = connection.execute(
                sa.select(TOKEN_KEYS.c.id).where(TOKEN_KEYS.c.id == row["id"])
            ).first()
            if known is None:
                connection.execute(TOKEN_KEYS.insert().values(**row))

    def public_keys(self) -> list[dict[str, object]]:
        with self._engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(sa.select(TOKEN_KEYS))]
