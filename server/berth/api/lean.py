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
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def lean_route(handler: Handler) -> type[APIRoute]:
    """A route class that hands every request to ``handler`` (OpenAPI as usual)."""

    class LeanRoute(APIRoute):
        def get_route_handler(self) -> Handler:
            return handler

    return LeanRoute


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
