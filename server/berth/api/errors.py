"""One error shape for every failure: ``{"error": {"code", "message", "field"}}``.

``RequestError`` codes map to statuses (invalid 422, not_found 404, conflict 409,
forbidden 403, unauthorized 401); request validation errors name the offending field
as a dotted path (``resources.cpus``) with pydantic's message and the limit.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from berth.service.coordinator import StoreUnavailable
from berth.service.model import RequestError

STATUS = {"invalid": 422, "not_found": 404, "conflict": 409, "forbidden": 403, "unauthorized": 401}


def envelope(
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    extra: dict[str, object] | None = None,
) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(
        {"error": {"code": code, "message": message, "field": field, **(extra or {})}},
        status_code=status,
        headers=headers,
    )


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestError)
    async def _request_error(_: Request, error: RequestError) -> JSONResponse:
        return envelope(
            STATUS.get(error.code, 400), error.code, error.message, error.field, error.extra
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, error: RequestValidationError) -> JSONResponse:
        first = error.errors()[0]
        location = [
            str(part)
            for part in first.get("loc", ())
            if part not in ("body", "query", "path", "header")
        ]
        field = ".".join(location) or None
        message = first.get("msg", "invalid request")
        if field:
            message = f"{field}: {message}"
        return envelope(422, "invalid", message, field)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, error: HTTPException) -> JSONResponse:
        code = {
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            405: "method_not_allowed",
        }.get(error.status_code, "error")
        return envelope(error.status_code, code, str(error.detail))

    @app.exception_handler(StoreUnavailable)
    async def _store(_: Request, error: StoreUnavailable) -> JSONResponse:
        return envelope(503, "unavailable", str(error))
