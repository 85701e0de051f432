"""Who a bearer token speaks for, and the static tokens of the configuration.

A :class:`Principal` is a user with a :class:`Role` (and, for a coordinator, an
account); what each role may see and change is in :mod:`berth.api.auth`. The static
tokens an operator configures (``--tokens``, ``tokens_file``) are read here into a table
of SHA-256 digests (:func:`parse_tokens`). This module imports nothing heavy, so ``berth
serve`` checks a mistyped token entry with the rest of its settings, before it loads the
web stack.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from enum import StrEnum

from berth.service.model import RequestError


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
            raise ValueError(f"token entries are TOKEN:USER[:ROLE], got {_hidden(item)!r}")
        if hashed and (len(token) != 64 or any(c not in "0123456789abcdef" for c in token)):
            raise ValueError(f"a sha256: entry needs 64 lowercase hex digits, got {token!r}")
        try:
            table[token if hashed else digest(token)] = Principal(user, Role(role or "user"))
        except ValueError:
            known = ", ".join(repr(r.value) for r in Role)
            raise ValueError(f"role must be one of {known}, got {role!r}") from None
    return table


#: How much of a malformed token entry an error shows (it may be a secret token alone).
SHOWN_OF_ENTRY = 6


def _hidden(entry: str) -> str:
    """A malformed entry as an error shows it: a long one cut to its first characters,
    since a token given without its user is the secret itself, and the error goes to
    the terminal and the service's log."""
    if len(entry) <= SHOWN_OF_ENTRY + 2:
        return entry
    return f"{entry[:SHOWN_OF_ENTRY]}... ({len(entry)} characters)"
