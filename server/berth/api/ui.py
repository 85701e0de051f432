"""The dashboard at ``/ui``: the files of the ``berth_ui`` package, with security headers.

Only files that exist in the package when the daemon starts are served (a fixed table,
so no path from a request ever reaches the file system). Every answer under ``/ui``
carries a strict Content-Security-Policy (scripts, styles and connections to this origin
only; no inline script, no framing), ``nosniff``, no referrer, and ``no-store`` for the
page itself. The token never appears in a URL: the page keeps it in session storage and
sends it in the ``Authorization`` header, the event stream included (read with
``fetch``, not ``EventSource``, which cannot send headers).
"""

from __future__ import annotations

import mimetypes
from importlib import resources
from importlib.resources.abc import Traversable

from fastapi import APIRouter, FastAPI
from fastapi.responses import RedirectResponse, Response

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}


def _assets() -> dict[str, tuple[bytes, str]]:
    """Every file under ``berth_ui/static`` as ``relative path -> (bytes, media type)``."""
    try:
        root = resources.files("berth_ui") / "static"
    except ModuleNotFoundError:
        return {}
    found: dict[str, tuple[bytes, str]] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item, f"{prefix}{item.name}/")
            elif not item.name.startswith("."):
                suffix = "." + item.name.rsplit(".", 1)[-1]
                kind = TYPES.get(suffix) or mimetypes.guess_type(item.name)[0]
                found[prefix + item.name] = (item.read_bytes(), kind or "application/octet-stream")

    walk(root, "")
    return found


def install(app: FastAPI) -> None:
    """Serve the dashboard under ``/ui`` (``/ui`` itself is the page)."""
    assets = _assets()
    router = APIRouter(include_in_schema=False)

    def answer(path: str) -> Response:
        found = assets.get(path)
        if found is None:
            return Response("not found", status_code=404, headers=SECURITY_HEADERS)
        body, kind = found
        cache = "no-store" if path == "index.html" else "no-cache"
        charset = "; charset=utf-8" if kind.startswith("text/") else ""
        headers = {**SECURITY_HEADERS, "Cache-Control": cache}
        return Response(body, media_type=kind + charset, headers=headers)

    @router.api_route("/ui", methods=["GET", "HEAD"])
    async def page() -> Response:
        return answer("index.html")

    @router.api_route("/ui/{path:path}", methods=["GET", "HEAD"])
    async def asset(path: str) -> Response:
        return answer(path or "index.html")

    @router.get("/")
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui")

    app.include_router(router)
