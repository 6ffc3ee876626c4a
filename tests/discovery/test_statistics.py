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
