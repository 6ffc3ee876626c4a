"""HEAD for every GET route (RFC 9110 §9.3.2), as ASGI middleware.

FastAPI routes declared with ``@router.get`` answer only GET, so a HEAD would
fall through to the last route (node lookup by path) and get a misleading
404. The application sees every HEAD as a GET; the server (uvicorn, which
keeps the original request method) sends the headers and drops the body.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "HEAD":
            scope = {**scope, "method": "GET"}  # a copy: the server's scope still says HEAD
        await self.app(scope, receive, send)
