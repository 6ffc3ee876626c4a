"""``/node/preview.png``: a quicklook of an array, drawn by the catalogue from its chunks.

The picture is :meth:`catalogue.api.Catalogue.preview`'s (a 2-D plane on a colour map, a
line for 1-D, the coarsest level of a pyramid, within a byte budget); this module adds what
a server needs: a per-process cache keyed by the array's fingerprint, the query timeout
(past it, a placeholder picture saying so), and never an error page for what a store holds.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict

from fastapi import APIRouter, Query, Request
from rdflib import URIRef
from starlette.responses import Response

from catalogue.api import Catalogue
from catalogue.rdf.rebuild import NodeNotFound
from catalogue.rdf.vocabulary import ZARR

from .http.errors import HTTPError
from .http.params import checked_iri

router = APIRouter(tags=["nodes"])

#: Quicklooks kept per server process, by array IRI and fingerprint (a re-harvest that
#: changes the array changes its fingerprint, so a stale picture is never served).
PREVIEW_CACHE_BYTES = 32 * 1024 * 1024


class PreviewCache:
    """Least recently used PNGs within a byte budget (one per process; threads share it)."""

    def __init__(self, max_bytes: int = PREVIEW_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> bytes | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, str], png: bytes) -> None:
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
    from catalogue.chunks.quicklook import placeholder_png

    checked_iri(iri)
    state = request.app.state
    if not hasattr(state, "previews"):
        state.previews = PreviewCache()
    cache: PreviewCache = state.previews

    def work(cat: Catalogue) -> bytes:
        target = cat.preview_array(iri)
        fingerprint = cat.node_graph(target).value(URIRef(target), ZARR.fingerprint)
        key = (target, str(fingerprint))
        png = cache.get(key)
        if png is None:
            png = cat.preview(iri)
            cache.put(key, png)
        return png

    try:
        png = await asyncio.wait_for(state.pool.run(work), state.settings.query_timeout)
    except NodeNotFound:
        raise HTTPError(404, f"no node {iri} in the catalogue") from None
    except TimeoutError:
        png = placeholder_png(f"reading took longer than {state.settings.query_timeout:g} s (the query timeout)")
    return Response(png, media_type="image/png", headers={"Cache-Control": "public, max-age=300"})
