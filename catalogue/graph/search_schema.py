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

__all__ = ["BOX_PARTS", "HUGE_AREA", "NO_TIME", "POSTGRES_LAYOUT", "SEARCH_COLUMNS", "SEARCH_INDEXES",
           "SEARCH_ROW_TABLES", "SEARCH_TABLES", "create_search_indexes", "drop_search_indexes"]

#: The time range of a box whose dataset has no period (R*Tree bounds are 32-bit floats).
NO_TIME: Final = 1e18

#: Rows a dataset may have in ``search_boxes``: keys are ``graph id * BOX_PARTS + part``.
BOX_PARTS: Final = 2

#: Boxes of at least this many square degrees (a quarter of the world's 360 x 180) are
#: *huge*: PostgreSQL keeps them out of the box index. Every box query meets them (a tenth
#: of a catalogue can be global grids), and in a GiST index they widen every node's box,
#: so that a search of a 20-degree box read 12,000 entries instead of 2,000. They are
#: indexed by their period alone (:data:`SEARCH_INDEXES`); the search asks both
#: (:func:`catalogue.discovery.conditions.box_condition`), with this exact predicate,
#: which PostgreSQL must find implied to use the partial indexes.
HUGE_AREA: Final = 16200

#: PostgreSQL's columns and indexes of ``search_datasets`` made here (not in schema.py),
#: and those of earlier layouts (dropped by :func:`drop_search_indexes` too).
SEARCH_COLUMNS: Final = frozenset({"doc", "env", "env2", "facets", "span"})
SEARCH_INDEXES: Final = frozenset({"ix_search_datasets_doc", "ix_search_datasets_near", "ix_search_datasets_far",
                                   "ix_search_datasets_huge", "ix_search_datasets_facets", "ix_search_datasets_span",
                                   "ix_search_datasets_env", "ix_search_datasets_env2"})

#: The search index's own tables (rows per dataset, facet values, kept counts): what a
#: full reindex rewrites, then analyses and (PostgreSQL) vacuums.
SEARCH_ROW_TABLES: Final = ("search_datasets", "search_facets", "search_facet_counts")
#: The tables of the two indexes, with SQLite's shadow tables of FTS5 and R*Tree.
SEARCH_TABLES: Final = frozenset({
    "search_text", "search_text_data", "search_text_idx", "search_text_content",
    "search_text_docsize", "search_text_config", "search_text_vocab",
    "search_boxes", "search_boxes_node", "search_boxes_parent", "search_boxes_rowid",
})

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
#: indexed with the period, ``near`` and huge ones apart (:data:`HUGE_AREA`). Run on a
#: new index and by the migration that brought this layout (it rewrites the rows, so that
#: values stored out of line come back in).
POSTGRES_LAYOUT: Final = (
    "ALTER TABLE search_datasets ALTER COLUMN words SET STORAGE MAIN, ALTER COLUMN facets SET STORAGE MAIN",
    "DROP INDEX IF EXISTS ix_search_datasets_env",
    "DROP INDEX IF EXISTS ix_search_datasets_env2",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_near ON search_datasets USING gist (env, span) "
    f"WHERE area(env) < {HUGE_AREA}",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_far ON search_datasets USING gist (env2, span)",
    "CREATE INDEX IF NOT EXISTS ix_search_datasets_huge ON search_datasets USING gist (span) "
    f"WHERE area(env) >= {HUGE_AREA}",
)


def create_search_indexes(conn: Connection) -> None:
    """Create the (empty) free-text and box indexes on ``conn``'s database."""
    for statement in _SQLITE if conn.dialect.name == "sqlite" else (*_POSTGRES, *POSTGRES_LAYOUT):
        conn.exec_driver_sql(statement)


def drop_search_indexes(conn: Connection) -> None:
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_text_vocab")
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_text")
        conn.exec_driver_sql("DROP TABLE IF EXISTS search_boxes")
        return
    for index in sorted(SEARCH_INDEXES):
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {index}")
    if conn.exec_driver_sql("SELECT to_regclass('search_datasets')").scalar() is not None:
        conn.exec_driver_sql("ALTER TABLE search_datasets " + ", ".join(
            f"DROP COLUMN IF EXISTS {c}" for c in sorted(SEARCH_COLUMNS)))
