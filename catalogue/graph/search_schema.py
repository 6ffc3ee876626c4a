"""The database-specific half of the dataset search index: free text and boxes.

:mod:`.schema` describes the search index's ordinary tables; the two indexes below
differ by database, so the SQLAlchemy schema module cannot describe them (Alembic's
comparison leaves them out: :func:`.spatial.include_name`).  What goes into them, and
the searches over them, are :mod:`catalogue.discovery`'s.

``search_text``: one document per dataset, four weighted fields (title, keywords,
variables, summary) of *already normalised* tokens (:mod:`catalogue.discovery.normalise`
folds, splits and stems them in Python, once, for both databases, so that both find the
same datasets):

* SQLite: an FTS5 table ``search_text(title, keywords, variables, summary)``, rowid =
  the dataset's graph id, with the ``ascii`` tokenizer (which takes the tokens as given:
  they are runs of letters and digits separated by spaces) and ``detail=column`` (what
  search needs: which field holds a token, not where in it), with prefix indexes for
  search-as-you-type (the same tokens are in the row too: ``search_datasets.words``);
* PostgreSQL: a ``doc tsvector`` column of ``search_datasets`` with a GIN index; each
  token is a lexeme whose weight is its field (A title, B keywords, C variables, D
  summary), written in ``tsvector``'s input syntax so that no text-search parser splits
  it differently.

The CRS84 boxes of the datasets' extents (a box across the antimeridian is two parts):

* SQLite: an R*Tree ``search_boxes(key, minx, maxx, miny, maxy, mint, maxt)``, keyed
  ``graph id * 2 + part``, whose third dimension is the dataset's period in seconds since
  1970 (``±1e18`` when it has none), so that a search by box and time asks one index for
  the datasets near in both (:data:`NO_TIME`);
* PostgreSQL: ``env`` and ``env2`` (the second part) ``box`` columns of
  ``search_datasets``, each in a GiST index with the period, huge boxes apart
  (:data:`HUGE_AREA`, :data:`POSTGRES_LAYOUT`).

Huge boxes (:data:`HUGE_AREA`: a quarter of the world or more; a global grid's) are not
in the box indexes but in ``search_huge``, a narrow copy of those datasets' rows holding
what a search checks (period, box, harvest time, facet values, indexed words): every box
search meets every huge box whose period matches, and read from ``search_datasets``
each was a random page (three quarters of a map search's candidates, though a tenth of
the catalogue). On SQLite the table is ``WITHOUT ROWID``, clustered by the period's start
(``since``, :data:`NO_SINCE` without a period), so that a search reads the huge datasets
of its period as consecutive pages; on PostgreSQL it is a small heap with the period in
a GiST index. The search asks it beside the box index
(:func:`catalogue.discovery.conditions.box_condition`).

On PostgreSQL the period is also a ``span int8range`` column (generated from the
instants) with a GiST index. And on PostgreSQL, the dataset's facet values as a
``facets text[]`` column (``"<facet
number>:<value>"``) with a GIN index, so that a search is one table's conditions, each
answered by an index the planner combines (bitmap AND/OR), and planned in a fraction of
a millisecond; SQLite, whose virtual tables cannot be columns, joins ``search_facets``.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Connection

__all__ = [
    "BOX_PARTS",
    "HUGE_AREA",
    "HUGE_COLUMNS",
    "HUGE_POSTGRES_LAYOUT",
    "NO_SINCE",
    "NO_TIME",
    "POSTGRES_LAYOUT",
    "SEARCH_COLUMNS",
    "SEARCH_INDEXES",
    "SEARCH_ROW_TABLES",
    "SEARCH_TABLES",
    "copy_huge",
    "create_search_indexes",
    "drop_search_indexes",
    "fill_huge",
    "is_huge",
]

#: The time range of a box whose dataset has no period (R*Tree bounds are 32-bit floats).
NO_TIME: Final = 1e18

#: Rows a dataset may have in ``search_boxes``: keys are ``graph id * BOX_PARTS + part``.
BOX_PARTS: Final = 2

#: Boxes of at least this many square degrees (a quarter of the world's 360 x 180) are
#: *huge* (the box's first part, :meth:`~catalogue.model.extents.Box.parts`): they are
#: kept out of the box indexes, in ``search_huge``. Every box query meets them (a tenth
#: of a catalogue can be global grids), and in an R*Tree or GiST index they widen every
#: node's box, so that a search of a 20-degree box read 12,000 entries instead of 2,000.
#: PostgreSQL decides it with this exact predicate (``area(env) >= 16200``), which it
#: must find implied to use the partial index of the others.
HUGE_AREA: Final = 16200

#: ``search_huge.since`` of a dataset without a period: after every period's start
#: (whole microseconds since 1970 end in year 294,247), so that a search by period,
#: which never matches it, stops before it.
NO_SINCE: Final = 2**62

#: The columns ``search_huge`` copies from ``search_datasets`` (SQLite's ``tags``,
#: PostgreSQL's ``facets`` array: each database's facet check reads its own).
HUGE_COLUMNS: Final = {
    "sqlite": ("gid", "start_time", "end_time", "west", "south", "east", "north", "harvested", "tags", "words"),
    "postgresql": ("gid", "start_time", "end_time", "west", "south", "east", "north", "harvested", "facets", "words"),
}


def is_huge(part: tuple[float, float, float, float]) -> bool:
    """Whether a box, by its first part ``(minx, miny, maxx, maxy)``, is huge (SQLite's
    test; PostgreSQL's is the same arithmetic in SQL: ``area(env)``)."""
    return (part[2] - part[0]) * (part[3] - part[1]) >= HUGE_AREA

#: PostgreSQL's columns and indexes of ``search_datasets`` made here (not in schema.py),
#: and those of earlier layouts (dropped by :func:`drop_search_indexes` too).
SEARCH_COLUMNS: Final = frozenset({"doc", "env", "env2", "facets", "span"})
SEARCH_INDEXES: Final = frozenset({"ix_search_datasets_doc", "ix_search_datasets_near", "ix_search_datasets_far",
                                   "ix_search_datasets_huge", "ix_search_datasets_facets", "ix_search_datasets_span",
                                   "ix_search_datasets_env", "ix_search_datasets_env2", "ix_search_huge_gid",
                                   "ix_search_huge_span"})

#: The search index's own tables (rows per dataset, facet values, kept counts): what a
#: full reindex rewrites, then analyses and (PostgreSQL) vacuums.
SEARCH_ROW_TABLES: Final = ("search_datasets", "search_facets", "search_facet_counts", "search_huge")
#: The tables of the two indexes, with SQLite's shadow tables of FTS5 and R*Tree.
SEARCH_TABLES: Final = frozenset({
    "search_text", "search_text_data", "search_text_idx", "search_text_content",
    "search_text_docsize", "search_text_config", "search_text_vocab",
    "search_boxes", "search_boxes_node", "search_boxes_parent", "search_boxes_rowid", "search_huge",
})

_HUGE_SQLITE: Final = (
    "CREATE TABLE IF NOT EXISTS search_huge (since INTEGER NOT NULL, gid INTEGER NOT NULL, start_time INTEGER, "
    "end_time INTEGER, west REAL NOT NULL, south REAL NOT NULL, east REAL NOT NULL, north REAL NOT NULL, "
    "harvested INTEGER, tags TEXT NOT NULL, words TEXT NOT NULL, PRIMARY KEY (since, gid)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS ix_search_huge_gid ON search_huge (gid)",
)
#: ``search_huge``'s storage and period index on PostgreSQL. Every candidate's words and
#: facets are read (a search checks each huge row by itself), so they are stored as they
#: are, not compressed, while the row stays under TOAST's threshold: decompressing them was
#: a third of the arm's time. The period index is SP-GiST, a tree of disjoint ranges: a
#: period's 1,100 candidates among 10,000 in 0.4 ms, where GiST's overlapping ranges took 2.
#: (Revision 0012 brought it; it has its own copy.)
HUGE_POSTGRES_LAYOUT: Final = (
    "ALTER TABLE search_huge ALTER COLUMN words SET STORAGE EXTERNAL, ALTER COLUMN facets SET STORAGE EXTERNAL",
    "CREATE INDEX IF NOT EXISTS ix_search_huge_span ON search_huge USING spgist (span)",
)
_HUGE_POSTGRES: Final = (
    "CREATE TABLE IF NOT EXISTS search_huge (gid BIGINT PRIMARY KEY, start_time BIGINT, end_time BIGINT, "
    "west DOUBLE PRECISION NOT NULL, south DOUBLE PRECISION NOT NULL, east DOUBLE PRECISION NOT NULL, "
    "north DOUBLE PRECISION NOT NULL, harvested BIGINT, facets TEXT[] NOT NULL, words TEXT NOT NULL, "
    "span INT8RANGE GENERATED ALWAYS AS (CASE WHEN start_time IS NULL THEN NULL "
    "ELSE int8range(start_time, end_time, '[]') END) STORED)",
)

_SQLITE: Final = (
    "CREATE VIRTUAL TABLE search_text USING fts5(title, keywords, variables, summary, "
    "tokenize = 'ascii', detail = column, prefix = '2 3 4')",
    "CREATE VIRTUAL TABLE search_boxes USING rtree(key, minx, maxx, miny, maxy, mint, maxt)",
    # FTS5's vocabulary, read to estimate how many datasets a text matches (no storage)
    "CREATE VIRTUAL TABLE search_text_vocab USING fts5vocab(search_text, 'row')",
)
_POSTGRES: Final = (
    "ALTER TABLE search_datasets ADD COLUMN doc TSVECTOR NOT NULL DEFAULT ''::tsvector, "
    "ADD COLUMN env BOX, ADD COLUMN env2 BOX, ADD COLUMN facets TEXT[] NOT NULL DEFAULT '{}', "
    "ADD COLUMN span INT8RANGE GENERATED ALWAYS AS (CASE WHEN start_time IS NULL THEN NULL "
    "ELSE int8range(start_time, end_time, '[]') END) STORED",
    # The hit's JSON and the text go out of the row: the rows a search reads (bitmap heap
    # scans of thousands of candidates) stay narrow, dozens to a page.
    "ALTER TABLE search_datasets ALTER COLUMN hit SET STORAGE EXTERNAL, ALTER COLUMN doc SET STORAGE EXTERNAL, "
    "SET (toast_tuple_target = 512)",
    "CREATE INDEX ix_search_datasets_span ON search_datasets USING gist (span)",
    "CREATE INDEX ix_search_datasets_doc ON search_datasets USING gin (doc)",
    "CREATE INDEX ix_search_datasets_facets ON search_datasets USING gin (facets)",
)

#: What a search checks of each candidate row stays in it, compressed: the indexed words
#: (the text checked by hand when a box or period has listed few candidates) and the facet
#: values (the facet flags). Out of line, as ``toast_tuple_target`` would put them, each
#: check read the TOAST table's index and heap: 8 pages a row instead of one. Boxes are
#: indexed with the period, huge ones apart (:data:`HUGE_AREA`: their second parts are in
#: ``far``, which the search's own predicate then leaves out; they are found in
#: ``search_huge``). Run on a new index; the revisions that brought the layout have their
#: own copies (0008 rewrote the rows, so that values stored out of line came back in;
#: 0010 dropped the partial index of the huge boxes' periods, ``search_huge`` has one).
POSTGRES_LAYOUT: Final = (
    "ALTER TABLE search_datasets ALTER COLUMN words SET STORAGE MAIN, ALTER COLUMN facets SET STORAGE MAIN",
    "DROP INDEX IF EXISTS ix_search_datasets_env",
    "DROP INDEX IF EXISTS ix_search_datasets_env2",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_near ON search_datasets USING gist (env, span) "
    f"WHERE area(env) < {HUGE_AREA}",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_far ON search_datasets USING gist (env2, span)",
    "DROP INDEX IF EXISTS ix_search_datasets_huge",
)


def create_search_indexes(conn: Connection) -> None:
    """Create the (empty) free-text and box indexes, and ``search_huge``, on ``conn``'s
    database. (``search_huge`` is made if missing: an upgrade's earlier revision that
    builds the index with today's indexer makes it, and the revision that brought it
    then finds it.)"""
    sqlite = conn.dialect.name == "sqlite"
    for statement in _SQLITE if sqlite else (*_POSTGRES, *POSTGRES_LAYOUT):
        conn.exec_driver_sql(statement)
    create_huge_table(conn)


def create_huge_table(conn: Connection) -> None:
    """``search_huge``, if missing (empty)."""
    for statement in _HUGE_SQLITE if conn.dialect.name == "sqlite" else (*_HUGE_POSTGRES, *HUGE_POSTGRES_LAYOUT):
        conn.exec_driver_sql(statement)


def fill_huge(conn: Connection, gids: list[int] | None = None) -> None:
    """Copy the rows of huge datasets (of ``gids``, or all) from ``search_datasets`` into
    ``search_huge``, skipping those already there, and on SQLite take their boxes out of
    the R*Tree: an upgrade's work on rows already stored. PostgreSQL decides which are
    huge with the searches' own predicate (``area(env)``), so the indexer calls this for
    its new rows too; SQLite's indexer decides in Python (:func:`is_huge`), as here, and
    calls :func:`copy_huge`."""
    if conn.dialect.name != "sqlite":
        names = ", ".join(HUGE_COLUMNS["postgresql"])
        # ``search_datasets`` keeps the words and facets compressed; copied as they are,
        # they would stay so (:data:`HUGE_POSTGRES_LAYOUT`), so each is made a new value.
        values = names.replace("facets", "facets || CAST('{}' AS text[])").replace("words", "words || ''")
        chosen = "" if gids is None else " AND gid = ANY(%(gids)s)"
        conn.exec_driver_sql(f"INSERT INTO search_huge ({names}) SELECT {values} FROM search_datasets "
                             f"WHERE area(env) >= {HUGE_AREA}{chosen} ON CONFLICT (gid) DO NOTHING",
                             {"gids": list(gids or [])})
        return
    chosen = "" if gids is None else f" AND gid IN ({', '.join(str(int(g)) for g in gids) or 'NULL'})"
    boxes = conn.exec_driver_sql(
        f"SELECT gid, west, south, east, north FROM search_datasets WHERE west IS NOT NULL{chosen}").all()
    # the box's first part, as Box.parts() gives it (west > east crosses the antimeridian)
    huge = [int(g) for g, west, south, east, north in boxes
            if is_huge((west, south, 180.0 if west > east else east, north))]
    copy_huge(conn, huge)
    keys = [(g * BOX_PARTS + part,) for g in huge for part in range(BOX_PARTS)]
    if keys:
        conn.exec_driver_sql("DELETE FROM search_boxes WHERE key = ?", keys)


def copy_huge(conn: Connection, gids: list[int]) -> None:
    """SQLite: copy the ``search_datasets`` rows of ``gids``, known to be huge, into
    ``search_huge`` (skipping those already there), 500 a statement, read by SQLite alone."""
    names = ", ".join(HUGE_COLUMNS["sqlite"])
    for start in range(0, len(gids), 500):
        listed = ", ".join(str(int(g)) for g in gids[start:start + 500])
        conn.exec_driver_sql(f"INSERT OR IGNORE INTO search_huge (since, {names}) SELECT coalesce(start_time, "
                             f"{NO_SINCE}), {names} FROM search_datasets WHERE gid IN ({listed})")


def drop_search_indexes(conn: Connection) -> None:
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_text_vocab")
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_text")
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_boxes")
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_huge")
        return
    conn.exec_driver_sql("DROP TABLE IF EXISTS search_huge")
    for index in sorted(SEARCH_INDEXES):
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {index}")
    if conn.exec_driver_sql("SELECT to_regclass('search_datasets')").scalar() is not None:
        conn.exec_driver_sql("ALTER TABLE search_datasets " + ", ".join(
            f"DROP COLUMN IF EXISTS {c}" for c in sorted(SEARCH_COLUMNS)))
