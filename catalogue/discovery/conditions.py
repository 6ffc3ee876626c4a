"""The pieces of a search's SQL: its conditions, how SQLite is told where to start, the
sorts and the relevance score (see :mod:`.query` for what a search means).

A condition is written once for both databases; where they differ (FTS5 and an R*Tree
on SQLite, a ``tsvector`` and GiST boxes on PostgreSQL) the difference stays inside the
condition, so that the statements around it are the same."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, NamedTuple

from sqlalchemy import text
from sqlalchemy.engine import Connection

from catalogue.graph.search_schema import BOX_PARTS, HUGE_AREA
from catalogue.model.extents import Box

from .indexer import micros
from .normalise import stem
from .summary import FACETS

#: Field weights for relevance: title > keywords > variables > summary.
WEIGHTS: Final = (8, 4, 2, 1)
COLUMNS: Final = ("title", "keywords", "variables", "summary")


@dataclass
class Condition:
    """One condition of a search, on the row ``d`` of ``search_datasets``.

    ``check`` is the condition (SQLite: an index probe per row). On SQLite a condition
    with an index of its own may instead *drive* the search: ``driver`` is a statement
    listing the ``gid`` it admits, ``estimate()`` how many, cheaply (:func:`plan`);
    ``exact`` is what must still be checked of a row the driver gave (the box index's
    candidates are tested exactly)."""

    check: str
    driver: str | None = None
    estimate: Any = None
    exact: str | None = None
    size: int | None = None
    #: A check read from the row's own data, cheaper than ``check`` for a few thousand
    #: rows (``check`` lists a whole set once): used, last, when the driver is small, and
    #: on the rows of ``search_huge``, which hold what it reads.
    row_check: str | None = None
    #: A box condition's huge boxes, which its driver (SQLite) or check (PostgreSQL)
    #: leaves out: a condition on ``search_huge d`` finding them (:func:`box_condition`).
    huge: str | None = None
    #: Whether ``check`` finds the huge boxes too (SQLite's exact test does; PostgreSQL's
    #: check is its box indexes' arms, which leave them out).
    check_finds_huge: bool = False

    def rows(self) -> int:
        """The driver's estimate, asked once."""
        if self.size is None:
            self.size = int(self.estimate())
        return self.size


class Sql:
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
    def _ts_term(token: str, prefix: bool) -> str:
        def lexeme(t: str) -> str:
            return "'" + t.replace("\\", "\\\\").replace("'", "''") + "'"
        options = [f"{lexeme(token)}:*" if prefix else lexeme(token)]
        root = stem(token)
        if root != token:
            options.append(lexeme(root))
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

    def text_condition(self, texts: list[list[str]], *, narrowed: bool = False) -> Condition:
        """Datasets matching every term of one of the alternatives. ``narrowed``: a box or
        a period lists the candidates too; then, on PostgreSQL, text that many datasets
        hold (:data:`TEXT_ROW_SHARE`) is read from each candidate's words rather than
        listed by its index: the planner, which knows no box's selectivity, would AND the
        word's bitmap of tens of thousands of rows into the few hundred candidates."""
        check = "(" + " OR ".join(self.matches(terms) for terms in texts) + ")"
        if not self.sqlite:
            by_row = self._lexeme_check(texts)
            if narrowed and text_share(self.conn, texts) >= TEXT_ROW_SHARE:
                return Condition(by_row, row_check=by_row)
            return Condition(check, row_check=by_row)
        either = self.param(" OR ".join(self._fts(terms) for terms in texts))
        return Condition(check, driver=f"SELECT rowid AS gid FROM search_text WHERE search_text MATCH {either}",
                         estimate=lambda: self._text_estimate(texts), row_check=self._lexeme_check(texts))

    def _lexeme_check(self, texts: list[list[str]]) -> str:
        """The text condition read from the row's ``words`` (the indexed lexemes, each
        between spaces): a term is `` term `` or `` stem `` in them, the last one also
        `` term…``; exactly what FTS5's ``ascii`` tokenizer, and PostgreSQL's ``tsquery``
        over the same lexemes, match."""
        alternatives = []
        for terms in texts:
            conds = []
            for n, token in enumerate(terms):
                # the last term is a prefix: " tok" finds " tok " too
                options = {f" {token}" if n == len(terms) - 1 else f" {token} ", f" {stem(token)} "}
                find = "instr(d.words, {})" if self.sqlite else "strpos(d.words, {})"
                conds.append("(" + " OR ".join(find.format(self.param(o)) + " > 0" for o in sorted(options)) + ")")
            alternatives.append("(" + " AND ".join(conds) + ")")
        return "(" + " OR ".join(alternatives) + ")"

    def _text_estimate(self, texts: list[list[str]]) -> int:
        """At most how many datasets the text matches: per alternative the least, over its
        terms, of the datasets holding the term, its stem or (the last) a word it begins,
        from FTS5's vocabulary (``search_text_vocab``, through :func:`vocabulary_count`)."""
        total = 0
        for terms in texts:
            least = None
            for n, token in enumerate(terms):
                found = sum(vocabulary_count(self.conn, o, prefix=False) for o in {token, stem(token)})
                if n == len(terms) - 1:
                    found += vocabulary_count(self.conn, token, prefix=True)
                least = found if least is None else min(least, found)
            total += least or 0
        return total

    def in_field(self, token: str, prefix: bool, n: int) -> str:
        """Whether dataset ``d`` has ``token`` in field ``n`` (a condition)."""
        if self.sqlite:
            fts = "{" + COLUMNS[n] + "} : " + self._fts_term(token, prefix)
            return f"d.gid IN (SELECT rowid FROM search_text WHERE search_text MATCH {self.param(fts)})"
        # PostgreSQL reads the field from the row's words (kept in the row: search_schema's
        # POSTGRES_LAYOUT), the lexemes between spaces that ``doc`` holds with the field's
        # weight: ``doc @@ 'token':*A`` fetched ``doc`` out of line for every row and
        # field, seconds for a word in most datasets.
        field = f"split_part(d.words, '|', {n + 1})"
        options = {f" {token}" if prefix else f" {token} ", f" {stem(token)} "}
        return "(" + " OR ".join(f"strpos({field}, {self.param(o)}) > 0" for o in sorted(options)) + ")"

    def score(self, terms: list[str]) -> str:
        """The relevance of dataset ``d`` for the terms (it matches all of them)."""
        last = len(terms) - 1
        parts = []
        for n, token in enumerate(terms):
            cases = " ".join(f"WHEN {self.in_field(token, n == last, f)} THEN {WEIGHTS[f]}" for f in range(3))
            parts.append(f"(CASE {cases} ELSE {WEIGHTS[3]} END)")
        return " + ".join(parts)


#: Seconds a vocabulary count is kept (:func:`vocabulary_count`).
VOCABULARY_SECONDS: Final = 300.0
#: Vocabulary counts kept per process.
VOCABULARY_ENTRIES: Final = 4_096

_vocabulary: OrderedDict[tuple[str, str, bool], tuple[float, int]] = OrderedDict()
_vocabulary_lock = threading.Lock()


def vocabulary_count(conn: Connection, token: str, *, prefix: bool) -> int:
    """Datasets whose text holds ``token`` (``prefix``: the words it begins, itself
    excluded), by FTS5's vocabulary, remembered for :data:`VOCABULARY_SECONDS`.

    ``fts5vocab`` counts a term by reading its whole list of datasets: a common word's
    100,000 took tens of milliseconds, more than the search it was planning. The count
    only chooses which condition lists its datasets (:func:`plan`), never what a search
    answers, so one that is minutes old, or from before the last harvest, plans as well."""
    key = (str(conn.engine.url), token, prefix)
    now = time.monotonic()
    with _vocabulary_lock:
        kept = _vocabulary.get(key)
        if kept is not None and now - kept[0] < VOCABULARY_SECONDS:
            _vocabulary.move_to_end(key)
            return kept[1]
    if prefix:
        found = conn.execute(text("SELECT sum(doc) FROM search_text_vocab WHERE term > :t AND term < :u"),
                             {"t": token, "u": token + "\U0010ffff"}).scalar()
    else:
        found = conn.execute(text("SELECT doc FROM search_text_vocab WHERE term = :t"), {"t": token}).scalar()
    count = int(found or 0)
    with _vocabulary_lock:
        _vocabulary[key] = (now, count)
        _vocabulary.move_to_end(key)
        while len(_vocabulary) > VOCABULARY_ENTRIES:
            _vocabulary.popitem(last=False)
    return count


#: Share of the datasets (PostgreSQL's statistics) from which a text narrowed by a box
#: or period is checked row by row (:meth:`Sql.text_condition`).
TEXT_ROW_SHARE: Final = 0.02

_lexemes: dict[str, tuple[float, dict[str, float]]] = {}


def text_share(conn: Connection, texts: list[list[str]]) -> float:
    """About which share of the datasets the text matches, from the most common lexemes
    PostgreSQL's ``ANALYZE`` found in ``doc`` (a lexeme it does not list is rare: it counts
    as none), kept for :data:`VOCABULARY_SECONDS` like :func:`vocabulary_count`."""
    key, now = str(conn.engine.url), time.monotonic()
    kept = _lexemes.get(key)
    if kept is None or now - kept[0] >= VOCABULARY_SECONDS:
        row = conn.execute(text(
            "SELECT CAST(CAST(most_common_elems AS text) AS text[]), most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'search_datasets' AND attname = 'doc'")).first()
        common = dict(zip(row[0], row[1], strict=False)) if row is not None and row[0] else {}
        kept = _lexemes[key] = (now, common)
    common = kept[1]
    total = 0.0
    for terms in texts:
        least = 1.0
        for n, token in enumerate(terms):
            share = sum(common.get(o, 0.0) for o in {token, stem(token)})
            if n == len(terms) - 1:
                share += sum(f for lexeme, f in common.items() if lexeme.startswith(token) and lexeme != token)
            least = min(least, share)
        total += least
    return min(total, 1.0)


def box_condition(sql: Sql, box: Box, period: tuple[datetime | None, datetime | None] | None) -> Condition:
    """Datasets whose box intersects ``box``: index candidates, then exactly. With a
    ``period`` too, the candidates are near in both (the period itself is checked exactly
    by its own condition): on SQLite the R*Tree's third dimension is time; on PostgreSQL
    the box indexes hold the period as their second column. Huge boxes, which every box
    query meets, are in neither index but in ``search_huge``
    (:data:`~catalogue.graph.search_schema.HUGE_AREA`), found by their period alone:
    :attr:`Condition.huge`, which the search adds to what the index found (on SQLite
    only when the box index drives the search: checked on each row of another driver,
    the box's exact test finds huge boxes too)."""
    candidates, exact = [], []
    when, since = "", ""
    if period is not None:
        start, end = period
        if sql.sqlite:
            if end is not None:
                when += f" AND mint <= {sql.param(micros(end) / 1e6)}"
                since = f" AND d.since <= {sql.param(micros(end))}"  # search_huge's key
            if start is not None:
                when += f" AND maxt >= {sql.param(micros(start) / 1e6)}"
        else:
            low = sql.param(micros(start) if start is not None else None)
            high = sql.param(micros(end) if end is not None else None)
            when = f" AND d.span && int8range(CAST({low} AS bigint), CAST({high} AS bigint), '[]')"
            since = when
    for x0, y0, x1, y1 in box.parts():
        p = [sql.param(v) for v in (x0, y0, x1, y1)]
        if sql.sqlite:
            candidates.append(f"SELECT DISTINCT key / {BOX_PARTS} AS gid FROM search_boxes WHERE maxx >= {p[0]} "
                              f"AND minx <= {p[2]} AND maxy >= {p[1]} AND miny <= {p[3]}{when}")
        else:  # each arm the predicate of one index (graph/search_schema.py: POSTGRES_LAYOUT)
            query = f"box(point({p[0]}, {p[1]}), point({p[2]}, {p[3]}))"
            candidates += [f"(d.env && {query} AND area(d.env) < {HUGE_AREA}{when})",
                           f"(d.env2 && {query} AND area(d.env) < {HUGE_AREA}{when})"]
        exact.append(f"(d.south <= {p[3]} AND {p[1]} <= d.north AND ("
                     f"(d.west <= d.east AND d.west <= {p[2]} AND {p[0]} <= d.east) OR "
                     f"(d.west > d.east AND (d.west <= {p[2]} OR {p[0]} <= d.east))))")
    exactly = f"({' OR '.join(exact)})"
    huge = f"{exactly}{since}"
    if not sql.sqlite:
        return Condition(f"({' OR '.join(candidates)}) AND {exactly}", huge=huge)
    driver = " UNION ".join(candidates)
    # The estimate counts twice a dataset whose two halves (only boxes across the
    # antimeridian have two) both meet the box: a bound is enough, and DISTINCT would sort.
    # The huge boxes are not counted: the plan weighs rows read from search_datasets, and
    # search_huge's are read anyway, consecutive, each checked by itself (huge_arm).
    rough = " UNION ALL ".join(c.replace("SELECT DISTINCT", "SELECT", 1) for c in candidates)
    return Condition(exactly, driver=driver, exact=exactly, huge=huge, check_finds_huge=True,
                     estimate=lambda: sql.count(f"SELECT count(*) FROM ({rough})"))


def facet_condition(sql: Sql, name: str, values: list[str]) -> Condition:
    if not sql.sqlite:  # the row's facets array, by its GIN index
        return Condition(f"d.facets && CAST({sql.param([f'{FACETS.index(name)}:{v}' for v in values])} AS text[])")
    number = FACETS.index(name)
    facet, listed = sql.param(number), ", ".join(sql.param(v) for v in values)
    # The row's tags are a compact JSON array of strings, each written as json.dumps
    # writes it. A value is found where an element starts: after "[" (made a "," here)
    # or a ",". Inside a string a quote is escaped, so ',"' only ever starts an element
    # (a value 'x"3:K' holds '"3:K"', never ',"3:K"').
    tagged = " OR ".join(
        f"instr(',' || substr(d.tags, 2), {sql.param(',' + json.dumps(f'{number}:{v}', ensure_ascii=False))}) > 0"
        for v in values)
    return Condition(
        f"EXISTS (SELECT 1 FROM search_facets f WHERE f.facet = {facet} AND f.value IN ({listed}) "
        f"AND f.gid = d.gid)",
        driver=f"SELECT DISTINCT gid FROM search_facets WHERE facet = {facet} AND value IN ({listed})",
        estimate=lambda: sql.count(f"SELECT sum(datasets) FROM search_facet_counts WHERE facet = {facet} "
                                   f"AND value IN ({listed})"),
        row_check=f"({tagged})")


#: Rows a driver may give for the text to be checked row by row rather than listed.
ROW_CHECKS: Final = 3_000
#: Beyond :data:`ROW_CHECKS`, a condition is still checked row by row when it admits at
#: least this many times the driver's rows: listing its set (an ephemeral index of, say, a
#: common word's 80,000 datasets) costs more than reading its data from the driver's rows.
ROW_CHECK_RATIO: Final = 4


class Plan(NamedTuple):
    """How a search reads ``d``: its ``FROM`` and ``WHERE`` clauses, whether the rows
    are few enough (``small``) for conditions to be checked from each row's own data, and
    the box condition whose huge boxes ``FROM`` leaves out (:attr:`Condition.huge`), to
    be found in ``search_huge`` (:func:`huge_arm`)."""

    source: str
    where: str
    small: bool
    huge: Condition | None = None


def plan(conditions: list[Condition]) -> Plan:
    """``FROM`` and ``WHERE`` clauses over ``d`` for all ``conditions``.

    SQLite would otherwise build an ephemeral index of every ``IN (subquery)`` set (a
    common word's 50,000 datasets, a facet value's 90,000) before looking at a row. So
    the condition admitting the fewest datasets, by a cheap estimate (FTS5's vocabulary
    for text, the R*Tree's count for a box, the kept facet counts), lists them, and the
    others are checked row by row (``CROSS JOIN`` keeps SQLite to that order): through
    their indexes, or, when the driver gives at most :data:`ROW_CHECKS` rows or a
    condition admits :data:`ROW_CHECK_RATIO` times as many, from the row's own data (its
    facet tags, its indexed lexemes). PostgreSQL's planner combines
    the indexes of one table itself."""
    box = next((c for c in conditions if c.huge is not None), None)
    drivers = [c for c in conditions if c.driver is not None]
    if not drivers:  # PostgreSQL: a box's check leaves its huge boxes out
        return Plan("search_datasets d", " AND ".join(c.check for c in conditions), False, box)
    best = min(drivers, key=lambda c: c.rows())
    small = best.rows() <= ROW_CHECKS
    by_row = [c for c in conditions if c is not best and c.row_check
              and (small or (c.estimate is not None and c.rows() >= ROW_CHECK_RATIO * best.rows()))]
    checks = [c.check for c in conditions if c is not best and c not in by_row]
    checks += [best.exact] if best.exact else []
    checks += [c.row_check for c in by_row if c.row_check]  # last: the dearest
    # The huge boxes are added when the box index lists the candidates, or when the box is
    # checked by a test that leaves them out (PostgreSQL's, under a harvest-time driver).
    huge = box if box is not None and (box is best or not box.check_finds_huge) else None
    return Plan(f"({best.driver}) x CROSS JOIN search_datasets d", " AND ".join(["d.gid = x.gid", *checks]), small,
                huge)


def huge_arm(plan: Plan, conditions: list[Condition]) -> str | None:
    """The ``FROM`` and ``WHERE`` of the datasets a plan's box leaves out: those of
    ``search_huge`` meeting its box and period and every other condition, each read from
    the row (``search_huge`` holds what the row checks read), or ``None``."""
    if plan.huge is None:
        return None
    # SQLite tests a row's terms in the order written: the instants and the box, cheap and
    # most selective (a huge box meets every query box but its period rarely matches),
    # before the facet tags and the words, searched for in strings.
    others = [c for c in conditions if c is not plan.huge]
    checks = [*(c.check for c in others if not c.row_check), *([plan.huge.huge] if plan.huge.huge else []),
              *(c.row_check for c in others if c.row_check)]
    return "search_huge d WHERE " + " AND ".join(checks)


ORDER: Final = {
    "title": "d.title_key, d.title, d.iri",
    "harvested": "CASE WHEN d.harvested IS NULL THEN 1 ELSE 0 END, d.harvested, d.title_key, d.title, d.iri",
    "-harvested": "CASE WHEN d.harvested IS NULL THEN 1 ELSE 0 END, d.harvested DESC, d.title_key, d.title, d.iri",
    "start": "CASE WHEN d.start_time IS NULL THEN 1 ELSE 0 END, d.start_time, d.title_key, d.title, d.iri",
    "-start": "CASE WHEN d.start_time IS NULL THEN 1 ELSE 0 END, d.start_time DESC, d.title_key, d.title, d.iri",
}


def score(sql: Sql, texts: list[list[str]]) -> str:
    """The relevance of dataset ``d``: with alternatives, its best matching one."""
    if len(texts) == 1:
        return sql.score(texts[0])
    scores = [f"CASE WHEN {sql.matches(terms)} THEN {sql.score(terms)} ELSE -1 END" for terms in texts]
    return ("max(" if sql.sqlite else "GREATEST(") + ", ".join(scores) + ")"


