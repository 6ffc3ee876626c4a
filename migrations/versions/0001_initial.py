"""Initial graph store schema: terms, quads, graphs, namespaces.

Revision ID: 0001_initial
Revises:
Create Date: 2025-01-01 00:00:00

Written out explicitly (not ``metadata.create_all``) so this revision stays frozen when
``catalogue/graph/schema.py`` evolves; later changes get their own revisions.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# 64-bit term ids; INTEGER on SQLite so a single-column primary key is the rowid.
TermId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "terms",
        sa.Column("id", TermId, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("datatype", sa.Text(), nullable=True),
        sa.Column("lang", sa.Text(), nullable=True),
    )
    op.create_table(
        "quads",
        sa.Column("g", sa.BigInteger(), nullable=False),
        sa.Column("s", sa.BigInteger(), nullable=False),
        sa.Column("p", sa.BigInteger(), nullable=False),
        sa.Column("o", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("g", "s", "p", "o", name="pk_quads"),
        # Rows are four integers: on SQLite the primary key b-tree is the whole table.
        sqlite_with_rowid=False,
    )
    op.create_index("ix_quads_spog", "quads", ["s", "p", "o", "g"])
    op.create_index("ix_quads_posg", "quads", ["p", "o", "s", "g"])
    op.create_index("ix_quads_ospg", "quads", ["o", "s", "p", "g"])
    op.create_table(
        "graphs",
        sa.Column("id", TermId, primary_key=True, autoincrement=False),
    )
    op.create_table(
        "namespaces",
        sa.Column("prefix", sa.Text(), primary_key=True),
        sa.Column("uri", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("namespaces")
    op.drop_table("graphs")
    op.drop_index("ix_quads_ospg", table_name="quads")
    op.drop_index("ix_quads_posg", table_name="quads")
    op.drop_index("ix_quads_spog", table_name="quads")
    op.drop_table("quads")
    op.drop_table("terms")
