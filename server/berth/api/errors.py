"""One error shape for every failure: ``{"error": {"code", "message", "field"}}``.

``RequestError`` codes map to statuses (invalid 422, not_found 404, conflict 409,
forbidden 403, unauthorized 401); request validation errors name the offending field
as a dotted path (``resources.cpus``) with pydantic's message and the limit. A 4xx
always names what to fix: a body field, a query parameter, ``Authorization`` (the
token), ``path`` or ``method``.

A failure inside the daemon (the store failing, a bug) never answers with its detail,
which can quote SQL, its parameters (another job's fields) or a traceback: the detail
goes to the log under a fresh correlation id, and the answer carries only the id.
"""

from __future__ import annotations

import logging
import secrets

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from berth.service.model import RequestError
from berth.service.writes import StoreUnavailable

log = logging.getLogger("berth.api")

STATUS = {
    "invalid": 422,
    "not_found": 404,
    "conflict": 409,
    "forbidden": 403,
    "unauthorized": 401,
    "rate_limited": 429,
}


def envelope(
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    extra: dict[str, object] | None = None,
) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if extra and "retry_after" in extra:
        headers = {"Retry-After": str(extra["retry_after"])}
    return JSONResponse(
        {"error": {"code": code, "message": message, "field": field, **(extra or {})}},
        status_code=status,
        headers=headers,
    )


def incident(summary: str, detail: object, exc_info: BaseException | None = None) -> str:
    """Log ``detail`` under a fresh correlation id, which is returned for the answer."""
    correlation = secrets.token_hex(6)
    log.error("%s [correlation id %s]: %s", summary, correlation, detail, exc_info=exc_info)
    return correlation


#: What a 4xx without a field of its own is about.
DEFAULT_FIELD = {
    400: "body",
    401: "Authorization",
    403: "Authorization",
    404: "path",
    405: "method",
}


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestError)
    async def _request_error(_: Request, error: RequestError) -> JSONResponse:
        status = STATUS.get(error.code, 400)
        field = error.field or DEFAULT_FIELD.get(status)
        return envelope(status, error.code, error.message, field, error.extra)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, error: RequestValidationError) -> JSONResponse:
        first = error.errors()[0]
        location = [
            str(part)
            for part in first.get("loc", ())
            if part not in ("body", "query", "path", "header")
        ]
        where = first.get("loc", ("body",))
        field = ".".join(location) or (str(where[0]) if where else "body")
        message = f"{field}: {first.get('msg', 'invalid request')}"
        return envelope(422, "invalid", message, field)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        code = {
            400: "invalid",
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            405: "method_not_allowed",
        }.get(error.status_code, "error")
        field = DEFAULT_FIELD.get(error.status_code)
        return envelope(error.status_code, code, str(error.detail), field)

    @app.exception_handler(StoreUnavailable)
    async def _store(request: Request, error: StoreUnavailable) -> JSONResponse:
        correlation = incident(f"{request.method} {request.url.path}: store unavailable", error)
        message = f"{error.public} (the daemon's log has the detail under id {correlation})"
        return envelope(503, "unavailable", message, extra={"correlation_id": correlation})

    @app.exception_handler(Exception)
    async def _bug(request: Request, error: Exception) -> JSONResponse:
        correlation = incident(f"{request.method} {request.url.path} failed", repr(error), error)
        message = f"internal error (the daemon's log has the detail under id {correlation})"
        return envelope(500, "internal", message, extra={"correlation_id": correlation})
