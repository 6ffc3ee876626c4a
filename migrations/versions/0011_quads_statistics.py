"""Extended statistics on ``quads (p, o)`` for PostgreSQL's planner.

Revision ID: 0011_quads_statistics
Revises: 0010_search_huge
Create Date: 2026-11-28 00:00:00

PostgreSQL only (:mod:`catalogue.graph.statistics`): a thousand most common objects and
the dependency of the predicate on the object, so that a pattern naming both is
estimated at about its rows rather than at one. The upgrade analyses ``quads`` once (seconds
on a large catalogue); autovacuum's analyses keep it. SQLite is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from catalogue.graph.dialect import dialect_for
from catalogue.graph.statistics import create_statistics, drop_statistics

revision: str = "0011_quads_statistics"
down_revision: str | Sequence[str] | None = "0010_search_huge"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    create_statistics(conn)
    if conn.exec_driver_sql("SELECT 1 FROM quads LIMIT 1").first() is not None:
        # waits at most 2 s for a VACUUM of quads (else autovacuum's next analysis fills them)
        dialect_for(conn.dialect.name).analyze(conn, ("quads",))


def downgrade() -> None:
    drop_statistics(op.get_bind())
