"""Tokens from the login node's ``berth authd``, for users who set no ``BERTH_TOKEN``.

:func:`login_token` asks authd on its Unix socket (``$BERTH_AUTHD_SOCKET``, default
``/run/berth/authd.sock``) for a token for whoever runs this process (authd learns it
from the kernel, not from us), and keeps it in ``~/.cache/berth/`` (mode 600) until a
minute before it expires, so each command does not ask again. Standard library only;
what each function needs is imported when it runs (``berth --help`` reads
:data:`DEFAULT_SOCKET` from here, and must start fast).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_SOCKET = "/run/berth/authd.sock"
#: A cached token this close to its expiry (seconds) is renewed first.
RENEW_BEFORE = 60


def socket_path() -> str:
    return os.environ.get("BERTH_AUTHD_SOCKET") or DEFAULT_SOCKET


def _cache(path: str) -> Path:
    import hashlib

    name = hashlib.sha256(f"{os.getuid()}:{path}".encode()).hexdigest()[:12]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "berth" / f"authd-{name}.json"


def login_token(path: str | None = None, renew: bool = False) -> str | None:
    """A token for this process's user from authd at ``path`` (cached unless ``renew``);
    ``None`` when no authd listens there."""
    import json
    import time

    path = path or socket_path()
    cache = _cache(path)
    if not renew:
        try:
            kept = json.loads(cache.read_text())
            if int(kept["expires_at"]) - time.time() > RENEW_BEFORE:
                return str(kept["token"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # none kept, or unreadable: ask authd
    answer = ask_authd(path)
    if answer is None:
        return None
    try:
        cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(cache, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump({"token": answer["token"], "expires_at": answer["expires_at"]}, out)
    except OSError:
        pass  # no writable home (a service account): ask again next time
    return str(answer["token"])


def ask_authd(path: str, timeout: float = 5.0) -> dict[str, object] | None:
    """authd's answer (``token``, ``user``, ``expires_at``); ``None`` if none listens;
    ``OSError`` naming its refusal."""
    import json
    import socket

    if not os.path.exists(path):
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None  # a socket left behind by an authd that is not running
        connection.sendall(b"{}\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data or b"{}")
    if "token" not in answer:
        raise OSError(f"berth authd at {path} refused: {answer.get('error', 'no answer')}")
    return dict(answer)
