"""Hand-written request handling for the hottest route, with FastAPI's contract kept.

FastAPI solves a route's dependencies (the daemon, the caller's token, headers, the
body) through a general machinery that, for a submission, costs about as much CPU as
admitting and planning the job. :func:`lean_route` makes a route class whose OpenAPI
description still comes from the endpoint's signature, as for any route, but whose
request is handled by a given function: it reads what the endpoint's signature asks
for by hand (:func:`~berth.api.deps.person`, :func:`json_body`, :func:`header`) and
calls the same endpoint. Errors keep their shape: a body that fails validation raises
FastAPI's own :class:`RequestValidationError` with the same locations and wording, so
the 422 names the same field as it does on every other route.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def lean_route(handler: Handler) -> type[APIRoute]:
    """A route class that hands every request to ``handler`` (OpenAPI as usual)."""

    class LeanRoute(APIRoute):
        def get_route_handler(self) -> Handler:
            return handler

    return LeanRoute


class LeanPaths:
    """ASGI middleware: a request for a lean route goes straight to its handler.

    The router matches a request against each route in turn and then passes it through
    ten more layers (exception middleware, exit stacks, the included routers): 19 µs of
    the 34 a refused submit took through the whole ASGI app. Here a lean route is found
    by its method and path in a dict. An exception from the handler is answered by the application's own handler
    for it, found as Starlette finds it (the nearest class in the exception's MRO), so
    the answer is the same as through the router. Added inside :class:`BodyLimit`,
    which still sees every request first. The routes stay in the router too, for the
    OpenAPI description (and for a daemon served under a root path)."""

    def __init__(self, app: ASGIApp, handlers: Mapping[tuple[str, str], Handler]) -> None:
        self.app = app
        #: ``(method, path)`` -> handler; fixed paths only.
        self.handlers = dict(handlers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            handler = self.handlers.get((scope["method"], scope["path"]))
            if handler is not None:
                request = Request(scope, receive, send)
                try:
                    response = await handler(request)
                except Exception as error:
                    response = await _handled(request, error)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _handled(request: Request, error: Exception) -> Response:
    """The application's answer to ``error`` from its exception handlers."""
    handlers = request.app.exception_handlers
    for kind in type(error).__mro__:
        handler = handlers.get(kind)
        if handler is not None:
            answer: Response = await handler(request, error)
            return answer
    raise error


def header(request: Request, name: str, max_length: int) -> str | None:
    """An optional header, 422 naming it when longer than ``max_length``."""
    value = request.headers.get(name)
    if value is not None and len(value) > max_length:
        raise RequestValidationError(
            [{"type": "string_too_long", "loc": ("header", name),
              "msg": f"String should have at most {max_length} characters"}]
        )  # fmt: skip
    return value


async def json_body(request: Request, model: type[M]) -> M:
    """The body as ``model``: 422 naming the field for a body that is not JSON, not the
    model, or sent without a JSON ``Content-Type``."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    raw = await request.body()
    if not raw:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("body",), "msg": "Field required"}]
        )
    document: Any = raw  # not JSON by its type: validated as the bytes, as FastAPI does
    if kind == "application/json" or kind.endswith("+json"):
        try:
            document = json.loads(raw)
        except json.JSONDecodeError as error:  # as FastAPI words it: where in the text
            raise RequestValidationError(
                [{"type": "json_invalid", "loc": ("body", error.pos), "msg": "JSON decode error"}]
            ) from None
        except UnicodeDecodeError:
            raise RequestValidationError(
                [{"type": "json_invalid", "loc": ("body",), "msg": "JSON decode error"}]
            ) from None
    try:
        # From Python objects, not model_validate_json: pydantic words some errors
        # differently for JSON input, and the messages must match every other route's
        # (FastAPI validates with ``from_attributes``).
        return model.model_validate(document, from_attributes=True)
    except ValidationError as error:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
        ) from None
