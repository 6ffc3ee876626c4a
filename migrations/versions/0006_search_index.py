"""The dataset search index, in the catalogue's database, built for the graphs already stored.

Revision ID: 0006_search_index
Revises: 0005_spatial_postgis
Create Date: 2026-11-26 00:00:00

Creates ``search_datasets``, ``search_facets``, ``search_facet_counts``,
``search_totals`` and ``reindex_queue`` (described in :mod:`catalogue.graph.schema`),
the free-text and box indexes (FTS5 and an R*Tree on SQLite, ``tsvector`` with GIN and
``box`` with GiST on PostgreSQL: :mod:`catalogue.graph.search_schema`), and indexes
every stored graph (:func:`catalogue.discovery.indexer.index_graphs`, in batches, inside
the migration's transaction).  From here on every write keeps the index
(:mod:`catalogue.graph.derived`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import TEXT as PG_TEXT

from catalogue.graph.search_schema import create_search_indexes, drop_search_indexes

revision: str = "0006_search_index"
down_revision: str | Sequence[str] | None = "0005_spatial_postgis"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TermId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Num = sa.Double().with_variant(sa.REAL(), "sqlite")
OrderedText = sa.Text().with_variant(PG_TEXT(collation="C"), "postgresql")
#: Graphs indexed per round while building.
BATCH = 500


def upgrade() -> None:
    op.create_table(
        "search_datasets",
        sa.Column("gid", TermId, primary_key=True, autoincrement=False),
        sa.Column("iri", OrderedText, nullable=False),
        sa.Column("title_key", OrderedText, nullable=False),
        sa.Column("title", OrderedText, nullable=False),
        sa.Column("zarr_format", sa.SmallInteger, nullable=True),
        sa.Column("valid", sa.SmallInteger, nullable=True),
        sa.Column("harvested", sa.BigInteger, nullable=True),
        sa.Column("run", TermId, nullable=True),
        sa.Column("run_ended", TermId, nullable=True),
        sa.Column("start_time", sa.BigInteger, nullable=True),
        sa.Column("end_time", sa.BigInteger, nullable=True),
        sa.Column("west", Num, nullable=True),
        sa.Column("south", Num, nullable=True),
        sa.Column("east", Num, nullable=True),
        sa.Column("north", Num, nullable=True),
        sa.Column("groups", sa.Integer, nullable=False),
        sa.Column("arrays", sa.Integer, nullable=False),
        sa.Column("triples", sa.BigInteger, nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("words", sa.Text, nullable=False),
        sa.Column("hit", sa.Text, nullable=False),
        sa.Column("collection_id", sa.Text, nullable=False),
    )
    op.create_index("ix_search_datasets_title", "search_datasets", ["title_key", "title", "iri"])
    op.create_index("ix_search_datasets_harvested", "search_datasets", ["harvested"])
    op.create_index("ix_search_datasets_start", "search_datasets", ["start_time"])
    op.create_index("ix_search_datasets_run", "search_datasets", ["run"])
    op.create_index("ix_search_datasets_iri", "search_datasets", ["iri"])
    op.create_index("ix_search_datasets_collection", "search_datasets", ["collection_id"])
    op.create_table(
        "search_facets",
        sa.Column("facet", sa.SmallInteger, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("gid", TermId, nullable=False),
        sa.PrimaryKeyConstraint("facet", "value", "gid", name="pk_search_facets"),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_search_facets_gid", "search_facets", ["gid", "facet"])
    op.create_table(
        "search_facet_counts",
        sa.Column("facet", sa.SmallInteger, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("datasets", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("facet", "value", name="pk_search_facet_counts"),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "search_totals",
        sa.Column("id", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("datasets", sa.BigInteger, nullable=False),
        sa.Column("groups", sa.BigInteger, nullable=False),
        sa.Column("arrays", sa.BigInteger, nullable=False),
        sa.Column("triples", sa.BigInteger, nullable=False),
        sa.Column("generation", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "reindex_queue",
        sa.Column("gid", TermId, primary_key=True, autoincrement=False),
    )
    conn = op.get_bind()
    create_search_indexes(conn)
    conn.execute(sa.text("INSERT INTO search_totals (id, datasets, groups, arrays, triples, generation) "
                         "VALUES (1, 0, 0, 0, 0, 1)"))
    from catalogue.discovery.indexer import index_graphs

    ids = sorted(int(g) for g in conn.execute(sa.text("SELECT id FROM graphs")).scalars())
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        done = index_graphs(conn, chunk)
        missed = [{"gid": g} for g in chunk if g not in done]
        if missed:  # unreadable now: left for catalogue reindex, which says why
            conn.execute(sa.text("INSERT INTO reindex_queue (gid) VALUES (:gid)"), missed)
    if ids:
        from catalogue.discovery.indexer import analyze

        analyze(conn)


def downgrade() -> None:
    drop_search_indexes(op.get_bind())
    for table in ("reindex_queue", "search_totals", "search_facet_counts", "search_facets", "search_datasets"):
        op.drop_table(table)
