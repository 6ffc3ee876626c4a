"""Sequential term ids, a datatypes table and comparable literal values.

Revision ID: 0002_sequential_terms
Revises: 0001_initial
Create Date: 2025-06-01 00:00:00

Revision 0001 used the 64-bit content hash of a term as its id, so every id in the four
quad indexes took eight bytes.  This revision gives terms small sequential ids (one to
three bytes on SQLite) and keeps the hash in ``terms.hash`` (the old id *is* that hash,
so it is copied, not recomputed).  Datatype IRIs move to a ``datatypes`` table that
``terms.datatype`` refers to by number, and ``terms.num`` gets the comparable value of
each literal (:func:`catalogue.graph.terms.comparable_value`, computed in Python).

How the data moves (the same on SQLite and PostgreSQL, in the migration's transaction):

1. The 0001 tables are renamed to ``*_0001`` (on PostgreSQL their primary key
   constraints too, since constraint names share one namespace with indexes).
2. The new ``datatypes`` and ``terms`` tables are created and filled by one
   ``INSERT ... SELECT``.  New ids are numbered with ``ROW_NUMBER()``: predicates
   first, then classes (objects of ``rdf:type``), then graph names, then the rest,
   so the terms repeated in most quads get the shortest ids.
3. ``num`` is filled in id-ordered batches for the literals whose datatype has a
   comparable value (the only rows read into Python).
4. ``quads`` and ``graphs`` are rebuilt by joining the old ids to ``terms.hash``; the
   row counts are checked, so an inconsistent 0001 database (a quad naming a missing
   term) stops the upgrade instead of losing that quad.
5. The old tables are dropped and the quad indexes are built on the filled table.

Written out explicitly (not ``metadata.create_all``) so this revision stays frozen when
``catalogue/graph/schema.py`` evolves.  :func:`downgrade` is faithful: the hash becomes
the id again and the datatype IRIs go back into ``terms``; only ``num`` is dropped,
which 0001 did not have.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from catalogue.graph.terms import COMPARABLE_DATATYPES, comparable_value

revision: str = "0002_sequential_terms"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Term ids: BIGINT on PostgreSQL, INTEGER (the rowid alias) on SQLite.
TermId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Num = sa.Double().with_variant(sa.REAL(), "sqlite")
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
# Literals read per round trip while computing ``num``.
BATCH = 2000

QUAD_INDEXES = {
    "ix_quads_spog": ["s", "p", "o", "g"],
    "ix_quads_posg": ["p", "o", "s", "g"],
    "ix_quads_ospg": ["o", "s", "p", "g"],
}


def _dialect() -> str:
    return op.get_bind().dialect.name


def _move_aside(tables: Sequence[str], suffix: str) -> None:
    """Rename ``tables`` to ``<name>_<suffix>`` so the new ones can take their names.

    On PostgreSQL the primary key constraints are renamed too: their indexes share
    one namespace with the new tables' constraints.
    """
    postgres = _dialect() == "postgresql"
    for name in tables:
        pk_name = sa.inspect(op.get_bind()).get_pk_constraint(name)["name"] if postgres else None
        op.rename_table(name, f"{name}_{suffix}")
        if pk_name:
            op.execute(
                f'ALTER TABLE {name}_{suffix} RENAME CONSTRAINT "{pk_name}" TO "{pk_name}_{suffix}"'
            )


def _drop_quad_indexes(table: str) -> None:
    for name in QUAD_INDEXES:
        op.drop_index(name, table_name=table)


def _create_quads() -> None:
    op.create_table(
        "quads",
        sa.Column("g", TermId, nullable=False),
        sa.Column("s", TermId, nullable=False),
        sa.Column("p", TermId, nullable=False),
        sa.Column("o", TermId, nullable=False),
        sa.PrimaryKeyConstraint("g", "s", "p", "o", name="pk_quads"),
        sqlite_with_rowid=False,
    )


def _create_quad_indexes() -> None:
    # Built after the table is filled: one sort per index instead of random inserts.
    for name, columns in QUAD_INDEXES.items():
        op.create_index(name, "quads", columns)


def _count(table: str) -> int:
    return int(op.get_bind().execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


def _check_copied(table: str, old_table: str) -> None:
    new, old = _count(table), _count(old_table)
    if new != old:
        raise RuntimeError(
            f"{old - new} of {old} rows of {old_table} refer to terms that do not exist; "
            "the database is inconsistent and was left unchanged"
        )


def _fill_num() -> None:
    """Compute ``num`` for literals whose datatype has a comparable value.

    Reads in id order, one batch at a time (keyset pagination), and never updates the
    table while a query on it is still open: SQLite leaves that undefined.
    """
    conn = op.get_bind()
    dt_rows = conn.execute(sa.text("SELECT id, iri FROM datatypes")).all()
    comparable = {dt_id: iri for dt_id, iri in dt_rows if iri in COMPARABLE_DATATYPES}
    if not comparable:
        return
    select = sa.text(
        "SELECT id, value, datatype FROM terms WHERE id > :last AND datatype IN :dts "
        "ORDER BY id LIMIT :n"
    ).bindparams(sa.bindparam("dts", expanding=True))
    update = sa.text("UPDATE terms SET num = :num WHERE id = :id")
    last = 0
    while True:
        rows = conn.execute(select, {"last": last, "dts": list(comparable), "n": BATCH}).all()
        if not rows:
            return
        updates = []
        for term_id, value, dt_id in rows:
            num = comparable_value(value, comparable[dt_id])
            if num is not None:
                updates.append({"num": num, "id": term_id})
        if updates:
            conn.execute(update, updates)
        last = rows[-1][0]


def _require_online() -> None:
    if op.get_context().as_sql:
        raise NotImplementedError(
            "revision 0002_sequential_terms moves data (and computes values in Python), "
            "so it cannot be rendered as an SQL script; run it against the database"
        )


def upgrade() -> None:
    _require_online()
    postgres = _dialect() == "postgresql"
    _move_aside(["terms", "quads", "graphs"], "0001")

    op.create_table(
        "datatypes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("iri", sa.Text(), nullable=False),
        sa.UniqueConstraint("iri", name="uq_datatypes_iri"),
    )
    op.execute(
        "INSERT INTO datatypes (iri) SELECT DISTINCT datatype FROM terms_0001 "
        "WHERE datatype IS NOT NULL ORDER BY datatype"
    )

    op.create_table(
        "terms",
        sa.Column("id", TermId, primary_key=True, autoincrement=True),
        sa.Column("hash", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("datatype", sa.Integer(), nullable=True),
        sa.Column("lang", sa.Text(), nullable=True),
        sa.Column("num", Num, nullable=True),
        # Ids are never reused, even after the term with the highest id is deleted.
        sqlite_autoincrement=True,
    )
    # The rank puts the terms that recur in most quads first, so they get the
    # shortest ids; the old id (a hash) only makes the order deterministic.
    op.get_bind().execute(
        sa.text(
            """
            INSERT INTO terms (id, hash, kind, value, datatype, lang)
            SELECT ROW_NUMBER() OVER (ORDER BY r.rank, r.id), r.id, r.kind, r.value, d.id,
                   r.lang
            FROM (
                SELECT t.id, t.kind, t.value, t.datatype, t.lang,
                       CASE
                           WHEN EXISTS (SELECT 1 FROM quads_0001 q WHERE q.p = t.id) THEN 0
                           WHEN EXISTS (
                               SELECT 1 FROM quads_0001 q
                               WHERE q.o = t.id AND q.p IN (
                                   SELECT ty.id FROM terms_0001 ty
                                   WHERE ty.kind = 1 AND ty.value = :rdf_type
                               )
                           ) THEN 1
                           WHEN EXISTS (SELECT 1 FROM graphs_0001 g WHERE g.id = t.id) THEN 2
                           ELSE 3
                       END AS rank
                FROM terms_0001 t
            ) r
            LEFT JOIN datatypes d ON d.iri = r.datatype
            """
        ),
        {"rdf_type": RDF_TYPE},
    )
    op.create_index("ix_terms_hash", "terms", ["hash"], unique=True)
    _check_copied("terms", "terms_0001")
    if postgres:
        # Explicit ids bypassed the sequence; new terms must continue after them.
        op.execute(
            "SELECT setval(pg_get_serial_sequence('terms', 'id'), "
            "(SELECT coalesce(max(id), 0) + 1 FROM terms), false)"
        )
    _fill_num()

    _drop_quad_indexes("quads_0001")
    _create_quads()
    op.execute(
        """
        INSERT INTO quads (g, s, p, o)
        SELECT tg.id, ts.id, tp.id, tob.id
        FROM quads_0001 q
        JOIN terms tg ON tg.hash = q.g
        JOIN terms ts ON ts.hash = q.s
        JOIN terms tp ON tp.hash = q.p
        JOIN terms tob ON tob.hash = q.o
        ORDER BY 1, 2, 3, 4
        """
    )
    _check_copied("quads", "quads_0001")

    op.create_table("graphs", sa.Column("id", TermId, primary_key=True, autoincrement=False))
    op.execute(
        "INSERT INTO graphs (id) SELECT t.id FROM graphs_0001 g JOIN terms t ON t.hash = g.id"
    )
    _check_copied("graphs", "graphs_0001")

    op.drop_table("graphs_0001")
    op.drop_table("quads_0001")
    op.drop_table("terms_0001")
    _create_quad_indexes()


def downgrade() -> None:
    """Back to hash ids: exact, since ``terms.hash`` is the 0001 id of every term."""
    _require_online()
    _drop_quad_indexes("quads")
    _move_aside(["terms", "quads", "graphs"], "0002")

    op.create_table(
        "terms",
        sa.Column("id", TermId, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("datatype", sa.Text(), nullable=True),
        sa.Column("lang", sa.Text(), nullable=True),
    )
    op.execute(
        "INSERT INTO terms (id, kind, value, datatype, lang) "
        "SELECT t.hash, t.kind, t.value, d.iri, t.lang "
        "FROM terms_0002 t LEFT JOIN datatypes d ON d.id = t.datatype"
    )
    _check_copied("terms", "terms_0002")

    # 0001 declared quad columns BIGINT on every database.
    op.create_table(
        "quads",
        sa.Column("g", sa.BigInteger(), nullable=False),
        sa.Column("s", sa.BigInteger(), nullable=False),
        sa.Column("p", sa.BigInteger(), nullable=False),
        sa.Column("o", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("g", "s", "p", "o", name="pk_quads"),
        sqlite_with_rowid=False,
    )
    op.execute(
        """
        INSERT INTO quads (g, s, p, o)
        SELECT tg.hash, ts.hash, tp.hash, tob.hash
        FROM quads_0002 q
        JOIN terms_0002 tg ON tg.id = q.g
        JOIN terms_0002 ts ON ts.id = q.s
        JOIN terms_0002 tp ON tp.id = q.p
        JOIN terms_0002 tob ON tob.id = q.o
        ORDER BY 1, 2, 3, 4
        """
    )
    _check_copied("quads", "quads_0002")

    op.create_table("graphs", sa.Column("id", TermId, primary_key=True, autoincrement=False))
    op.execute(
        "INSERT INTO graphs (id) SELECT t.hash FROM graphs_0002 g JOIN terms_0002 t ON t.id = g.id"
    )
    _check_copied("graphs", "graphs_0002")

    op.drop_table("graphs_0002")
    op.drop_table("quads_0002")
    op.drop_index("ix_terms_hash", table_name="terms_0002")
    op.drop_table("terms_0002")
    op.drop_table("datatypes")
    _create_quad_indexes()
