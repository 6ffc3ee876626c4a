"""``/node/preview.png``: a quicklook of an array, drawn by the catalogue from its chunks.

The picture is :meth:`catalogue.api.Catalogue.preview`'s (a 2-D plane on a colour map, a
line for 1-D, the coarsest level of a pyramid, within a byte budget); this module adds what
a server needs: a per-process cache keyed by the array, its fingerprint and its harvest run;
chunks read outside the connection pool, within the query timeout (past it, a placeholder
picture saying so); and never an error page for what a store holds.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from catalogue.rdf.rebuild import NodeNotFound

from .http.errors import HTTPError
from .http.params import checked_iri

router = APIRouter(tags=["nodes"])

#: Quicklooks kept per server process, by array IRI, fingerprint and harvest run (a
#: re-harvest that changes anything changes the run, so a stale picture is not served).
PREVIEW_CACHE_BYTES = 32 * 1024 * 1024


class PreviewCache:
    """Least recently used PNGs within a byte budget (one per process; threads share it)."""

    def __init__(self, max_bytes: int = PREVIEW_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, ...], bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> bytes | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, ...], png: bytes) -> None:
        with self._lock:
            if key in self._items or len(png) > self.max_bytes:
                return
            self._items[key] = png
            self._size += len(png)
            while self._size > self.max_bytes:
                _key, old = self._items.popitem(last=False)
                self._size -= len(old)


@router.get("/node/preview.png", response_class=Response,
            responses={200: {"content": {"image/png": {}}}, 404: {"description": "No such node"}},
            summary="A quicklook of an array (a pyramid: its coarsest level), as PNG")
async def preview(request: Request, iri: str = Query(..., description="The array's (or pyramid group's) IRI")) -> Response:
    # The readers (codecs, fsspec) load with the first preview asked for, not with the server.
    from catalogue.chunks.preview import Quicklook
    from catalogue.chunks.quicklook import placeholder_png

    checked_iri(iri)
    state = request.app.state
    if not hasattr(state, "previews"):
        state.previews = PreviewCache()
    cache: PreviewCache = state.previews

    try:
        job = await state.pool.run(lambda cat: cat.preview_job(iri))
    except NodeNotFound:
        raise HTTPError(404, f"no node {iri} in the catalogue") from None
    png = cache.get(job.key)
    if png is None:
        # Chunks are read with no database connection held; past the query timeout the
        # answer is a picture saying so (the read, bounded by its byte budget, ends on its own).
        try:
            drawn = await asyncio.wait_for(run_in_threadpool(job.draw), state.settings.query_timeout)
        except TimeoutError:
            drawn = Quicklook(placeholder_png(f"reading took longer than {state.settings.query_timeout:g} s "
                                              "(the query timeout)"), placeholder=True)
        png = drawn.png
        if not drawn.placeholder:
            cache.put(job.key, png)
    return Response(png, media_type="image/png", headers={"Cache-Control": "public, max-age=300"})
