"""SQL schema of the graph store (SQLAlchemy Core), revision ``0002_sequential_terms``
(``0003_spatial_index`` only adds the spatial index, see below, and
``0004_spatial_lon_lat`` rebuilds it, ``0005_spatial_postgis`` moves it to PostGIS on
PostgreSQL when available).

This module is the reference the Alembic migrations are checked against
(``target_metadata``); the tables themselves are created by the migrations, never by
``metadata.create_all``, so that every database has a known revision.

Layout, chosen so that a SPARQL-to-SQL compiler can answer triple patterns with
integer-only index scans, decode terms with one join each, and compare literal values
without parsing lexical forms:

``datatypes``
    Datatype IRIs, numbered sequentially.  A literal refers to its datatype by this
    small number instead of repeating the IRI in every ``terms`` row.  Rows are never
    deleted, so an id, once committed, means the same IRI forever (the store caches
    them).
``terms``
    Dictionary of RDF terms.  ``id`` is sequential (in order of first appearance),
    because SQLite stores small integers in one to three bytes and ids are repeated
    in four quad indexes.  On SQLite it is the rowid (the table's clustered key) and
    ``AUTOINCREMENT``, so the id of a deleted term is never given to another term
    (caches keyed by id stay right); on PostgreSQL it is fed by the sequence
    ``terms_id_seq``, which never hands out a number twice either.  ``hash`` is the
    content hash of :func:`.terms.term_hash` with a unique index: writers find the ids
    of a batch of terms through it.  ``value`` is the exact lexical form;
    ``datatype`` is NULL for IRIs, blank nodes, plain and language-tagged literals.
    ``num`` is :func:`.terms.comparable_value`, NULL where a literal has none.
``quads``
    ``(g, s, p, o)`` term ids.  The primary key serves graph-first access; three
    covering indexes serve the other access paths (subject-, predicate/object- and
    object-first).  On SQLite the table is ``WITHOUT ROWID`` so the primary key *is*
    the table and no rowid b-tree is kept for rows of four integers.
``graphs``
    Term ids of the named graphs that exist, including empty ones (rdflib's
    ``add_graph``).
``namespaces``
    Prefix bindings.

The spatial index of ``geo:wktLiteral`` terms (``geo_index``, revision
``0003_spatial_index``) is not described here: it is an R*Tree virtual table on SQLite
and a ``box`` or (with PostGIS, ``0005_spatial_postgis``) ``geometry`` column on
PostgreSQL, created by :mod:`.spatial`.
"""

from __future__ import annotations

from sqlalchemy import (
    REAL,
    BigInteger,
    Column,
    Double,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
)

__all__ = [
    "Num",
    "TermId",
    "datatypes",
    "graphs",
    "metadata",
    "namespaces",
    "quads",
    "terms",
]

metadata = MetaData()

#: Term id: BIGINT on PostgreSQL; plain INTEGER on SQLite (which is 64-bit there and
#: stored in as few bytes as the value needs) so that the primary key is the rowid.
TermId = BigInteger().with_variant(Integer(), "sqlite")

#: Comparable value of a literal: a double on both databases.
Num = Double().with_variant(REAL(), "sqlite")

datatypes = Table(
    "datatypes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("iri", Text, nullable=False),
    UniqueConstraint("iri", name="uq_datatypes_iri"),
)

terms = Table(
    "terms",
    metadata,
    Column("id", TermId, primary_key=True, autoincrement=True),
    Column("hash", BigInteger, nullable=False),
    Column("kind", SmallInteger, nullable=False),
    Column("value", Text, nullable=False),
    Column("datatype", Integer, nullable=True),
    Column("lang", Text, nullable=True),
    Column("num", Num, nullable=True),
    Index("ix_terms_hash", "hash", unique=True),
    sqlite_autoincrement=True,
)

quads = Table(
    "quads",
    metadata,
    Column("g", TermId, nullable=False),
    Column("s", TermId, nullable=False),
    Column("p", TermId, nullable=False),
    Column("o", TermId, nullable=False),
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
