"""SQLite and PostgreSQL give the same answers to every search.

One catalogue is harvested into SQLite (the three examples, synthetic datasets of
bench/web_data.py and stores with extents across the antimeridian, at the poles and in
other calendars), exported as N-Quads (the provenance graph included, so harvest times
are the same) and loaded into PostgreSQL; then every search below, each a mix of free
text, stems, prefixes, alternatives, facet filters, boxes, periods, sorts and paging,
must give byte-identical responses (totals, hits in order, facet counts) on both.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

import catalogue
from bench.web_data import write_hierarchy
from catalogue.discovery.query import SearchQuery
from catalogue.model.extents import Box
from tests.support import cf_stores
from tests.support.paths import EXAMPLES

SEARCHES = [
    SearchQuery(),
    SearchQuery(q="temperature"), SearchQuery(q="temperatures"), SearchQuery(q="temp"), SearchQuery(q="sea ice"),
    SearchQuery(q="ocean temp", sort="title"), SearchQuery(q="Température océan"), SearchQuery(q="climate model"),
    SearchQuery(any_of=["sea ice", "air temperature"]), SearchQuery(any_of=["nothing", "glacier"]),
    SearchQuery(dtype=["float32"]), SearchQuery(dtype=["<f4", "int16"], codec=["zstd"]),
    SearchQuery(dimension=["time"], units=["K"], zarr_format=[3]), SearchQuery(valid=False),
    SearchQuery(q="sea", standard_name=["sea_surface_temperature", "sea_ice_area_fraction"], valid=True),
    SearchQuery(bbox=Box(-10, 35, 30, 70)), SearchQuery(bbox=Box(170, -20, -170, 20)),
    SearchQuery(bbox=Box(-180, 80, 180, 90), sort="start"),
    SearchQuery(datetime=(datetime(2000, 1, 1, tzinfo=UTC), datetime(2022, 12, 31, tzinfo=UTC)), sort="-start"),
    SearchQuery(datetime=(None, datetime(1990, 1, 1, tzinfo=UTC))),
    SearchQuery(q="temperature", bbox=Box(-180, -90, 180, 90), datetime=(datetime(2021, 1, 1, tzinfo=UTC), None),
                dtype=["float32"], dimension=["time"], units=["K"]),
    SearchQuery(sort="-harvested", limit=5, offset=3), SearchQuery(sort="harvested", limit=7),
    SearchQuery(q="s", limit=3, offset=2), SearchQuery(harvested_since=datetime(2000, 1, 1, tzinfo=UTC), sort="title"),
    SearchQuery(dtype=["no-such-type"]), SearchQuery(q="zzzz"),
]


def _answers(db: str, monkeypatch=None, **limits: int) -> list[tuple]:
    import catalogue.discovery.conditions as conditions_module
    import catalogue.discovery.query as query_module

    for name, value in limits.items():
        monkeypatch.setattr(conditions_module if hasattr(conditions_module, name) else query_module, name, value)
    with catalogue.open(db) as cat:
        out = []
        for query in SEARCHES:
            found = cat.search(query)
            out.append((found.total, [h.json for h in found.hits], found.facets))
        return out


@pytest.mark.slow
def test_sqlite_and_postgresql_answer_alike(sqlite_url, postgres_url, tmp_path, monkeypatch):
    rng = random.Random(5)
    stores = [*sorted(EXAMPLES.glob("*.zarr")), *(write_hierarchy(tmp_path / "web", i, rng) for i in range(25))]
    stores += [cf_stores.build_antimeridian(tmp_path / "cf"), cf_stores.build_polar_stereographic(tmp_path / "cf"),
               cf_stores.build_calendar_360(tmp_path / "cf"), cf_stores.build_global_grid(tmp_path / "cf", 2)]
    with catalogue.open(sqlite_url) as cat:
        for store in stores:
            cat.harvest(str(store))
        dump = tmp_path / "all.nq"
        with open(dump, "w", encoding="utf-8") as out:
            cat.export(out, format="nquads")
    with catalogue.open(postgres_url) as cat:
        cat.load(str(dump))
    sqlite, postgres = _answers(sqlite_url), _answers(postgres_url)
    assert sqlite[0][0] == len(stores)
    assert any(total for total, _hits, _facets in sqlite[1:])  # the searches find things
    for query, a, b in zip(SEARCHES, sqlite, postgres, strict=True):
        assert a == b, query
    # the paths taken for many hits (facets counted in Python, relevance by the database,
    # conditions checked through their indexes) and for few (facets by the database,
    # relevance in Python, conditions checked from each row's data) agree
    for db in (sqlite_url, postgres_url):
        other = _answers(db, monkeypatch, PYTHON_FACETS=0, PYTHON_RANKING=0, ROW_CHECKS=0, ROW_CHECK_RATIO=10**9)
        for query, a, b in zip(SEARCHES, sqlite, other, strict=True):
            assert a == b, (db, query)
