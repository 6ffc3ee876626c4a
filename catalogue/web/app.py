"""The ASGI application: routes from each endpoint module, shared state, middleware.

``create_app(settings)`` builds it; ``catalogue serve`` runs it on uvicorn.
Each endpoint module or package exports a ``router`` (a package from its
``routes`` module: ``portal/``, and ``stac/`` when it comes); they share the
HTTP plumbing of ``http/`` and reach the database through
``request.app.state.pool`` (:class:`~catalogue.web.http.pool.CataloguePool`)
and read limits from ``request.app.state.settings``. The OpenAPI document of the
JSON API is at ``/openapi.json`` (interactive at ``/docs``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import AsyncIterator
from importlib.metadata import PackageNotFoundError, version

from fastapi import FastAPI, Request
from starlette.middleware.cors import CORSMiddleware

from . import datasets, dcat, export, nodes, preview
from .http import errors
from .http.head import HeadAsGet
from .http.limits import BodyLimit
from .http.memory import limit_arenas
from .http.pool import CataloguePool
from .portal import routes as portal
from .settings import Settings
from .sparql import graph_store
from .sparql import routes as sparql
from .stac import routes as stac


def _version() -> str:
    try:
        return version("zarr-catalogue")
    except PackageNotFoundError:
        return "0"


def create_app(settings: Settings | None = None) -> FastAPI:
    """The web application over the catalogue database named in ``settings``."""
    settings = settings or Settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        limit_arenas()  # before the worker threads start
        pool = CataloguePool(settings.db, settings.workers, settings.queue_timeout, settings.stream_workers)
        pool.open()
        app.state.pool = pool
        # Nothing to build: search reads the index in the database, whatever its size.
        reindexer = asyncio.create_task(_reindex_queued(app))
        try:
            yield
        finally:
            reindexer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reindexer
            pool.close()

    app = FastAPI(
        title="zarr-catalogue",
        version=_version(),
        summary="A linked-data catalogue of Zarr hierarchies: SPARQL, dataset discovery, DCAT, exports.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    errors.install(app)

    @app.get("/health", tags=["service"], summary="Liveness and database reachability")
    async def health(request: Request) -> dict[str, object]:
        # the counts the search index keeps: one row, whatever the catalogue's size
        totals = await request.app.state.pool.run(lambda cat: cat.totals())
        return {"status": "ok", "datasets": totals.datasets, "version": _version()}

    for module in (sparql, graph_store, datasets, nodes, preview, dcat, export, stac, portal):
        app.include_router(module.router)
    # Last, so that it never shadows a route above: node IRIs under the server's base
    # dereference by their own path.
    app.include_router(nodes.fallback_router)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(HeadAsGet)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["Accept", "Content-Type", "Authorization"],
        )
    return app


#: Seconds between two looks at the queue of graphs to reindex.
REINDEX_INTERVAL = 1.0
log = logging.getLogger(__name__)


async def _reindex_queued(app: FastAPI) -> None:
    """Index the graphs that writers without the index hook queued (a plain rdflib store
    on the database), within about a second (``catalogue reindex`` does the same by hand).
    A look at an empty queue is one read; the write lock is only taken when there is work."""
    while True:
        await asyncio.sleep(float(getattr(app.state, "reindex_interval", REINDEX_INTERVAL)))
        try:
            report = await app.state.pool.run(lambda cat: cat.reindex(), write=True)
            if report.graphs:
                log.info("search index: %s", report.summary())
        except app.state.pool.overloaded:
            continue  # busy: the next look tries again
        except Exception:  # the server goes on; the next look tries again
            log.exception("search index: reindexing the queue failed")


#: Environment variable carrying the settings to worker processes (``catalogue serve --processes``).
SETTINGS_ENV = "CATALOGUE_SERVE_SETTINGS"


def settings_to_environment(settings: Settings) -> str:
    """The settings as JSON, for :func:`app_from_environment` in another process."""
    return json.dumps(dataclasses.asdict(settings))


def app_from_environment() -> FastAPI:
    """The app for the settings in ``$CATALOGUE_SERVE_SETTINGS``: uvicorn's factory for worker processes.

    Each process has its own connections; they share the database and its search
    index, so a harvest shows in all of them.
    """
    raw = json.loads(os.environ[SETTINGS_ENV])
    raw["cors_origins"] = tuple(raw.get("cors_origins") or ())
    return create_app(Settings(**raw))
