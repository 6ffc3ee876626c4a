"""One index per server process, kept current: checked in the background, rebuilt when the catalogue changed.

See :mod:`catalogue.discovery.index` (Refreshing). The app is anything with a
``state`` holding ``pool`` (an :class:`IndexRunner`); the holder lives in
``app.state.dataset_index`` and ``app.state.datasets_refresh_interval``
overrides :data:`REFRESH_INTERVAL`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from .build import CatalogueReader, build_index, catalogue_signature
from .index import DatasetIndex

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds between two checks of the catalogue's signature (``app.state.datasets_refresh_interval``).
REFRESH_INTERVAL = 2.0


class IndexRunner(Protocol):
    """Runs catalogue work on a worker thread (the web server's connection pool is one)."""

    #: What ``run`` raises when no connection is free: a skipped check, not a failure.
    overloaded: type[Exception]

    async def run(self, work: Callable[[CatalogueReader], T]) -> T: ...


class HasState(Protocol):
    """An application (FastAPI's, Starlette's) with its ``state``."""

    state: Any


class HasApp(Protocol):
    """A request of such an application."""

    @property
    def app(self) -> Any: ...


class _Holder:
    """The app's current index and the state of its refresh (event-loop side only)."""

    def __init__(self) -> None:
        self.index: DatasetIndex | None = None
        self.checked = 0.0
        self.task: asyncio.Task[None] | None = None
        self.first: asyncio.Lock | None = None
        self.builds = 0

    async def _refresh(self, app: HasState) -> None:
        """Check the signature; rebuild (in a worker thread) if it changed."""
        pool: IndexRunner = app.state.pool
        current = self.index
        try:
            if current is not None:
                signature = await pool.run(catalogue_signature)
                if signature == current.signature:
                    return
            index = await pool.run(build_index)
            self.index = index
            self.builds += 1
        finally:
            self.checked = time.monotonic()


def _holder(app: HasState) -> _Holder:
    holder = getattr(app.state, "dataset_index", None)
    if holder is None:
        holder = _Holder()
        app.state.dataset_index = holder
    return holder


def refresh_interval(app: HasState) -> float:
    return float(getattr(app.state, "datasets_refresh_interval", REFRESH_INTERVAL))


async def current_index(request: HasApp) -> DatasetIndex:
    """The index for this app, (re)built through ``request.app.state.pool`` when the catalogue changed.

    The first call waits for the first build (concurrent first calls share it);
    later calls return the current index at once and, at most every
    ``refresh_interval`` seconds, start one background check (and rebuild) that
    later calls will see when it is done.
    """
    return await index_for(request.app)


async def index_for(app: HasState) -> DatasetIndex:
    """:func:`current_index` for an app (e.g. to warm the index when the server starts)."""
    holder = _holder(app)
    if holder.index is None:
        if holder.first is None:
            holder.first = asyncio.Lock()
        async with holder.first:
            if holder.index is None:
                await holder._refresh(app)
        assert holder.index is not None
        return holder.index
    if holder.task is None and time.monotonic() - holder.checked >= refresh_interval(app):
        holder.task = asyncio.create_task(_background(holder, app))
    return holder.index


async def _background(holder: _Holder, app: HasState) -> None:
    try:
        await holder._refresh(app)
    except app.state.pool.overloaded:  # every connection busy: the next interval tries again
        log.info("dataset index check skipped: the server is busy")
    except Exception:  # the old index keeps serving; the next interval tries again
        log.exception("dataset index refresh failed")
    finally:
        holder.task = None
