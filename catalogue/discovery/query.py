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
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from catalogue.graph.search_schema import BOX_PARTS
from catalogue.model.codecs import normalise_codec_name
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Box

from .indexer import micros
from .normalise import stem, tokenize
from .summary import FACETS, DatasetSummary

__all__ = ["FACETS", "FACET_VALUES", "MAX_TERMS", "SORTS", "Hit", "QueryError", "SearchQuery", "SearchResult",
           "generation", "search"]

#: Distinct free-text terms a query may have.
MAX_TERMS: Final = 32
#: Values listed per facet (selected values are always listed).
FACET_VALUES: Final = 100
#: Sort orders.
SORTS: Final = ("relevance", "title", "harvested", "-harvested", "start", "-start")
#: Field weights for relevance: title > keywords > variables > summary.
WEIGHTS: Final = (8, 4, 2, 1)
_COLUMNS: Final = ("title", "keywords", "variables", "summary")
_TSWEIGHTS: Final = "ABCD"


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
                           self.limit, self.offset, self.sort], ensure_ascii=False)

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


# ------------------------------------------------------------------ SQL pieces
@dataclass
class _Condition:
    """One condition of a search, on the row ``d`` of ``search_datasets``.

    ``check`` is the condition (SQLite: an index probe per row). On SQLite a condition
    with an index of its own may instead *drive* the search: ``driver`` is a statement
    listing the ``gid`` it admits, ``estimate()`` how many, cheaply (:func:`_plan`);
    ``exact`` is what must still be checked of a row the driver gave (the box index's
    candidates are tested exactly)."""

    check: str
    driver: str | None = None
    estimate: Any = None
    exact: str | None = None
    size: int | None = None
    #: A check read from the row's own data, cheaper than ``check`` for a few thousand
    #: rows (``check`` lists a whole set once): used, last, when the driver is small.
    row_check: str | None = None

    def rows(self) -> int:
        """The driver's estimate, asked once."""
        if self.size is None:
            self.size = int(self.estimate())
        return self.size


class _Sql:
    """Conditions and their parameters, numbered as they are added."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.sqlite = conn.dialect.name == "sqlite"
        self.params: dict[str, Any] = {}

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def count(self, statement: str) -> int:
        return int(self.conn.execute(text(statement), self.params).scalar() or 0)

    # -- free text
    @staticmethod
    def _fts_term(token: str, prefix: bool) -> str:
        options = [f'"{token}" *' if prefix else f'"{token}"']
        root = stem(token)
        if root != token:
            options.append(f'"{root}"')
        return "(" + " OR ".join(options) + ")"

    @staticmethod
    def _ts_term(token: str, prefix: bool, weight: str = "") -> str:
        def lexeme(t: str) -> str:
            return "'" + t.replace("\\", "\\\\").replace("'", "''") + "'"
        options = [f"{lexeme(token)}:{'*' if prefix else ''}{weight}" if prefix or weight else lexeme(token)]
        root = stem(token)
        if root != token:
            options.append(f"{lexeme(root)}:{weight}" if weight else lexeme(root))
        return "(" + " | ".join(options) + ")"

    def _fts(self, terms: list[str]) -> str:
        last = len(terms) - 1
        return "(" + " AND ".join(self._fts_term(t, n == last) for n, t in enumerate(terms)) + ")"

    def matches(self, terms: list[str]) -> str:
        """Whether dataset ``d`` matches every term (a condition). On SQLite the matching
        set is listed once per statement (FTS5 answers ``MATCH ... AND rowid = ?`` by
        reading the whole of a term's list, milliseconds per row)."""
        if self.sqlite:
            return f"d.gid IN (SELECT rowid FROM search_text WHERE search_text MATCH {self.param(self._fts(terms))})"
        last = len(terms) - 1
        tsq = " & ".join(self._ts_term(t, n == last) for n, t in enumerate(terms))
        return f"d.doc @@ CAST({self.param(tsq)} AS tsquery)"

    def text_condition(self, texts: list[list[str]]) -> _Condition:
        """Datasets matching every term of one of the alternatives."""
        check = "(" + " OR ".join(self.matches(terms) for terms in texts) + ")"
        if not self.sqlite:
            return _Condition(check)
        either = self.param(" OR ".join(self._fts(terms) for terms in texts))
        return _Condition(check, driver=f"SELECT rowid AS gid FROM search_text WHERE search_text MATCH {either}",
                          estimate=lambda: self._text_estimate(texts), row_check=self._lexeme_check(texts))

    def _lexeme_check(self, texts: list[list[str]]) -> str:
        """The text condition read from the row's indexed lexemes (FTS5's stored fields,
        space-separated): a term is `` term `` or `` stem `` in them, the last one also
        `` term…``; exactly what FTS5's ``ascii`` tokenizer matches."""
        alternatives = []
        for terms in texts:
            conds = []
            for n, token in enumerate(terms):
                options = {f" {token} ", f" {stem(token)} "} | ({f" {token}"} if n == len(terms) - 1 else set())
                conds.append("(" + " OR ".join(f"instr(t.w, {self.param(o)}) > 0" for o in sorted(options)) + ")")
            alternatives.append("(" + " AND ".join(conds) + ")")
        return ("EXISTS (SELECT 1 FROM (SELECT ' ' || title || ' ' || keywords || ' ' || variables || ' ' || "
                f"summary || ' ' AS w FROM search_text WHERE rowid = d.gid) t WHERE {' OR '.join(alternatives)})")

    def _text_estimate(self, texts: list[list[str]]) -> int:
        """At most how many datasets the text matches: per alternative the least, over its
        terms, of the datasets holding the term, its stem or (the last) a word it begins,
        from FTS5's vocabulary (``search_text_vocab``)."""
        total = 0
        for terms in texts:
            least = None
            for n, token in enumerate(terms):
                options = {token, stem(token)}
                found = sum(int(self.conn.execute(text("SELECT doc FROM search_text_vocab WHERE term = :t"),
                                                  {"t": o}).scalar() or 0) for o in options)
                if n == len(terms) - 1:
                    found += int(self.conn.execute(text(
                        "SELECT sum(doc) FROM search_text_vocab WHERE term > :t AND term < :u"),
                        {"t": token, "u": token + "\U0010ffff"}).scalar() or 0)
                least = found if least is None else min(least, found)
            total += least or 0
        return total

    def in_field(self, token: str, prefix: bool, n: int) -> str:
        """Whether dataset ``d`` has ``token`` in field ``n`` (a condition)."""
        if self.sqlite:
            fts = "{" + _COLUMNS[n] + "} : " + self._fts_term(token, prefix)
            return f"d.gid IN (SELECT rowid FROM search_text WHERE search_text MATCH {self.param(fts)})"
        tsq = self._ts_term(token, prefix, _TSWEIGHTS[n])
        return f"d.doc @@ CAST({self.param(tsq)} AS tsquery)"

    def score(self, terms: list[str]) -> str:
        """The relevance of dataset ``d`` for the terms (it matches all of them)."""
        last = len(terms) - 1
        parts = []
        for n, token in enumerate(terms):
            cases = " ".join(f"WHEN {self.in_field(token, n == last, f)} THEN {WEIGHTS[f]}" for f in range(3))
            parts.append(f"(CASE {cases} ELSE {WEIGHTS[3]} END)")
        return " + ".join(parts)


def _box_condition(sql: _Sql, box: Box, period: tuple[datetime | None, datetime | None] | None) -> _Condition:
    """Datasets whose box intersects ``box``: index candidates, then exactly. On SQLite the
    R*Tree's third dimension is time: with a ``period`` too, its candidates are near in
    both (the period itself is checked exactly by its own condition)."""
    candidates, exact = [], []
    when = ""
    if sql.sqlite and period is not None:
        start, end = period
        if end is not None:
            when += f" AND mint <= {sql.param(micros(end) / 1e6)}"
        if start is not None:
            when += f" AND maxt >= {sql.param(micros(start) / 1e6)}"
    for x0, y0, x1, y1 in box.parts():
        p = [sql.param(v) for v in (x0, y0, x1, y1)]
        if sql.sqlite:
            candidates.append(f"SELECT key / {BOX_PARTS} AS gid FROM search_boxes WHERE maxx >= {p[0]} "
                              f"AND minx <= {p[2]} AND maxy >= {p[1]} AND miny <= {p[3]}{when}")
        else:
            query = f"box(point({p[0]}, {p[1]}), point({p[2]}, {p[3]}))"
            candidates += [f"d.env && {query}", f"d.env2 && {query}"]
        exact.append(f"(d.south <= {p[3]} AND {p[1]} <= d.north AND ("
                     f"(d.west <= d.east AND d.west <= {p[2]} AND {p[0]} <= d.east) OR "
                     f"(d.west > d.east AND (d.west <= {p[2]} OR {p[0]} <= d.east))))")
    exactly = f"({' OR '.join(exact)})"
    if not sql.sqlite:
        return _Condition(f"({' OR '.join(candidates)}) AND {exactly}")
    driver = " UNION ".join(candidates)
    return _Condition(exactly, driver=driver, exact=exactly,
                      estimate=lambda: sql.count(f"SELECT count(*) FROM ({driver})"))


def _base(sql: _Sql, query: SearchQuery, alternatives: list[list[str]]) -> list[_Condition]:
    """Conditions on ``d`` other than the facets."""
    where: list[_Condition] = []
    texts = [terms for terms in alternatives if terms]
    if texts:
        where.append(sql.text_condition(texts))
    if query.harvested_since is not None:
        since = sql.param(micros(query.harvested_since))
        where.append(_Condition(f"d.harvested >= {since}",
                                driver=f"SELECT gid FROM search_datasets WHERE harvested >= {since}",
                                estimate=lambda: sql.count(f"SELECT count(*) FROM search_datasets "
                                                           f"WHERE harvested >= {since}")))
    if query.bbox is not None:
        where.append(_box_condition(sql, query.bbox, query.datetime))
    if query.datetime is not None:
        start, end = query.datetime
        checks = []
        if not sql.sqlite:  # the span's GiST index; the instants are checked exactly below
            low = sql.param(micros(start) if start is not None else None)
            high = sql.param(micros(end) if end is not None else None)
            checks.append(f"d.span && int8range(CAST({low} AS bigint), CAST({high} AS bigint), '[]')")
        if end is not None:
            checks.append(f"d.start_time <= {sql.param(micros(end))}")
        if start is not None:
            checks.append(f"d.end_time >= {sql.param(micros(start))}")
        if start is None and end is None:
            checks.append("d.start_time IS NOT NULL")
        where.append(_Condition(" AND ".join(checks)))
    return where


def _facet_condition(sql: _Sql, name: str, values: list[str]) -> _Condition:
    if not sql.sqlite:  # the row's facets array, by its GIN index
        return _Condition(f"d.facets && CAST({sql.param([f'{FACETS.index(name)}:{v}' for v in values])} AS text[])")
    facet, listed = sql.param(FACETS.index(name)), ", ".join(sql.param(v) for v in values)
    return _Condition(
        f"EXISTS (SELECT 1 FROM search_facets f WHERE f.facet = {facet} AND f.value IN ({listed}) "
        f"AND f.gid = d.gid)",
        driver=f"SELECT DISTINCT gid FROM search_facets WHERE facet = {facet} AND value IN ({listed})",
        estimate=lambda: sql.count(f"SELECT sum(datasets) FROM search_facet_counts WHERE facet = {facet} "
                                   f"AND value IN ({listed})"))


#: Rows a driver may give for the text to be checked row by row rather than listed.
ROW_CHECKS: Final = 3_000


def _plan(conditions: list[_Condition]) -> tuple[str, str]:
    """``FROM`` and ``WHERE`` clauses over ``d`` for all ``conditions``.

    SQLite would otherwise build an ephemeral index of every ``IN (subquery)`` set (a
    common word's 50,000 datasets, a facet value's 90,000) before looking at a row. So
    the condition admitting the fewest datasets, by a cheap estimate (FTS5's vocabulary
    for text, the R*Tree's count for a box, the kept facet counts), lists them, and the
    others are checked row by row through their indexes (``CROSS JOIN`` keeps SQLite to
    that order). PostgreSQL's planner combines the indexes of one table itself."""
    drivers = [c for c in conditions if c.driver is not None]
    if not drivers:
        checks = [c.check for c in conditions]
        return "search_datasets d", " AND ".join(checks) if checks else ""
    best = min(drivers, key=lambda c: c.rows())
    small = best.rows() <= ROW_CHECKS
    checks = [c.check for c in conditions if c is not best and not (small and c.row_check)]
    checks += [best.exact] if best.exact else []
    checks += [c.row_check for c in conditions if c is not best and small and c.row_check]  # last: the dearest
    return (f"({best.driver}) x CROSS JOIN search_datasets d",
            " AND ".join(["d.gid = x.gid", *checks]))


_ORDER: Final = {
    "title": "d.title_key, d.title, d.iri",
    "harvested": "CASE WHEN d.harvested IS NULL THEN 1 ELSE 0 END, d.harvested, d.title_key, d.title, d.iri",
    "-harvested": "CASE WHEN d.harvested IS NULL THEN 1 ELSE 0 END, d.harvested DESC, d.title_key, d.title, d.iri",
    "start": "CASE WHEN d.start_time IS NULL THEN 1 ELSE 0 END, d.start_time, d.title_key, d.title, d.iri",
    "-start": "CASE WHEN d.start_time IS NULL THEN 1 ELSE 0 END, d.start_time DESC, d.title_key, d.title, d.iri",
}


# ------------------------------------------------------------------ search
def generation(conn: Connection) -> int:
    """The index's generation: it changes with every change of the index (a cache key)."""
    found = conn.execute(text("SELECT generation FROM search_totals WHERE id = 1")).scalar()
    return int(found) if found is not None else 0


def search(conn: Connection, query: SearchQuery) -> SearchResult:
    """Filter, rank, page and count facets (see the module docstring): the counts
    (:func:`_counts`) and the page (:func:`_page`)."""
    if query.sort not in SORTS:
        raise QueryError(f"sort must be one of {', '.join(SORTS)}")
    alternatives = query.alternatives()
    total_terms = len({t for terms in alternatives for t in terms})
    if total_terms > MAX_TERMS:
        raise QueryError(f"q has {total_terms} distinct terms; at most {MAX_TERMS} are allowed")
    sql = _Sql(conn)
    base = _base(sql, query, alternatives)
    selected = query.selected()
    facet_where = {name: _facet_condition(sql, name, values) for name, values in selected.items() if values}
    if base:
        total, counts, hits = _tabled_search(conn, sql, query, alternatives, base, facet_where)
        return SearchResult(total=total, hits=hits, facets=_listed(counts, selected))
    if not base and not facet_where:  # the whole catalogue: the kept counts, no scan
        total = int(conn.execute(text("SELECT datasets FROM search_totals WHERE id = 1")).scalar() or 0)
        counts = _kept_counts(conn)
    elif base:
        total, counts = _counts(conn, sql, base, facet_where)
    else:
        total, counts = _facet_only_counts(conn, sql, facet_where)
    hits = _page(conn, sql, query, alternatives, [*base, *facet_where.values()]) if total and query.limit else []
    return SearchResult(total=total, hits=hits, facets=_listed(counts, selected))


#: Matching datasets up to which SQLite ranks them in Python (from their indexed fields)
#: rather than with one FTS5 list per field and term.
PYTHON_RANKING: Final = 1_000


def _tabled_search(conn: Connection, sql: _Sql, query: SearchQuery, alternatives: list[list[str]],
                   base: list[_Condition], facet_where: dict[str, _Condition]) -> tuple[int, dict, list[Hit]]:
    """The datasets matching the base conditions are listed once, with a flag per facet
    filter, into a temporary table of the connection (``search_base``); the counts and
    the page then read it instead of evaluating the conditions again. Relevance is
    computed in Python for up to :data:`PYTHON_RANKING` hits, from the lexemes the index
    matched (:func:`_rank`)."""
    flags = list(facet_where.values())
    if sql.sqlite:
        table = "temp.search_base"
        conn.execute(text("CREATE TEMP TABLE IF NOT EXISTS search_base (gid INTEGER PRIMARY KEY, "
                          + ", ".join(f"m{n}" for n in range(len(FACETS))) + ")"))
    else:
        table = "pg_temp.search_base"
        if conn.execute(text("SELECT to_regclass('pg_temp.search_base')")).scalar() is None:
            conn.execute(text("CREATE TEMP TABLE search_base (gid bigint PRIMARY KEY, facets text[], "
                              + ", ".join(f"m{n} boolean" for n in range(len(FACETS))) + ") ON COMMIT DELETE ROWS"))
    conn.execute(text(f"DELETE FROM {table}"))
    source, where = _plan(base)
    names = ", ".join(["gid", *([] if sql.sqlite else ["facets"]), *(f"m{n}" for n in range(len(flags)))])
    values = ", ".join(["d.gid", *([] if sql.sqlite else ["d.facets"]), *(f.check for f in flags)])
    conn.execute(text(f"INSERT INTO {table} ({names}) SELECT {values} FROM {source}"
                      + (f" WHERE {where}" if where else "")), sql.params)
    filtered = list(facet_where)
    everything = " AND ".join(f"b.m{n}" for n in range(len(flags))) or "1 = 1"

    def having(skip: int | None = None) -> str:
        kept = [f"m{n}" for n in range(len(filtered)) if n != skip]
        return " AND ".join(kept) if kept else "1 = 1"

    unfiltered = [FACETS.index(name) for name in FACETS if name not in facet_where]
    groups = [(0, unfiltered, having())] if unfiltered else []
    groups += [(n + 1, [FACETS.index(name)], having(n)) for n, name in enumerate(filtered)]
    matched = int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()) if sql.sqlite else 0
    if matched > PYTHON_FACETS:
        total, counts = _python_counts(conn, table, len(flags), groups)
    else:
        total, counts = _read_counts(conn.execute(text(
            f"WITH base AS (SELECT * FROM {table}) {_counting(sql, groups, having())}")))
    if not total or not query.limit:
        return total, counts, []
    texts = [terms for terms in alternatives if terms]
    sort = query.sort if query.sort != "relevance" or texts else "title"
    limit, offset = max(0, query.limit), max(0, query.offset)
    joined = f"{table} b CROSS JOIN search_datasets d" if sql.sqlite else f"{table} b JOIN search_datasets d ON TRUE"
    if sort != "relevance":
        rows = conn.execute(text(f"SELECT d.iri, d.hit FROM {joined} WHERE d.gid = b.gid AND {everything} "
                                 f"ORDER BY {_ORDER[sort]} LIMIT {limit} OFFSET {offset}"))
        return total, counts, [Hit(iri=r[0], json=r[1].encode("utf-8")) for r in rows]
    if total > PYTHON_RANKING:
        rows = conn.execute(text(_scored_page(sql, texts, joined, f"d.gid = b.gid AND {everything}", limit, offset)),
                            sql.params)
        return total, counts, [Hit(iri=r[0], json=r[1].encode("utf-8")) for r in rows]
    if sql.sqlite:
        found = conn.execute(text(
            f"SELECT d.gid, d.title_key, d.title, d.iri, t.title, t.keywords, t.variables, t.summary FROM {joined} "
            f"CROSS JOIN search_text t WHERE d.gid = b.gid AND t.rowid = b.gid AND {everything}")).all()
    else:  # each field's lexemes: those of its weight in the row's tsvector
        fields = ", ".join(f"array_to_string(tsvector_to_array(ts_filter(d.doc, '{{{w}}}')), ' ')" for w in "abcd")
        found = conn.execute(text(f"SELECT d.gid, d.title_key, d.title, d.iri, {fields} FROM {joined} "
                                  f"WHERE d.gid = b.gid AND {everything}")).all()
    ranked = sorted(found, key=lambda r: (-_rank(texts, r[4:]), r[1], r[2], r[3]))[offset:offset + limit]
    if not ranked:
        return total, counts, []
    wanted = [r[0] for r in ranked]
    stored = {gid: (iri, hit) for gid, iri, hit in conn.execute(
        text("SELECT gid, iri, hit FROM search_datasets WHERE gid IN :g").bindparams(
            bindparam("g", expanding=True)), {"g": wanted})}
    return total, counts, [Hit(iri=stored[g][0], json=stored[g][1].encode("utf-8")) for g in wanted]


#: Matching datasets beyond which SQLite's facet counts are made in Python from each
#: dataset's tags (one narrow row per dataset) instead of joining ``search_facets`` (about
#: twenty rows per dataset, sorted for GROUP BY).
PYTHON_FACETS: Final = 3_000


def _python_counts(conn: Connection, table: str, flags: int,
                   groups: list[tuple[int, list[int], str]]) -> tuple[int, dict[str, dict[str, int]]]:
    """:func:`_counting`'s total and groups, counted in Python over the base's rows."""
    names = ", ".join(f"b.m{n}" for n in range(flags))
    rows = conn.execute(text(f"SELECT d.tags{', ' + names if names else ''} FROM {table} b "
                             f"CROSS JOIN search_datasets d WHERE d.gid = b.gid"))
    plans = []
    for k, facets, _cond in groups:
        skip = k - 1 if k > 0 else None
        plans.append(([n for n in range(flags) if n != skip], {f"{i}:" for i in facets}))
    tallies: list[Counter[str]] = [Counter() for _ in plans]
    total = 0
    for row in rows:
        marks = row[1:]
        if all(marks):
            total += 1
        tags = None
        for (needed, prefixes), tally in zip(plans, tallies, strict=True):
            if all(marks[n] for n in needed):
                if tags is None:
                    tags = json.loads(row[0])
                tally.update(t for t in tags if t[:2] in prefixes)
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for tally in tallies:
        for tag, n in tally.items():
            counts[FACETS[int(tag[0])]][tag[2:]] = n
    return total, counts


def _rank(texts: list[list[str]], fields: tuple[str, ...]) -> int:
    """The relevance of one dataset from its indexed fields (title, keywords, variables,
    summary: space-separated lexemes), as the database computes it (:meth:`_Sql.score`):
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


def _scored_page(sql: _Sql, texts: list[list[str]], source: str, where: str, limit: int, offset: int) -> str:
    if len(texts) == 1:
        score = sql.score(texts[0])
    else:
        scores = [f"CASE WHEN {sql.matches(terms)} THEN {sql.score(terms)} ELSE -1 END" for terms in texts]
        score = ("max(" if sql.sqlite else "GREATEST(") + ", ".join(scores) + ")"
    return (f"SELECT d.iri, d.hit, {score} AS score FROM {source} WHERE {where} "
            f"ORDER BY score DESC, {_ORDER['title']} LIMIT {limit} OFFSET {offset}")


def _page(conn: Connection, sql: _Sql, query: SearchQuery, alternatives: list[list[str]],
          conditions: list[_Condition]) -> list[Hit]:
    sort = query.sort
    texts = [terms for terms in alternatives if terms]
    if sort == "relevance" and not texts:
        sort = "title"
    source, where = _plan(conditions)
    clause = f" WHERE {where}" if where else ""
    limit, offset = sql.param(max(0, query.limit)), sql.param(max(0, query.offset))
    if sort != "relevance":
        statement = (f"SELECT d.iri, d.hit FROM {source}{clause} ORDER BY {_ORDER[sort]} "
                     f"LIMIT {limit} OFFSET {offset}")
    else:
        if len(texts) == 1:
            score = sql.score(texts[0])
        else:
            scores = [f"CASE WHEN {sql.matches(terms)} THEN {sql.score(terms)} ELSE -1 END" for terms in texts]
            score = ("max(" if sql.sqlite else "GREATEST(") + ", ".join(scores) + ")"
        statement = (f"SELECT d.iri, d.hit, {score} AS score FROM {source}{clause} "
                     f"ORDER BY score DESC, {_ORDER['title']} LIMIT {limit} OFFSET {offset}")
    return [Hit(iri=row[0], json=row[1].encode("utf-8")) for row in conn.execute(text(statement), sql.params)]


def _kept_counts(conn: Connection) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for facet, value, n in conn.execute(text("SELECT facet, value, datasets FROM search_facet_counts")):
        counts[FACETS[int(facet)]][value] = int(n)
    return counts


def _counts(conn: Connection, sql: _Sql, base: list[_Condition],
            facet_where: dict[str, _Condition]) -> tuple[int, dict[str, dict[str, int]]]:
    """The total and the disjunctive facet counts, in one statement.

    The datasets matching the base conditions (text, box, dates, harvest time) are found
    once (a materialised common table expression, :func:`_plan`), each with one flag per
    facet filter. The total counts those with every flag; each facet is counted over
    those with every flag but its own (disjunctive), the unfiltered ones together over
    the hits: facet values by the (dataset, facet) index on SQLite, by unnesting the
    row's ``facets`` array on PostgreSQL. The cost follows the matching datasets, not the
    catalogue.
    """
    filtered = list(facet_where)
    flags = ", ".join(f"{cond.check} AS m{n}" for n, cond in enumerate(facet_where.values()))
    columns = "d.gid AS gid" + ("" if sql.sqlite else ", d.facets AS facets") + (f", {flags}" if flags else "")
    source, where = _plan(base)
    clause = f" WHERE {where}" if where else ""

    def having(skip: int | None = None) -> str:
        kept = [f"m{n}" for n in range(len(filtered)) if n != skip]
        return " AND ".join(kept) if kept else "1 = 1"

    unfiltered = [FACETS.index(name) for name in FACETS if name not in facet_where]
    groups = [(0, unfiltered, having())] if unfiltered else []
    groups += [(n + 1, [FACETS.index(name)], having(n)) for n, name in enumerate(filtered)]
    statement = (f"WITH base AS MATERIALIZED (SELECT {columns} FROM {source}{clause}) "
                 f"{_counting(sql, groups, having())}")
    return _read_counts(conn.execute(text(statement), sql.params))


def _counting(sql: _Sql, groups: list[tuple[int, list[int], str]], everything: str) -> str:
    """The total (``k = -1``) and each group's facet counts over ``base``."""
    if sql.sqlite:
        total = f"SELECT -1, NULL, NULL, count(*) FROM base WHERE {everything}"
        if not groups:
            return total
        parts = " UNION ALL ".join(f"SELECT {k} AS k, gid FROM base WHERE {cond}" for k, _f, cond in groups)
        wanted = " OR ".join(f"(h.k = {k} AND f.facet IN ({', '.join(map(str, fs))}))" for k, fs, _c in groups)
        # CROSS JOIN: SQLite's way of saying "the matching datasets first", each probing
        # the (gid, facet) index (left to itself it may scan every row of those facets).
        return (f"{total} UNION ALL SELECT h.k, f.facet, f.value, count(*) FROM ({parts}) h "
                f"CROSS JOIN search_facets f WHERE f.gid = h.gid AND ({wanted}) GROUP BY h.k, f.facet, f.value")
    total = f"SELECT -1, NULL::integer, NULL::text, count(*) FROM base WHERE {everything}"
    if not groups:
        return total
    parts = " UNION ALL ".join(f"SELECT {k} AS k, unnest(facets) AS tag FROM base WHERE {cond}"
                               for k, _f, cond in groups)
    wanted = " OR ".join(f"(x.k = {k} AND left(x.tag, 2) IN ({', '.join(repr(f'{i}:') for i in fs)}))"
                         for k, fs, _c in groups)
    return (f"{total} UNION ALL SELECT x.k, CAST(left(x.tag, 1) AS integer), substr(x.tag, 3), count(*) "
            f"FROM ({parts}) x WHERE {wanted} GROUP BY x.k, x.tag")


def _read_counts(rows: Any) -> tuple[int, dict[str, dict[str, int]]]:
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    found = 0
    for k, facet, value, n in rows:
        if int(k) < 0:
            found = int(n)
        else:
            counts[FACETS[int(facet)]][value] = int(n)
    return found, counts


def _facet_only_counts(conn: Connection, sql: _Sql,
                       facet_where: dict[str, _Condition]) -> tuple[int, dict[str, dict[str, int]]]:
    """Counts of a search with facet filters only. Each facet's own counts are taken under
    the *other* filters alone, so each is its own statement, started from the least
    common value set (:func:`_plan`); a facet with no other filter is counted over the
    whole catalogue, which the kept counts already are."""
    if not sql.sqlite:  # one table: PostgreSQL combines the GIN lookups itself
        return _counts(conn, sql, [], facet_where)
    names = list(facet_where)
    kept = _kept_counts(conn)
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    total = 0
    groups: list[tuple[list[str], list[str]]] = [([n for n in FACETS if n not in facet_where], names)]
    groups += [([name], [n for n in names if n != name]) for name in names]
    for counted, filters in groups:
        if not counted:
            continue
        if not filters:
            for name in counted:
                counts[name] = kept[name]
            continue
        source, where = _plan([facet_where[n] for n in filters])
        wanted = ", ".join(str(FACETS.index(n)) for n in counted)
        statement = (f"WITH base AS MATERIALIZED (SELECT d.gid AS gid FROM {source} WHERE {where}) "
                     f"SELECT 0, f.facet, f.value, count(*) FROM base h CROSS JOIN search_facets f "
                     f"WHERE f.gid = h.gid AND f.facet IN ({wanted}) GROUP BY f.facet, f.value")
        for _k, facet, value, n in conn.execute(text(statement), sql.params):
            counts[FACETS[int(facet)]][value] = int(n)
    source, where = _plan([facet_where[n] for n in names])
    total = sql.count(f"SELECT count(*) FROM {source} WHERE {where}")
    return total, counts


def _listed(counts: dict[str, dict[str, int]], selected: dict[str, list[str]]) -> dict[str, list[tuple[str, int]]]:
    """Each facet's values with a count, and the selected ones, by count then value, at
    most :data:`FACET_VALUES` (and the selected ones)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name in FACETS:
        chosen = set(selected[name])
        listed = [(v, c) for v, c in counts[name].items() if c]
        listed += [(v, 0) for v in chosen if not counts[name].get(v)]
        listed.sort(key=lambda vc: (-vc[1], vc[0]))
        if len(listed) > FACET_VALUES:
            keep = listed[:FACET_VALUES]
            keep += [vc for vc in listed[FACET_VALUES:] if vc[0] in chosen]
            listed = keep
        out[name] = listed
    return out

