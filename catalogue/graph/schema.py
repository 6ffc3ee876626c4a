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

The dataset search index (revision ``0006_search_index``): ``search_datasets`` (one
row per dataset graph: what ``/datasets`` sorts, filters and returns), ``search_facets``
(its facet values), ``search_facet_counts`` (datasets per facet value over the whole
catalogue, kept by deltas), ``search_totals`` (catalogue-wide counts and the index's
generation, one row) and ``reindex_queue`` (graphs changed by a writer that could not
index them).  Its free-text and box indexes are database-specific DDL
(:mod:`.search_schema`); what goes into the rows is :mod:`catalogue.discovery`'s.

``term_gc_queue`` (revision ``0007_parallel_harvests``): term ids that writers sharing
the write lock (harvests side by side on PostgreSQL) could not collect themselves; the
next writer holding it alone collects them (``SQLStore.collect_queued``).

``harvest_sources`` (revision ``0007_parallel_harvests``): one row per harvest source, its
latest run's outcome, times and error and how long it has been failing, kept by the
harvest in the transactions that record its runs (``catalogue harvests --sources``).

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
from sqlalchemy.dialects.postgresql import TEXT as PG_TEXT

__all__ = [
    "Num",
    "TermId",
    "datatypes",
    "graphs",
    "harvest_sources",
    "metadata",
    "namespaces",
    "quads",
    "reindex_queue",
    "search_datasets",
    "search_facet_counts",
    "search_facets",
    "search_totals",
    "term_gc_queue",
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


#: Text compared in code-point order on both databases (SQLite's BINARY collation is;
#: PostgreSQL's database collation may not be), so that sorting by title gives the same
#: order everywhere and the sort can walk an index.
OrderedText = Text().with_variant(PG_TEXT(collation="C"), "postgresql")

search_datasets = Table(
    "search_datasets",
    metadata,
    Column("gid", TermId, primary_key=True, autoincrement=False),
    Column("iri", OrderedText, nullable=False),
    Column("title_key", OrderedText, nullable=False),
    Column("title", OrderedText, nullable=False),
    Column("zarr_format", SmallInteger, nullable=True),
    Column("valid", SmallInteger, nullable=True),
    # Instants as whole microseconds since 1970 (UTC): exact, as Python's datetimes are.
    Column("harvested", BigInteger, nullable=True),
    # Term ids of the generating run and of its prov:endedAtTime literal.
    Column("run", TermId, nullable=True),
    Column("run_ended", TermId, nullable=True),
    Column("start_time", BigInteger, nullable=True),
    Column("end_time", BigInteger, nullable=True),
    # The root's CRS84 box, exactly (west > east crosses the antimeridian).
    Column("west", Num, nullable=True),
    Column("south", Num, nullable=True),
    Column("east", Num, nullable=True),
    Column("north", Num, nullable=True),
    Column("groups", Integer, nullable=False),
    Column("arrays", Integer, nullable=False),
    Column("triples", BigInteger, nullable=False),
    # Its facet values, a JSON array of "<facet number>:<value>": read whole when a
    # search counts facets over many datasets (before ``hit``, which SQLite may keep on
    # overflow pages that a row read then skips).
    Column("tags", Text, nullable=False),
    # Its indexed lexemes, field by field (title, keywords, variables, summary), each
    # between spaces and the fields parted by " | " (no lexeme holds "|"): checked for a
    # query's words where the row is read anyway, and what relevance is computed from.
    Column("words", Text, nullable=False),
    Column("hit", Text, nullable=False),
    # The dataset's STAC collection id (catalogue.rdf.stac.collection_id), looked up by it.
    Column("collection_id", Text, nullable=False),
    Index("ix_search_datasets_title", "title_key", "title", "iri"),
    Index("ix_search_datasets_harvested", "harvested"),
    Index("ix_search_datasets_start", "start_time"),
    Index("ix_search_datasets_run", "run"),
    Index("ix_search_datasets_iri", "iri"),
    Index("ix_search_datasets_collection", "collection_id"),
)

search_facets = Table(
    "search_facets",
    metadata,
    Column("facet", SmallInteger, nullable=False),
    Column("value", Text, nullable=False),
    Column("gid", TermId, nullable=False),
    PrimaryKeyConstraint("facet", "value", "gid", name="pk_search_facets"),
    Index("ix_search_facets_gid", "gid", "facet"),
    sqlite_with_rowid=False,
)

search_facet_counts = Table(
    "search_facet_counts",
    metadata,
    Column("facet", SmallInteger, nullable=False),
    Column("value", Text, nullable=False),
    Column("datasets", BigInteger, nullable=False),
    PrimaryKeyConstraint("facet", "value", name="pk_search_facet_counts"),
    sqlite_with_rowid=False,
)

search_totals = Table(
    "search_totals",
    metadata,
    Column("id", SmallInteger, primary_key=True, autoincrement=False),
    Column("datasets", BigInteger, nullable=False),
    Column("groups", BigInteger, nullable=False),
    Column("arrays", BigInteger, nullable=False),
    Column("triples", BigInteger, nullable=False),
    Column("generation", BigInteger, nullable=False),
)

reindex_queue = Table(
    "reindex_queue",
    metadata,
    Column("gid", TermId, primary_key=True, autoincrement=False),
)

harvest_sources = Table(
    "harvest_sources",
    metadata,
    Column("source", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("graph", Text, nullable=True),
    # The latest run: its IRI, lock holder, outcome ("running" until it ends) and times
    # (whole microseconds since 1970, UTC).
    Column("run", Text, nullable=True),
    Column("holder", Text, nullable=True),
    Column("outcome", Text, nullable=False),
    Column("started", BigInteger, nullable=True),
    Column("ended", BigInteger, nullable=True),
    Column("error", Text, nullable=True),
    Column("runs", Integer, nullable=False),
    # The end of the latest run that did not fail, and the start of the first failed run
    # since then (NULL while the source is not failing), with the count of those failures.
    Column("last_success", BigInteger, nullable=True),
    Column("failing_since", BigInteger, nullable=True),
    Column("failures", Integer, nullable=False),
    Index("ix_harvest_sources_failing", "failing_since"),
)

term_gc_queue = Table(
    "term_gc_queue",
    metadata,
    Column("term", TermId, primary_key=True, autoincrement=False),
)
