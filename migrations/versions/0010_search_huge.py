"""Huge boxes apart: ``search_huge``, the datasets whose box is a quarter of the world or more.

Revision ID: 0010_search_huge
Revises: 0009_temporal_values
Create Date: 2026-11-28 00:00:00

Every map search meets every global dataset of its period, and read from
``search_datasets`` each was a random page: three quarters of a search's candidates on a
catalogue where a tenth of the datasets are global grids. This revision copies those
datasets' rows (what a search checks of them) into ``search_huge``, clustered by the
period's start on SQLite (:mod:`catalogue.graph.search_schema`), takes their boxes out of
SQLite's R*Tree, and drops PostgreSQL's partial index of their periods (``search_huge``
has its own). On a 100,000-dataset catalogue this takes seconds. The downgrade puts the
boxes back and drops the table.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from catalogue.graph.search_schema import BOX_PARTS, NO_TIME, create_huge_table, fill_huge

revision: str = "0010_search_huge"
down_revision: str | Sequence[str] | None = "0009_temporal_values"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    conn = op.get_bind()
    create_huge_table(conn)
    fill_huge(conn)
    if conn.dialect.name != "sqlite":
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_search_datasets_huge")
    if conn.exec_driver_sql("SELECT 1 FROM search_huge LIMIT 1").first() is not None:
        conn.exec_driver_sql("ANALYZE search_huge")  # (on a new catalogue SQLite would make sqlite_stat1)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":  # the boxes back into the R*Tree, as revision 0009 kept them
        rows = conn.execute(sa.text(
            "SELECT gid, west, south, east, north, start_time, end_time FROM search_huge")).all()
        boxes = []
        for gid, west, south, east, north, start, end in rows:
            t0, t1 = (start / 1e6, end / 1e6) if start is not None else (-NO_TIME, NO_TIME)
            parts = [(west, south, 180.0, north), (-180.0, south, east, north)] if west > east else [
                (west, south, east, north)]
            boxes += [(gid * BOX_PARTS + n, x0, x1, y0, y1, t0, t1) for n, (x0, y0, x1, y1) in enumerate(parts)]
        if boxes:
            conn.exec_driver_sql("INSERT INTO search_boxes (key, minx, maxx, miny, maxy, mint, maxt) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?)", boxes)
    else:
        conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_search_datasets_huge ON search_datasets "
                             "USING gist (span) WHERE area(env) >= 16200")
    conn.exec_driver_sql("DROP TABLE IF EXISTS search_huge")
