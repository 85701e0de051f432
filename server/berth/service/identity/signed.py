"""Signed, expiring bearer tokens: JSON Web Tokens with Ed25519 signatures (EdDSA).

A token names its user (``sub``), role, account (``acct``, for account coordinators),
who signed it (``iss``: ``berth:<daemon>`` or ``authd:<host>``), the key (``kid`` in the
header), its audience (``berth``), when it was issued and when it expires, and an id
(``jti``) that revocation names. :class:`Signer` makes them with a private key;
:class:`Verifier` accepts a token only if a key it trusts signed it, for this
audience, not expired, not revoked, and with a role that key may vouch for: a login
node's ``authd`` key vouches for users only, so a stolen login-node key never makes an
operator. Asymmetric on purpose: a daemon or a login node holds its private key alone,
and the daemons need only the public halves. Time is an argument (wall seconds).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from berth.service.model import RequestError, moment

#: The audience every Berth token is for.
AUDIENCE = "berth"
#: Roles a token may carry (``node``: a node agent's token).
ROLES = ("user", "viewer", "coordinator", "operator", "node")


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says."""

    user: str
    role: str
    expires: int
    token_id: str
    issuer: str
    account: str | None = None


@dataclass(frozen=True, slots=True)
class TrustedKey:
    """A public key the daemon accepts tokens from, and the roles it may vouch for."""

    key_id: str
    public: Ed25519PublicKey
    roles: frozenset[str]


def looks_signed(token: str) -> bool:
    """A JSON Web Token (three base64url parts, the header a JSON object), not one of
    the configured static tokens (``berth-KIND-...``)."""
    return token.startswith("eyJ") and token.count(".") == 2


def new_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    data = public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return data.decode()


def load_private(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 private key (make one with berth authd --key FILE)")
    return key


def load_public(pem: str) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(pem.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def key_id(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """A short name for a key pair, from its public half (the same on every host)."""
    return hashlib.sha256(public_pem(key).encode()).hexdigest()[:16]


class Signer:
    """Makes tokens with one private key, as ``issuer``."""

    def __init__(self, key: Ed25519PrivateKey, issuer: str) -> None:
        self.key = key
        self.key_id = key_id(key)
        self.issuer = issuer

    def sign(
        self,
        user: str,
        role: str,
        now: int,
        lifetime: int,
        account: str | None = None,
        token_id: str | None = None,
    ) -> tuple[str, Claims]:
        """A token for ``user`` with ``role``, valid from ``now`` for ``lifetime`` s."""
        claims = Claims(
            user, role, now + lifetime, token_id or secrets.token_urlsafe(12), self.issuer, account
        )
        payload: dict[str, object] = {
            "sub": user, "role": role, "aud": AUDIENCE, "iss": self.issuer, "iat": now,
            "exp": claims.expires, "jti": claims.token_id,
        }  # fmt: skip
        if account is not None:
            payload["acct"] = account
        token = jwt.encode(payload, self.key, algorithm="EdDSA", headers={"kid": self.key_id})
        return token, claims


class Verifier:
    """Accepts the tokens that a trusted key signed (:meth:`claims`)."""

    def __init__(self, keys: Collection[TrustedKey] = ()) -> None:
        self.trusted: dict[str, TrustedKey] = {key.key_id: key for key in keys}

    def trust(self, key: TrustedKey) -> None:
        self.trusted[key.key_id] = key

    def claims(
        self, token: str, now: int, revoked: Mapping[str, object] | Collection[str]
    ) -> Claims:
        """What ``token`` says, if it is to be believed at ``now``; else 401 saying why
        (unknown key, bad signature, expired at a time, revoked, a role its key may not
        vouch for)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise _refused("malformed signed token") from None
        trusted = self.trusted.get(str(header.get("kid")))
        if trusted is None or header.get("alg") != "EdDSA":
            raise _refused("token signed by a key this daemon does not trust")
        try:
            payload = jwt.decode(
                token,
                trusted.public,
                algorithms=["EdDSA"],
                audience=AUDIENCE,
                # Time is ours to give (``now``): the library would read the clock.
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                    "require": ["sub", "exp", "jti", "role"],
                },
            )
        except jwt.InvalidTokenError as error:
            raise _refused(f"invalid signed token: {error}") from None
        expires = int(payload["exp"])
        if expires <= now:
            raise _refused(f"token expired at {moment(expires)}", "expired")
        token_id, role = str(payload["jti"]), str(payload["role"])
        if token_id in revoked:
            raise _refused(f"token {token_id} was revoked", "revoked")
        if role not in trusted.roles:
            raise _refused(f"key {trusted.key_id} may not vouch for role {role!r}")
        account = payload.get("acct")
        return Claims(
            str(payload["sub"]),
            role,
            expires,
            token_id,
            str(payload.get("iss", "")),
            None if account is None else str(account),
        )


def _refused(message: str, reason: str = "invalid") -> RequestError:
    return RequestError("unauthorized", message, "authorization", {"reason": reason})
