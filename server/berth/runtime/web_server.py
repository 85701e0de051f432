"""The web server a daemon runs: uvicorn's configuration, and a server that ends the
requests that would hold its shutdown.

Agents' syncs are held open until their node's wish changes, and event streams
(``GET /v1/events``: the dashboard, ``berth`` clients) stay open for good; uvicorn
waits for open requests when it stops, so a daemon with one dashboard open took its
whole graceful-shutdown time (5 s) to stop and then logged an error as it cancelled
the stream. :class:`DaemonServer` answers the syncs and ends the streams as soon as
the shutdown begins, in the event loop.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

import uvicorn

from berth.runtime.logs import quiet_web_server
from berth.runtime.settings import Settings

if TYPE_CHECKING:
    from berth.api.deps import Daemon


class DaemonServer(uvicorn.Server):
    """uvicorn's server for a daemon's app: at shutdown, first the held syncs are
    answered and the event streams ended (:meth:`Daemon.end_long_requests`)."""

    def __init__(self, config: uvicorn.Config, daemon: Daemon) -> None:
        super().__init__(config)
        self.daemon = daemon

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.daemon.end_long_requests()
        await super().shutdown(sockets=sockets)


def server_config(app: Any, settings: Settings) -> uvicorn.Config:
    """uvicorn's configuration for a daemon (single or one of an HA group)."""
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        # Its records go to the daemon's log (berth.runtime.logs), in its format.
        log_config=None,
        log_level=settings.log_level,
        # One line per request (agents sync every few seconds) buries what happens:
        # off unless asked for.
        access_log=settings.access_log,
        lifespan="on",
        # Held syncs and event streams end as the shutdown begins (DaemonServer);
        # any other request still open is not waited for past this.
        timeout_graceful_shutdown=5,
    )
    quiet_web_server(settings.log_level)
    return config
