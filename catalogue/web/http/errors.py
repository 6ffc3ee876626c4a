"""Errors as HTTP answers: a status, one clear line, never a stack trace.

Every error body is JSON ``{"error": "<one line>", "status": <code>}`` (or
plain text when the client asked for nothing but text). Handlers are
installed by :func:`install`; anything unexpected is logged with its
traceback on the server and answered with a bare 500.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from catalogue.errors import Busy, CatalogueError, NotFound, UsageError
from catalogue.graph.database import busy_error

from .pool import Overloaded

log = logging.getLogger(__name__)


class HTTPError(Exception):
    """An error with an HTTP status and a one-line message, raised by handlers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    message = " ".join(str(message).split())[:1000]  # one line, bounded
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


def install(app: FastAPI) -> None:
    """Register the handlers that turn exceptions into short JSON errors."""

    @app.exception_handler(HTTPError)
    async def _http_error(request: Request, exc: HTTPError) -> Response:
        return error_response(exc.status, exc.message, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _starlette(request: Request, exc: StarletteHTTPException) -> Response:
        return error_response(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("query", "body"))
            parts.append(f"{where}: {err.get('msg', 'invalid')}")
        return error_response(400, "invalid request: " + "; ".join(parts))

    @app.exception_handler(Overloaded)
    async def _overloaded(request: Request, exc: Overloaded) -> Response:
        return error_response(503, str(exc), {"Retry-After": "1"})

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy) -> Response:
        return error_response(503, str(exc), {"Retry-After": "5"})

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound) -> Response:
        return error_response(404, str(exc))

    @app.exception_handler(UsageError)
    async def _usage(request: Request, exc: UsageError) -> Response:
        return error_response(400, str(exc))

    @app.exception_handler(CatalogueError)
    async def _catalogue(request: Request, exc: CatalogueError) -> Response:
        return error_response(502 if "unavailable" in str(exc).lower() else 422, str(exc))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        busy = busy_error(exc)
        if busy is not None:  # a lock wait that ended (PostgreSQL lock_timeout): try again
            return error_response(503, str(busy), {"Retry-After": "5"})
        log.exception("%s %s failed", request.method, request.url.path)
        return error_response(500, "internal error (logged on the server)")
