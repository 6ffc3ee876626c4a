"""SQLite's statements for the store: ids numbered by the store, ``?`` parameters."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import chain
from typing import Any, Final

from sqlalchemy.engine import Connection, Engine

from .base import NewTermRow, StoredTermRow, chunks
from .driver import driver_connection, driver_errors

__all__ = ["ROWS_PER_STATEMENT", "SQLITE", "TAKE_WRITE_LOCK", "SQLiteDialect", "insert_values", "next_term_id"]

# SQLite ids are allocated by the store inside the write transaction (see
# SQLStore._next_term_id), so the insert carries them.
_INSERT_TERMS = ("INSERT INTO terms (id, hash, kind, value, datatype, lang, num)", "ON CONFLICT (hash) DO NOTHING")
_INSERT_QUADS = ("INSERT INTO quads (g, s, p, o)", "ON CONFLICT DO NOTHING")
_INSERT_GRAPHS = "INSERT INTO graphs (id) VALUES (?) ON CONFLICT DO NOTHING"
# The next id continues after every id ever used: sqlite_sequence remembers the
# highest id of AUTOINCREMENT tables even after that row is deleted.
_NEXT_TERM_ID = (
    "SELECT max(coalesce((SELECT max(id) FROM terms), 0), "
    "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'terms'), 0)) + 1"
)
#: Takes the write lock of a transaction that has only read so far (see SQLStore._begin_write).
TAKE_WRITE_LOCK: Final = "UPDATE datatypes SET iri = iri WHERE 0"
# Old SQLite builds allow at most 999 bound parameters per statement.
_IN_CHUNK: Final = 900


@lru_cache(maxsize=8)
def _select_terms_sql(n: int) -> str:
    marks = ", ".join("?" * n)
    return f"SELECT hash, id, kind, value, datatype, lang FROM terms WHERE hash IN ({marks})"


def next_term_id(conn: Connection) -> int:
    """The first id for new terms (valid while the transaction holds the write lock)."""
    return int(conn.exec_driver_sql(_NEXT_TERM_ID).scalar_one())


#: Rows per multi-row ``INSERT`` (:func:`insert_values`).
ROWS_PER_STATEMENT: Final = 1024


@lru_cache(maxsize=32)
def _values_sql(head: str, width: int, rows: int, tail: str) -> str:
    row = "(" + ",".join("?" * width) + ")"
    return f"{head} VALUES {','.join([row] * rows)} {tail}"


def insert_values(cursor: Any, head: str, width: int, values: list[Any], tail: str = "") -> int:
    """Insert rows of ``width`` columns, given as one flat list of ``values``, with
    multi-row ``VALUES`` statements through the driver's ``cursor``; return the number of
    rows inserted (an ``ON CONFLICT DO NOTHING`` skips count as none).

    Binding a few thousand rows per statement is two to three times faster than
    ``executemany`` row by row: the bulk loader's inserts, and the harvest's (49,000
    quads and 20,000 terms for 1,000 arrays).  At most :data:`ROWS_PER_STATEMENT` rows
    per statement: SQLite compiles a longer one row by row again each time its text is
    new, and one of this length is compiled once and kept in the driver's statement
    cache (the harvest's 20,000 terms went in in 44 ms as 4,680-row statements, in 32 ms
    as 1,024-row ones; quads alike or better).
    """
    limit = cursor.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    per_statement = max(min(limit // width, ROWS_PER_STATEMENT), 1) * width
    inserted = 0
    for start in range(0, len(values), per_statement):
        chunk = values[start : start + per_statement]
        cursor.execute(_values_sql(head, width, len(chunk) // width, tail), chunk)
        inserted += max(cursor.rowcount, 0)
    return inserted


def _insert(conn: Connection, statement: tuple[str, str], width: int, rows: list[tuple[Any, ...]]) -> int:
    """:func:`insert_values` of ``rows`` in the transaction SQLAlchemy began on ``conn``."""
    head, tail = statement
    values = list(chain.from_iterable(rows))
    with driver_errors(conn, head, None):
        cursor = driver_connection(conn).cursor()
        try:
            return insert_values(cursor, head, width, values, tail)
        finally:
            cursor.close()


class SQLiteDialect:
    """The store's SQLite statements (see :class:`.base.Dialect`)."""

    name = "sqlite"

    def insert_quads(self, conn: Connection, rows: list[tuple[int, int, int, int]]) -> None:
        _insert(conn, _INSERT_QUADS, 4, rows)

    def insert_graphs(self, conn: Connection, ids: list[int]) -> None:
        conn.exec_driver_sql(_INSERT_GRAPHS, [(gid,) for gid in ids])

    def select_terms(self, conn: Connection, hashes: list[int]) -> Iterator[StoredTermRow]:
        # Through the driver's cursor, in the transaction SQLAlchemy began: every compiled
        # query looks its constants up first, and SQLAlchemy's result set-up was a tenth
        # of a small query's time (a DESCRIBE of two resources).
        for chunk in chunks(hashes, _IN_CHUNK):
            sql, params = _select_terms_sql(len(chunk)), tuple(chunk)
            with driver_errors(conn, sql, params):
                rows = driver_connection(conn).execute(sql, params).fetchall()
            yield from rows

    def insert_terms(
        self, conn: Connection, rows: list[NewTermRow], reserve: Callable[[int], int]
    ) -> dict[int, int]:
        first = reserve(len(rows))
        numbered = [(first + i, *row) for i, row in enumerate(rows)]
        inserted = _insert(conn, _INSERT_TERMS, 7, numbered)
        if inserted == len(rows):
            return {row[1]: row[0] for row in numbered}
        # Some hash was stored already (a blank node's label, written without a look-up
        # first): the ids of the reserved range are the rows this insert wrote, since the
        # transaction holds the write lock; the caller reads the others back by hash.
        return {int(h): int(i) for h, i in conn.exec_driver_sql(
            "SELECT hash, id FROM terms WHERE id >= ? AND id < ?", (first, first + len(rows)))}

    def lock_writers(self, conn: Connection, *, shared: bool = False, graph: str | None = None) -> None:
        pass  # the database's own write lock, taken by the store: one writer at a time

    def try_lock_writers(self, conn: Connection) -> bool:
        return True  # the caller holds the database's write lock already

    def analyze(self, conn: Connection, tables: tuple[str, ...] = ()) -> None:
        if not tables:
            conn.exec_driver_sql("ANALYZE")
        for table in tables:
            conn.exec_driver_sql(f"ANALYZE {table}")

    def analyze_grown(self, engine: Engine, tables: tuple[str, ...] = ()) -> list[str]:
        return []  # its planner takes an index for a lookup by key without statistics

    def vacuum(self, engine: Engine, tables: tuple[str, ...] = ()) -> None:
        pass  # SQLite's readers need no visibility map or hint bits

    def can_hold(self, text: str) -> bool:
        return True


SQLITE: Final = SQLiteDialect()
