"""Answers of searches, kept per server process until the search index changes.

Searches are answered by the index in the database (:mod:`catalogue.discovery.query`);
portals ask the same few searches over and over (the front page, a facet click), so
each process keeps the answers it computed, keyed by the query, for as long as the
index's *generation* (one row the indexer bumps in every transaction that changes the
index) stays the same. The generation is read at most every :data:`RECHECK` seconds
(``app.state.search_recheck`` overrides it), so a dataset harvested while the server
runs is found within that time, and a cached answer costs no database work at all
(while every connection is busy, cached answers keep being served, and only new
searches are shed with 503).
The cache is bounded in bytes (least recently used answers go first); ``/datasets``
keeps its answers gzip-compressed (:mod:`catalogue.web.http.encoding`), so the bound
holds about 14 times as many pages of hits.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, TypeVar

from catalogue.api import Catalogue
from catalogue.discovery.query import SearchQuery

from .http.pool import CataloguePool

__all__ = ["RECHECK", "SearchCache", "search_cache", "search_recheck"]

T = TypeVar("T")

#: Seconds between two reads of the index's generation.
RECHECK: Final = 0.25
#: Bytes of cached answers per process.
MAX_BYTES: Final = 64 * 1024 * 1024


class SearchCache:
    """Cached answers of one app (event-loop side only: no locks needed)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.generation: int | None = None
        self.checked = 0.0
        self.entries: OrderedDict[tuple[str, str], Any] = OrderedDict()
        #: Answers being computed (concurrent requests for one query share the work).
        self.pending: dict[tuple[str, str], tuple[int | None, asyncio.Future[Any]]] = {}
        self.size = 0
        self.hits = 0
        self.misses = 0

    def recheck_now(self) -> None:
        """This process changed the catalogue (a SPARQL Update, a Graph Store write): the
        next search rereads the index's generation, so that its writer reads its write
        (other server processes find it within :data:`RECHECK` seconds, as ever)."""
        self.checked = float("-inf")

    async def _current(self, pool: CataloguePool, recheck: float) -> None:
        now = time.monotonic()
        if self.generation is not None and now - self.checked < recheck:
            return
        try:
            found = await pool.run(lambda cat: cat.search_generation())
        except pool.overloaded:
            if self.generation is None:
                raise
            return  # every connection busy: the answers kept serve until one is free
        self.checked = time.monotonic()
        if found != self.generation:
            self.entries.clear()
            self.size = 0
            self.generation = found

    async def answer(self, pool: CataloguePool, kind: str, query: SearchQuery,
                     compute: Callable[[Catalogue, SearchQuery], T], *, recheck: float = RECHECK,
                     size: Callable[[T], int] = len) -> T:  # type: ignore[assignment]
        """``compute(catalogue, query)``'s answer, from the cache when the index has not
        changed since it was computed. ``kind`` separates the answers of different
        routes to one query (JSON bytes, a portal page's model)."""
        await self._current(pool, recheck)
        key = (kind, query.key())
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
            self.hits += 1
            return found  # type: ignore[no-any-return]
        pending = self.pending.get(key)
        if pending is not None and pending[0] == self.generation:  # being computed: share it
            self.hits += 1
            return await asyncio.shield(pending[1])  # type: ignore[no-any-return]
        self.misses += 1
        generation = self.generation
        task = asyncio.ensure_future(pool.run(lambda cat: compute(cat, query)))
        self.pending[key] = (generation, task)
        try:
            value = await asyncio.shield(task)
        finally:
            if self.pending.get(key, (None, None))[1] is task:
                del self.pending[key]
        if generation == self.generation and self.max_bytes > 0:
            cost = size(value) + 200
            if cost <= self.max_bytes // 16:
                self.entries[key] = value
                self.size += cost
                while self.size > self.max_bytes and self.entries:
                    _, old = self.entries.popitem(last=False)
                    self.size -= size(old) + 200
        return value


def search_cache(app: Any) -> SearchCache:
    """The app's cache (made on first use, sized by the settings)."""
    cache = getattr(app.state, "search_cache", None)
    if cache is None:
        settings = getattr(app.state, "settings", None)
        size = settings.search_cache_bytes if settings is not None else MAX_BYTES
        cache = app.state.search_cache = SearchCache(size)
    return cache  # type: ignore[no-any-return]


def search_recheck(app: Any) -> float:
    """Seconds between reads of the generation (``app.state.search_recheck``)."""
    return float(getattr(app.state, "search_recheck", RECHECK))
