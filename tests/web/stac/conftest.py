"""The STAC API tests' catalogue: the examples (with stand-in extents, tests/support/extents.py)
and zarr-python's plain v2 hierarchy (no extent at all), on SQLite and on PostgreSQL."""

from __future__ import annotations

import pathlib

import pytest

import catalogue
from tests.support import stores
from tests.support.extents import write_extents
from tests.support.paths import EXAMPLES


@pytest.fixture(scope="module")
def catalogue_sources(tmp_path_factory) -> list[pathlib.Path]:
    return [*sorted(EXAMPLES.glob("*.zarr")), stores.build_zarr_v2_plain(tmp_path_factory.mktemp("stores"))]


@pytest.fixture(scope="module")
def catalogue_db(module_db_url: str, catalogue_sources: list[pathlib.Path]) -> str:
    graphs = {}
    with catalogue.open(module_db_url) as cat:
        for source in catalogue_sources:
            report = cat.harvest(str(source))
            assert report.ok, (source, report.errors)
            graphs[source.name] = report.graph
    write_extents(module_db_url, graphs)
    return module_db_url
