"""The catalogue's size at a glance, without scanning: ``catalogue stats`` and the portal's front page.

Datasets, groups, arrays and the triples of dataset graphs are kept by the search index
(``search_totals``, changed by difference in every indexing transaction), so reading
them costs one row whatever the catalogue's size. Sizes come from the database's own
accounting: PostgreSQL's ``pg_total_relation_size`` / ``pg_database_size`` (catalog
figures), SQLite's page count for the file and ``dbstat`` for the index, which walks the
pages of the index's own tables (SQLite keeps no size per table): the one part of
``catalogue stats`` that grows with the catalogue. The portal's front page reads the
counts only. Counting every stored quad is a scan
(seconds at 10^7 quads), so it is only done when asked (``exact``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from catalogue.graph.search_schema import SEARCH_TABLES

__all__ = ["INDEX_TABLES", "CatalogueStats", "Totals", "catalogue_stats", "totals"]

#: The search index's tables (their indexes and, on SQLite, FTS5 and R*Tree shadow tables
#: count with them).
INDEX_TABLES = frozenset({"search_datasets", "search_facets", "search_facet_counts", "search_totals",
                          "reindex_queue"}) | SEARCH_TABLES


@dataclass(frozen=True)
class Totals:
    """The counts the index keeps: one row read, whatever the catalogue's size."""

    datasets: int = 0
    groups: int = 0
    arrays: int = 0
    #: Triples of the dataset graphs (the provenance graph and others not counted).
    triples: int = 0
    #: The search index's generation (changes with every change of the index).
    generation: int = 0


def totals(conn: Connection) -> Totals:
    row = conn.execute(text("SELECT datasets, groups, arrays, triples, generation FROM search_totals "
                            "WHERE id = 1")).first()
    return Totals(*(int(v) for v in row)) if row is not None else Totals()


@dataclass
class CatalogueStats:
    """What ``catalogue stats`` prints."""

    datasets: int
    groups: int
    arrays: int
    #: Triples of the dataset graphs (the provenance graph and others not counted).
    triples: int
    #: Named graphs, dataset or not.
    graphs: int
    #: Graphs waiting for ``catalogue reindex`` (written without the index hook).
    queued: int
    #: Bytes of the search index's tables and indexes.
    index_bytes: int
    #: Bytes of the whole database.
    database_bytes: int
    #: The search index's generation (changes with every change of the index).
    generation: int
    database: str
    #: Every stored quad, counted (only with ``exact``).
    quads: int | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def catalogue_stats(conn: Connection, *, exact: bool = False) -> CatalogueStats:
    kept = totals(conn)
    graphs = int(conn.execute(text("SELECT count(*) FROM graphs")).scalar_one())
    queued = int(conn.execute(text("SELECT count(*) FROM reindex_queue")).scalar_one())
    if conn.dialect.name == "sqlite":
        # dbstat reads the pages of the b-trees it is asked about: the index's own only
        # (a quarter of a second for 600 MB of index here, where the whole file took four times as long).
        names = [name for name, owner in conn.execute(text("SELECT name, tbl_name FROM sqlite_schema"))
                 if name in INDEX_TABLES or owner in INDEX_TABLES]
        index_bytes = int(conn.execute(text("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN :n").bindparams(
            bindparam("n", expanding=True)), {"n": names}).scalar_one())
        page = int(conn.execute(text("PRAGMA page_size")).scalar_one())
        database_bytes = page * int(conn.execute(text("PRAGMA page_count")).scalar_one())
    else:
        index_bytes = int(conn.execute(text(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' "
            "AND n.nspname = current_schema() AND c.relname = ANY(:names)"),
            {"names": sorted(INDEX_TABLES)}).scalar_one())
        database_bytes = int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    quads = int(conn.execute(text("SELECT count(*) FROM quads")).scalar_one()) if exact else None
    return CatalogueStats(datasets=kept.datasets, groups=kept.groups, arrays=kept.arrays, triples=kept.triples,
                          graphs=graphs, queued=queued, index_bytes=index_bytes, database_bytes=database_bytes,
                          generation=kept.generation, database=conn.dialect.name, quads=quads)
