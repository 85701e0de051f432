"""What stops ``berth serve`` or ``berth db`` before it answers, as one line.

A database URL SQLAlchemy cannot read or a database it cannot reach, and an address
the daemon cannot listen on, are the operator's to mend: each is one line naming the
setting and what is wrong (the URL with its password hidden), never a traceback. The
listening address is tried before the daemon loads its state, as uvicorn would only
find out after the banner and the tokens were printed.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

_URL_SETTING = "--database-url (BERTH_DATABASE_URL, TOML database_url)"
_HOST_SETTING = "--host (BERTH_HOST, TOML host)"
_PORT_SETTING = "--port (BERTH_PORT, TOML port)"


def shown_url(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def database_problem(error: BaseException, url: str) -> str | None:
    """One line for a SQLAlchemy error met opening the database at ``url``, or
    ``None`` for any other error (a defect, left to show itself)."""
    from sqlalchemy import exc

    if isinstance(error, exc.ArgumentError):
        return (
            f"{_URL_SETTING}: cannot read {shown_url(url)!r} as a database URL; expected "
            "sqlite:///PATH or postgresql://USER@HOST/DB"
        )
    if isinstance(error, exc.SQLAlchemyError):
        cause = getattr(error, "orig", None) or error
        reason = next((line for line in str(cause).splitlines() if line.strip()), "failed")
        return f"cannot use the database {shown_url(url)}: {reason.strip()}"
    return None


def listen_problem(host: str, port: int) -> str | None:
    """Why the daemon could not listen on ``host:port`` (tried with the address reuse
    uvicorn asks for, then released), or ``None``."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        return f"{_HOST_SETTING}: cannot find the address {host!r}: {error.strerror}"
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            return (
                f"{_HOST_SETTING} and {_PORT_SETTING}: cannot listen on {host}:{port}: "
                f"{error.strerror}"
            )
    return None
