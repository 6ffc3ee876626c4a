"""A search lists its matches in a work table of its connection (discovery/query.py)."""

from __future__ import annotations

from sqlalchemy import text

import catalogue
from catalogue.discovery.query import SearchQuery
from catalogue.model.extents import Box, Extent
from tests.support.search_graphs import summary, write_datasets


def test_searches_leave_the_work_table_empty_on_postgresql(postgres_url):
    """Every search's transaction is rolled back; PostgreSQL does not vacuum temporary
    tables, so rows deleted there would stay, dead, for later searches to scan."""
    with catalogue.open(postgres_url) as cat:
        write_datasets(cat, [summary(f"u:{n}", f"Sea ice {n}", extent=Extent(bbox=Box(n % 90, 0, n % 90 + 1, 1)))
                             for n in range(200)])
        for n in range(30):
            assert cat.search(SearchQuery(q="sea", bbox=Box(0, 0, 90, 1), offset=n)).total == 200
        cat.store.rollback()
        size = cat.store.connection.execute(text("SELECT pg_relation_size('pg_temp.search_base')")).scalar()
        cat.store.rollback()
        assert size == 0


def test_the_work_table_is_made_once_per_connection(db_url):
    with catalogue.open(db_url) as cat:
        write_datasets(cat, [summary("u:a", "Sea ice", extent=Extent(bbox=Box(0, 0, 1, 1)))])
        assert cat.search(SearchQuery(q="sea")).total == 1
        assert cat.store.connection.info.get("search_base")
        cat.store.rollback()
        assert cat.search(SearchQuery(q="ice", bbox=Box(0, 0, 2, 2))).total == 1  # still there after a rollback
