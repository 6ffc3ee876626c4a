"""Scratch PostgreSQL databases for tests (skipped without a server URL)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from catalogue.graph.database import scratch_postgres_database

POSTGRES_URL_ENV = "CATALOGUE_TEST_POSTGRES_URL"


@contextlib.contextmanager
def temporary_postgres_database() -> Iterator[str]:
    """A uniquely named PostgreSQL database, dropped afterwards (skip without a server)."""
    base = os.environ.get(POSTGRES_URL_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set, so PostgreSQL tests are skipped")
    with scratch_postgres_database(base, "catalogue_test") as url:
        yield url
