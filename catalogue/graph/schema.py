"""SQL schema of the graph store (SQLAlchemy Core).

This module is the reference the Alembic migrations are checked against
(``target_metadata``); the tables themselves are created by the migrations, never by
``metadata.create_all``, so that every database has a known revision.

Layout, chosen so that a SPARQL-to-SQL compiler can answer triple patterns with
integer-only index scans and decode terms with one join each:

``terms``
    Dictionary of RDF terms; ``id`` is the content hash from :mod:`.terms`.  On
    SQLite the id is declared ``INTEGER`` so it becomes the rowid (the table's
    clustered key) instead of a second index.
``quads``
    ``(g, s, p, o)`` term ids.  The primary key serves graph-first access; three
    covering indexes serve the other access paths (subject-, predicate/object- and
    object-first).  On SQLite the table is ``WITHOUT ROWID`` so the primary key *is*
    the table and no rowid b-tree is kept for rows of four integers.
``graphs``
    Named graphs that exist, including empty ones (rdflib's ``add_graph``).
``namespaces``
    Prefix bindings.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
)

__all__ = ["TermId", "graphs", "metadata", "namespaces", "quads", "terms"]

metadata = MetaData()

#: 64-bit term id; plain INTEGER on SQLite (which is 64-bit there) so that a
#: single-column primary key becomes the rowid.
TermId = BigInteger().with_variant(Integer(), "sqlite")

terms = Table(
    "terms",
    metadata,
    Column("id", TermId, primary_key=True, autoincrement=False),
    Column("kind", SmallInteger, nullable=False),
    Column("value", Text, nullable=False),
    Column("datatype", Text, nullable=True),
    Column("lang", Text, nullable=True),
)

quads = Table(
    "quads",
    metadata,
    Column("g", BigInteger, nullable=False),
    Column("s", BigInteger, nullable=False),
    Column("p", BigInteger, nullable=False),
    Column("o", BigInteger, nullable=False),
    PrimaryKeyConstraint("g", "s", "p", "o", name="pk_quads"),
    Index("ix_quads_spog", "s", "p", "o", "g"),
    Index("ix_quads_posg", "p", "o", "s", "g"),
    Index("ix_quads_ospg", "o", "s", "p", "g"),
    sqlite_with_rowid=False,
)

graphs = Table(
    "graphs",
    metadata,
    Column("id", TermId, primary_key=True, autoincrement=False),
)

namespaces = Table(
    "namespaces",
    metadata,
    Column("prefix", Text, primary_key=True),
    Column("uri", Text, nullable=False),
)
