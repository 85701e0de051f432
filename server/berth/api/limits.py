"""Request limits: the largest body the daemon reads, and submits per token per second.

``BodyLimit`` answers 413 before the application sees a body over the limit: at once
when ``Content-Length`` says so, and for a chunked body (no length) as soon as what has
arrived passes it; the body is read into memory only up to the limit. ``SubmitRate`` is
a token bucket per principal (``rate`` jobs a second, ``burst`` at once); a submit over
it answers 429 with ``Retry-After``. Operators are not limited: the limit protects the
daemon from a user's runaway loop, not from its operators.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from berth.api.errors import envelope
from berth.api.principals import Principal
from berth.service.model import RequestError


@dataclass(frozen=True, slots=True)
class Limits:
    """The daemon's request limits (``docs/daemon.md`` lists each with its default)."""

    max_body_bytes: int = 1 << 20
    #: Jobs a second one user token may submit (0: no limit), and the burst above it.
    submit_rate: float = 100.0
    submit_burst: int = 1000


@dataclass(slots=True)
class SubmitRate:
    """A token bucket per user: ``take(who)`` refuses with 429 when the bucket is empty."""

    rate: float
    burst: int
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def take(self, who: Principal) -> None:
        if self.rate <= 0 or who.operator:
            return
        now = self.clock()
        level, then = self._buckets.get(who.user, (float(self.burst), now))
        level = min(float(self.burst), level + (now - then) * self.rate)
        if level < 1.0:
            wait = math.ceil((1.0 - level) / self.rate)
            self._buckets[who.user] = (level, now)
            raise RequestError(
                "rate_limited",
                f"more than {self.rate:g} submits a second (burst {self.burst}) from "
                f"{who.user!r}; retry in {wait} s",
                "Authorization",
                {"retry_after": wait},
            )
        self._buckets[who.user] = (level - 1.0, now)


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        if b"chunked" not in headers.get(b"transfer-encoding", b""):
            await self.app(scope, receive, send)
            return
        # Chunked: read up to the limit, then hand the application what was read.
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            parts.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": b"".join(parts)}]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes"
        await envelope(413, "too_large", message, "body")(scope, receive, send)
