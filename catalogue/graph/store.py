"""An rdflib :class:`~rdflib.store.Store` backed by SQLite or PostgreSQL.

The store keeps RDF quads as four integer term ids (see :mod:`.schema` and
:mod:`.terms`) and answers every triple pattern with one SQL statement that joins the
``terms`` table only for the positions it has to decode.  Bound terms of a pattern are
found inside that statement, through their content hash (``terms.hash``) and a
comparison of their content, so a read never needs a separate id lookup and never
relies on ids cached across statements.

Semantics follow rdflib's in-memory ``Memory`` store, so that
``Dataset(store=SQLStore(...))`` behaves like ``Dataset(store="Memory")``:

* ``context=None`` in :meth:`SQLStore.triples`, :meth:`SQLStore.remove` and
  :meth:`SQLStore.__len__` means the union of all graphs (distinct triples), and the
  ``contexts`` iterator yielded with each triple lists *every* graph the triple is in,
  not just the one asked about.
* The dataset's default graph is an ordinary graph named
  ``urn:x-rdflib:default`` (:data:`rdflib.graph.DATASET_DEFAULT_GRAPH_ID`).  A
  ``Dataset`` with ``default_union=True`` turns reads of its default graph into
  ``context=None`` itself, before the store sees them.
* A graph exists once a triple was added to it or it was added with
  :meth:`SQLStore.add_graph`; removing its triples leaves it in place, only
  :meth:`SQLStore.remove_graph` forgets it.

Transactions: the store holds one connection; the first statement opens a transaction
that lasts until :meth:`SQLStore.commit` or :meth:`SQLStore.rollback`.  Reads see the
store's own uncommitted writes.  On SQLite the first write of a transaction takes the
database's write lock (``BEGIN IMMEDIATE`` when the write is the transaction's first
statement), which writers need because they number new terms themselves.  Note that
on SQLite an open transaction is a snapshot: call ``commit()``/``rollback()`` to see
what other processes committed since.  A store (like its connection) must not be
shared between threads.

Helpers for SQL-level access (a SPARQL-to-SQL compiler): :attr:`SQLStore.connection`,
:attr:`SQLStore.dialect_name`, :meth:`SQLStore.lookup_term_ids`,
:meth:`SQLStore.datatype_ids`, :meth:`SQLStore.datatype_iri`,
:meth:`SQLStore.decode_term`, :meth:`SQLStore.graph_name_ids` and
:meth:`SQLStore.analyze`.
"""

# Why this module is longer than 600 lines: it is one concept, rdflib's Store API
# (lifecycle, transactions, add/remove/triples/len/contexts, graphs, namespaces,
# query/update) on one class, with the docstrings that state its Memory-store
# semantics.  Everything below that API lives elsewhere: sessions (session.py),
# pattern SQL (match.py), term ids and writes (load/ids.py), garbage collection
# (collect.py), per-database SQL (dialect/), SPARQL (sparql/).

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from typing import Any, Final, cast

from rdflib.graph import DATASET_DEFAULT_GRAPH_ID, ConjunctiveGraph, Dataset, Graph
from rdflib.store import VALID_STORE, Store
from rdflib.term import BNode, Node, URIRef
from sqlalchemy import Delete, Engine, and_, delete, func, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError

from .collect import collect_all, collect_terms, graph_term_ids, queue_terms
from .database import (
    begin_write_transaction,
    busy_error,
    database_url,
    ensure_schema,
    is_memory_sqlite,
    make_engine,
)
from .deadline import check_deadline
from .derived import IndexHook, queue_graphs
from .dialect import dialect_for
from .dialect.base import chunks
from .dialect.sqlite import TAKE_WRITE_LOCK
from .load import ids
from .match import SPO, bound_conditions, match_statement, row_decoder, term_id_of
from .schema import graphs, metadata, namespaces, quads, term_gc_queue, terms
from .search_schema import drop_search_indexes
from .session import THREAD_SESSIONS, Rows, Session, register, shared_session, unregister
from .spatial import drop_index as drop_spatial_index
from .terms import decode, encode
from .written import WrittenGraph

__all__ = ["SQLStore"]

_log = logging.getLogger(__name__)

#: :meth:`SQLStore.analyze_grown` asks the database at most this often (seconds).
GROWN_CHECK_SECONDS: Final = 2.0

#: Quads per executemany batch in bulk loads: large enough to amortise round trips,
#: small enough to keep the per-batch term dictionaries modest.
BATCH_SIZE: Final = 10_000
# Rows fetched per round trip when a result is streamed from a server-side cursor.
_YIELD_PER: Final = 2_000
_Triple = tuple[Node, Node, Node]


class SQLStore(Store):
    """rdflib store on a SQL database (SQLite or PostgreSQL), registered as ``catalogue``.

    ``SQLStore("catalogue.db")``, ``SQLStore("postgresql://...")`` or
    ``SQLStore(engine=engine)`` open a database (creating or migrating the schema);
    ``SQLStore()`` opens a private in-memory SQLite database on first use, which is
    what ``rdflib.Dataset(store="catalogue")`` gets.  A directory as configuration
    means the file ``catalogue.db`` inside it (rdflib's convention, as for BerkeleyDB).

    Stores opened by configuration on the same database in one thread share one
    connection and its transaction (see :class:`.session.Session`), so that two graphs opened
    on one path can both write.  ``private=True`` gives a store a connection of its
    own whatever else is open (the web server lends each of its stores to any worker
    thread, so they must not share).
    """

    context_aware = True
    formula_aware = False
    graph_aware = True
    transaction_aware = True

    def __init__(
        self,
        configuration: str | None = None,
        identifier: Node | None = None,
        engine: Engine | None = None,
        *,
        private: bool = False,
    ) -> None:
        self.identifier = identifier
        self._given_engine = engine
        self._private = private
        self._s = Session()
        self._closed = False
        #: When :meth:`analyze_grown` last asked (``time.monotonic``).
        self._grown_checked = float("-inf")
        #: The prefixes' terms, made once per set of bindings (:meth:`namespaces`).
        self._ns_terms: tuple[dict[str, str], list[tuple[str, URIRef]]] | None = None
        # SPARQL: compile to SQL (see catalogue.graph.sparql); when ``sql_log`` is a list
        # the statements that ran are appended to it (``catalogue query --explain``).
        self.compile_sparql = True
        self.sql_log: list[Any] | None = None
        #: Derived indexes brought up to date before each commit (:mod:`.derived`).
        self.index_hooks: list[IndexHook] = []
        super().__init__(None, identifier)
        if configuration or engine is not None:
            self.open(configuration)

    # ------------------------------------------------------------------ lifecycle

    def open(self, configuration: str | tuple[str, str] | None, create: bool = False) -> int:
        """Connect to ``configuration`` (a URL, a file path or a directory, see
        :func:`~catalogue.graph.database.database_url`) or to the engine given to the
        constructor, and migrate the schema to the current revision.

        ``create`` is accepted for rdflib compatibility; the schema is always created
        when missing, because an empty database is a valid, empty store.

        The catalogue's SPARQL hooks are installed in rdflib (:mod:`.sparql.hooks`) by the
        first query or update, not here: a process that only searches or harvests (the web
        server starting, a cron harvest) need not import rdflib's SPARQL engine (~0.2 s).
        """
        if self._s.conn is not None:
            self.close()
        if configuration:
            if not isinstance(configuration, str):
                raise TypeError("SQLStore configuration must be a database URL or path")
            url = database_url(configuration)
            shared = None if self._private or is_memory_sqlite(url) else shared_session(url)
            if shared is not None:
                self._s, self._closed = shared, False
                return VALID_STORE
            engine, owned = make_engine(url), True
        elif self._given_engine is not None:
            url, engine, owned = None, self._given_engine, False
        else:
            url, engine, owned = None, make_engine("sqlite://"), True
        try:
            ensure_schema(engine)
            conn = engine.connect()
        except BaseException:
            if owned:
                engine.dispose()
            raise
        session = Session()
        session.conn, session.engine, session.owns_engine, session.users = conn, engine, owned, 1
        session.dialect = dialect_for(engine.dialect.name)
        if url is not None and not self._private and not is_memory_sqlite(url):
            register(session, url)
        self._s, self._closed = session, False
        return VALID_STORE

    def close(self, commit_pending_transaction: bool = False) -> None:
        """Close the connection, committing or (by default) rolling back first.

        A connection shared with other open stores stays open, its transaction
        untouched (unless asked to commit): it is theirs too.
        """
        session = self._s
        try:
            if session.conn is None:
                return
            session.users -= 1
            if session.users > 0:
                if commit_pending_transaction:
                    self.commit()
                return
            unregister(session)
            self._s.close_streams()
            try:
                if session.conn.in_transaction():
                    if commit_pending_transaction:
                        session.conn.commit()
                    else:
                        session.conn.rollback()
            finally:
                session.conn.close()
                session.conn = None
                if session.owns_engine and session.engine is not None:
                    session.engine.dispose()
        finally:
            self._s, self._closed = Session(), True

    def destroy(self, configuration: str | None = None) -> None:
        """Drop the catalogue tables (and the Alembic version) of a database.

        Without ``configuration``, or with the one the store is open on, the store's
        own database is dropped and the store is closed, since nothing usable is left
        behind.  Otherwise the store's open transaction is rolled back first, so its
        locks cannot block the ``DROP TABLE`` of another database connection.
        """
        conn = self._s.conn
        if conn is not None:
            self._s.close_streams()
            if conn.in_transaction():
                conn.rollback()
            self._s.end_transaction()
            own_url = conn.engine.url.render_as_string(hide_password=False)
            if not configuration or database_url(configuration) == own_url:
                with conn.begin():
                    self._drop_all(conn)
                unregister(self._s)  # a store opened on it later migrates it afresh
                self.close()
                return
        if not configuration:
            return  # never opened: the private in-memory database does not exist yet
        url = database_url(configuration)
        shared = THREAD_SESSIONS.by_url.get(url)
        if shared is not None and shared.conn is not None:
            # Another store of this thread has it open: drop through that connection (a
            # second one would wait for its locks), and let no store join it afterwards.
            if shared.conn.in_transaction():
                shared.conn.rollback()
            with shared.conn.begin():
                self._drop_all(shared.conn)
            unregister(shared)
            return
        engine = make_engine(url)
        try:
            with engine.begin() as engine_conn:
                self._drop_all(engine_conn)
        finally:
            engine.dispose()

    @staticmethod
    def _drop_all(conn: Connection) -> None:
        drop_spatial_index(conn)
        drop_search_indexes(conn)
        metadata.drop_all(conn, checkfirst=True)
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))

    def _connection(self) -> Connection:
        conn = self._s.conn
        if conn is None:
            if self._closed:
                raise RuntimeError("the store is closed; call open() to use it again")
            self.open(None)
            conn = cast(Connection, self._s.conn)
        return conn

    @property
    def engine(self) -> Engine:
        """The engine of the open store (opening the default one if needed)."""
        self._connection()
        return cast(Engine, self._s.engine)

    @property
    def connection(self) -> Connection:
        """The store's own connection, opening the store if needed.

        Statements executed on it run in the store's current transaction (starting
        one if none is open), so they see the store's uncommitted writes and end with
        :meth:`commit` or :meth:`rollback`.  Use it for reads; writes must go through
        the store's methods, which keep its caches and locks right.
        """
        return self._connection()

    @property
    def dialect_name(self) -> str:
        """``"sqlite"`` or ``"postgresql"``: the database the store is open on."""
        return self._connection().dialect.name

    # --------------------------------------------------------------- transactions

    def commit(self) -> None:
        """Commit the current transaction (if any); the next statement starts a new one.

        Unfinished streamed results are closed first (iterating them further raises
        an error): their server-side cursors cannot outlive the transaction.
        """
        self._s.close_streams()
        conn = self._s.conn
        try:
            if conn is not None and conn.in_transaction():
                if self._s.tx_touched or self._s.tx_touched_names:
                    self._update_derived(conn)
                conn.commit()
        except BaseException:
            # The transaction is lost, and with it any ids it had handed out.
            if self._s.tx_wrote_ids:
                self._s.forget_ids()
            raise
        finally:
            self._s.end_transaction()

    def _update_derived(self, conn: Connection) -> None:
        """Hand the graphs this transaction wrote to the index hooks; queue the rest
        (:mod:`.derived`).  Runs inside the transaction, just before it commits."""
        session = self._s
        touched = set(session.tx_touched)
        names = session.tx_touched_names | session.tx_exempt
        found = self.lookup_term_ids(names) if names else {}
        touched |= {found[n] for n in session.tx_touched_names if n in found}
        touched -= {found[n] for n in session.tx_exempt if n in found}
        if not touched or not session.tx_write_locked:
            return
        done: set[int] = set()
        for hook in self.index_hooks:
            done |= hook(conn, touched - done, shared=session.tx_shared, written=session.tx_written)
        queue_graphs(conn, touched - done)

    def exempt_from_index(self, graph: Any) -> None:
        """Declare that what this transaction writes to ``graph`` changes no derived
        index (:mod:`.derived`): its hooks are not asked and it is not queued."""
        node = self._graph_node(graph)
        if node is not None:
            self._s.tx_exempt.add(node)

    def rollback(self) -> None:
        """Discard everything written since the last commit (closing streams, as commit).

        On PostgreSQL a transaction that wrote nothing through the store (it took no
        write lock) and did not fail is ended with ``COMMIT``, which discards as much:
        psycopg forgets every prepared statement of the connection at a ``ROLLBACK``,
        and the web server and the SPARQL benchmark end every read this way, so no
        statement was ever prepared (a planned query 1 ms on loopback; prepared, its
        planning is skipped).
        """
        self._s.close_streams()
        conn = self._s.conn
        try:
            if conn is not None and conn.in_transaction() and self._read_only(conn):
                with contextlib.suppress(Exception):  # a lost connection: rolled back below
                    conn.commit()
            if conn is not None and conn.in_transaction():
                conn.rollback()
        finally:
            if self._s.tx_wrote_ids:
                # SQLite may give the ids this transaction used to other terms now.
                self._s.forget_ids()
            elif self._s.tx_write_locked:
                # A rollback restores the terms the transaction deleted without counting
                # as a change: what its lookups found since no longer holds.
                self._s.forget_lookups()
            self._s.end_transaction()

    def _read_only(self, conn: Connection) -> bool:
        """Whether ``conn``'s transaction is a PostgreSQL read that can end with COMMIT."""
        if (conn.dialect.name != "postgresql" or self._s.tx_write_locked or self._s.tx_wrote_ids
                or conn.invalidated):
            return False
        from psycopg.pq import TransactionStatus

        try:  # an invalidated connection (a lost server) refuses this until rolled back
            driver = conn.connection.driver_connection
        except Exception:
            return False
        return driver is not None and driver.info.transaction_status == TransactionStatus.INTRANS

    def _begin_write(self, *, shared: bool = False, graph: Node | None = None) -> Connection:
        """Connection for a write, holding the write lock from before anything is written.

        One writer at a time on both databases, as SQLite has it anyway: concurrent
        writers then never deadlock, never race on first-use inserts, and a writer's
        reads after this point see everything committed before it.

        PostgreSQL: an exclusive transaction-level advisory lock, released at commit or
        rollback (or when the connection dies).  Term garbage collection runs under it
        too, so it can never delete a term another writer's uncommitted quad points to.

        SQLite: the database's write lock (the store numbers new terms itself from the
        highest id it reads).  A new transaction begins with ``BEGIN IMMEDIATE``.  One
        that has only read so far tries to take the lock in place, which fails at once
        if another connection committed since its snapshot began (SQLite cannot turn a
        stale snapshot into a writer); the transaction is then started afresh with
        ``BEGIN IMMEDIATE``, so the reads before the first write may come from an
        earlier snapshot than the writes.  Code whose reads must be as current as its
        writes holds the lock first: :meth:`write_transaction`.

        Waits end after :func:`~catalogue.graph.database.lock_timeout` with
        :class:`~catalogue.graph.database.DatabaseBusy`, the transaction rolled back.
        """
        conn = self._connection()
        if self._s.tx_write_locked:
            return conn
        try:
            if self._s.dialect.name == "postgresql":
                self._s.dialect.lock_writers(conn, shared=shared, graph=None if graph is None else str(graph))
                self._s.tx_shared = shared
            elif not conn.in_transaction():
                begin_write_transaction(conn)
            else:
                self._sqlite_upgrade(conn)
        except OperationalError as exc:
            busy = busy_error(exc, conn.engine.url)
            if busy is None:
                raise
            self.rollback()
            raise busy from None
        self._s.tx_write_locked = True
        return conn

    def _sqlite_upgrade(self, conn: Connection) -> None:
        """Turn this SQLite read transaction into the writer (see :meth:`_begin_write`)."""
        try:
            conn.exec_driver_sql(TAKE_WRITE_LOCK)
            return
        except OperationalError as exc:
            if busy_error(exc) is None:
                raise
            if self._s.streams:
                # Starting afresh would end results still being read from the old snapshot.
                self.rollback()
                raise busy_error(exc, conn.engine.url, waited=False) from None
        self.rollback()
        begin_write_transaction(conn)

    @contextlib.contextmanager
    def write_transaction(self, *, shared: bool = False, graph: Node | None = None) -> Iterator[Connection]:
        """A transaction holding the write lock from its first statement; commits at the end.

        Everything read inside it is current and stays so until it ends, which is what
        read-modify-write code (a harvest diffing the previous version of a graph)
        needs.  A read-only transaction open before is ended first.  Inside a
        transaction that already writes, the block joins it and leaves the commit to
        its owner.  An exception rolls the whole transaction back.

        ``shared`` (PostgreSQL; SQLite has one writer at a time whatever is asked): the
        transaction shares the write lock with other such transactions, each writing
        its own graphs, while writers that need it alone (loads, updates, garbage
        collection) wait for all of them.  It then holds ``graph``'s lock alone (the
        graph it rewrites; what it reads of it stays current), writes only its graphs
        and graphs that take appends from many writers (the harvest records), and
        leaves the terms it orphans in ``term_gc_queue`` (:meth:`collect_queued`):
        deleting a term could pull it from under another writer's uncommitted quads.
        This is how harvests of different sources write side by side.
        """
        if self._s.tx_write_locked:
            yield self._connection()
            return
        self.rollback()
        conn = self._begin_write(shared=shared, graph=graph)
        try:
            yield conn
            self.commit()
        except BaseException:
            self.rollback()
            raise

    def analyze(self) -> None:
        """Refresh the query planner's statistics of the store's tables.

        Call it after large writes (a bulk load, a first harvest): both databases plan
        joins from these statistics, and plans made for an empty ``quads`` table are
        very slow for a full one.  SQLite runs ``ANALYZE``; PostgreSQL
        ``ANALYZE`` on the store's tables (autovacuum would do it too, but later).
        It runs in the store's transaction, as a write (SQLite stores the statistics
        in ``sqlite_stat1``); commit afterwards.
        """
        conn = self._begin_write()
        self._s.dialect.analyze(conn)

    def analyze_grown(self) -> list[str]:
        """After a committed write that added rows (a harvest): refresh the statistics of
        the store's tables that grew by half since their last, as autovacuum would but
        without waiting for it (:meth:`.dialect.postgres.PostgresDialect.analyze_grown`;
        nothing on SQLite). Asked at most every :data:`GROWN_CHECK_SECONDS` per store,
        so that a run of small harvests pays one query now and then. Best effort, as
        :meth:`vacuum`: a failure is logged, not raised."""
        now = time.monotonic()
        if now - self._grown_checked < GROWN_CHECK_SECONDS:
            return []
        self._grown_checked = now
        try:
            return self._s.dialect.analyze_grown(self.engine)
        except Exception as exc:
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            _log.warning("statistics after the write were left to autovacuum: %s", reason)
            return []

    def vacuum(self, tables: tuple[str, ...] | None = None) -> None:
        """After a large write has committed (a bulk load, a full reindex): let the
        database settle its new rows for readers (PostgreSQL's ``VACUUM`` of ``tables``,
        default every table of the store, on a connection of its own outside any
        transaction; nothing on SQLite). Without it text searches after a load of
        100,000 datasets ran 2.5 times slower until autovacuum came round (GIN's pending
        list, see ``PostgresDialect.vacuum``). Best effort: the write has committed, so a
        failure here (a statement timeout, a lost connection) is logged, not raised, and
        autovacuum does the work later."""
        try:
            if tables is None:
                self._s.dialect.vacuum(self.engine)
            else:
                self._s.dialect.vacuum(self.engine, tables)
        except Exception as exc:
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            _log.warning("VACUUM after the write was left to autovacuum: %s", reason)

    # ---------------------------------------------------------------- term access

    def _load_datatypes(self) -> None:
        conn = self._connection()
        ids.load_datatypes(self._s, conn)

    def datatype_ids(self) -> dict[str, int]:
        """Every stored datatype: IRI -> id.

        Read once per transaction (and again after this store adds datatypes): the
        SPARQL compiler asks for every query, and a new transaction is the earliest
        point at which datatypes written by others could become visible.
        """
        if not self._s.dt_fresh:
            self._load_datatypes()
        return dict(self._s.dt_ids)

    def datatype_iri(self, dt_id: int) -> str:
        """The IRI of datatype ``dt_id``; :class:`LookupError` if there is none.

        Answered from a cache (datatypes never change once written), which is
        refreshed when it does not know the id.
        """
        conn = self._connection()
        return ids.datatype_iri(self._s, conn, dt_id)

    def _datatype_id(self, iri: str) -> int | None:
        """Id of a stored datatype, or ``None`` if it is not stored (cache, then table)."""
        conn = self._connection()
        return ids.datatype_id(self._s, conn, iri)

    def decode_term(self, kind: int, value: str, datatype_id: int | None, lang: str | None) -> Node:
        """Rebuild the rdflib term of a ``terms`` row (``datatype_id`` as stored).

        Literals keep their exact lexical form (``normalize=False``), as in
        :func:`.terms.decode`.
        """
        if datatype_id is None:
            return decode(kind, value, None, lang)
        iri = self._s.dt_iris.get(datatype_id)
        if iri is None:
            iri = self.datatype_iri(datatype_id)
        return decode(kind, value, iri, lang)

    def lookup_term_ids(self, nodes: Iterable[Node]) -> dict[Node, int]:
        """Ids of those of ``nodes`` that are stored; nothing is inserted
        (:func:`.load.ids.lookup_term_ids`: a hash collision raises
        :class:`~catalogue.graph.terms.TermCollisionError`).  The answer is valid for
        the current transaction: a term not referenced by any quad may be
        garbage-collected (and, if written again, get a new id) later."""
        nodes = list(nodes)
        if not nodes:
            return {}
        conn = self._connection()
        return ids.lookup_term_ids(self._s, conn, nodes)

    def _lookup_term_id(self, node: Node) -> int | None:
        return self.lookup_term_ids([node]).get(node)

    def holdable(self, text_: str) -> bool:
        """Whether the database can store ``text_``: neither SQLite nor PostgreSQL
        take lone surrogates (not encodable as UTF-8), and PostgreSQL text cannot hold
        NUL.  Lookups with such a term match nothing, as in rdflib's Memory store."""
        try:
            text_.encode("utf-8")
        except UnicodeEncodeError:
            return False
        self._connection()
        return self._s.dialect.can_hold(text_)

    def _bind_term(self, name: str, node: Node, params: dict[str, Any]) -> bool:
        """Add the parameters of :func:`_term_id_of` for ``node`` at ``name``.

        Returns ``False`` if the node cannot be stored (a ``Variable``) or its
        datatype is not stored: then no stored term can match.
        """
        try:
            term_hash, kind, value, datatype, lang = encode(node)
        except TypeError:
            return False
        if not (self.holdable(value) and (lang is None or self.holdable(lang))):
            return False  # the database cannot hold it, so it holds no such term
        dt_id = None
        if datatype is not None:
            dt_id = self._datatype_id(datatype)
            if dt_id is None:
                return False
        params[f"{name}_hash"] = term_hash
        params[f"{name}_kind"] = kind
        params[f"{name}_value"] = value
        params[f"{name}_dt"] = dt_id
        params[f"{name}_lang"] = None if lang is None else lang.lower()
        return True

    # ---------------------------------------------------------------- contexts

    @staticmethod
    def _graph_node(context: Any) -> Node | None:
        """Graph name for a context argument; ``None`` means the union of all graphs.

        rdflib passes ``Graph`` objects, but identifiers are accepted as well (like
        the Memory store).  A ``Dataset``/``ConjunctiveGraph`` passed as a context
        stands for its union when ``default_union`` is set, else for its default
        graph.
        """
        if context is None:
            return None
        if isinstance(context, ConjunctiveGraph):
            if context.default_union:
                return None
            default = (
                context.default_graph if isinstance(context, Dataset) else context.default_context
            )
            return default.identifier
        if isinstance(context, Graph):
            return context.identifier
        if isinstance(context, URIRef | BNode):
            return context
        raise TypeError(f"cannot use {context!r} as a graph context")

    def _write_graph_node(self, context: Any) -> Node:
        """Graph name to write to; writes without a context go to the default graph."""
        node = self._graph_node(context)
        if node is None:
            if isinstance(context, Dataset):
                return context.default_graph.identifier
            if isinstance(context, ConjunctiveGraph):
                return context.default_context.identifier
            return DATASET_DEFAULT_GRAPH_ID
        return node

    def _graph_name(self, gid: int) -> Node:
        name = self._s.graph_names.get(gid)
        if name is None:
            row = (
                self._connection()
                .execute(
                    select(terms.c.kind, terms.c.value, terms.c.datatype, terms.c.lang).where(
                        terms.c.id == gid
                    )
                )
                .first()
            )
            if row is None:
                raise LookupError(f"graph id {gid} has no term; the database is inconsistent")
            name = self.decode_term(*row)
            self._s.graph_names[gid] = name
        return name

    def _context_graph(self, gid: int) -> Graph:
        return Graph(store=self, identifier=cast(Any, self._graph_name(gid)))

    def graph_name_ids(self) -> dict[int, Node]:
        """Every graph (empty ones included): term id -> graph name, sorted by name."""
        rows = (
            self._connection()
            .execute(
                select(graphs.c.id, terms.c.kind, terms.c.value, terms.c.datatype, terms.c.lang)
                .select_from(graphs.join(terms, terms.c.id == graphs.c.id))
                .order_by(terms.c.value)
            )
            .all()
        )
        names: dict[int, Node] = {}
        for gid, *term in rows:
            name = self._s.graph_names.get(gid)
            if name is None:
                name = self._s.graph_names[gid] = self.decode_term(*term)
            names[gid] = name
        return names

    # ------------------------------------------------------------------- writes

    def add(self, triple: _Triple, context: Any, quoted: bool = False) -> None:
        """Add one triple to the graph ``context`` (the default graph if ``None``)."""
        if quoted:
            raise ValueError("SQLStore is not formula-aware; quoted statements are unsupported")
        Store.add(self, triple, context, quoted)  # notify event subscribers
        s, p, o = triple
        self._add_quads([(s, p, o, self._write_graph_node(context))])

    def addN(self, quads: Iterable[tuple[Node, Node, Node, Any]]) -> None:
        """Add quads in batches of :data:`BATCH_SIZE` using executemany."""
        dispatch = self.dispatcher.get_map() is not None
        graph_node = self._write_graph_node

        def prepared() -> Iterator[tuple[Node, Node, Node, Node]]:
            for s, p, o, c in quads:
                if dispatch:
                    Store.add(self, (s, p, o), c)
                yield s, p, o, graph_node(c)

        for batch in chunks(prepared(), BATCH_SIZE):
            self._add_quads(batch)

    def _add_quads(self, batch: list[tuple[Node, Node, Node, Node]]) -> set[int]:
        """Store one batch of ``(s, p, o, graph name)`` under the write lock; return the
        term ids used (:func:`.load.ids.add_quads`)."""
        conn = self._begin_write()
        return ids.add_quads(self._s, conn, batch)

    def remove(
        self, triple: tuple[Node | None, Node | None, Node | None], context: Any = None
    ) -> None:
        """Remove matching triples from ``context``, or from every graph if ``None``.

        Graphs stay registered even when they become empty (as in rdflib's Memory
        store); terms are left for :meth:`gc`, since finding which became unused
        would cost more than the delete itself.
        """
        params = self._pattern_params(triple)
        if params is None:
            return
        names = [name for name, node in zip(SPO, triple, strict=True) if node is not None]
        gnode = self._graph_node(context)
        if gnode is not None:
            if not self._bind_term("g", gnode, params):
                return
            names.append("g")
        stmt: Delete = delete(quads)
        if names:
            stmt = stmt.where(and_(*bound_conditions(names)))
        conn = self._begin_write()
        if gnode is not None:
            conn.execute(stmt, params)
            self._s.touch_name(gnode)
        else:  # the union: the graphs that lost a triple are known only now
            self._s.touch(conn.execute(stmt.returning(quads.c.g), params).scalars())
        if self.dispatcher.get_map() is not None:
            Store.remove(self, triple, context)

    # -------------------------------------------------------------------- reads

    def _pattern_params(
        self,
        triple: tuple[Node | None, Node | None, Node | None],
    ) -> dict[str, Any] | None:
        """Parameters for the bound pattern positions, or ``None`` if a bound term
        cannot be stored at all (e.g. a ``Variable``), in which case nothing can
        match."""
        params: dict[str, Any] = {}
        for name, node in zip(SPO, triple, strict=True):
            if node is not None and not self._bind_term(name, node, params):
                return None
        return params

    def triples(
        self,
        triple_pattern: tuple[Node | None, Node | None, Node | None],
        context: Any = None,
    ) -> Iterator[tuple[_Triple, Iterator[Graph]]]:
        """Yield ``(triple, contexts)`` for triples matching the pattern.

        ``contexts`` lists every graph the triple is in (not only ``context``), as in
        rdflib's Memory store.  Results are streamed (server-side cursor on
        PostgreSQL) unless the subject is bound, so large scans stay out of memory.
        """
        params = self._pattern_params(triple_pattern)
        if params is None:
            return iter(())
        gnode = self._graph_node(context)
        if gnode is None:
            return self._union_triples(triple_pattern, params)
        if not self._bind_term("g", gnode, params):
            return iter(())
        return self._graph_triples(triple_pattern, params, with_contexts=True)

    def _execute_match(
        self,
        pattern: tuple[Node | None, Node | None, Node | None],
        params: dict[str, Any],
        union_mode: bool,
    ) -> Rows:
        bound = (pattern[0] is not None, pattern[1] is not None, pattern[2] is not None)
        options: dict[str, Any] = {}
        stream = not bound[0]
        if stream:
            options = {"stream_results": True, "yield_per": _YIELD_PER}
        rows = Rows(
            self._connection().execute(
                match_statement(bound, union_mode), params, execution_options=options
            )
        )
        if stream:
            self._s.streams.add(rows)
        return rows

    def _release(self, rows: Rows) -> None:
        self._s.streams.discard(rows)
        rows.close()

    def _union_triples(
        self, pattern: tuple[Node | None, Node | None, Node | None], params: dict[str, Any]
    ) -> Generator[tuple[_Triple, Iterator[Graph]], None, None]:
        rows = self._execute_match(pattern, params, union_mode=True)
        decode_row = row_decoder(pattern, 4, self.decode_term)
        context_graphs: dict[int, Graph] = {}
        try:
            key: tuple[int, int, int] | None = None
            triple: _Triple | None = None
            contexts: list[Graph] = []
            for row in rows:
                check_deadline()  # rdflib's own evaluation pulls rows here (query time limit)
                row_key = (row[0], row[1], row[2])
                if row_key != key:
                    if triple is not None:
                        yield triple, iter(contexts)
                    key, triple, contexts = row_key, decode_row(row), []
                gid = row[3]
                graph = context_graphs.get(gid)
                if graph is None:
                    graph = context_graphs[gid] = self._context_graph(gid)
                contexts.append(graph)
            if triple is not None:
                yield triple, iter(contexts)
        finally:
            self._release(rows)

    def _graph_triples(
        self,
        pattern: tuple[Node | None, Node | None, Node | None],
        params: dict[str, Any],
        with_contexts: bool,
    ) -> Generator[Any, None, None]:
        """Triples of the graph whose parameters (``g_*``) are in ``params``."""
        rows = self._execute_match(pattern, params, union_mode=False)
        decode_row = row_decoder(pattern, 3, self.decode_term)
        try:
            for row in rows:
                check_deadline()
                triple = decode_row(row)
                if with_contexts:
                    yield triple, self._triple_contexts(row[0], row[1], row[2])
                else:
                    yield triple
        finally:
            self._release(rows)

    def _triple_contexts(self, s: int, p: int, o: int) -> Iterator[Graph]:
        """Lazily list the graphs of one triple; most callers never look."""
        gids = (
            self._connection()
            .execute(select(quads.c.g).where(quads.c.s == s, quads.c.p == p, quads.c.o == o))
            .scalars()
            .all()
        )
        for gid in gids:
            yield self._context_graph(gid)

    def __len__(self, context: Any = None) -> int:
        """Triples in ``context``, or distinct triples over all graphs if ``None``."""
        gnode = self._graph_node(context)
        conn = self._connection()
        if gnode is None:
            distinct = select(quads.c.s, quads.c.p, quads.c.o).distinct().subquery()
            return int(conn.execute(select(func.count()).select_from(distinct)).scalar_one())
        params: dict[str, Any] = {}
        if not self._bind_term("g", gnode, params):
            return 0
        stmt = select(func.count()).select_from(quads).where(*bound_conditions(["g"]))
        return int(conn.execute(stmt, params).scalar_one())

    def contexts(self, triple: _Triple | None = None) -> Generator[Graph, None, None]:
        """Yield every graph (empty ones included), or the graphs containing ``triple``.

        The list is read before the first graph is yielded, so callers may query or
        modify the store while iterating (SPARQL ``GRAPH ?g`` does).
        """
        if triple is None or all(node is None for node in triple):
            gids = list(self.graph_name_ids())
        else:
            params = self._pattern_params(triple)
            if params is None:
                return
            names = [name for name, node in zip(SPO, triple, strict=True) if node is not None]
            stmt = select(quads.c.g).distinct().where(*bound_conditions(names))
            gids = list(self._connection().execute(stmt, params).scalars())
        for gid in gids:
            yield self._context_graph(gid)

    # ------------------------------------------------------------------- graphs

    def add_graph(self, graph: Any) -> None:
        """Register a (possibly empty) named graph; a no-op if it already exists.

        Checks before writing so that rdflib's habit of re-adding the default graph
        on every ``Dataset.graphs()`` call does not turn reads into write
        transactions.
        """
        self._ensure_graph(self._write_graph_node(graph))

    def _ensure_graph(self, gnode: Node) -> int:
        """Id of graph ``gnode``, registering the graph if it does not exist."""
        gid = self._s.tx_terms.get(gnode)
        if gid is not None and gid in self._s.tx_graphs:
            return gid
        params: dict[str, Any] = {}
        found = None
        if self._bind_term("g", gnode, params):
            found = (
                self._connection()
                .execute(select(graphs.c.id).where(graphs.c.id == term_id_of("g")), params)
                .scalar()
            )
        if found is None:
            conn = self._begin_write()
            term_hash, *content = encode(gnode)
            gid = ids.store_terms(self._s, conn, [(term_hash, gnode, cast(ids.TermRow, tuple(content)))])[
                term_hash
            ]
            self._s.tx_terms[gnode] = gid
            self._s.dialect.insert_graphs(conn, [gid])
        else:
            gid = int(found)
        ids.remember_graphs(self._s, [gid])
        return gid

    def remove_graph(self, graph: Any) -> None:
        """Delete a graph and its triples, and the terms only it used."""
        gnode = self._graph_node(graph)
        conn = self._begin_write()
        if gnode is None:
            # Memory-store semantics for "remove the union": all triples go, the
            # graphs stay registered.
            self._s.touch(conn.execute(select(graphs.c.id)).scalars())
            conn.execute(delete(quads))
            self.gc()
            return
        gid = self._lookup_term_id(gnode)
        if gid is None:
            return  # no such term, so no such graph
        old_ids = graph_term_ids(conn, gid)
        conn.execute(delete(quads).where(quads.c.g == gid))
        conn.execute(delete(graphs).where(graphs.c.id == gid))
        self._s.touch([gid])
        self._s.tx_graphs.discard(gid)
        old_ids.add(gid)
        self._gc_terms(conn, old_ids)

    def replace_graph(self, graph_id: URIRef, triples: Iterable[_Triple]) -> int:
        """Replace the content of one named graph; return its new number of triples.

        Runs in the store's current transaction and does not commit, so the caller
        decides when the new version becomes visible, and a failure followed by
        :meth:`rollback` leaves the old version intact.  Terms that only the old
        version used are deleted; the check looks at those terms only, never at the
        whole ``terms`` table.
        """
        conn = self._begin_write()
        old_gid = self._lookup_term_id(graph_id)
        old_ids: set[int] = set()
        if old_gid is not None:
            old_ids = graph_term_ids(conn, old_gid)
            conn.execute(delete(quads).where(quads.c.g == old_gid))
        gid = self._ensure_graph(graph_id)
        self._s.touch([gid])
        used: set[int] = set()
        # What is written is kept for the derived indexes (.written): they need not read
        # it back, unless something else touches the graph before the commit.
        written = WrittenGraph(graph_id)
        for batch in chunks(triples, BATCH_SIZE):
            used |= ids.add_graph_triples(self._s, conn, graph_id, batch, written)
        if old_ids:
            self._gc_terms(conn, old_ids - used - {gid})
        self._s.keep_written(gid, written)
        return int(
            conn.execute(
                select(func.count()).select_from(quads).where(quads.c.g == gid)
            ).scalar_one()
        )

    def graph_triples(self, graph_id: Node) -> Iterator[_Triple]:
        """Stream the triples of one graph."""
        params: dict[str, Any] = {}
        if not self._bind_term("g", graph_id, params):
            return iter(())
        return self._graph_triples((None, None, None), params, with_contexts=False)

    def has_graph(self, graph_id: Node) -> bool:
        """Whether the named graph exists (one indexed lookup, whatever the number of graphs)."""
        gid = self._lookup_term_id(graph_id)
        if gid is None:
            return False
        conn = self._connection()
        return conn.execute(select(graphs.c.id).where(graphs.c.id == gid)).first() is not None

    def graph_ids(self) -> list[Node]:
        """Names of all graphs in the store, sorted."""
        return sorted(self.graph_name_ids().values(), key=str)

    def _gc_terms(self, conn: Connection, candidates: set[int]) -> int:
        """Delete those of ``candidates`` that nothing refers to any more
        (:func:`.collect.collect_terms`, under the write lock)."""
        if not candidates:
            return 0
        if self._s.tx_shared:  # another writer's uncommitted quads may use them: later
            queue_terms(conn, candidates)
            return 0
        deleted = collect_terms(conn, candidates)
        # Terms this transaction had written may be gone now.
        self._s.tx_terms.clear()
        return deleted

    def gc(self) -> int:
        """Delete every term nothing refers to; return how many were deleted.

        Scans the whole ``terms`` table, so it is a maintenance operation; call it in
        its own transaction and commit afterwards.  ``replace_graph`` and
        ``remove_graph`` already collect the terms they orphan.
        """
        conn = self._begin_write()
        deleted = collect_all(conn)
        conn.execute(delete(term_gc_queue))
        self._s.tx_terms.clear()
        return deleted

    def collect_queued(self, *, wait: bool = False) -> int:
        """Collect the terms that writers sharing the write lock left in
        ``term_gc_queue`` (:meth:`write_transaction`), in a transaction of its own that
        holds the lock alone; return how many were deleted.  Without ``wait`` nothing is
        done while another writer holds the lock (the next one to find it free will)."""
        self.rollback()
        conn = self._connection()
        if conn.execute(select(term_gc_queue.c.term).limit(1)).first() is None:
            self.rollback()
            return 0
        self.rollback()
        if self._s.dialect.name == "postgresql" and not wait:
            conn.begin()
            if not self._s.dialect.try_lock_writers(conn):
                self.rollback()
                return 0
            self._s.tx_write_locked = True
            try:
                deleted = self._collect_queue(conn)
                self.commit()
            except BaseException:
                self.rollback()
                raise
            return deleted
        with self.write_transaction() as conn:
            return self._collect_queue(conn)

    def _collect_queue(self, conn: Connection) -> int:
        deleted = 0
        while batch := [int(t) for t in conn.execute(
                select(term_gc_queue.c.term).order_by(term_gc_queue.c.term).limit(10_000)).scalars()]:
            deleted += collect_terms(conn, set(batch))
            for chunk in chunks(batch, 500):
                conn.execute(delete(term_gc_queue).where(term_gc_queue.c.term.in_(chunk)))
        self._s.tx_terms.clear()
        return deleted

    # --------------------------------------------------------------- namespaces

    def _namespace_map(self) -> dict[str, str]:
        if self._s.ns is None:
            rows = self._connection().execute(
                select(namespaces.c.prefix, namespaces.c.uri).order_by(namespaces.c.prefix)
            )
            self._s.ns = {prefix: uri for prefix, uri in rows}
        return self._s.ns

    def bind(self, prefix: str, namespace: URIRef, override: bool = True) -> None:
        """Bind ``prefix`` to ``namespace``.

        With ``override`` the pair replaces any binding of the prefix and any other
        prefix of the namespace; without it, the pair is only added when neither the
        prefix nor the namespace is bound yet (as in rdflib's Memory store).
        Unchanged bindings cause no write.  The decision is taken again under the write
        lock, against the bindings as they are then: two processes binding the same
        prefix at once both succeed, one after the other.
        """
        uri = str(namespace)
        if not self._binding_needed(prefix, uri, override):
            return
        conn = self._begin_write()
        self._s.ns = None
        if not self._binding_needed(prefix, uri, override):
            return
        conn.execute(
            delete(namespaces).where((namespaces.c.prefix == prefix) | (namespaces.c.uri == uri))
        )
        conn.execute(namespaces.insert(), [{"prefix": prefix, "uri": uri}])
        self._s.ns = None

    def _binding_needed(self, prefix: str, uri: str, override: bool) -> bool:
        ns_map = self._namespace_map()
        bound_uri = ns_map.get(prefix)
        bound_prefixes = [p for p, u in ns_map.items() if u == uri]
        if override:
            return not (bound_uri == uri and bound_prefixes == [prefix])
        return bound_uri is None and not bound_prefixes

    def namespace(self, prefix: str) -> URIRef | None:
        uri = self._namespace_map().get(prefix)
        return None if uri is None else URIRef(uri)

    def prefix(self, namespace: URIRef) -> str | None:
        uri = str(namespace)
        for p, u in self._namespace_map().items():
            if u == uri:
                return p
        return None

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        # The prefixes are read again in every transaction (others may change them); their
        # terms are made once per set of bindings: a query's results bind them all, and
        # sixty-odd URIRefs, each validated, were a fifth of a small DESCRIBE.
        ns = self._namespace_map()
        if self._ns_terms is None or self._ns_terms[0] != ns:
            self._ns_terms = (dict(ns), [(p, URIRef(u)) for p, u in ns.items()])
        yield from self._ns_terms[1]

    # ------------------------------------------------------------------ bulk writers

    def begin_write(self) -> Connection:
        """The connection, holding the write lock (see :meth:`_begin_write`); for bulk
        writers that bypass :meth:`addN`."""
        return self._begin_write()

    @property
    def session(self) -> Session:
        """The store's connection session (opening the store if needed): what the write
        primitives of :mod:`.load.ids`, shared with the bulk writer, work on."""
        self._connection()
        return self._s

    # ---------------------------------------------------------------------- SPARQL

    def update(
        self,
        update: Any,
        initNs: Any,  # rdflib's parameter names
        initBindings: Any,
        queryGraph: Any,
        **kwargs: Any,
    ) -> None:
        """Take the write lock before ``Graph.update`` evaluates anything, then let rdflib's
        own update processor run (``NotImplementedError`` is rdflib's way to fall back).

        A SPARQL Update reads (its WHERE) and then writes what it read: with the lock
        taken first, no other writer can commit in between, so concurrent updates of
        one value never lose each other's changes (and SQLite never starts the
        transaction afresh after the reads, see :meth:`_begin_write`).
        """
        install_sparql()  # rdflib's processor evaluates the WHERE through them
        self._begin_write()
        raise NotImplementedError

    def query(
        self,
        query: Any,
        initNs: Any,  # rdflib's parameter names
        initBindings: Any,
        queryGraph: Any,
        **kwargs: Any,
    ) -> Any:
        """Answer ``Graph.query`` for graphs on this store: rdflib's algebra, compiled to
        SQL by :mod:`catalogue.graph.sparql` wherever it can be, with parsed queries
        cached (parsing costs more than most compiled catalogue queries)."""
        self._connection()  # an unopened store opens here
        install_sparql()  # first: it loads the SPARQL modules under its lock
        from .sparql.query import store_query

        return store_query(self, query, initNs, initBindings, queryGraph, **kwargs)


_HOOKS_LOCK = threading.Lock()
_hooks_installed = False


def install_sparql() -> None:
    """Load rdflib's SPARQL engine and install the catalogue's hooks in it, once per process
    (:func:`.sparql.hooks.install`), before anything of the SPARQL machinery is imported.

    Under a lock: rdflib's SPARQL modules import each other in a cycle, and two threads
    importing them for the first time at once (two first requests of a server) can each
    get the other's half-initialised module (``cannot import name 'evalQuery'``). Every
    lazy entry to SPARQL (a store's query or update, ``Catalogue.query``/``update``, the
    web endpoint) calls this first."""
    global _hooks_installed
    if _hooks_installed:
        return
    with _HOOKS_LOCK:
        if not _hooks_installed:
            from .sparql import hooks

            hooks.install(SQLStore)
            _hooks_installed = True
