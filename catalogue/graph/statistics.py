"""Planner statistics PostgreSQL needs beyond its per-column ones: which predicates an
object goes with.

PostgreSQL estimates ``p = :p AND o = :o`` as if predicate and object were independent,
and an object outside the column's hundred most common values at one over its distinct
values (which it underestimates: a sample of 30,000 rows sees few of them twice). Both
are far off: ``dcat:Dataset`` is the object of ``rdf:type`` alone, a standard name the
object of ``zarr:standardName`` alone, so the pair came out as one row where there are
hundreds. Planned for one row, the benchmark's query 13 (datasets holding a variable,
through ``zarr:member+``) probed a closure's thousand rows once per dataset (290 ms at a
million triples), and query 1 joined its arrays in a nested loop (42 s).

So ``quads.o`` keeps its :data:`TARGET` most common values (and ``ANALYZE`` samples 300
times as many rows: about a second on a million triples, the same at any larger size),
and extended statistics on ``(p, o)`` record that the object determines the predicate
(``dependencies``): the pair is then estimated at the object's own frequency (170 rows
for 212; query 13 in 6 to 15 ms, query 1 in 0.22 s). A most-common-pairs list (``mcv``)
estimated closer still but, consulted for every clause of every join the planner weighs,
cost up to 9 ms of planning per query at a target of 3,000. SQLite has nothing to add
(its planner reads ``sqlite_stat1``/``stat4`` of the indexes, which cover ``(p, o)``).
"""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Connection

__all__ = ["QUADS_STATISTICS", "TARGET", "create_statistics", "drop_statistics"]

#: The statistics object on ``quads (p, o)``.
QUADS_STATISTICS: Final = "quads_po"
#: Most common objects kept for ``quads.o`` (PostgreSQL's default is 100).
TARGET: Final = 1000


def create_statistics(conn: Connection) -> None:
    """Create the statistics object on ``conn``'s database if missing (PostgreSQL only;
    the next ``ANALYZE`` of ``quads`` fills it)."""
    if conn.dialect.name != "postgresql":
        return
    conn.exec_driver_sql(f"CREATE STATISTICS IF NOT EXISTS {QUADS_STATISTICS} (dependencies) ON p, o FROM quads")
    conn.exec_driver_sql(f"ALTER TABLE quads ALTER COLUMN o SET STATISTICS {TARGET}")


def drop_statistics(conn: Connection) -> None:
    """Drop them (a downgrade): the planner goes back to per-column statistics."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"DROP STATISTICS IF EXISTS {QUADS_STATISTICS}")
        conn.exec_driver_sql("ALTER TABLE quads ALTER COLUMN o SET STATISTICS -1")
