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

import contextlib
import os
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from catalogue.graph.database import make_engine, scratch_postgres_database
from catalogue.graph.store import SQLStore

POSTGRES_URL_ENV = "CATALOGUE_TEST_POSTGRES_URL"


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """URL of a fresh SQLite database file."""
    return f"sqlite:///{tmp_path / 'catalogue.db'}"


@contextlib.contextmanager
def temporary_postgres_database() -> Iterator[str]:
    """A uniquely named PostgreSQL database, dropped afterwards (skip without a server)."""
    base = os.environ.get(POSTGRES_URL_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set, so PostgreSQL tests are skipped")
    with scratch_postgres_database(base, "catalogue_test") as url:
        yield url


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
# Built once per test session (per xdist worker) by real clients; see tests/stores.py.

import pathlib  # noqa: E402

import stores as _stores  # noqa: E402

SEED_EXAMPLES = pathlib.Path(__file__).parent / "seed_examples"


@pytest.fixture(scope="session")
def good_stores(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Every good store of tests/stores.py, written once: name → root folder."""
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


#: Where tests keep artefacts (screenshots, measurements); git-ignored.
ARTIFACTS = pathlib.Path(os.environ.get("CATALOGUE_TEST_ARTIFACTS",
                                        pathlib.Path(__file__).resolve().parent.parent / "build" / "test-artifacts"))
_MEASUREMENTS = "measurements-*.txt"


def report_measurement(line: str) -> None:
    """Show ``line`` in the run's terminal summary (pytest hides a passing test's output).

    Written to a file per process, because under pytest-xdist the test runs in
    a worker while the summary is printed by the controller.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / f"measurements-{os.getpid()}.txt", "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def pytest_sessionstart(session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        for old in ARTIFACTS.glob(_MEASUREMENTS):
            old.unlink()


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    lines = [line for path in sorted(ARTIFACTS.glob(_MEASUREMENTS)) for line in path.read_text().splitlines()]
    if lines:
        terminalreporter.section("measurements")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def s3():
    """A moto S3 server on loopback for the module's tests (tests/servers.py)."""
    import servers

    with servers.s3_server() as control:
        yield control

