"""Key files for signed tokens: a daemon's or an authd's private key, made on first use,
and the public keys a daemon is told to trust.

A private key is an Ed25519 PEM file of mode 600, made if missing (with its public half
beside it as ``NAME.pub``, to give to the daemons); one that others can read is refused,
as ssh refuses such a key. The daemon's register of issued tokens
(:class:`~berth.service.identity.issued.IssuedTokens`) is built here from the settings.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sqlalchemy.engine import Engine as Database

from berth.runtime.settings import Settings
from berth.service.identity.issued import AUTHD_ROLES, IssuedTokens
from berth.service.identity.signed import (
    Signer,
    TrustedKey,
    key_id,
    load_private,
    load_public,
    new_key,
    private_pem,
    public_pem,
)
from berth.store.credentials import SqlTokens


def private_key(path: Path, issuer: str) -> Signer:
    """The signer of key file ``path``, made (mode 600, and ``path.pub``) if missing."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = new_key()
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(private_pem(key))
        path.with_name(path.name + ".pub").write_text(public_pem(key))
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(f"{path}: a private key others can read (mode {mode & 0o777:o}); "
                         f"chmod 600 {path}")  # fmt: skip
    return Signer(load_private(path.read_bytes()), issuer)


def trusted_keys(paths: str) -> list[TrustedKey]:
    """The authd public keys of ``--trust-keys`` (comma-separated PEM files): each
    vouches for users only."""
    keys = []
    for text in filter(None, (part.strip() for part in paths.split(","))):
        public = load_public(Path(text).expanduser().read_text())
        keys.append(TrustedKey(key_id(public), public, AUTHD_ROLES))
    return keys


def issued_tokens(settings: Settings, database: Database, name: str) -> IssuedTokens:
    """The daemon's register of signed tokens: its key (published for its HA group),
    the authd keys it trusts, the revocations so far."""
    path = settings.token_key or settings.data_dir / "token-key.pem"
    register = IssuedTokens(
        SqlTokens(database), private_key(path, f"berth:{name}"), trusted_keys(settings.trust_keys)
    )
    register.publish_key(name)
    register.refresh()
    return register
