"""Request body size limit, as ASGI middleware (before any handler reads the body).

A declared ``Content-Length`` over the limit is refused at once; a chunked
body is counted as it arrives and refused as soon as it passes the limit, so
a hostile client cannot make the server buffer more than the limit.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _refuse(send, 400, "invalid Content-Length")
                    return
                if declared > self.max_bytes:
                    await _refuse(send, 413, f"request body larger than {self.max_bytes:,} bytes")
                    return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge:
            if not started:
                await _refuse(send, 413, f"request body larger than {self.max_bytes:,} bytes")


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message, "status": status}).encode()
    headers: list[Any] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
