"""The search index's PostgreSQL layout for map searches: huge boxes apart, boxes indexed
with their period, and what a search checks of each candidate kept in its row.

Revision ID: 0008_search_layout
Revises: 0007_parallel_harvests
Create Date: 2026-11-28 00:00:00

PostgreSQL only (as :data:`catalogue.graph.search_schema.POSTGRES_LAYOUT` made it then): the ``env`` and
``env2`` box indexes are replaced by ones holding the period too, with boxes of a quarter
of the world or more (:data:`~catalogue.graph.search_schema.HUGE_AREA`) indexed by their
period alone; ``words`` and ``facets`` are kept in the row (storage ``MAIN``), and every
row is rewritten once so that values stored out of line come back into it (on a large
index this takes a while: about 20 s per 100,000 datasets measured here, and the old
row versions are left to autovacuum). SQLite's index is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_search_layout"
down_revision: str | Sequence[str] | None = "0007_parallel_harvests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The layout as this revision made it (search_schema.POSTGRES_LAYOUT may change later; a
# later layout is a later revision). 16200 must be written as the searches write it, for
# PostgreSQL to find the partial indexes' predicates implied.
_STORAGE = "ALTER TABLE search_datasets ALTER COLUMN words SET STORAGE MAIN, ALTER COLUMN facets SET STORAGE MAIN"
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_near ON search_datasets USING gist (env, span) "
    "WHERE area(env) < 16200",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_far ON search_datasets USING gist (env2, span)",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_huge ON search_datasets USING gist (span) "
    "WHERE area(env) >= 16200",
)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    conn.exec_driver_sql(_STORAGE)
    for name in ("ix_search_datasets_env", "ix_search_datasets_env2"):
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
    # rewritten before the new indexes are built, so that they are built once
    conn.exec_driver_sql("UPDATE search_datasets SET words = words || '', facets = facets || '{}'::text[]")
    for statement in _INDEXES:
        conn.exec_driver_sql(statement)
    conn.exec_driver_sql("ANALYZE search_datasets")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for name in ("ix_search_datasets_near", "ix_search_datasets_far", "ix_search_datasets_huge"):
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
    conn.exec_driver_sql("ALTER TABLE search_datasets ALTER COLUMN words SET STORAGE EXTENDED, "
                         "ALTER COLUMN facets SET STORAGE EXTENDED")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_search_datasets_env ON search_datasets USING gist (env)")
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_search_datasets_env2 ON search_datasets USING gist (env2)")
