"""Scratch PostgreSQL databases for tests (skipped without a server URL).

Each test's database is a copy of a template this test process makes once: an empty
database with PostGIS installed where the server has it, as a DBA installs extensions
once. The catalogue's schema is not in it (a test's database is as empty as a new
one); only PostGIS's install script, half a second of each new catalogue database and
several minutes of a test run, is paid once per process. The catalogue creating the
extension itself is still tested: the migration and packaging tests, the W3C runner
and the benchmarks make their databases without the template.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import URL, make_url

from catalogue.graph.database import database_url, scratch_postgres_database
from catalogue.graph.lock import process_alive

POSTGRES_URL_ENV = "CATALOGUE_TEST_POSTGRES_URL"

#: This process's template database, once made (dropped by :func:`drop_template`).
_TEMPLATE: dict[str, str] = {}
_LOCK = threading.Lock()
#: Templates are named ``<prefix><host>_<pid>_<random>``: a later run on this host drops
#: those whose process is gone (killed before its session's end), never another host's.
_PREFIX = "catalogue_test_template_"
_HOST = hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()


def template_database(base: str) -> str:
    """The name of this process's template database on ``base``'s server (made on first use)."""
    with _LOCK:
        found = _TEMPLATE.get(base)
        if found is None:
            found = _make_template(base)
        return found


def _make_template(base: str) -> str:
    url = make_url(database_url(base))
    _drop_stale_templates(url)
    name = f"{_PREFIX}{_HOST}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        admin.dispose()
    _TEMPLATE[base] = name
    inside = create_engine(url.set(database=name), isolation_level="AUTOCOMMIT")
    try:
        with inside.connect() as conn:
            if conn.exec_driver_sql("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'").scalar():
                conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS postgis")
    finally:
        inside.dispose()  # nobody may be connected to a template being copied
    return name


def _drop_stale_templates(url: URL) -> None:
    """Drop the templates of this host's test processes that are gone (killed before
    their session's end)."""
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            names = conn.exec_driver_sql(
                "SELECT datname FROM pg_database WHERE starts_with(datname, %(p)s)",
                {"p": f"{_PREFIX}{_HOST}_"}).scalars().all()
            for name in names:
                pid = name[len(f"{_PREFIX}{_HOST}_"):].partition("_")[0]
                if pid.isdigit() and not process_alive(int(pid)):
                    conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()



def drop_template() -> None:
    """Drop this process's template database (at the end of its test session)."""
    for base, name in list(_TEMPLATE.items()):
        admin = create_engine(make_url(database_url(base)), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            admin.dispose()
        del _TEMPLATE[base]


@contextlib.contextmanager
def temporary_postgres_database(*, template: bool = True) -> Iterator[str]:
    """A uniquely named PostgreSQL database, dropped afterwards (skip without a server);
    a copy of the process's template (PostGIS installed where it can be), or with
    ``template=False`` as new as ``CREATE DATABASE`` makes it, for the tests of the
    catalogue installing the extension itself."""
    base = os.environ.get(POSTGRES_URL_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set, so PostgreSQL tests are skipped")
    copied = template_database(base) if template else None
    with scratch_postgres_database(base, "catalogue_test", template=copied) as url:
        yield url
