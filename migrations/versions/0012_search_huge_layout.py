"""``search_huge`` on PostgreSQL: words and facets not compressed, an SP-GiST period index.

Revision ID: 0012_search_huge_layout
Revises: 0011_quads_statistics
Create Date: 2026-11-29 00:00:00

A map search checks every huge dataset of its period by itself
(:func:`catalogue.discovery.conditions.huge_arm`): on the 100,000-dataset catalogue of
``bench/search_scale.py`` 1,100 candidate rows, whose compressed words and facets were
decompressed one by one, found through a GiST index of overlapping ranges. The upgrade
stores them as they are (rewriting the rows: about a tenth of the catalogue, seconds at
most) and indexes the periods with SP-GiST
(:data:`catalogue.graph.search_schema.HUGE_POSTGRES_LAYOUT`): the arm went from 7.7 to
3.5 ms. SQLite is unchanged. (Revision 0010 makes the table with today's layout, so a
catalogue upgraded from before 0010 already has it here: every statement below can run
again.) The downgrade restores the storage (values are compressed again as
rows are written) and GiST.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012_search_huge_layout"
down_revision: str | Sequence[str] | None = "0011_quads_statistics"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The layouts as this revision knows them (search_schema may change later).
_UP = (
    "ALTER TABLE search_huge ALTER COLUMN words SET STORAGE EXTERNAL, ALTER COLUMN facets SET STORAGE EXTERNAL",
    # each value made anew, so that it is stored by the column's new storage
    "UPDATE search_huge SET words = words || '', facets = facets || CAST('{}' AS text[])",
    "DROP INDEX IF EXISTS ix_search_huge_span",
    "CREATE INDEX ix_search_huge_span ON search_huge USING spgist (span)",
)
_DOWN = (
    "ALTER TABLE search_huge ALTER COLUMN words SET STORAGE MAIN, ALTER COLUMN facets SET STORAGE MAIN",
    "DROP INDEX IF EXISTS ix_search_huge_span",
    "CREATE INDEX ix_search_huge_span ON search_huge USING gist (span)",
)


def _apply(statements: tuple[str, ...]) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql" or conn.exec_driver_sql(
            "SELECT to_regclass('search_huge')").scalar() is None:
        return
    for statement in statements:
        conn.exec_driver_sql(statement)
    conn.exec_driver_sql("ANALYZE search_huge")


def upgrade() -> None:
    _apply(_UP)


def downgrade() -> None:
    _apply(_DOWN)
