"""Signed tokens on their own: what a verifier believes, and the register of issued
tokens on a real SQLite file (issue, list, revoke, and a second daemon's view)."""

from __future__ import annotations

import asyncio
from collections.abc import Set as AbstractSet
from pathlib import Path

import pytest

from berth.service.identity.issued import AUTHD_ROLES, DAEMON_ROLES, IssuedTokens
from berth.service.identity.signed import Signer, TrustedKey, Verifier, key_id, new_key
from berth.service.model import RequestError
from berth.store.credentials import SqlTokens
from berth.store.migrate import upgrade
from berth.store.tables import create_db_engine

NOW = 1_800_000_000


def _trusted(signer: Signer, roles: frozenset[str]) -> TrustedKey:
    return TrustedKey(signer.key_id, signer.key.public_key(), roles)


def _refusal(
    verifier: Verifier, token: str, now: int = NOW, revoked: AbstractSet[str] | None = None
) -> str:
    with pytest.raises(RequestError) as refused:
        verifier.claims(token, now, revoked or set())
    assert refused.value.code == "unauthorized"
    return refused.value.message


def test_a_token_is_believed_until_it_expires_or_is_revoked() -> None:
    daemon = Signer(new_key(), "berth:a")
    verifier = Verifier([_trusted(daemon, DAEMON_ROLES)])
    token, claims = daemon.sign("carol", "coordinator", NOW, 60, account="phys")
    believed = verifier.claims(token, NOW + 59, set())
    assert (believed.user, believed.role, believed.account) == ("carol", "coordinator", "phys")
    assert believed.token_id == claims.token_id
    assert _refusal(verifier, token, NOW + 60).startswith("token expired at 2027-01-15")
    assert _refusal(verifier, token, revoked={claims.token_id}).endswith("was revoked")


def test_a_login_nodes_key_vouches_for_users_only_and_unknown_keys_for_nobody() -> None:
    authd, stranger = Signer(new_key(), "authd:login1"), Signer(new_key(), "authd:x")
    verifier = Verifier([_trusted(authd, AUTHD_ROLES)])
    user_token, _ = authd.sign("alice", "user", NOW, 3600)
    assert verifier.claims(user_token, NOW, set()).user == "alice"
    operator_token, _ = authd.sign("alice", "operator", NOW, 3600)
    assert "may not vouch for role 'operator'" in _refusal(verifier, operator_token)
    foreign, _ = stranger.sign("alice", "user", NOW, 3600)
    assert "does not trust" in _refusal(verifier, foreign)
    assert key_id(authd.key) == key_id(authd.key.public_key())  # a pair's one name


def _register(path: Path, signer: Signer | None) -> IssuedTokens:
    url = f"sqlite:///{path}"
    upgrade(url)
    return IssuedTokens(SqlTokens(create_db_engine(url)), signer, wall=lambda: NOW)


def test_the_register_issues_lists_and_revokes_for_every_daemon_of_the_database(
    tmp_path: Path,
) -> None:
    leader = _register(tmp_path / "berth.db", Signer(new_key(), "berth:a"))
    leader.publish_key("a")
    other = _register(tmp_path / "berth.db", None)  # a standby of the same database
    token, row = asyncio.run(leader.issue("carol", "viewer", 3600, "admin"))
    assert "token" not in row  # never stored
    other.refresh()  # it learns the leader's key and the revocations from the database
    assert other.claims(token).user == "carol"
    listed = asyncio.run(other.listing())
    assert [(r["user"], r["issued_by"], r["revoked_at"]) for r in listed] == [
        ("carol", "admin", None)
    ]
    asyncio.run(leader.revoke(str(row["id"]), "admin"))
    assert "was revoked" in _refusal(leader.verifier, token, revoked=leader.revoked)
    other.refresh()
    with pytest.raises(RequestError, match="was revoked"):
        other.claims(token)
    with pytest.raises(RequestError, match="already revoked by admin"):
        asyncio.run(leader.revoke(str(row["id"]), "admin"))
    with pytest.raises(RequestError) as unknown:
        asyncio.run(leader.revoke("nope", "admin"))
    assert unknown.value.field == "token_id"
