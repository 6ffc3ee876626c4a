"""Searching the index: ``/datasets``, the portal's search and STAC collection search, in SQL.

One :class:`SearchQuery` becomes a handful of statements on the catalogue's database
(the hits of the page, their total, and the facet counts), which give the same answers
on SQLite and PostgreSQL:

* **Free text.** The query is folded, split and stemmed as the index was
  (:mod:`.normalise`). Every term must match (AND), in any field; a term matches its
  token or its stem, and the last one also every token it begins (search as you
  type). SQLite asks its FTS5 table, PostgreSQL its ``tsvector`` GIN index, with the
  same lexemes. ``any_of`` (STAC's ``q=a,b``) gives alternatives, any of which may
  match. At most :data:`MAX_TERMS` distinct terms.
* **Relevance.** Each term scores the weight of the best field it matches in (title 8,
  keywords 4, variables 2, summary 1); datasets sort by the sum, then by title. The
  score is computed by the database from the fields that matched (FTS5 column filters,
  tsquery weights), so it is the same on both; with alternatives, a dataset scores its
  best matching one. (A term-frequency score such as FTS5's bm25 differs between the
  two databases' implementations, so it would break that promise; field weights are
  what a portal user can predict.)
* **Filters.** Several values of one filter are OR'd, different filters AND'd; facet
  values through ``search_facets``; ``bbox`` through the box index (R*Tree, GiST), then
  exactly on the stored box (west > east crosses the antimeridian; touching edges
  intersect); ``datetime`` on the period's instants (btree), a dataset without a
  period never matching; ``harvested_since`` on the run's end.
* **Facets** are disjunctive: one facet's counts are computed under every filter but
  its own. Counts over the whole catalogue (no filter at all) come from
  ``search_facet_counts``, kept by the indexer, so the front page never scans.
* **Sorts**: relevance (title without text), title (folded, then as written, then IRI:
  code-point order on both databases), harvested / -harvested and start / -start
  (datasets without the date last, then title order).

The conditions and their plan are in :mod:`.conditions`, the facet counts in :mod:`.counts`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from catalogue.model.codecs import normalise_codec_name
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Box

from .conditions import (
    ORDER,
    WEIGHTS,
    Condition,
    Sql,
    box_condition,
    facet_condition,
    huge_arm,
    plan,
    score,
)
from .counts import (
    FACET_VALUES,
    PYTHON_FACETS,
    counting,
    facet_groups,
    facet_only_counts,
    kept_counts,
    listed,
    python_counts,
    read_counts,
)
from .indexer import field_words, micros
from .normalise import stem, tokenize
from .summary import FACETS, DatasetSummary

__all__ = ["FACETS", "FACET_VALUES", "MAX_TERMS", "SORTS", "Hit", "QueryError", "SearchQuery", "SearchResult",
           "generation", "search"]

#: Distinct free-text terms a query may have.
MAX_TERMS: Final = 32
#: Sort orders.
SORTS: Final = ("relevance", "title", "harvested", "-harvested", "start", "-start")


@dataclass
class SearchQuery:
    """A ``/datasets`` search (see the module docstring for the semantics)."""

    q: str = ""
    #: Alternatives (STAC free text: ``q=EO,Earth Observation``): a dataset matches when
    #: every term of one alternative matches; it ranks by its best alternative. Used
    #: instead of ``q`` when not empty.
    any_of: list[str] = field(default_factory=list)
    dtype: list[str] = field(default_factory=list)
    dimension: list[str] = field(default_factory=list)
    standard_name: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    zarr_format: list[int] = field(default_factory=list)
    codec: list[str] = field(default_factory=list)
    valid: bool | None = None
    #: Multiscale pyramids' axis types and units (OME-Zarr: space, time, channel; micrometer).
    axis_type: list[str] = field(default_factory=list)
    axis_unit: list[str] = field(default_factory=list)
    harvested_since: datetime | None = None
    #: Datasets whose CRS84 box intersects this one (see ``web/http/where_when.py``).
    bbox: Box | None = None
    #: Datasets whose period overlaps ``(start, end)``, aware UTC; ``None`` is an open end.
    datetime: tuple[datetime | None, datetime | None] | None = None
    limit: int = 20
    offset: int = 0
    sort: str = "relevance"  # relevance | title | harvested | -harvested | start | -start

    def key(self) -> str:
        """A canonical text of the query (what a cache of answers is keyed by)."""
        return json.dumps([self.q, self.any_of, self.dtype, self.dimension, self.standard_name, self.units,
                           self.zarr_format, self.codec, self.valid,
                           self.harvested_since.isoformat() if self.harvested_since else None,
                           self.bbox.as_list() if self.bbox else None,
                           [d.isoformat() if d else None for d in self.datetime] if self.datetime else None,
                           self.limit, self.offset, self.sort, self.axis_type, self.axis_unit], ensure_ascii=False)

    def alternatives(self) -> list[list[str]]:
        """The query's terms, per alternative (one alternative of no terms: no text)."""
        found = [list(dict.fromkeys(tokenize(t))) for t in (self.any_of or [self.q])]
        return [terms for terms in found if terms] or [[]]

    def selected(self) -> dict[str, list[str]]:
        """Facet -> the values asked for, in the facets' vocabulary (``<f4`` is float32)."""
        return {
            "dtype": list(dict.fromkeys(v3_vocabulary_name(v) or v for v in self.dtype)),
            "dimension": list(self.dimension), "standard_name": list(self.standard_name), "units": list(self.units),
            "zarr_format": [str(z) for z in self.zarr_format],
            "codec": list(dict.fromkeys(normalise_codec_name(v) for v in self.codec)),
            "valid": [] if self.valid is None else ["true" if self.valid else "false"],
            "axis_type": list(dict.fromkeys(self.axis_type)), "axis_unit": list(dict.fromkeys(self.axis_unit)),
        }


@dataclass
class Hit:
    """One dataset of a page: its IRI and its hit JSON as the index stores it."""

    iri: str
    json: bytes

    def summary(self) -> DatasetSummary:
        return DatasetSummary.from_json(json.loads(self.json))


@dataclass
class SearchResult:
    total: int
    hits: list[Hit]
    #: facet -> [(value, count)], count descending then value.
    facets: dict[str, list[tuple[str, int]]]


class QueryError(ValueError):
    """A search the index refuses (too many terms, unknown sort): HTTP 400."""


def _base(sql: Sql, query: SearchQuery, alternatives: list[list[str]]) -> list[Condition]:
    """Conditions on ``d`` other than the facets."""
    where: list[Condition] = []
    texts = [terms for terms in alternatives if terms]
    if texts:
        where.append(sql.text_condition(texts, narrowed=query.bbox is not None or query.datetime is not None))
    if query.harvested_since is not None:
        since = sql.param(micros(query.harvested_since))
        where.append(Condition(f"d.harvested >= {since}",
                                driver=f"SELECT gid FROM search_datasets WHERE harvested >= {since}",
                                estimate=lambda: sql.count(f"SELECT count(*) FROM search_datasets "
                                                           f"WHERE harvested >= {since}")))
    if query.bbox is not None:
        where.append(box_condition(sql, query.bbox, query.datetime))
    if query.datetime is not None:
        start, end = query.datetime
        checks = []
        if not sql.sqlite:  # the span's GiST index; the instants are checked exactly below
            low = sql.param(micros(start) if start is not None else None)
            high = sql.param(micros(end) if end is not None else None)
            checks.append(f"d.span && int8range(CAST({low} AS bigint), CAST({high} AS bigint), '[]')")
        # "+ 0": checked on the candidates only. PostgreSQL would otherwise AND a bitmap of
        # the start_time index (half the catalogue, milliseconds) into the span's.
        fence = "" if sql.sqlite else " + 0"
        if end is not None:
            checks.append(f"d.start_time{fence} <= {sql.param(micros(end))}")
        if start is not None:
            checks.append(f"d.end_time{fence} >= {sql.param(micros(start))}")
        if start is None and end is None:
            checks.append("d.start_time IS NOT NULL")
        where.append(Condition(" AND ".join(checks)))
    return where




# ------------------------------------------------------------------ search
def generation(conn: Connection) -> int:
    """The index's generation: it changes with every change of the index (a cache key)."""
    found = conn.execute(text("SELECT generation FROM search_totals WHERE id = 1")).scalar()
    return int(found) if found is not None else 0


def search(conn: Connection, query: SearchQuery) -> SearchResult:
    """Filter, rank, page and count facets (see the module docstring), on ``conn`` at
    the start of a read transaction (see :func:`_work_table`). With text, a box,
    dates or a harvest time the matches are listed once (:func:`_tabled_search`); with
    facet filters alone, or none, the counts come from the facet index or the kept counts
    and the page from :func:`_page`."""
    if query.sort not in SORTS:
        raise QueryError(f"sort must be one of {', '.join(SORTS)}")
    alternatives = query.alternatives()
    total_terms = len({t for terms in alternatives for t in terms})
    if total_terms > MAX_TERMS:
        raise QueryError(f"q has {total_terms} distinct terms; at most {MAX_TERMS} are allowed")
    _work_table(conn)
    sql = Sql(conn)
    base = _base(sql, query, alternatives)
    selected = query.selected()
    facet_where = {name: facet_condition(sql, name, values) for name, values in selected.items() if values}
    if base:
        total, counts, hits = _tabled_search(conn, sql, query, alternatives, base, facet_where)
        if not sql.sqlite:
            conn.commit()  # empties the work table (see _tabled_search); nothing else was written
        return SearchResult(total=total, hits=hits, facets=listed(counts, selected))
    if not facet_where:  # the whole catalogue: the kept counts, no scan
        total = int(conn.execute(text("SELECT datasets FROM search_totals WHERE id = 1")).scalar() or 0)
        counts = kept_counts(conn)
    else:
        total, counts = facet_only_counts(conn, sql, facet_where)
    hits = _page(conn, sql, query, list(facet_where.values())) if total and query.limit else []
    return SearchResult(total=total, hits=hits, facets=listed(counts, selected))


def _work_table(conn: Connection) -> None:
    """Create the connection's ``search_base`` once (:func:`_tabled_search`), in a
    transaction of its own: made in each search's read transaction, it would go with
    that transaction's rollback, and PostgreSQL would write its catalog every time. So
    the first search on a connection commits (and on PostgreSQL every search that lists
    its matches does), which is why :func:`search` wants a connection whose transaction
    has done nothing yet (``Catalogue.search`` gives it one)."""
    if conn.info.get("search_base"):
        return
    if conn.dialect.name == "sqlite":
        conn.execute(text("CREATE TEMP TABLE IF NOT EXISTS search_base (gid INTEGER PRIMARY KEY, "
                          + ", ".join(f"m{n}" for n in range(len(FACETS))) + ")"))
    else:
        conn.execute(text("CREATE TEMP TABLE IF NOT EXISTS search_base (gid bigint PRIMARY KEY, facets text[], "
                          + ", ".join(f"m{n} boolean" for n in range(len(FACETS))) + ") ON COMMIT DELETE ROWS"))
    conn.commit()
    conn.info["search_base"] = True


#: Matching datasets up to which they are ranked in Python from each row's ``words``,
#: rather than by the database (one FTS5 list or tsquery per field and term).
PYTHON_RANKING: Final = 1_000


def _tabled_search(conn: Connection, sql: Sql, query: SearchQuery, alternatives: list[list[str]],
                   base: list[Condition], facet_where: dict[str, Condition]) -> tuple[int, dict, list[Hit]]:
    """The datasets matching the base conditions are listed once, with a flag per facet
    filter, into a temporary table of the connection (``search_base``); the counts and
    the page then read it instead of evaluating the conditions again. Relevance is
    computed in Python for up to :data:`PYTHON_RANKING` hits, from the rows' indexed
    words (:func:`_rank`)."""
    flags = list(facet_where.values())
    table = "temp.search_base" if sql.sqlite else "pg_temp.search_base"
    # Emptied first (a search may follow another in one transaction). On PostgreSQL
    # :func:`search` then commits, and ``ON COMMIT DELETE ROWS`` empties the table in
    # place: rows rolled back instead would stay in it, dead (temporary tables are never
    # vacuumed), for every later search to scan, and a TRUNCATE would give the table new
    # files, and the catalog a new row, on every search.
    conn.execute(text(f"DELETE FROM {table}"))
    chosen = plan(base)
    source, where, small = chosen.source, chosen.where, chosen.small
    names = ", ".join(["gid", *([] if sql.sqlite else ["facets"]), *(f"m{n}" for n in range(len(flags)))])
    values = ", ".join(["d.gid", *([] if sql.sqlite else ["d.facets"]),
                        *(f.row_check if small and f.row_check else f.check for f in flags)])
    statement = f"INSERT INTO {table} ({names}) SELECT {values} FROM {source}" + (f" WHERE {where}" if where else "")
    huge = huge_arm(chosen, base)
    if huge is not None:  # the huge boxes the box index leaves out, each row checked by itself
        statement += " UNION ALL SELECT " + ", ".join(
            ["d.gid", *([] if sql.sqlite else ["d.facets"]), *(f.row_check or f.check for f in flags)]) + f" FROM {huge}"
    matched = conn.execute(text(statement), sql.params).rowcount
    everything = " AND ".join(f"b.m{n}" for n in range(len(flags))) or "1 = 1"
    groups, hit = facet_groups(list(facet_where))
    if sql.sqlite and matched > PYTHON_FACETS:
        total, counts = python_counts(conn, table, len(flags), groups)
    else:
        total, counts = read_counts(conn.execute(text(
            f"WITH base AS (SELECT * FROM {table}) {counting(sql, groups, hit)}")))
    if not total or not query.limit:
        return total, counts, []
    texts = [terms for terms in alternatives if terms]
    sort = query.sort if query.sort != "relevance" or texts else "title"
    limit, offset = max(0, query.limit), max(0, query.offset)
    joined = f"{table} b CROSS JOIN search_datasets d" if sql.sqlite else f"{table} b JOIN search_datasets d ON TRUE"
    if sort != "relevance":
        rows = conn.execute(text(f"SELECT d.iri, d.hit FROM {joined} WHERE d.gid = b.gid AND {everything} "
                                 f"ORDER BY {ORDER[sort]} LIMIT {limit} OFFSET {offset}"))
        return total, counts, [Hit(iri=r[0], json=r[1].encode("utf-8")) for r in rows]
    if total > PYTHON_RANKING:
        # Scored once per match (on PostgreSQL materialised first), then the page's ids; the
        # hits' JSON is read for those alone. Left to itself PostgreSQL sorted every dataset
        # of the catalogue by score, out of line JSON and all, to probe the work table in
        # that order (it keeps no statistics of it): seconds for a word in most datasets.
        scored = (f"SELECT d.gid, d.title_key, d.title, d.iri, {score(sql, texts)} AS score FROM {joined} "
                  f"WHERE d.gid = b.gid AND {everything}")
        if not sql.sqlite:  # SQLite's sorter keeps the page's rows only, as it is asked
            scored = f"WITH scored AS MATERIALIZED ({scored}) SELECT * FROM scored d"
        page = [r[0] for r in conn.execute(text(
            f"{scored} ORDER BY score DESC, {ORDER['title']} LIMIT {limit} OFFSET {offset}"), sql.params)]
        return total, counts, _hits(conn, page)
    found = [(*row[:4], *field_words(row[4])) for row in conn.execute(text(
        f"SELECT d.gid, d.title_key, d.title, d.iri, d.words FROM {joined} WHERE d.gid = b.gid AND {everything}"))]
    ranked = sorted(found, key=lambda r: (-_rank(texts, r[4:]), r[1], r[2], r[3]))[offset:offset + limit]
    if not ranked:
        return total, counts, []
    return total, counts, _hits(conn, [r[0] for r in ranked])


def _hits(conn: Connection, wanted: list[int]) -> list[Hit]:
    """The hits of datasets ``wanted`` (graph ids), in that order. On PostgreSQL each
    statement sees what was committed when it began: a dataset removed since the page was
    chosen is left out rather than failing the search."""
    if not wanted:
        return []
    stored = {gid: (iri, hit) for gid, iri, hit in conn.execute(
        text("SELECT gid, iri, hit FROM search_datasets WHERE gid IN :g").bindparams(
            bindparam("g", expanding=True)), {"g": wanted})}
    return [Hit(iri=stored[g][0], json=stored[g][1].encode("utf-8")) for g in wanted if g in stored]


def _rank(texts: list[list[str]], fields: tuple[str, ...]) -> int:
    """The relevance of one dataset from its indexed fields (title, keywords, variables,
    summary: space-separated lexemes), as the database computes it (:meth:`Sql.score`):
    per term the weight of the first field holding the term, its stem or (the last term)
    a lexeme it begins; the best alternative that matches."""
    lexemes = [set(f.split()) for f in fields]
    best = -1
    for terms in texts:
        score = 0
        for n, token in enumerate(terms):
            root, prefix = stem(token), n == len(terms) - 1
            weight = 0
            for f, found in enumerate(lexemes):
                if token in found or root in found or (prefix and any(w.startswith(token) for w in found)):
                    weight = WEIGHTS[f]
                    break
            if not weight:
                score = -1
                break
            score += weight
        best = max(best, score)
    return best




def _page(conn: Connection, sql: Sql, query: SearchQuery, conditions: list[Condition]) -> list[Hit]:
    """A page of a search without text (so ranked by title unless sorted otherwise)."""
    sort = "title" if query.sort == "relevance" else query.sort
    source, where = plan(conditions)[:2]  # facet conditions: no box
    clause = f" WHERE {where}" if where else ""
    limit, offset = sql.param(max(0, query.limit)), sql.param(max(0, query.offset))
    statement = f"SELECT d.iri, d.hit FROM {source}{clause} ORDER BY {ORDER[sort]} LIMIT {limit} OFFSET {offset}"
    return [Hit(iri=row[0], json=row[1].encode("utf-8")) for row in conn.execute(text(statement), sql.params)]
