"""Compressed response bodies (``Content-Encoding: gzip``, RFC 9110 §8.4), kept compressed.

A ``/datasets`` page of a large catalogue is up to a megabyte and a half of JSON (each
hit lists its variables), which gzip makes 14 times smaller. The search cache
(:mod:`catalogue.web.search_cache`) keeps answers compressed, so it holds 14 times as
many (at 10 million triples the answers of a portal's 400 searches no longer fit in
64 MB raw, and under an even spread of searches every answer was computed again), and
the bytes are compressed once, when the answer is computed, not per response as
Starlette's ``GZipMiddleware`` would. A client that does not accept gzip gets the bytes
decompressed (about 2 ms a megabyte).
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["MIN_BYTES", "Encoded", "accepts_gzip", "encode", "encoded_response"]

#: Bodies shorter than this are kept as they are: gzip's framing and the work are not
#: worth it for a page of a few facet counts.
MIN_BYTES: Final = 1024
#: Compressed bodies from which a plain copy is made in a worker thread.
THREAD_BYTES: Final = 16 * 1024
#: zlib's level: 3 compresses a page of hits 14 times in about 3 ms a megabyte (6, the
#: default, 19 times in 9 ms; 1, 12.6 times in as long as 3).
LEVEL: Final = 3


@dataclass(frozen=True, slots=True)
class Encoded:
    """A response body, gzip-compressed (``gzip``) or as it is."""

    data: bytes
    gzip: bool

    def __len__(self) -> int:  # what a cache of bodies counts
        return len(self.data)

    def plain(self) -> bytes:
        return gzip.decompress(self.data) if self.gzip else self.data


def encode(body: bytes) -> Encoded:
    """``body`` compressed when it is long enough to gain (no timestamp: equal bodies
    compress to equal bytes, which ETags and tests can compare)."""
    if len(body) < MIN_BYTES:
        return Encoded(body, gzip=False)
    return Encoded(gzip.compress(body, compresslevel=LEVEL, mtime=0), gzip=True)


def accepts_gzip(header: str | None) -> bool:
    """Whether an ``Accept-Encoding`` header admits gzip: ``gzip`` (or the old
    ``x-gzip``) with a q-value above 0, or ``*`` above 0 when gzip is not named.
    A q-value that is not a number from 0 to 1 counts as 1 (lenient, as
    :mod:`.negotiation` reads ``Accept``)."""
    named: float | None = None
    star: float | None = None
    for item in (header or "").split(","):
        coding, *params = item.split(";")
        coding = coding.strip().lower()
        q = 1.0
        for param in params:
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 1.0
                if not (math.isfinite(q) and 0 <= q <= 1):
                    q = 1.0
        if coding in ("gzip", "x-gzip"):
            named = q if named is None else max(named, q)
        elif coding == "*":
            star = q
    if named is not None:
        return named > 0
    return star is not None and star > 0


async def encoded_response(request: Request, body: Encoded, media_type: str) -> Response:
    """The response for ``body``: compressed to a client that accepts gzip, plain otherwise
    (decompressed in a worker thread when large: about 2 ms a megabyte, off the event loop)."""
    headers = {"Vary": "Accept-Encoding"}
    if body.gzip and accepts_gzip(", ".join(request.headers.getlist("accept-encoding"))):
        headers["Content-Encoding"] = "gzip"
        return Response(content=body.data, media_type=media_type, headers=headers)
    plain = await run_in_threadpool(body.plain) if len(body) > THREAD_BYTES else body.plain()
    return Response(content=plain, media_type=media_type, headers=headers)
