"""A transaction that indexes many graphs refreshes the search tables' statistics."""

from __future__ import annotations

from sqlalchemy import text

import catalogue
import catalogue.discovery.indexer as indexer
from bench.search_scale import write_extents_catalogue


def _rows_known(cat: catalogue.Catalogue) -> int:
    """How many rows of search_datasets the planner's statistics know of."""
    conn = cat.store.connection
    try:
        if conn.dialect.name == "sqlite":
            stat = conn.execute(text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'search_datasets' "
                                     "ORDER BY idx IS NOT NULL LIMIT 1")).scalar()
            return int(stat.split()[0]) if stat else 0
        return int(conn.execute(text("SELECT reltuples FROM pg_class WHERE relname = 'search_datasets'")).scalar())
    finally:
        cat.store.rollback()


def test_a_bulk_load_leaves_the_planner_knowing_the_index(db_url, tmp_path, monkeypatch):
    monkeypatch.setattr(indexer, "ANALYZE_AFTER", 50)
    source = tmp_path / "extents.nq"
    write_extents_catalogue(source, 60)
    with catalogue.open(db_url) as cat:
        cat.load(str(source))
        assert cat.totals().datasets == 60
        assert _rows_known(cat) == 60


def test_a_bulk_load_leaves_no_text_entries_pending_on_postgresql(postgres_url, tmp_path):
    """GIN keeps new entries in a pending list that every text search scans whole until
    a VACUUM merges it; a load's VACUUM (SQLStore.vacuum) must merge it (one with
    ``INDEX_CLEANUP OFF`` did not: text searches stayed 2.5 times slower)."""
    source = tmp_path / "extents.nq"
    write_extents_catalogue(source, 200)  # about 22,000 quads: past bulk.VACUUM_AFTER
    with catalogue.open(postgres_url) as cat:
        cat.load(str(source))
        conn = cat.store.connection
        try:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS pgstattuple"))
            pending = conn.execute(text("SELECT pending_pages, pending_tuples FROM "
                                        "pgstatginindex('ix_search_datasets_doc')")).one()
        finally:
            cat.store.rollback()
    assert tuple(pending) == (0, 0)
