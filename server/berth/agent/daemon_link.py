"""The agent's HTTP link to its daemon: one keep-alive connection per thread.

``url`` may list several daemons, comma-separated (high availability): an unreachable
one is left for the next, and a standby's redirect to the leader is followed. A stop
interrupts a request under way (a sync the daemon holds for seconds) by shutting its
socket. Standard library only, as the whole agent.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
from typing import Any
from urllib.parse import urlsplit


class DaemonLink:
    """One keep-alive HTTP connection to the daemon (one per thread). ``url`` may list
    several daemons, comma-separated (high availability): an unreachable one is left
    for the next, and a standby's redirect to the leader is followed."""

    def __init__(self, url: str, token: str) -> None:
        self.targets = [_target(u.strip()) for u in url.split(",") if u.strip()]
        if not self.targets:
            raise ValueError(f"--url must be http(s)://HOST:PORT, got {url!r}")
        self.https, self.host, self.port = self.targets[0]
        self.token = token
        self._connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict[str, Any], timeout: float) -> tuple[int, Any]:
        """``(status, decoded JSON)``; OSError when the daemon cannot be reached."""
        for _ in range(3):  # a redirect or two from standbys to the leader
            status, decoded, location = self._post_once(path, body, timeout)
            if status not in (307, 308) or not location:
                return status, decoded
            self.close()
            self.https, self.host, self.port = _target(location)
        return status, decoded

    def _post_once(
        self, path: str, body: dict[str, Any], timeout: float
    ) -> tuple[int, Any, str | None]:
        if self._connection is None:
            kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            self._connection = kind(self.host, self.port, timeout=timeout)
        self._connection.timeout = timeout
        if self._connection.sock is not None:
            self._connection.sock.settimeout(timeout)
        payload = json.dumps(body).encode()
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
        }
        try:
            self._connection.request("POST", path, payload, headers)
            response = self._connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.close()
            self._next_target()
            raise OSError(str(error)) from error
        try:
            decoded = json.loads(data) if data else None
        except json.JSONDecodeError:
            decoded = {"message": data[:200].decode(errors="replace")}
        return response.status, decoded, response.getheader("Location")

    def _next_target(self) -> None:
        """The next daemon of the list, for the next try."""
        current = (self.https, self.host, self.port)
        index = self.targets.index(current) + 1 if current in self.targets else 0
        self.https, self.host, self.port = self.targets[index % len(self.targets)]

    def interrupt(self) -> None:
        """End the request under way at once (it fails as if the daemon went away):
        the agent is stopping and a held sync may have seconds to go. Safe from a
        signal handler: it shuts the socket, and the request's own thread closes it."""
        connection = self._connection
        sock = connection.sock if connection is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):  # (already closed)
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _target(url: str) -> tuple[bool, str, int]:
    """``(https, host, port)`` of an http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url must be http(s)://HOST:PORT, got {url!r}")
    https = parts.scheme == "https"
    return https, parts.hostname, parts.port or (443 if https else 80)
