"""pytest plugin for running rdflib's own store tests against the ``catalogue`` store.

Loaded into a pytest run over the test folder of rdflib's sdist (see
``tests/graph/test_rdflib_suite.py``) with ``-p catalogue_stores``.  rdflib's modules pick
their stores from rdflib's plugin registry, where the catalogue's entry point already
puts ``catalogue`` (SQLite: ``open(directory)`` makes ``catalogue.db`` inside it).  With
``CATALOGUE_TEST_POSTGRES_URL`` set, this plugin registers one more store,
``catalogue-postgresql``: the same store class, opening a scratch PostgreSQL database
of its own for each directory rdflib gives it, so the same tests run on PostgreSQL.
Registration happens when the plugin loads, before rdflib's modules are imported,
which is when they list the registered stores.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

from rdflib import plugin
from rdflib.store import Store
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from catalogue.graph.database import database_url
from catalogue.graph.store import SQLStore
from tests.support.postgres import drop_template, template_database

POSTGRES_ENV = "CATALOGUE_TEST_POSTGRES_URL"
_created: set[str] = set()
_lock = threading.Lock()


def _admin_url() -> str:
    return database_url(os.environ[POSTGRES_ENV])


def _database_for(configuration: str) -> str:
    """The scratch database standing for one directory (created on first use)."""
    name = "catalogue_rdflib_" + hashlib.blake2b(configuration.encode(), digest_size=8).hexdigest()
    base = make_url(_admin_url())
    with _lock:
        if name not in _created:
            template = template_database(os.environ[POSTGRES_ENV])  # PostGIS installed once, copied
            admin = create_engine(base, isolation_level="AUTOCOMMIT")
            try:
                with admin.connect() as conn:
                    conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                    conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            finally:
                admin.dispose()
            _created.add(name)
    return base.set(database=name).render_as_string(hide_password=False)


class ScratchPostgresStore(SQLStore):
    """The catalogue store on PostgreSQL, for tests that give stores a directory."""

    def open(self, configuration: Any, create: bool = False) -> int:
        if isinstance(configuration, str) and "://" not in configuration:
            configuration = _database_for(configuration)
        return super().open(configuration, create)

    def destroy(self, configuration: Any = None) -> None:
        if isinstance(configuration, str) and "://" not in configuration:
            configuration = _database_for(configuration)
        super().destroy(configuration)


if os.environ.get(POSTGRES_ENV):
    plugin.register("catalogue-postgresql", Store, __name__, "ScratchPostgresStore")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Drop the scratch databases, and the template they were copied from."""
    drop_template()
    if not _created:
        return
    admin = create_engine(make_url(_admin_url()), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for name in sorted(_created):
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()
