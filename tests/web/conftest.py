"""Fixtures of the web tests: one running catalogue server per module, and its database.

``web_server`` serves ``catalogue_db``, which holds ``catalogue_sources``: by default the
example stores, zarr-python's v2 hierarchy and tensorstore's v2 + sharded v3 arrays in
one SQLite catalogue.  Modules that need another catalogue (paging, hostile titles,
PostgreSQL) override ``catalogue_sources`` and ``catalogue_db``, so ``web_server`` serves
their catalogue and ``cat`` opens the database it serves.  A module that needs a second
server, or other settings, runs its own with ``serve_catalogue`` (tests/support/webserver.py),
named for what is different (``big_server``, ``short_timeout_server``).
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

import catalogue
from tests.support import stores
from tests.support.paths import EXAMPLES
from tests.support.webserver import WebServer, harvest, serve_catalogue


@pytest.fixture(scope="module")
def catalogue_sources(tmp_path_factory) -> list[pathlib.Path]:
    """The stores of the module's catalogue, in harvest order: the examples, a v2 hierarchy
    and tensorstore's arrays (modules with a catalogue of their own override it)."""
    root = tmp_path_factory.mktemp("stores")
    return [*sorted(EXAMPLES.glob("*.zarr")), stores.build_zarr_v2_plain(root), stores.build_tensorstore_arrays(root)]


@pytest.fixture(scope="module")
def catalogue_db(catalogue_sources: list[pathlib.Path], tmp_path_factory) -> str:
    """The database the module's server serves: ``catalogue_sources`` harvested into SQLite
    (modules with a catalogue of their own override it)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('catalogue') / 'catalogue.db'}"
    harvest(db, catalogue_sources)
    return db


@pytest.fixture(scope="module")
def web_server(catalogue_db: str, catalogue_sources: list[pathlib.Path]) -> Iterator[WebServer]:
    """The catalogue server over the module's catalogue (a ``WebServer``)."""
    with serve_catalogue(catalogue_db, catalogue_sources) as server:
        yield server


@pytest.fixture(scope="module")
def cat(catalogue_db: str) -> Iterator[catalogue.Catalogue]:
    """The served database opened directly: the reference answers."""
    with catalogue.open(catalogue_db) as opened:
        yield opened
