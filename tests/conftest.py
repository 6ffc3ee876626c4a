"""Shared pytest fixtures.

Database fixtures
-----------------
``db_url`` is parametrised over a SQLite file in ``tmp_path`` and a PostgreSQL
database.  The PostgreSQL variant needs ``CATALOGUE_TEST_POSTGRES_URL`` (any URL the
catalogue accepts, e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/test``); it
creates a fresh database with a random name for every test and drops it afterwards,
so tests never see or touch existing data.  Without the variable those tests skip.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from catalogue.graph.database import make_engine
from catalogue.graph.store import SQLStore
from tests.support import servers
from tests.support import stores as _stores
from tests.support.measurements import MEASUREMENTS
from tests.support.paths import ARTIFACTS
from tests.support.postgres import POSTGRES_URL_ENV, drop_template, temporary_postgres_database


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """URL of a fresh SQLite database file."""
    return f"sqlite:///{tmp_path / 'catalogue.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """URL of a fresh, uniquely named PostgreSQL database, dropped after the test."""
    with temporary_postgres_database() as url:
        yield url


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def module_db_url(request, tmp_path_factory) -> Iterator[str]:
    """Like ``db_url`` but shared by a module's tests (for read-only fixtures that are
    slow to fill)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'catalogue.db'}"
        return
    with temporary_postgres_database() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request) -> str:
    """A fresh, empty database on each backend (see module docstring)."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture
def db_engine(db_url: str) -> Iterator[Engine]:
    """Engine for ``db_url`` (schema not created)."""
    engine = make_engine(db_url)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture
def sql_store(db_url: str) -> Iterator[SQLStore]:
    """An open :class:`SQLStore` on ``db_url``; closed (rolled back) after the test."""
    store = SQLStore(db_url)
    try:
        yield store
    finally:
        store.close()


# --------------------------------------------------------------------- Zarr stores
# Built once per test session (per xdist worker) by real clients; see tests/support/stores.py.

@pytest.fixture(scope="session")
def good_stores(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Every good store of tests/support/stores.py, written once: name → root folder."""
    root = tmp_path_factory.mktemp("good-stores")
    return {name: build(root) for name, build in _stores.GOOD_STORES.items()}


@pytest.fixture
def bad_store(tmp_path, request) -> pathlib.Path:
    """One bad store, by name given through indirect parametrisation."""
    return _stores.BAD_STORES[request.param](tmp_path)


def pytest_collection_modifyitems(config, items) -> None:
    """CI sets CATALOGUE_TEST_REQUIRE_POSTGRES=1: then PostgreSQL tests must not be skipped."""
    if os.environ.get("CATALOGUE_TEST_REQUIRE_POSTGRES") == "1" and not os.environ.get(
        POSTGRES_URL_ENV
    ):
        raise pytest.UsageError(
            f"CATALOGUE_TEST_REQUIRE_POSTGRES=1 but {POSTGRES_URL_ENV} is not set"
        )


# ------------------------------------------------------------- measurements
# Tests report them with tests/support/measurements.py:report_measurement.

def pytest_sessionstart(session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        for old in ARTIFACTS.glob(MEASUREMENTS):
            old.unlink()


def pytest_sessionfinish(session, exitstatus) -> None:
    """Each test process drops the template its PostgreSQL databases were copied from."""
    drop_template()


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    lines = [line for path in sorted(ARTIFACTS.glob(MEASUREMENTS)) for line in path.read_text().splitlines()]
    if lines:
        terminalreporter.section("measurements")
        for line in lines:
            terminalreporter.write_line(line)


# ------------------------------------------------------------- servers of stores
# Zarr stores served over the network by tests/support/servers.py (not the catalogue's
# own web server: that is tests/web/conftest.py's ``web_server``).


@pytest.fixture(scope="module")
def s3() -> Iterator[servers.S3ServerControl]:
    """A moto S3 server on loopback for the module's tests (tests/support/servers.py)."""
    with servers.s3_server() as control:
        yield control


@pytest.fixture(scope="module")
def http_store(good_stores: dict[str, pathlib.Path]) -> Iterator[servers.HTTPServerControl]:
    """A well-behaved HTTP server over the folder of the ``good_stores``.

    Shared by the module, so no faults are set on it; a test that counts requests
    resets the counts first.  Tests that inject faults start a private server.
    """
    with servers.http_server(next(iter(good_stores.values())).parent) as control:
        yield control

