"""The store's connection to a database, shared by the stores one thread opens on it.

A :class:`Session` is one connection plus what the store knows about it and its
current transaction (caches of ids, the write lock, open result streams).  Stores
opened by configuration on the same database in one thread share one session.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from rdflib.term import Node
from sqlalchemy import Engine
from sqlalchemy.engine import Connection

from .dialect import Dialect
from .dialect.sqlite import SQLITE
from .written import MAX_WRITTEN_ROWS, WrittenGraph

__all__ = ["THREAD_SESSIONS", "Rows", "Session", "register", "shared_session", "unregister"]


class Rows:
    """A result being iterated, which fails with a clear message once it is expired
    (its transaction ended) instead of with a driver error about a closed cursor."""

    __slots__ = ("expired", "result")

    def __init__(self, result: Any) -> None:
        self.result = result
        self.expired = False

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self.result
        except Exception:
            if self.expired:
                raise RuntimeError(
                    "a store result cannot be iterated after commit() or rollback(); "
                    "finish iterating (or use list()) before ending the transaction"
                ) from None
            raise

    def expire(self) -> None:
        self.expired = True
        self.result.close()

    def close(self) -> None:
        self.result.close()


class Session:
    """One database connection and what is known about it and its current transaction.

    Usually a store has a session of its own.  Stores opened by configuration on the
    same database in the same thread share one (see :func:`shared_session`): a SQLite
    file has one writer at a time, and two stores of one thread writing through two
    connections would wait for each other for ever (rdflib's ``g1 - g2`` on two
    graphs opened on one path does exactly that).  Sharing the connection shares the
    transaction: a commit or rollback of one store is one of all of them.
    """

    __slots__ = (
        "__weakref__",
        "conn",
        "dialect",
        "dt_fresh",
        "dt_ids",
        "dt_iris",
        "engine",
        "graph_names",
        "key",
        "ns",
        "owns_engine",
        "read_ids",
        "read_key",
        "streams",
        "tx_exempt",
        "tx_graphs",
        "tx_next_id",
        "tx_shared",
        "tx_terms",
        "tx_touched",
        "tx_touched_names",
        "tx_write_locked",
        "tx_written",
        "tx_wrote_ids",
        "users",
    )

    def __init__(self) -> None:
        self.engine: Engine | None = None
        self.owns_engine = False
        self.conn: Connection | None = None
        self.dialect: Dialect = SQLITE  # chosen from the engine when the session opens
        self.key: str | None = None  # the URL it is registered under in this thread
        self.users = 0
        # Caches of the open database, keyed by id.  Committed ids are never reused
        # (AUTOINCREMENT on SQLite, a sequence on PostgreSQL) and datatypes are never
        # deleted, so entries stay right for as long as the database is open; only
        # ids written in a transaction that was then rolled back may be handed out
        # again, so a rollback after writing drops them (see SQLStore.rollback).
        self.graph_names: dict[int, Node] = {}  # term id -> graph name
        self.dt_fresh = False  # dt_ids read in the current transaction
        self.dt_iris: dict[int, str] = {}  # datatype id -> IRI
        self.dt_ids: dict[str, int] = {}  # IRI -> datatype id
        # SQLite: the ids term lookups found (None: not stored), kept from transaction
        # to transaction for as long as the database is as it was when they were
        # looked up: ``read_key`` is then (the driver connection, PRAGMA data_version, its
        # total changes), and a rollback of a write drops them (see load.ids._kept_term_ids).
        self.read_ids: dict[Node, int | None] = {}
        self.read_key: tuple[int, int, int] | None = None
        # prefix -> namespace, loaded lazily; dropped at commit/rollback.
        self.ns: dict[str, str] | None = None
        # Per-transaction knowledge, reset at commit/rollback (see end_transaction).
        self.tx_terms: dict[Node, int] = {}
        self.tx_graphs: set[int] = set()
        self.tx_write_locked = False
        # PostgreSQL: the write lock is shared with writers of other graphs (see
        # SQLStore.write_transaction): terms are then collected later, not in it.
        self.tx_shared = False
        self.tx_next_id: int | None = None  # SQLite: next free term id
        self.tx_wrote_ids = False  # terms or datatypes were inserted
        # Graphs whose quads this transaction added or removed (ids, and the names of
        # those already counted), and those whose writer said no derived index depends
        # on what it wrote (see catalogue.graph.derived).
        self.tx_touched: set[int] = set()
        self.tx_touched_names: set[Node] = set()
        self.tx_exempt: set[Node] = set()
        # Graphs replaced whole in this transaction and not touched since: what was
        # written, for the derived indexes (see catalogue.graph.written).
        self.tx_written: dict[int, WrittenGraph] = {}
        # Streamed results not yet exhausted (see close_streams).
        self.streams: set[Rows] = set()

    def close_streams(self) -> None:
        """Close streamed results left open by abandoned iterators.

        A PostgreSQL server-side cursor disappears at the end of its transaction; if
        its result were closed later (when the iterator is garbage collected), the
        driver's ``CLOSE`` would fail inside the *next* transaction and abort it.
        """
        streams, self.streams = self.streams, set()
        for rows in streams:
            rows.expire()

    def keep_written(self, gid: int, written: WrittenGraph) -> None:
        """Keep what replaced graph ``gid`` (:mod:`.written`), unless it overflowed or the
        transaction already keeps :data:`.written.MAX_WRITTEN_ROWS` rows of other graphs."""
        self.tx_written.pop(gid, None)
        held = sum(len(w.rows) for w in self.tx_written.values())
        if not written.overflowed and held + len(written.rows) <= MAX_WRITTEN_ROWS:
            self.tx_written[gid] = written

    def touch(self, gids: Iterable[int]) -> None:
        """Note graphs whose quads this transaction changed (by id): the derived indexes
        are asked about them, and what :attr:`tx_written` held of them no longer holds."""
        for gid in gids:
            self.tx_touched.add(gid)
            self.tx_written.pop(gid, None)

    def touch_name(self, name: Node) -> None:
        """:meth:`touch` for a graph known by name only (its id is looked up at commit)."""
        self.tx_touched_names.add(name)
        for gid in [gid for gid, written in self.tx_written.items() if written.name == name]:
            del self.tx_written[gid]

    def end_transaction(self) -> None:
        """Forget what held for the transaction that ended (commit or rollback)."""
        # What this transaction learnt about stored terms, graphs and locks is only
        # guaranteed while it lasts; prefixes may be changed by others after it.
        self.tx_terms.clear()
        self.tx_graphs.clear()
        self.tx_write_locked = False
        self.tx_shared = False
        self.tx_next_id = None
        self.tx_wrote_ids = False
        self.tx_touched.clear()
        self.tx_touched_names.clear()
        self.tx_exempt.clear()
        self.tx_written.clear()
        self.ns = None
        self.dt_fresh = False

    def forget_lookups(self) -> None:
        """Drop the term lookups kept across transactions (``read_ids``)."""
        self.read_ids.clear()
        self.read_key = None

    def forget_ids(self) -> None:
        """Drop the id-keyed caches (another database, or ids that may be reused)."""
        self.graph_names.clear()
        self.forget_lookups()
        self.dt_iris.clear()
        self.dt_ids.clear()
        self.dt_fresh = False


class _ThreadSessions(threading.local):
    """The sessions open in one thread, by database URL.

    Thread-local, so a thread never sees another's (even one that ended and whose id
    was given to a new thread), and held weakly, so that a store dropped without
    ``close()`` lets its connection go, as it did before stores shared them.
    """

    def __init__(self) -> None:
        self.by_url: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()


THREAD_SESSIONS = _ThreadSessions()


def shared_session(url: str) -> Session | None:
    """The open session of this thread on ``url``, counted as used once more, if any."""
    session = THREAD_SESSIONS.by_url.get(url)
    if session is not None and session.conn is not None:
        session.users += 1
        return session
    return None


def register(session: Session, url: str) -> None:
    if THREAD_SESSIONS.by_url.get(url) is None:
        session.key = url
        THREAD_SESSIONS.by_url[url] = session


def unregister(session: Session) -> None:
    if session.key is not None and THREAD_SESSIONS.by_url.get(session.key) is session:
        del THREAD_SESSIONS.by_url[session.key]
    session.key = None
