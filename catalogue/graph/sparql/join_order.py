"""The order in which PostgreSQL joins a basic graph pattern's triple patterns.

A basic graph pattern of n triple patterns is an n-way self-join of ``quads``.
PostgreSQL's planner searches every order of up to ``join_collapse_limit`` joined
items exhaustively, and that search grows exponentially: an eleven-pattern RDF list
query (the benchmark's query 4, a shape's three list cells) spent 440 ms planning
for 18 ms of execution. So the compiler writes the patterns in a good order itself
and the planner reorders them only in windows of a few items
(:data:`catalogue.graph.database.JOIN_COLLAPSE`): 21 ms in all for that query.

The order is greedy, as in Oxigraph's and Jena's optimisers: the pattern expected to
match the fewest rows first, then repeatedly the cheapest pattern sharing a variable
with those before it (a pattern sharing none would multiply the rows). A pattern's
rows are estimated from PostgreSQL's own statistics of ``quads``
(:class:`JoinStatistics`, from ``pg_stats``): the frequency of its predicate and of
its constant object (the most common values' frequencies, the rest shared evenly by
the other distinct values, as the planner estimates them), divided by the distinct
subjects or objects when the subject or object is bound by a pattern before it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rdflib.paths import Path
from rdflib.term import BNode, Variable
from sqlalchemy import text
from sqlalchemy.engine import Connection

from ..database import database_key

__all__ = ["ColumnStatistics", "JoinStatistics", "join_statistics", "order_patterns"]

#: Rows a property path is expected to give from a bound end.
PATH_STEPS: Final = 10.0
#: Seconds a database's statistics are reused before they are read again.
REFRESH: Final = 300.0
#: Seconds before statistics found missing (no ANALYZE yet) are looked for again.
MISSING: Final = 10.0

Triple = tuple[Any, Any, Any]


@dataclass(frozen=True)
class ColumnStatistics:
    """One column of ``quads`` as ``pg_stats`` describes it."""

    #: Most common values -> their frequencies (fractions of all rows).
    common: Mapping[int, float]
    #: The frequency of any other value.
    rest: float
    #: Distinct values.
    distinct: float

    def frequency(self, value: int) -> float:
        return self.common.get(value, self.rest)


@dataclass(frozen=True)
class JoinStatistics:
    """What the join order is estimated from."""

    rows: float
    s: ColumnStatistics
    p: ColumnStatistics
    o: ColumnStatistics

    def rows_of(self, s: int | bool, p: int | None, o: int | bool) -> float:
        """Rows matching a pattern with predicate ``p`` (None: a variable), subject and
        object each a constant's id, True (bound by an earlier pattern) or False (free)."""
        rows = self.rows * (self.p.frequency(p) if p is not None else 1.0)
        if o is not True and o is not False:
            rows = min(rows, self.rows * self.o.frequency(o))
        elif o:
            rows /= self.o.distinct
        if s is not False:
            rows /= self.s.distinct
        return rows


_CACHE: dict[str, tuple[float, JoinStatistics | None]] = {}
_LOCK = threading.Lock()


def join_statistics(conn: Connection) -> JoinStatistics | None:
    """``quads``' statistics on ``conn``'s PostgreSQL database (None before its first
    ANALYZE), read at most every :data:`REFRESH` seconds per database and process
    (:data:`MISSING` while there are none)."""
    key = database_key(conn.engine)
    now = time.monotonic()
    with _LOCK:
        found = _CACHE.get(key)
    if found is not None and now - found[0] < (REFRESH if found[1] is not None else MISSING):
        return found[1]
    stats = _read(conn)
    with _LOCK:
        _CACHE[key] = (now, stats)
    return stats


def _read(conn: Connection) -> JoinStatistics | None:
    found = conn.execute(text("SELECT reltuples FROM pg_class WHERE oid = to_regclass('quads')")).scalar()
    total = float(found or 0)
    if total <= 0:  # never analysed (-1) or empty
        return None
    columns: dict[str, ColumnStatistics] = {}
    for name, null_frac, n_distinct, values, freqs in conn.execute(text(
            "SELECT attname, null_frac, n_distinct, CAST(most_common_vals AS text), most_common_freqs "
            "FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'quads' "
            "AND attname IN ('s', 'p', 'o')")):
        common = dict(zip((int(v) for v in values.strip("{}").split(",")), freqs, strict=True)) if values else {}
        distinct = float(n_distinct) if n_distinct >= 0 else -float(n_distinct) * total
        distinct = max(distinct, 1.0)
        others = max(distinct - len(common), 1.0)
        columns[name] = ColumnStatistics(
            common, max(1.0 - sum(common.values()) - float(null_frac or 0), 0.0) / others, distinct)
    if len(columns) < 3:
        return None
    return JoinStatistics(total, columns["s"], columns["p"], columns["o"])


def order_patterns(triples: Sequence[Triple], stats: JoinStatistics, term_id: Callable[[Any], int | None],
                   constant: Callable[[Any], bool]) -> list[Triple]:
    """``triples`` in the order to join them: greedily the one expected to match the
    fewest rows, among those sharing a variable with the ones before when there are
    such. ``term_id`` gives a constant's id (None: not stored, so the pattern matches
    nothing and comes first); ``constant`` says whether a term is one (variables bound
    from outside the pattern are)."""

    def names(t: Triple) -> set[Any]:
        return {x for x in t if isinstance(x, Variable | BNode) and not constant(x)}

    def rows(t: Triple, bound: set[Any]) -> float:
        if isinstance(t[1], Path):  # a closure: a few steps from a bound end, else a walk of everything
            return PATH_STEPS if any(x in bound or not isinstance(x, Variable | BNode) or constant(x)
                                     for x in (t[0], t[2])) else stats.rows
        ends: list[int | bool] = []
        for x in (t[0], t[2]):
            if isinstance(x, Variable | BNode) and not constant(x):
                ends.append(x in bound)
            else:
                found = term_id(x)
                if found is None:
                    return 0.0
                ends.append(found)
        p = None
        if not isinstance(t[1], Variable | BNode) or constant(t[1]):
            p = term_id(t[1])
            if p is None:
                return 0.0
        elif t[1] in bound:
            return stats.rows_of(ends[0], None, ends[1]) / stats.p.distinct
        return stats.rows_of(ends[0], p, ends[1])

    remaining = list(enumerate(triples))
    bound: set[Any] = set()
    ordered: list[Triple] = []
    while remaining:
        joined = [(n, t) for n, t in remaining if names(t) & bound] if bound else []
        n, best = min(joined or remaining, key=lambda item: (rows(item[1], bound), item[0]))
        remaining.remove((n, best))
        ordered.append(best)
        bound |= names(best)
    return ordered
