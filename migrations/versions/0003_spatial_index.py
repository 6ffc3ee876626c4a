"""The spatial index of ``geo:wktLiteral`` terms, built for the literals already stored.

Revision ID: 0003_spatial_index
Revises: 0002_sequential_terms
Create Date: 2026-01-01 00:00:00

Creates ``geo_index`` (an R*Tree on SQLite, a ``box`` column with a GiST index on
PostgreSQL; see :mod:`catalogue.graph.spatial`) and fills it from the stored
``geo:wktLiteral`` terms in id-ordered batches, reading only those literals into
Python (their envelopes are computed by shapely, as every later write does).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from catalogue.graph.spatial import create_index, drop_index, index_literals
from catalogue.graph.wkt import WKT_LITERAL

revision: str = "0003_spatial_index"
down_revision: str | Sequence[str] | None = "0002_sequential_terms"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Literals read per round trip while filling the index.
BATCH = 2000


def upgrade() -> None:
    conn = op.get_bind()
    create_index(conn)
    dt_id = conn.execute(
        sa.text("SELECT id FROM datatypes WHERE iri = :iri"), {"iri": WKT_LITERAL}
    ).scalar()
    if dt_id is None:
        return
    select = sa.text(
        "SELECT id, value FROM terms WHERE datatype = :dt AND id > :last ORDER BY id LIMIT :n"
    )
    last = 0
    while rows := conn.execute(select, {"dt": dt_id, "last": last, "n": BATCH}).all():
        index_literals(conn, [(int(term_id), value) for term_id, value in rows])
        last = int(rows[-1][0])


def downgrade() -> None:
    drop_index(op.get_bind())
