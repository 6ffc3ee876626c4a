"""Fixtures of the web tests: one running catalogue server per module, and its database.

``web_server`` serves the example stores, zarr-python's v2 hierarchy and tensorstore's
v2 + sharded v3 arrays from one SQLite catalogue.  Modules that need another catalogue
(paging, hostile titles, PostgreSQL) build their own and override ``catalogue_db``, so
``cat`` always opens the database the module's server serves.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

import catalogue
from catalogue.web.settings import Settings
from tests.support import stores
from tests.support.paths import EXAMPLES
from tests.support.webserver import WebServer, serve


@pytest.fixture(scope="module")
def web_server(tmp_path_factory) -> Iterator[WebServer]:
    """The catalogue server over the examples, a v2 hierarchy and tensorstore's arrays."""
    root = tmp_path_factory.mktemp("stores")
    sources = [*sorted(EXAMPLES.glob("*.zarr")), stores.build_zarr_v2_plain(root), stores.build_tensorstore_arrays(root)]
    db = f"sqlite:///{root / 'catalogue.db'}"
    graphs = {}
    with catalogue.open(db) as cat:
        for source in sources:
            report = cat.harvest(str(source))
            assert report.ok
            graphs[source.name] = report.graph
    with serve(Settings(db=db)) as base, httpx.Client(timeout=30) as client:
        yield WebServer(base, db, sources, graphs, client)


@pytest.fixture(scope="module")
def catalogue_db(web_server: WebServer) -> str:
    """The database the module's server serves (modules with a catalogue of their own override it)."""
    return web_server.db


@pytest.fixture(scope="module")
def cat(catalogue_db: str) -> Iterator[catalogue.Catalogue]:
    """The served database opened directly: the reference answers."""
    with catalogue.open(catalogue_db) as opened:
        yield opened
