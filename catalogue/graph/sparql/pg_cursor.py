"""A PostgreSQL server-side cursor whose first rows come back with its ``DECLARE``.

A compiled SELECT of unknown size is read through a server-side cursor (``DECLARE``,
then ``FETCH`` a batch at a time), so that a result of millions of rows never sits in
memory and other statements can run on the connection while it is read (rdflib asks
for a compiled child's rows inside its own loops). Through SQLAlchemy's
``stream_results`` that is three round trips before the first row and one after the
last (``DECLARE``, ``FETCH``, an empty ``FETCH``, ``CLOSE``): on loopback a third of a
sub-millisecond query.

Here ``DECLARE`` and the first ``FETCH`` go in one pipeline (libpq's pipeline mode,
with the ``BEGIN`` psycopg adds); a first batch shorter than asked for is the whole
result, so no further ``FETCH`` is sent; and an exhausted cursor's ``CLOSE`` rides in
the pipeline of the connection's next cursor in the same transaction (the transaction's
end closes it otherwise). A cursor abandoned before its end is closed at once, as
before.

A ``DECLARE`` is planned every time it runs (PostgreSQL prepares no cursor), and
planning a query of a few joins costs as much as running it (q04 of the benchmark: 5
of 11 ms). So a statement whose whole result fitted in the first batch last time is
run next time as a prepared statement, all its rows read at once, below a ``LIMIT`` of
:data:`AT_ONCE` rows and one (:func:`read_rows`): a result that has grown past that is
read again through a cursor, and the statement is remembered as large. The limit bounds
the memory such a read can take, and is high enough not to bend the plan towards its
first rows more than a cursor's does (``cursor_tuple_fraction``, a tenth, is what the
cursor's plan is made for; a ``LIMIT`` of n rows is a fraction n / estimated rows, so
the same for estimates up to ten times the limit). A ``LIMIT`` of one batch would have
made a plan for the first thousand rows of a misestimated large result that is in fact
small, the classic trap of ``LIMIT`` plans.

psycopg is imported where it is used, so that a process on a SQLite catalogue never
loads it (a quarter of a second of a CLI query's start).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Final

from cachetools import LRUCache
from sqlalchemy import text
from sqlalchemy.engine import Connection

from ..database import database_key
from ..dialect.driver import driver_errors

__all__ = ["fetch_all", "open_cursor", "read_rows"]

#: Compiled statement texts kept (SQLAlchemy's ``:name`` -> psycopg's ``%(name)s``).
_KEPT: Final = 256
_compiled: LRUCache[str, str] = LRUCache(maxsize=_KEPT)
_compiled_lock = threading.Lock()
_names = itertools.count()
#: Rows a statement short last time may give when read at once (beyond: through a cursor).
AT_ONCE: Final = 20_000
#: Statements (the database, the text in SQLAlchemy's form, the parameters: a filter's
#: strings are parameters, and one word may match little where another matches much)
#: whose whole result was one short batch last time.
_small: LRUCache[tuple[str, str, str], bool] = LRUCache(maxsize=_KEPT)
_small_lock = threading.Lock()
#: ``Connection.info`` key: (the transaction, weakly; exhausted cursors not closed yet).
_PENDING: Final = "sparql_cursors_to_close"


def _driver_sql(conn: Connection, sql: str) -> str:
    """``sql`` with psycopg's placeholders (and ``%`` escaped), as SQLAlchemy compiles it."""
    with _compiled_lock:
        found = _compiled.get(sql)
    if found is None:
        found = str(text(sql).compile(dialect=conn.dialect))
        with _compiled_lock:
            _compiled[sql] = found
    return found


def _to_close(conn: Connection) -> list[str]:
    """Exhausted cursors of this transaction still open (and forget those of an ended one)."""
    kept = conn.info.get(_PENDING)
    current = conn.get_transaction()
    if kept is None or kept[0]() is not current:
        conn.info[_PENDING] = kept = (weakref.ref(current) if current is not None else lambda: None, [])
    return kept[1]


def fetch_all(conn: Connection, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Every row of ``sql`` (SQLAlchemy ``:name`` parameters; a statement of a bounded
    result)."""
    if not conn.in_transaction():
        conn.begin()
    cursor = conn.connection.driver_connection.cursor()
    try:
        with driver_errors(conn, sql, params):
            cursor.execute(_driver_sql(conn, sql), params)
            return cursor.fetchall()
    finally:
        cursor.close()


def _was_small(key: tuple[str, str, str]) -> bool:
    with _small_lock:
        return _small.get(key, False)


def _remember(key: tuple[str, str, str], small: bool) -> None:
    with _small_lock:
        if small:
            _small[key] = True
        else:
            _small.pop(key, None)


def read_rows(conn: Connection, sql: str, params: dict[str, Any], size: int, *,
              bounded: bool = False, known_as: str | None = None
              ) -> tuple[Iterator[list[tuple[Any, ...]]], Callable[[], None]]:
    """Batches of ``sql``'s rows and a function that closes them unread: all read at once
    for a ``bounded`` statement (a LIMIT of at most a batch); for a statement whose whole
    result was shorter than ``size`` rows last time, read at once by a prepared
    statement limited to :data:`AT_ONCE` rows and one (no planning, no cursor), past
    which the rows are read again through a cursor and the statement is remembered as
    large; otherwise through a cursor (:func:`open_cursor`). ``known_as``: the statement
    whose size is remembered, where ``sql`` is a form of it (:mod:`.guard`)."""
    if bounded:
        rows = fetch_all(conn, sql, params)
        return iter([rows] if rows else []), _nothing
    key = _key(conn, known_as or sql, params)
    if _was_small(key):
        rows = fetch_all(conn, f"SELECT * FROM (\n{sql}\n) AS small_ LIMIT {AT_ONCE + 1}", params)
        if len(rows) <= AT_ONCE:
            return iter([rows] if rows else []), _nothing
        _remember(key, False)
    return open_cursor(conn, sql, params, size, known_as=known_as)


def _key(conn: Connection, sql: str, params: dict[str, Any]) -> tuple[str, str, str]:
    """What a statement's size is remembered by (the database as ``evaluate._database``)."""
    return database_key(conn.engine), sql, repr(sorted(params.items()))


def _nothing() -> None:
    """What closes rows read at once."""


def open_cursor(conn: Connection, sql: str, params: dict[str, Any], size: int, *,
                known_as: str | None = None) -> tuple[Iterator[list[tuple[Any, ...]]], Callable[[], None]]:
    """Batches of at most ``size`` rows of ``sql`` (SQLAlchemy ``:name`` parameters) and a
    function that closes the cursor if it was not read to the end."""
    from psycopg import Pipeline
    from psycopg.pq import TransactionStatus

    if not conn.in_transaction():
        conn.begin()
    raw = conn.connection.driver_connection
    closing = _to_close(conn)
    stale, closing[:] = list(closing), []
    name = f"sparql_cursor_{next(_names)}"
    cursor = raw.cursor()
    with driver_errors(conn, sql, params):
        # libpq before 14 has no pipeline mode: the same statements, one round trip each
        with raw.pipeline() if Pipeline.is_supported() else contextlib.nullcontext():
            for old in stale:
                cursor.execute(f"CLOSE {old}", prepare=False)
            cursor.execute(f"DECLARE {name} NO SCROLL CURSOR FOR {_driver_sql(conn, sql)}", params, prepare=False)
            cursor.execute(f"FETCH FORWARD {int(size)} FROM {name}", prepare=False)
        first = cursor.fetchall()
    transaction, savepoint = conn.get_transaction(), conn.get_nested_transaction()
    is_open = True

    def alive() -> bool:
        """Whether the cursor's transaction (and savepoint) is still the connection's (the
        cursor went with it; a ``FETCH`` or ``CLOSE`` of it would abort the next one)."""

        return (transaction is not None and transaction.is_active and conn.get_transaction() is transaction
                and conn.get_nested_transaction() is savepoint and (savepoint is None or savepoint.is_active)
                and not raw.closed and raw.info.transaction_status == TransactionStatus.INTRANS)

    def batches() -> Iterator[list[tuple[Any, ...]]]:
        nonlocal is_open
        batch = first
        while True:
            if len(batch) < size:
                is_open = False
                if batch is first:
                    _remember(_key(conn, known_as or sql, params), True)
                if alive() and savepoint is None:  # else it goes with its transaction or savepoint
                    _to_close(conn).append(name)
                elif alive():
                    with contextlib.suppress(Exception):
                        cursor.execute(f"CLOSE {name}", prepare=False)
                if batch:
                    yield batch
                return
            if batch is first:
                _remember(_key(conn, known_as or sql, params), False)
            yield batch
            if not alive():
                is_open = False
                raise RuntimeError("a store result cannot be iterated after commit() or rollback(); "
                                   "finish iterating (or use list()) before ending the transaction")
            with driver_errors(conn, f"FETCH FORWARD {int(size)} FROM {name}", None):
                cursor.execute(f"FETCH FORWARD {int(size)} FROM {name}", prepare=False)
                batch = cursor.fetchall()

    def close() -> None:
        nonlocal is_open
        if is_open:
            is_open = False
            if alive():
                with contextlib.suppress(Exception):
                    cursor.execute(f"CLOSE {name}", prepare=False)
        cursor.close()

    return batches(), close
