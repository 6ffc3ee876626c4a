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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from sqlalchemy import text
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
class _Sql:
    """Conditions and their parameters, numbered as they are added."""

    def __init__(self, conn: Connection) -> None:
        self.sqlite = conn.dialect.name == "sqlite"
        self.params: dict[str, Any] = {}

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f":{name}"

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

    def matches(self, terms: list[str]) -> str:
        """Whether dataset ``d`` matches every term (a condition)."""
        last = len(terms) - 1
        if self.sqlite:
            fts = " AND ".join(self._fts_term(t, n == last) for n, t in enumerate(terms))
            return f"d.gid IN (SELECT rowid FROM search_text WHERE search_text MATCH {self.param(fts)})"
        tsq = " & ".join(self._ts_term(t, n == last) for n, t in enumerate(terms))
        return f"d.doc @@ CAST({self.param(tsq)} AS tsquery)"

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


def _box_condition(sql: _Sql, box: Box) -> str:
    """Datasets whose box intersects ``box``: index candidates, then exactly."""
    candidates, exact = [], []
    for x0, y0, x1, y1 in box.parts():
        p = [sql.param(v) for v in (x0, y0, x1, y1)]
        if sql.sqlite:
            candidates.append(f"SELECT key / {BOX_PARTS} FROM search_boxes WHERE maxx >= {p[0]} AND minx <= {p[2]} "
                              f"AND maxy >= {p[1]} AND miny <= {p[3]}")
        else:
            query = f"box(point({p[0]}, {p[1]}), point({p[2]}, {p[3]}))"
            candidates += [f"d.env && {query}", f"d.env2 && {query}"]
        exact.append(f"(d.south <= {p[3]} AND {p[1]} <= d.north AND ("
                     f"(d.west <= d.east AND d.west <= {p[2]} AND {p[0]} <= d.east) OR "
                     f"(d.west > d.east AND (d.west <= {p[2]} OR {p[0]} <= d.east))))")
    if sql.sqlite:
        return f"d.gid IN ({' UNION '.join(candidates)}) AND ({' OR '.join(exact)})"
    return f"({' OR '.join(candidates)}) AND ({' OR '.join(exact)})"


def _base(sql: _Sql, query: SearchQuery, alternatives: list[list[str]]) -> list[str]:
    """Conditions on ``d`` other than the facets."""
    where: list[str] = []
    texts = [terms for terms in alternatives if terms]
    if texts:
        where.append("(" + " OR ".join(sql.matches(terms) for terms in texts) + ")")
    if query.harvested_since is not None:
        where.append(f"d.harvested >= {sql.param(micros(query.harvested_since))}")
    if query.bbox is not None:
        where.append(_box_condition(sql, query.bbox))
    if query.datetime is not None:
        start, end = query.datetime
        if end is not None:
            where.append(f"d.start_time <= {sql.param(micros(end))}")
        if start is not None:
            where.append(f"d.end_time >= {sql.param(micros(start))}")
        if start is None and end is None:
            where.append("d.start_time IS NOT NULL")
    return where


def _facet_condition(sql: _Sql, name: str, values: list[str]) -> str:
    if not sql.sqlite:  # the row's facets array, by its GIN index
        return f"d.facets && CAST({sql.param([f'{FACETS.index(name)}:{v}' for v in values])} AS text[])"
    listed = ", ".join(sql.param(v) for v in values)
    return (f"d.gid IN (SELECT gid FROM search_facets WHERE facet = {sql.param(FACETS.index(name))} "
            f"AND value IN ({listed}))")


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
    """Filter, rank, page and count facets (see the module docstring): two statements, the
    counts (:func:`_counts`) and the page (:func:`_page`)."""
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
    if not base and not facet_where:  # the whole catalogue: the kept counts, no scan
        total = int(conn.execute(text("SELECT datasets FROM search_totals WHERE id = 1")).scalar() or 0)
        counts = _kept_counts(conn)
    else:
        total, counts = _counts(conn, sql, base, facet_where)
    where = base + list(facet_where.values())
    clause = " WHERE " + " AND ".join(where) if where else ""
    hits = _page(conn, sql, query, alternatives, clause) if total and query.limit > 0 else []
    return SearchResult(total=total, hits=hits, facets=_listed(counts, selected))


def _page(conn: Connection, sql: _Sql, query: SearchQuery, alternatives: list[list[str]], clause: str) -> list[Hit]:
    sort = query.sort
    texts = [terms for terms in alternatives if terms]
    if sort == "relevance" and not texts:
        sort = "title"
    limit, offset = sql.param(max(0, query.limit)), sql.param(max(0, query.offset))
    if sort != "relevance":
        statement = (f"SELECT d.iri, d.hit FROM search_datasets d{clause} ORDER BY {_ORDER[sort]} "
                     f"LIMIT {limit} OFFSET {offset}")
    else:
        if len(texts) == 1:
            score = sql.score(texts[0])
        else:
            scores = [f"CASE WHEN {sql.matches(terms)} THEN {sql.score(terms)} ELSE -1 END" for terms in texts]
            score = ("max(" if sql.sqlite else "GREATEST(") + ", ".join(scores) + ")"
        statement = (f"SELECT d.iri, d.hit, {score} AS score FROM search_datasets d{clause} "
                     f"ORDER BY score DESC, {_ORDER['title']} LIMIT {limit} OFFSET {offset}")
    return [Hit(iri=row[0], json=row[1].encode("utf-8")) for row in conn.execute(text(statement), sql.params)]


def _kept_counts(conn: Connection) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for facet, value, n in conn.execute(text("SELECT facet, value, datasets FROM search_facet_counts")):
        counts[FACETS[int(facet)]][value] = int(n)
    return counts


def _counts(conn: Connection, sql: _Sql, base: list[str],
            facet_where: dict[str, str]) -> tuple[int, dict[str, dict[str, int]]]:
    """The total and the disjunctive facet counts, in one statement.

    The datasets matching the base conditions (text, box, dates, harvest time) are found
    once (a materialised common table expression), each with one flag per facet filter.
    The total counts those with every flag; each facet is counted over those with every
    flag but its own (disjunctive), the unfiltered ones together over the hits: facet
    values by the (dataset, facet) index on SQLite, by unnesting the row's ``facets``
    array on PostgreSQL. The cost follows the matching datasets, not the catalogue.
    """
    filtered = list(facet_where)
    flags = ", ".join(f"{cond} AS m{n}" for n, cond in enumerate(facet_where.values()))
    columns = "d.gid AS gid" + ("" if sql.sqlite else ", d.facets AS facets") + (f", {flags}" if flags else "")
    where = f" WHERE {' AND '.join(base)}" if base else ""

    def having(skip: int | None = None) -> str:
        kept = [f"m{n}" for n in range(len(filtered)) if n != skip]
        return " AND ".join(kept) if kept else "1 = 1"

    unfiltered = [FACETS.index(name) for name in FACETS if name not in facet_where]
    groups = [(0, unfiltered, having())] if unfiltered else []
    groups += [(n + 1, [FACETS.index(name)], having(n)) for n, name in enumerate(filtered)]
    if sql.sqlite:
        parts = " UNION ALL ".join(f"SELECT {k} AS k, gid FROM base WHERE {cond}" for k, _f, cond in groups)
        wanted = " OR ".join(f"(h.k = {k} AND f.facet IN ({', '.join(map(str, fs))}))" for k, fs, _c in groups)
        # CROSS JOIN: SQLite's way of saying "the matching datasets first", each probing
        # the (gid, facet) index (left to itself it may scan every row of those facets).
        counting = (f"SELECT h.k, f.facet, f.value, count(*) FROM ({parts}) h CROSS JOIN search_facets f "
                    f"WHERE f.gid = h.gid AND ({wanted}) GROUP BY h.k, f.facet, f.value")
        total = f"SELECT -1, NULL, NULL, count(*) FROM base WHERE {having()}"
    else:
        parts = " UNION ALL ".join(f"SELECT {k} AS k, unnest(facets) AS tag FROM base WHERE {cond}"
                                   for k, _f, cond in groups)
        wanted = " OR ".join(f"(x.k = {k} AND left(x.tag, 2) IN ({', '.join(repr(f'{i}:') for i in fs)}))"
                             for k, fs, _c in groups)
        counting = (f"SELECT x.k, CAST(left(x.tag, 1) AS integer), substr(x.tag, 3), count(*) FROM ({parts}) x "
                    f"WHERE {wanted} GROUP BY x.k, x.tag")
        total = f"SELECT -1, NULL::integer, NULL::text, count(*) FROM base WHERE {having()}"
    statement = f"WITH base AS MATERIALIZED (SELECT {columns} FROM search_datasets d{where}) {total}"
    if groups:
        statement += f" UNION ALL {counting}"
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    found = 0
    for k, facet, value, n in conn.execute(text(statement), sql.params):
        if int(k) < 0:
            found = int(n)
        else:
            counts[FACETS[int(facet)]][value] = int(n)
    return found, counts


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

