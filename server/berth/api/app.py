"""The app factory: ``create_app(daemon, lifespan)`` builds the FastAPI application.

No import-time globals: everything the routes need hangs off ``app.state.daemon``,
put there by the factory. The runtime passes a lifespan that starts and stops the
coordinator and the scheduler around the app. :func:`openapi_schema` is the same
application's schema without a daemon (the documentation's API reference).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI

from berth.api import errors, ui
from berth.api.deps import Daemon
from berth.api.lean import LeanPaths
from berth.api.limits import BodyLimit, Limits
from berth.api.routes import admin, agents, jobs, partitions, system, tokens

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


@asynccontextmanager
async def _no_lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield


def create_app(daemon: Daemon, lifespan: Lifespan | None = None) -> FastAPI:
    """The daemon's application: every route, answering from ``daemon``."""
    app = _application(lifespan, daemon.limits)
    app.state.daemon = daemon
    return app


def openapi_schema() -> dict[str, Any]:
    """The API's OpenAPI schema, as ``/openapi.json`` serves it, built without a daemon."""
    return _application(None, Limits()).openapi()


def _application(lifespan: Lifespan | None, limits: Limits) -> FastAPI:
    app = FastAPI(
        title="Berth",
        version="0.1.0",
        summary="A resource manager for parallel jobs that makes promises.",
        description=(
            "Submit jobs with K resource requirements, a time limit and an optional "
            "deadline; get a guaranteed start (and completion, for deadline jobs) at "
            'admission. Errors are `{"error": {"code", "message", "field"}}`. '
            "Authenticate with `Authorization: Bearer <token>`."
        ),
        lifespan=lifespan or _no_lifespan,
        # The daemon reports through /metrics and its event stream. FastAPI's own
        # OpenTelemetry hooks asked on every request whether a provider was set up
        # (2-3 % of a submission's CPU); with them off, they never ask.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    errors.install(app)
    app.include_router(jobs.router)
    app.include_router(admin.router)
    app.include_router(system.router)
    app.include_router(agents.router)
    app.include_router(partitions.router)
    app.include_router(tokens.router)
    ui.install(app)
    app.add_middleware(LeanPaths, handlers=jobs.LEAN_PATHS)
    app.add_middleware(BodyLimit, max_bytes=limits.max_body_bytes)
    return app
