"""Existing catalogues get the search index and the per-source status from their upgrade.

A catalogue is harvested at the head revision, taken back to ``0005_spatial_postgis``
(before the search index and the status table existed: both are dropped) and upgraded
again: the migrations rebuild the index from the graphs and replay the runs' PROV
records, and the answers are those the catalogue gave before.
"""

from __future__ import annotations

import pathlib
from datetime import UTC, datetime

from sqlalchemy import inspect

import catalogue
from catalogue.discovery.query import SearchQuery
from catalogue.graph.database import (
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    upgrade,
)
from tests.support import stores
from tests.support.paths import EXAMPLES


def test_upgrade_builds_the_index_and_the_source_status(db_url, tmp_path: pathlib.Path):
    sources = [str(p) for p in sorted(EXAMPLES.glob("*.zarr"))]
    broken = str(stores.build_missing_key(tmp_path))
    with catalogue.open(db_url) as cat:
        for source in sources:
            cat.harvest(source)
        cat.harvest(sources[0])  # a second, unchanged run
        cat.harvest_sources([str(tmp_path / "nowhere.zarr")])  # a failed source
        cat.harvest(broken)
        before = cat.search(SearchQuery(q="sea", limit=50))
        everything = cat.search(SearchQuery(limit=50))
        totals = cat.totals()
        statuses = [s.as_json() for s in cat.harvest_status()]
    assert len(statuses) == 5 and statuses[0]["outcome"] == "failed" and statuses[0]["failing_since"]
    engine = make_engine(db_url)
    try:
        downgrade(engine, "0005_spatial_postgis")
        assert not {"search_datasets", "harvest_sources", "search_text"} & set(inspect(engine).get_table_names())
        upgrade(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
    with catalogue.open(db_url) as cat:
        after = cat.search(SearchQuery(q="sea", limit=50))
        assert [h.json for h in after.hits] == [h.json for h in before.hits] and after.facets == before.facets
        again = cat.search(SearchQuery(limit=50))
        assert [h.json for h in again.hits] == [h.json for h in everything.hits]
        assert cat.totals().datasets == totals.datasets == 4
        assert (cat.totals().groups, cat.totals().arrays, cat.totals().triples) == (
            totals.groups, totals.arrays, totals.triples)
        replayed = [s.as_json() for s in cat.harvest_status()]
        # the replay reads the PROV records, whose times are kept to the millisecond
        assert [(s["source"], s["outcome"], s["runs"], s["failures"], s["graph"], s["error"]) for s in replayed] == [
            (s["source"], s["outcome"], s["runs"], s["failures"], s["graph"], s["error"]) for s in statuses]


def test_upgrade_brings_postgresql_the_map_search_layout(postgres_url, tmp_path: pathlib.Path):
    """0008: from the layout of 0007 (box indexes without the period, words and facet
    values stored out of line) to the head's, with the same answers."""
    from bench.search_scale import write_extents_catalogue
    from catalogue.model.extents import Box

    source = tmp_path / "extents.nq"
    write_extents_catalogue(source, 120)
    searches = [SearchQuery(q="sea", bbox=Box(-60, -40, 20, 30)), SearchQuery(bbox=Box(170, -20, -170, 20)),
                SearchQuery(q="temperature", dtype=["float32"], bbox=Box(-180, -90, 180, 90), limit=50)]
    with catalogue.open(postgres_url) as cat:
        cat.load(str(source))
        before = [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)]
    engine = make_engine(postgres_url)
    try:
        downgrade(engine, "0007_parallel_harvests")
        indexes = {i["name"] for i in inspect(engine).get_indexes("search_datasets")}
        assert {"ix_search_datasets_env", "ix_search_datasets_env2"} <= indexes
        assert not {"ix_search_datasets_near", "ix_search_datasets_huge"} & indexes
        upgrade(engine)
        indexes = {i["name"] for i in inspect(engine).get_indexes("search_datasets")}
        assert {"ix_search_datasets_near", "ix_search_datasets_far"} <= indexes
        # 0008 indexed the huge boxes' periods; 0010 took them to search_huge
        assert not {"ix_search_datasets_env", "ix_search_datasets_env2", "ix_search_datasets_huge"} & indexes
        with engine.connect() as conn:
            storage = dict(conn.exec_driver_sql(
                "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'search_datasets'::regclass "
                "AND attname IN ('words', 'facets')").all())
        assert storage == {"words": "m", "facets": "m"}
        with engine.connect() as conn:
            defined = dict(conn.exec_driver_sql(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'search_datasets'").all())
        from catalogue.graph.search_schema import HUGE_AREA

        # the searches' predicate must match the migration's, or the partial index goes unused
        assert f"< ({HUGE_AREA})" in defined["ix_search_datasets_near"].replace("::double precision", "")
    finally:
        engine.dispose()
    with catalogue.open(postgres_url) as cat:
        assert [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)] == before
        assert before[0][0] and before[1][0]


def test_upgrade_puts_the_huge_boxes_apart(db_url, tmp_path: pathlib.Path):
    """0010: the datasets of huge boxes copied into ``search_huge`` (and, on SQLite, out of
    the R*Tree), with the same answers; the downgrade puts them back."""
    from bench.search_scale import write_extents_catalogue
    from catalogue.graph.search_schema import is_huge
    from catalogue.model.extents import Box

    source = tmp_path / "extents.nq"
    write_extents_catalogue(source, 150)
    searches = [SearchQuery(q="sea", bbox=Box(-60, -40, 20, 30)), SearchQuery(bbox=Box(170, -20, -170, 20)),
                SearchQuery(q="temperature", dtype=["float32"], bbox=Box(-180, -90, 180, 90), limit=50),
                SearchQuery(bbox=Box(0, 0, 10, 10), datetime=(datetime(1990, 1, 1, tzinfo=UTC), None), limit=100)]
    with catalogue.open(db_url) as cat:
        cat.load(str(source))
        before = [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)]
    engine = make_engine(db_url)
    sqlite = engine.dialect.name == "sqlite"
    try:
        with engine.connect() as conn:
            boxes = conn.exec_driver_sql("SELECT gid, west, south, east, north FROM search_datasets "
                                         "WHERE west IS NOT NULL").all()
            huge = sorted(g for g, *box in boxes if is_huge(Box(*box).parts()[0]))
            assert 5 < len(huge) < len(boxes) / 2
            assert sorted(conn.exec_driver_sql("SELECT gid FROM search_huge").scalars()) == huge
        downgrade(engine, "0009_temporal_values")
        assert "search_huge" not in inspect(engine).get_table_names()
        if sqlite:
            with engine.connect() as conn:
                assert conn.exec_driver_sql("SELECT count(DISTINCT key / 2) FROM search_boxes").scalar() == len(boxes)
        upgrade(engine)
        with engine.connect() as conn:
            assert sorted(conn.exec_driver_sql("SELECT gid FROM search_huge").scalars()) == huge
            if sqlite:
                kept = set(conn.exec_driver_sql("SELECT DISTINCT key / 2 FROM search_boxes").scalars())
                assert kept == {g for g, *_ in boxes} - set(huge)
    finally:
        engine.dispose()
    with catalogue.open(db_url) as cat:
        after = [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)]
    assert after == before and all(b[0] for b in before)


def _huge_layout(conn) -> tuple[str, list[str | None], str]:
    """``search_huge``'s period index method, its words' compression per row, and the
    words column's storage (PostgreSQL)."""
    method = conn.exec_driver_sql(
        "SELECT am.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam "
        "WHERE c.relname = 'ix_search_huge_span'").scalar()
    compressed = sorted(set(conn.exec_driver_sql("SELECT pg_column_compression(words) FROM search_huge").scalars()),
                        key=str)
    storage = conn.exec_driver_sql("SELECT attstorage FROM pg_attribute WHERE attrelid = 'search_huge'::regclass "
                                   "AND attname = 'words'").scalar()
    return method, compressed, storage


def test_upgrade_stores_the_huge_rows_as_they_are(postgres_url, tmp_path: pathlib.Path):
    """0012 (PostgreSQL): ``search_huge``'s words and facets uncompressed and its periods in
    an SP-GiST index, with the same answers (the rows a load copies are uncompressed
    too, and the upgrade rewrites compressed ones); the downgrade gives back the storage
    and GiST."""
    from bench.search_scale import write_extents_catalogue
    from catalogue.model.extents import Box

    source = tmp_path / "extents.nq"
    write_extents_catalogue(source, 150)
    searches = [SearchQuery(q="sea", bbox=Box(-60, -40, 20, 30)),
                SearchQuery(q="temperature", dtype=["float32"], bbox=Box(-180, -90, 180, 90), limit=50),
                SearchQuery(bbox=Box(0, 0, 10, 10), datetime=(datetime(1990, 1, 1, tzinfo=UTC), None), limit=100)]
    with catalogue.open(postgres_url) as cat:
        cat.load(str(source))
        before = [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)]
    engine = make_engine(postgres_url)
    try:
        with engine.connect() as conn:
            assert _huge_layout(conn) == ("spgist", [None], "e")
        downgrade(engine, "0011_quads_statistics")
        with engine.begin() as conn:
            method, _compressed, storage = _huge_layout(conn)
            assert (method, storage) == ("gist", "m")
            # as revision 0010 copied them: the values of search_datasets, compressed
            conn.exec_driver_sql("UPDATE search_huge h SET words = d.words, facets = d.facets "
                                 "FROM search_datasets d WHERE d.gid = h.gid")
            assert "pglz" in _huge_layout(conn)[1]
        with catalogue.open(postgres_url) as cat:
            assert [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)] == before
        upgrade(engine)
        with engine.connect() as conn:
            assert _huge_layout(conn) == ("spgist", [None], "e")
    finally:
        engine.dispose()
    with catalogue.open(postgres_url) as cat:
        assert [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, searches)] == before
        assert all(b[0] for b in before)
