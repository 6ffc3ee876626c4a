"""How many rows each end of a closure gives it: the compiler's measure, on SQLite, of
the end to seed a closure from (:meth:`.paths.PathCompiler.seeded_from`).

A closure between two variables, each bound by plain patterns, is walked from one end's
values. Counting the constants around each end picks the wrong one where the less
constrained-looking end is the smaller: benchmark query 1 (``?dims
rdf:rest*/rdf:first "depth"`` under the float32 arrays) was seeded from 11,740 arrays'
lists rather than from the 2,558 list cells holding "depth". Rows alone mislead the
other way: from 212 datasets ``zarr:member+`` fans out to every node below them, where
from 436 arrays of a standard name it climbs one parent a step (query 13). So an end
costs the rows of its most selective pattern (:meth:`Cardinality.rows`) times the nodes a
walk reaches in a few steps of the predicate's typical fan-out in the direction walked
from it (:meth:`Cardinality.fanout`; :meth:`.paths.PathCompiler._walk_costs`).

PostgreSQL keeps the constants' measure: seeded from query 1's list cells, its planner
estimated the arrays' four joined patterns at one row (the columns taken as independent)
and looped over the closure for each of their 11,374 (472 ms against about 420 ms).

The fan-out is a median over a few objects spread over the predicate's ids, with the
out-degree of a subject of each: a mean, or a sample of the first quads of the
predicate, would be ruled by its hubs (every list ends in ``rdf:nil``, the object of a
third of all ``rdf:rest`` quads). Both are read through the indexes (a count reads up to
:data:`CAP` entries: 8 ms for ``rdf:first`` at a million triples) and kept for
:data:`KEPT_FOR` seconds per database URL (in-memory databases share one): they steer a
plan, they do not decide an answer. A plan made from them is kept with its statement
(:mod:`.statement_cache`) for as long as the ids of its constants stay the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import Any, Final

from cachetools import TTLCache
from sqlalchemy.engine import Connection

__all__ = ["CAP", "KEPT_FOR", "SAMPLES", "Cardinality", "Fanout"]

#: Quads counted at most for a pattern.
CAP: Final = 100_000
#: Objects of a predicate whose degrees are sampled.
SAMPLES: Final = 15
#: Degrees counted at most per sampled node.
DEGREE_CAP: Final = 1_000
#: Seconds an estimate is kept.
KEPT_FOR: Final = 300.0

_ESTIMATES: TTLCache[tuple[Any, ...], Any] = TTLCache(maxsize=4096, ttl=KEPT_FOR)
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Fanout:
    """A predicate's typical degrees: objects per subject, subjects per object."""

    forward: float
    backward: float


class Cardinality:
    """Estimates over one database's ``quads`` (``database`` names it in the cache),
    read through ``conn`` in the transaction of the query being compiled."""

    def __init__(self, conn: Connection, database: str) -> None:
        self._conn = conn
        self._database = database

    def rows(self, s: int | None, p: int | None, o: int | None, *, below: float = CAP) -> float:
        """Quads matching constants ``s``, ``p``, ``o`` (None: a variable), counted through
        an index, but only up to ``below`` (at most :data:`CAP`): a count that reaches it
        returns it, meaning "not fewer" (the caller looks for the smallest of several
        patterns, and a predicate alone may have millions of quads)."""
        limit = int(min(max(below, 1), CAP))
        conds = [f"{col} = {int(v)}" for col, v in (("s", s), ("p", p), ("o", o)) if v is not None]
        if not conds:
            return float(limit)
        key = (self._database, "rows", s, p, o)
        with _LOCK:
            found = _ESTIMATES.get(key)  # (count, whether it stopped at its limit)
        if found is None or (found[1] and found[0] < limit):
            sql = f"SELECT count(*) FROM (SELECT 1 FROM quads WHERE {' AND '.join(conds)} LIMIT {limit}) AS c_"
            counted = int(self._conn.exec_driver_sql(sql).scalar_one())
            found = (counted, counted >= limit)
            with _LOCK:
                _ESTIMATES[key] = found
        return float(min(found[0], limit))

    def fanout(self, p: int) -> Fanout:
        """The median degrees of predicate ``p`` over :data:`SAMPLES` of its objects,
        spread over their ids (1 each way for a predicate without quads)."""
        def read() -> Fanout:
            points = ", ".join(f"({i})" for i in range(SAMPLES))
            sql = (
                # (min and max apart: together SQLite scanned the predicate for them)
                f"WITH b AS (SELECT (SELECT min(o) FROM quads WHERE p = {p}) AS lo, "
                f"(SELECT max(o) FROM quads WHERE p = {p}) AS hi),\n"
                f"pts(i) AS (VALUES {points}),\n"
                f"e AS (SELECT DISTINCT (SELECT q.o FROM quads q WHERE q.p = {p} AND "
                f"q.o >= b.lo + (b.hi - b.lo) * (2 * pts.i + 1) / {2 * SAMPLES} ORDER BY q.o LIMIT 1) AS o "
                f"FROM b CROSS JOIN pts WHERE b.lo IS NOT NULL)\n"
                f"SELECT (SELECT count(*) FROM (SELECT 1 FROM quads q WHERE q.p = {p} AND q.o = e.o "
                f"LIMIT {DEGREE_CAP}) AS i_),\n"
                f"(SELECT count(*) FROM (SELECT 1 FROM quads q WHERE q.s = (SELECT q3.s FROM quads q3 "
                f"WHERE q3.p = {p} AND q3.o = e.o LIMIT 1) AND q.p = {p} LIMIT {DEGREE_CAP}) AS o_)\n"
                f"FROM e WHERE e.o IS NOT NULL"
            )
            degrees = self._conn.exec_driver_sql(sql).fetchall()
            if not degrees:
                return Fanout(1.0, 1.0)
            return Fanout(float(median(row[1] for row in degrees)), float(median(row[0] for row in degrees)))
        return self._kept(("fanout", p), read)

    def _kept(self, key: tuple[Any, ...], read: Callable[[], Any]) -> Any:
        key = (self._database, *key)
        with _LOCK:
            found = _ESTIMATES.get(key)
        if found is None:
            found = read()
            with _LOCK:
                _ESTIMATES[key] = found
        return found
