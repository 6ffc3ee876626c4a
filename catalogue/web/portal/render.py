"""Rendering portal pages: Jinja2, the static files, the security headers, HTML error pages.

Server-rendered with Jinja2 (autoescaping on; catalogue data is never marked
safe), with one small stylesheet and one small script (copy buttons only)
served from ``/static/``. Pages load nothing from elsewhere; the
Content-Security-Policy says so, which also neuters any markup a hostile
catalogue entry might smuggle past the escaping.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, Response

from catalogue.errors import CatalogueError, UsageError

from ..http.errors import HTTPError
from ..http.pool import Overloaded
from .map import land_path

if TYPE_CHECKING:
    from jinja2 import Environment

log = logging.getLogger(__name__)

#: Security headers of every portal page: nothing but our own files may load or run.
HTML_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-cache",
}

_MEDIA_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    media_type: str
    etag: str


def _load_static() -> dict[str, StaticFile]:
    """The static files, read once: a fixed set of names, so no path ever reaches the disk."""
    out = {}
    for entry in files("catalogue.web").joinpath("static").iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in _MEDIA_TYPES:
            body = entry.read_bytes()
            out[entry.name] = StaticFile(body, _MEDIA_TYPES[suffix], hashlib.sha256(body).hexdigest()[:16])
    return out


STATIC = _load_static()


def static_url(request_base: str, name: str) -> str:
    """The URL of a static file, versioned by its content so it can be cached for a year."""
    return f"{request_base}/static/{name}?v={STATIC[name].etag}"


@functools.cache
def environment() -> Environment:
    """The templates' environment, made at the first page rendered: Jinja2's import
    (its lexer's patterns) is a tenth of a second that a server answering only the APIs,
    and every server's start, need not pay."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("catalogue.web", "templates"),
        autoescape=select_autoescape(["html"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["number"] = lambda n: f"{n:,}" if isinstance(n, int) else n
    env.filters["date"] = _date
    env.filters["datetime"] = _datetime
    env.globals["land_path"] = land_path
    return env


def _parse_time(text: Any) -> datetime | None:
    if isinstance(text, datetime):
        return text
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def _date(value: Any) -> str:
    """``23 Nov 2026`` (UTC); anything unparsable as it is."""
    moment = _parse_time(value)
    if moment is None:
        return str(value or "")
    moment = moment.astimezone(UTC)
    return f"{moment.day} {moment:%b %Y}"


def _datetime(value: Any) -> str:
    """``23 Nov 2026, 00:34 UTC``."""
    moment = _parse_time(value)
    if moment is None:
        return str(value or "")
    return f"{_date(moment)}, {moment.astimezone(UTC):%H:%M} UTC"



def mount_base(request: Request) -> str:
    """Where the app is mounted (links are absolute paths under it, so proxies keep working)."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def _context(request: Request, **values: Any) -> dict[str, Any]:
    base = mount_base(request)
    return {
        "base": base,
        "static": lambda name: static_url(base, name),
        "browse": lambda iri: f"{base}/browse?" + urllib.parse.urlencode({"iri": iri}),
        "version": request.app.version,
        **values,
    }


async def render(request: Request, template: str, status: int = 200, **values: Any) -> Response:
    """Render on a worker thread (templates are CPU work) and add the portal's headers."""
    context = _context(request, **values)
    body = await run_in_threadpool(environment().get_template(template).render, **context)
    headers = dict(HTML_HEADERS)
    return HTMLResponse(body, status_code=status, headers=headers)


_TITLES = {
    400: "Bad request", 404: "Not found", 405: "Method not allowed", 406: "Not acceptable",
    413: "Too large", 414: "Request too long", 422: "Cannot process this", 429: "Too many requests",
    500: "Something went wrong", 502: "Storage unavailable", 503: "Busy", 504: "Timed out",
}


async def error_page(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """An HTML error page: the status, a title and one line saying why."""
    line = " ".join(str(message).split())[:500]
    response = await render(request, "error.html", status=status, status_code=status,
                             heading=_TITLES.get(status, "Error"), message=line,
                             page_title=f"{status} {_TITLES.get(status, 'Error')}")
    response.headers.update(headers or {})
    return response


async def guard(request: Request, build: Callable[[], Awaitable[Response]]) -> Response:
    """Run a page handler, turning every failure into an HTML error page."""
    try:
        return await build()
    except HTTPError as exc:
        return await error_page(request, exc.status, exc.message, exc.headers)
    except Overloaded as exc:
        return await error_page(request, 503, str(exc), {"Retry-After": "1"})
    except UsageError as exc:
        return await error_page(request, 400, str(exc))
    except CatalogueError as exc:
        return await error_page(request, 502 if "unavailable" in str(exc).lower() else 422, str(exc))
    except Exception:
        log.exception("%s %s failed", request.method, request.url.path)
        return await error_page(request, 500, "internal error (logged on the server)")
