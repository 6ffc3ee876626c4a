"""What every database dialect of the store provides: the driver-level statements that
differ between SQLite and PostgreSQL, behind one interface.

Bulk statements are written at the driver level: for batches of thousands of rows
SQLAlchemy's per-row parameter processing costs more than SQLite's insert itself, and
on PostgreSQL one statement over arrays (unnest / ANY) replaces thousands of round
trips.  Table and column names are fixed by the schema.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Protocol

from sqlalchemy.engine import Connection, Engine

__all__ = ["IN_CHUNK", "Dialect", "NewTermRow", "StoredTermRow", "chunks"]

#: ``(hash, kind, value, datatype id, lang, num)``: a new ``terms`` row without its id.
NewTermRow = tuple[int, int, str, int | None, str | None, float | None]
#: ``(hash, id, kind, value, datatype id, lang)``: a stored row as read back.
StoredTermRow = tuple[int, int, int, str, int | None, str | None]

# Ids per IN (...) list; well under SQLite's and PostgreSQL's bind parameter limits.
IN_CHUNK: Final = 1_000


def chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


class Dialect(Protocol):
    """The store's SQL that differs by database, chosen once per engine
    (:func:`catalogue.graph.dialect.dialect_for`)."""

    #: SQLAlchemy's dialect name: ``"sqlite"`` or ``"postgresql"``.
    name: str

    def insert_quads(self, conn: Connection, rows: list[tuple[int, int, int, int]]) -> None:
        """Insert ``(g, s, p, o)`` rows, skipping stored ones."""
        ...

    def insert_graphs(self, conn: Connection, ids: list[int]) -> None:
        """Register graph ids, skipping registered ones."""
        ...

    def select_terms(self, conn: Connection, hashes: list[int]) -> Iterator[StoredTermRow]:
        """Stored rows for the given term hashes (those that exist)."""
        ...

    def insert_terms(
        self, conn: Connection, rows: list[NewTermRow], reserve: Callable[[int], int]
    ) -> dict[int, int]:
        """Insert new terms in the order given; return hash -> id of those inserted.

        ``reserve(count)`` hands out the first of ``count`` consecutive ids, for a
        database whose terms the store numbers itself (SQLite)."""
        ...

    def lock_writers(self, conn: Connection, *, shared: bool = False, graph: str | None = None) -> None:
        """PostgreSQL: take the writers' lock of this transaction, alone or (``shared``)
        with other writers of other graphs, and then ``graph``'s own lock (SQLite's own
        write lock is taken by the store, see ``SQLStore._begin_write``)."""
        ...

    def try_lock_writers(self, conn: Connection) -> bool:
        """PostgreSQL: take the writers' lock alone if no one holds it (never waits)."""
        ...

    def analyze(self, conn: Connection, tables: tuple[str, ...] = ...) -> None:
        """Refresh the planner statistics of ``tables`` (default: every table of the store)."""
        ...

    def analyze_grown(self, engine: Engine, tables: tuple[str, ...] = ...) -> list[str]:
        """Refresh the statistics of those of ``tables`` that changed by half their size
        since the last (on a connection of its own, outside any transaction); return them."""
        ...

    def vacuum(self, engine: Engine, tables: tuple[str, ...] = ...) -> None:
        """After a large committed write: settle the new rows for readers (PostgreSQL
        ``VACUUM``; nothing on SQLite, whose pages carry no visibility information)."""
        ...

    def can_hold(self, text: str) -> bool:
        """Whether the database can store ``text`` (valid UTF-8 is checked by the caller)."""
        ...
