"""High availability: several ``berth serve --ha`` on one PostgreSQL, one of them leads.

A daemon starts as a *standby*: it answers ``/healthz`` with its role and the leader's
URL, and every other request with ``307 Temporary Redirect`` to the same path on the
leader (307 keeps the method and body, so a submit or an agent's sync is simply sent
again there; 503 while no daemon leads). Redirecting rather than proxying keeps a
standby free of state: it never answers from data that might be stale. Every third of
a lease it tries to take the lease (:mod:`berth.store.lease`). Once it leads, it stops
the standby server, builds the daemon from what the database holds (the same path as a
restart after a crash) with every write fenced by its epoch, and serves on the same
port, renewing the lease every third of its length.

A leader that cannot renew its lease for a whole lease, whose write is refused because
another daemon took over (:class:`~berth.store.lease.Fenced`), or whose store failed
(the database restarted under it) stops at once (exit status 3): it may have been paused or cut off, and only a fresh start as a
standby is safe. Run each daemon under a supervisor that restarts it (systemd
``Restart=always``, see ``deploy/``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, NoReturn

import uvicorn

from berth.runtime.keys import trusted_keys
from berth.runtime.settings import Settings
from berth.runtime.web_server import DaemonServer, server_config
from berth.service.identity.issued import IssuedTokens
from berth.service.identity.signed import looks_signed
from berth.service.model import RequestError
from berth.store.credentials import SqlTokens
from berth.store.lease import Fenced, Lease
from berth.store.migrate import upgrade
from berth.store.tables import create_db_engine

if TYPE_CHECKING:
    from berth.runtime.bootstrap import Built

log = logging.getLogger("berth.ha")

#: Exit status of a leader that stepped down (lost its lease or was fenced).
STEPPED_DOWN = 3

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Standby:
    """The ASGI app of a standby: its health, and redirects to the leader. A signed
    token that is expired, revoked or not trusted is refused here (401) rather than
    sent on: a revocation holds on every daemon of the group."""

    def __init__(self, holder: str, register: IssuedTokens | None = None) -> None:
        self.holder = holder
        self.leader_url: str | None = None
        self.register = register

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].replace(".startup", ".startup.complete")
                await send({"type": kind.replace(".shutdown", ".shutdown.complete")})
                if message["type"] == "lifespan.shutdown":
                    return
        if scope["type"] != "http":
            return
        path = scope["path"] + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        refused = None if scope["path"] == "/healthz" else self._refused(scope)
        if scope["path"] == "/healthz":
            body = {"status": "standby", "daemon": self.holder, "leader": self.leader_url}
            await _answer(send, 200, body)
        elif refused is not None:
            error = {"code": "unauthorized", "message": refused.message, "field": refused.field}
            await _answer(send, 401, {"error": error}, ((b"www-authenticate", b"Bearer"),))
        elif self.leader_url is None:
            error = {"code": "unavailable", "message": "no daemon leads yet; retry shortly",
                     "field": None}  # fmt: skip
            await _answer(send, 503, {"error": error}, ((b"retry-after", b"1"),))
        else:
            location = self.leader_url.rstrip("/") + path
            error = {"code": "redirect", "message": f"this daemon is a standby; the leader is "
                     f"{self.leader_url}", "field": None}  # fmt: skip
            await _answer(send, 307, {"error": error}, ((b"location", location.encode()),))

    def _refused(self, scope: Scope) -> RequestError | None:
        """Why the request's signed bearer token is not to be believed, if it is not."""
        if self.register is None:
            return None
        headers = dict(scope.get("headers") or [])
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not looks_signed(token.strip()):
            return None  # a static token: the leader checks it
        try:
            self.register.claims(token.strip())
        except RequestError as refusal:
            return refusal
        return None


async def _answer(
    send: Send, status: int, body: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    data = json.dumps(body).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode()), *headers],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": data})


def run_ha(settings: Settings) -> int:
    """Serve as one of several daemons: standby until this one leads, then the daemon.
    On the event loop uvicorn picks for a single daemon (uvloop where installed): with
    asyncio's own, a leader took 1.03x to 1.29x as long per submission (bench_api on
    PostgreSQL, three alternating pairs)."""
    loop_factory = uvicorn.Config(app="berth").get_loop_factory()
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(_run(settings))


async def _run(settings: Settings) -> int:
    # The daemon's stack (two seconds of imports) is loaded while this one is a
    # standby, not after it takes the lease: a takeover then only loads the state.
    from berth.runtime.bootstrap import build

    url = settings.url()
    await asyncio.to_thread(upgrade, url)
    database = create_db_engine(url)
    holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    advertise = settings.advertise_url or f"http://{settings.host}:{settings.port}"
    lease = Lease(database, holder, advertise, settings.lease_seconds)
    register = IssuedTokens(SqlTokens(database), None, trusted_keys(settings.trust_keys))
    standby = Standby(holder, register)
    revocations = asyncio.create_task(register.keep_fresh())
    server = uvicorn.Server(server_config(standby, settings))  # (no stream to end)
    serving = asyncio.create_task(server.serve())
    log.info("daemon %s on %s: standby, waiting to lead", holder, advertise)
    period = settings.lease_seconds / 3
    while True:
        try:
            leadership = await asyncio.to_thread(lease.try_acquire)
        except Exception as error:  # the database is down: stay a standby, try again
            log.warning("cannot reach the database to take the lease: %s", error)
            standby.leader_url = None
        else:
            if leadership.holder == holder:
                break
            standby.leader_url = leadership.url
        if serving.done():
            return 1  # the standby server failed (port taken ...)
        await asyncio.sleep(period)
    server.should_exit = True
    await serving
    revocations.cancel()
    return await _lead(settings, lease, advertise, build)


async def _lead(
    settings: Settings, lease: Lease, advertise: str, build: Callable[..., Built]
) -> int:
    began = time.monotonic()
    # The lease is renewed while the state loads: a center's database takes longer to
    # load than a lease lasts, and a standby would take over meanwhile (and lose it the
    # same way, in turn).
    loading_guard = asyncio.create_task(_keep_leading(lease, _no_failure, settings))
    loading = asyncio.create_task(asyncio.to_thread(build, settings, None, lease))
    await asyncio.wait({loading_guard, loading}, return_when=asyncio.FIRST_COMPLETED)
    if loading_guard.done():
        _step_down(lease, loading_guard.result())
    loading_guard.cancel()
    built = await loading
    log.info(
        "daemon %s leads (epoch %d) on %s; took %.2f s to load",
        lease.holder, lease.epoch, advertise, time.monotonic() - began,
    )  # fmt: skip
    if built.tokens_note:
        print(built.tokens_note, flush=True)
    server = DaemonServer(server_config(built.app, settings), built.daemon)
    coordinator = built.daemon.coordinator
    guard = asyncio.create_task(_keep_leading(lease, lambda: coordinator.failed, settings))
    serving = asyncio.create_task(server.serve())
    done, _ = await asyncio.wait({guard, serving}, return_when=asyncio.FIRST_COMPLETED)
    if guard in done:
        _step_down(lease, guard.result())
    guard.cancel()
    return 0


def _step_down(lease: Lease, why: str) -> NoReturn:
    """Lost the lease or fenced: stop at once; nothing more may leave this process."""
    log.error("daemon %s steps down: %s", lease.holder, why)
    logging.shutdown()  # the line is out before the process ends
    os._exit(STEPPED_DOWN)


def _no_failure() -> BaseException | None:
    return None  # (while the state loads, no store has failed yet)


async def _keep_leading(
    lease: Lease, store_failure: Callable[[], BaseException | None], settings: Settings
) -> str:
    """Renew the lease every third of it; return why leading must stop (the lease lost,
    or ``store_failure()``: a write refused or the store failed)."""
    period = settings.lease_seconds / 3
    renewed = time.monotonic()
    while True:
        await asyncio.sleep(period)
        failed = store_failure()
        if isinstance(failed, Fenced):
            return f"a write was refused: {failed}"
        if failed is not None:  # it cannot recover in place; a fresh start can
            return f"the store failed: {failed}"
        try:
            if not await asyncio.to_thread(lease.renew):
                return "the lease was taken by another daemon"
            renewed = time.monotonic()
        except Exception as error:
            log.warning("renewing the lease failed: %s", error)
            if time.monotonic() - renewed > settings.lease_seconds:
                return f"the lease could not be renewed for {settings.lease_seconds:g} s"
