"""An rdflib :class:`~rdflib.store.Store` backed by SQLite or PostgreSQL.

The store keeps RDF quads as four integer term ids (see :mod:`.schema` and
:mod:`.terms`) and answers every triple pattern with one SQL statement that joins the
``terms`` table only for the positions it has to decode.

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
store's own uncommitted writes.  Note that on SQLite an open transaction is a snapshot:
call ``commit()``/``rollback()`` to see what other processes committed since.  A store
(like its connection) must not be shared between threads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator
from functools import lru_cache
from typing import Any, Final, cast

from rdflib.graph import DATASET_DEFAULT_GRAPH_ID, ConjunctiveGraph, Dataset, Graph
from rdflib.store import VALID_STORE, Store
from rdflib.term import BNode, Node, URIRef
from sqlalchemy import (
    Delete,
    Engine,
    Select,
    and_,
    bindparam,
    delete,
    exists,
    func,
    select,
    text,
    union,
)
from sqlalchemy.engine import Connection

from .database import database_url, ensure_schema, make_engine
from .schema import graphs, metadata, namespaces, quads, terms
from .terms import TermCollisionError, decode, encode

__all__ = ["SQLStore"]

#: Quads per executemany batch in bulk loads: large enough to amortise round trips,
#: small enough to keep the per-batch term dictionaries modest.
BATCH_SIZE: Final = 10_000
# Ids per IN (...) list; well under SQLite's and PostgreSQL's bind parameter limits.
_IN_CHUNK: Final = 1_000
# Rows fetched per round trip when a result is streamed from a server-side cursor.
_YIELD_PER: Final = 2_000
# Bound on the per-transaction caches of terms and graphs known to be stored.
_TX_CACHE_LIMIT: Final = 200_000
# PostgreSQL advisory lock that keeps term garbage collection away from transactions
# that may reference the terms it would delete (see SQLStore._gc_terms).
_PG_TERMS_LOCK: Final = 0x63617462  # "catb"

_SPO = ("s", "p", "o")
# Term columns of one decoded position: kind, value, datatype, lang.
_TERM_WIDTH: Final = 4

_Triple = tuple[Node, Node, Node]
_TermRow = tuple[int, str, str | None, str | None]


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _same_term(a: _TermRow, b: _TermRow) -> bool:
    """Content equality as used for term ids (language tags compare case-insensitively)."""
    return (
        a[0] == b[0]
        and a[1] == b[1]
        and a[2] == b[2]
        and (a[3] or "").lower() == (b[3] or "").lower()
    )


@lru_cache(maxsize=64)
def _match_statement(bound: tuple[bool, bool, bool], union_mode: bool) -> Select:
    """SELECT for one pattern shape.

    Bound positions are compared by id and not joined (the caller already has the
    term).  Unbound positions are joined to ``terms`` so rows decode without further
    queries.  In union mode the rows are ordered by a permutation of ``s, p, o`` that
    matches the index the pattern uses, so rows of the same triple arrive together
    and can be merged into one triple with its list of graphs without a sort or a
    DISTINCT.
    """
    cols: list[Any] = [quads.c.s, quads.c.p, quads.c.o]
    if union_mode:
        cols.append(quads.c.g)
    from_clause: Any = quads
    for is_bound, name in zip(bound, _SPO, strict=True):
        if is_bound:
            continue
        alias = terms.alias(f"t{name}")
        from_clause = from_clause.join(alias, alias.c.id == quads.c[name])
        cols.extend([alias.c.kind, alias.c.value, alias.c.datatype, alias.c.lang])
    stmt = select(*cols).select_from(from_clause)
    for is_bound, name in zip(bound, _SPO, strict=True):
        if is_bound:
            stmt = stmt.where(quads.c[name] == bindparam(name))
    if not union_mode:
        return stmt.where(quads.c.g == bindparam("g"))
    if all(bound):
        return stmt
    s_bound, p_bound, _ = bound
    if s_bound:
        order = ("s", "p", "o")  # ix_quads_spog
    elif p_bound:
        order = ("p", "o", "s")  # ix_quads_posg
    elif bound[2]:
        order = ("o", "s", "p")  # ix_quads_ospg
    else:
        order = ("s", "p", "o")
    return stmt.order_by(*(quads.c[name] for name in order))


# Bulk statements are written at the driver level: for batches of thousands of rows
# SQLAlchemy's per-row parameter processing costs more than SQLite's insert itself, and
# on PostgreSQL one statement over arrays (unnest / ANY) replaces thousands of
# round trips.  Table and column names are fixed by the schema.
_TermRowWithId = tuple[int, int, str, str | None, str | None]

_PG_INSERT_TERMS = (
    "INSERT INTO terms (id, kind, value, datatype, lang) "
    "SELECT * FROM unnest(%s::bigint[], %s::smallint[], %s::text[], %s::text[], %s::text[]) "
    "ON CONFLICT DO NOTHING"
)
_PG_INSERT_QUADS = (
    "INSERT INTO quads (g, s, p, o) "
    "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[]) "
    "ON CONFLICT DO NOTHING"
)
_PG_INSERT_GRAPHS = "INSERT INTO graphs (id) SELECT unnest(%s::bigint[]) ON CONFLICT DO NOTHING"
_PG_SELECT_TERMS = "SELECT id, kind, value, datatype, lang FROM terms WHERE id = ANY(%s::bigint[])"

_SQLITE_INSERT_TERMS = (
    "INSERT INTO terms (id, kind, value, datatype, lang) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT DO NOTHING"
)
_SQLITE_INSERT_QUADS = "INSERT INTO quads (g, s, p, o) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
_SQLITE_INSERT_GRAPHS = "INSERT INTO graphs (id) VALUES (?) ON CONFLICT DO NOTHING"
# Old SQLite builds allow at most 999 bound parameters per statement.
_SQLITE_IN_CHUNK: Final = 900


@lru_cache(maxsize=8)
def _sqlite_select_terms(n: int) -> str:
    marks = ", ".join("?" * n)
    return f"SELECT id, kind, value, datatype, lang FROM terms WHERE id IN ({marks})"


def _columns(rows: list[tuple]) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


def _pg_int_array(values: Iterable[int]) -> str:
    """PostgreSQL array literal for integers: building the text in C (``str.join``)
    is several times faster than psycopg adapting a list element by element."""
    return "{" + ",".join(map(str, values)) + "}"


def _bulk_insert_terms(conn: Connection, rows: list[_TermRowWithId]) -> int:
    """Insert term rows, skipping ids already present; return how many were inserted."""
    if conn.dialect.name == "postgresql":
        ids, kinds, values, datatypes, langs = _columns(rows)
        params = (_pg_int_array(ids), _pg_int_array(kinds), values, datatypes, langs)
        return conn.exec_driver_sql(_PG_INSERT_TERMS, params).rowcount
    return conn.exec_driver_sql(_SQLITE_INSERT_TERMS, rows).rowcount


def _bulk_insert_quads(conn: Connection, rows: list[tuple[int, int, int, int]]) -> None:
    if conn.dialect.name == "postgresql":
        columns = zip(*rows, strict=True)
        conn.exec_driver_sql(_PG_INSERT_QUADS, tuple(_pg_int_array(c) for c in columns))
    else:
        conn.exec_driver_sql(_SQLITE_INSERT_QUADS, rows)


def _bulk_insert_graphs(conn: Connection, ids: list[int]) -> None:
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(_PG_INSERT_GRAPHS, (_pg_int_array(ids),))
    else:
        conn.exec_driver_sql(_SQLITE_INSERT_GRAPHS, [(gid,) for gid in ids])


def _select_terms(conn: Connection, ids: list[int]) -> Iterator[_TermRowWithId]:
    """Stored rows for the given term ids (those that exist)."""
    if conn.dialect.name == "postgresql":
        yield from conn.exec_driver_sql(_PG_SELECT_TERMS, (_pg_int_array(ids),))
        return
    for chunk in _chunks(ids, _SQLITE_IN_CHUNK):
        yield from conn.exec_driver_sql(_sqlite_select_terms(len(chunk)), tuple(chunk))


def _pattern_where(ids: dict[str, int]) -> list[Any]:
    return [quads.c[name] == value for name, value in ids.items()]


class _Rows:
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


class SQLStore(Store):
    """rdflib store on a SQL database (SQLite or PostgreSQL), registered as ``catalogue``.

    ``SQLStore("catalogue.db")``, ``SQLStore("postgresql://...")`` or
    ``SQLStore(engine=engine)`` open a database (creating or migrating the schema);
    ``SQLStore()`` opens a private in-memory SQLite database on first use, which is
    what ``rdflib.Dataset(store="catalogue")`` gets.
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
    ) -> None:
        self.identifier = identifier
        self._given_engine = engine
        self._engine: Engine | None = None
        self._owns_engine = False
        self._conn: Connection | None = None
        self._closed = False
        # id -> graph name; ids are content hashes, so entries never go stale.
        self._graph_names: dict[int, Node] = {}
        # prefix -> namespace, loaded lazily; dropped at commit/rollback.
        self._ns: dict[str, str] | None = None
        # Per-transaction knowledge, reset at commit/rollback (see _end_transaction).
        self._tx_terms: dict[Node, int] = {}
        self._tx_graphs: set[int] = set()
        self._tx_write_locked = False
        # Streamed results not yet exhausted (see _close_streams).
        self._streams: set[_Rows] = set()
        super().__init__(None, identifier)
        if configuration or engine is not None:
            self.open(configuration)

    # ------------------------------------------------------------------ lifecycle

    def open(self, configuration: str | tuple[str, str] | None, create: bool = False) -> int:
        """Connect to ``configuration`` (a URL or path, see
        :func:`~catalogue.graph.database.database_url`) or to the engine given to the
        constructor, and migrate the schema to the current revision.

        ``create`` is accepted for rdflib compatibility; the schema is always created
        when missing, because an empty database is a valid, empty store.
        """
        if self._conn is not None:
            self.close()
        if configuration:
            if not isinstance(configuration, str):
                raise TypeError("SQLStore configuration must be a database URL or path")
            engine, owned = make_engine(database_url(configuration)), True
        elif self._given_engine is not None:
            engine, owned = self._given_engine, False
        else:
            engine, owned = make_engine("sqlite://"), True
        try:
            ensure_schema(engine)
            self._conn = engine.connect()
        except BaseException:
            if owned:
                engine.dispose()
            raise
        self._engine, self._owns_engine = engine, owned
        self._closed = False
        self._end_transaction()
        return VALID_STORE

    def close(self, commit_pending_transaction: bool = False) -> None:
        """Close the connection, committing or (by default) rolling back first."""
        conn = self._conn
        if conn is None:
            self._closed = True
            return
        self._close_streams()
        try:
            if conn.in_transaction():
                if commit_pending_transaction:
                    conn.commit()
                else:
                    conn.rollback()
        finally:
            conn.close()
            self._conn = None
            self._closed = True
            self._end_transaction()
            if self._owns_engine and self._engine is not None:
                self._engine.dispose()
            self._engine = None
            self._owns_engine = False

    def destroy(self, configuration: str | None = None) -> None:
        """Drop the catalogue tables (and the Alembic version) of a database.

        Without ``configuration``, or with the one the store is open on, the store's
        own database is dropped and the store is closed, since nothing usable is left
        behind.  Otherwise the store's open transaction is rolled back first, so its
        locks cannot block the ``DROP TABLE`` of another database connection.
        """
        conn = self._conn
        if conn is not None:
            self._close_streams()
            if conn.in_transaction():
                conn.rollback()
            self._end_transaction()
            own_url = conn.engine.url.render_as_string(hide_password=False)
            if not configuration or database_url(configuration) == own_url:
                with conn.begin():
                    self._drop_all(conn)
                self.close()
                return
        if not configuration:
            return  # never opened: the private in-memory database does not exist yet
        engine = make_engine(database_url(configuration))
        try:
            with engine.begin() as engine_conn:
                self._drop_all(engine_conn)
        finally:
            engine.dispose()

    @staticmethod
    def _drop_all(conn: Connection) -> None:
        metadata.drop_all(conn, checkfirst=True)
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))

    def _connection(self) -> Connection:
        conn = self._conn
        if conn is None:
            if self._closed:
                raise RuntimeError("the store is closed; call open() to use it again")
            self.open(None)
            conn = cast(Connection, self._conn)
        return conn

    @property
    def engine(self) -> Engine:
        """The engine of the open store (opening the default one if needed)."""
        self._connection()
        return cast(Engine, self._engine)

    # --------------------------------------------------------------- transactions

    def commit(self) -> None:
        """Commit the current transaction (if any); the next statement starts a new one.

        Unfinished streamed results are closed first (iterating them further raises
        an error): their server-side cursors cannot outlive the transaction.
        """
        self._close_streams()
        conn = self._conn
        if conn is not None and conn.in_transaction():
            conn.commit()
        self._end_transaction()

    def rollback(self) -> None:
        """Discard everything written since the last commit (closing streams, as commit)."""
        self._close_streams()
        conn = self._conn
        if conn is not None and conn.in_transaction():
            conn.rollback()
        self._end_transaction()

    def _close_streams(self) -> None:
        """Close streamed results left open by abandoned iterators.

        A PostgreSQL server-side cursor disappears at the end of its transaction; if
        its result were closed later (when the iterator is garbage collected), the
        driver's ``CLOSE`` would fail inside the *next* transaction and abort it.
        """
        streams, self._streams = self._streams, set()
        for rows in streams:
            rows.expire()

    def _end_transaction(self) -> None:
        # What this transaction learnt about stored terms, graphs and locks is only
        # guaranteed while it lasts; prefixes may be changed by others after it.
        self._tx_terms.clear()
        self._tx_graphs.clear()
        self._tx_write_locked = False
        self._ns = None

    def _begin_write(self) -> Connection:
        """Connection for a write; on PostgreSQL also takes the shared terms lock.

        Every transaction that may reference existing terms holds the lock in shared
        mode, so term garbage collection (which needs it exclusively) can never
        delete a term that an uncommitted quad points to.  SQLite serialises writers
        itself, so it needs nothing here.
        """
        conn = self._connection()
        if not self._tx_write_locked:
            if conn.dialect.name == "postgresql":
                conn.execute(
                    text("SELECT pg_advisory_xact_lock_shared(:key)"), {"key": _PG_TERMS_LOCK}
                )
            self._tx_write_locked = True
        return conn

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
        name = self._graph_names.get(gid)
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
            name = decode(*row)
            self._graph_names[gid] = name
        return name

    def _context_graph(self, gid: int) -> Graph:
        return Graph(store=self, identifier=cast(Any, self._graph_name(gid)))

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

        for batch in _chunks(prepared(), BATCH_SIZE):
            self._add_quads(batch)

    def _add_quads(self, batch: list[tuple[Node, Node, Node, Node]]) -> set[int]:
        """Store one batch of ``(s, p, o, graph name)``; return the term ids used."""
        conn = self._begin_write()
        known = self._tx_terms
        local: dict[Node, int] = {}  # every node of this batch
        new_terms: dict[int, tuple[Node, _TermRow]] = {}  # not yet known to be stored

        def term_id(node: Node) -> int:
            tid = local.get(node)
            if tid is None:
                tid = known.get(node)
                if tid is None:
                    tid, kind, value, datatype, lang = encode(node)
                    row = (kind, value, datatype, lang)
                    previous = new_terms.get(tid)
                    if previous is not None and not _same_term(previous[1], row):
                        raise TermCollisionError(tid, previous[1], row)
                    new_terms[tid] = (node, row)
                local[node] = tid
            return tid

        rows = {(term_id(g), term_id(s), term_id(p), term_id(o)) for s, p, o, g in batch}
        if new_terms:
            self._store_terms(conn, new_terms)
        graph_ids = {row[0] for row in rows} - self._tx_graphs
        if graph_ids:
            _bulk_insert_graphs(conn, list(graph_ids))
            self._remember_graphs(graph_ids)
        if rows:
            _bulk_insert_quads(conn, sorted(rows))  # primary-key order: local b-tree inserts
        return set(local.values())

    def _store_terms(self, conn: Connection, new_terms: dict[int, tuple[Node, _TermRow]]) -> None:
        """Insert terms that are not stored yet, refusing hash collisions.

        Stored rows are read back and compared first, so re-loading known data sends
        no term values at all.  If fewer rows are inserted than were missing, another
        transaction stored some of them in between, and those are compared too.
        """
        missing = self._check_stored_terms(conn, new_terms, list(new_terms))
        if missing:
            inserted = _bulk_insert_terms(conn, [(tid, *new_terms[tid][1]) for tid in missing])
            if inserted != len(missing):
                still_missing = self._check_stored_terms(conn, new_terms, missing)
                if still_missing:
                    raise RuntimeError(f"terms {still_missing[:5]} could not be stored")
        known = self._tx_terms
        if len(known) + len(new_terms) > _TX_CACHE_LIMIT:
            known.clear()
        for tid, (node, _row) in new_terms.items():
            known[node] = tid

    @staticmethod
    def _check_stored_terms(
        conn: Connection, new_terms: dict[int, tuple[Node, _TermRow]], ids: list[int]
    ) -> list[int]:
        """Compare stored rows for ``ids`` with ``new_terms``; return the ids not stored."""
        found: set[int] = set()
        for tid, kind, value, datatype, lang in _select_terms(conn, ids):
            stored = (kind, value, datatype, lang)
            wanted = new_terms[tid][1]
            if not _same_term(stored, wanted):
                raise TermCollisionError(tid, stored, wanted)
            found.add(tid)
        return [tid for tid in ids if tid not in found]

    def _remember_graphs(self, graph_ids: Iterable[int]) -> None:
        if len(self._tx_graphs) > _TX_CACHE_LIMIT:
            self._tx_graphs.clear()
        self._tx_graphs.update(graph_ids)

    def remove(
        self, triple: tuple[Node | None, Node | None, Node | None], context: Any = None
    ) -> None:
        """Remove matching triples from ``context``, or from every graph if ``None``.

        Graphs stay registered even when they become empty (as in rdflib's Memory
        store); terms are left for :meth:`gc`, since finding which became unused
        would cost more than the delete itself.
        """
        ids = self._pattern_ids(triple)
        if ids is None:
            return
        gnode = self._graph_node(context)
        conds = _pattern_where(ids)
        if gnode is not None:
            conds.append(quads.c.g == encode(gnode)[0])
        stmt: Delete = delete(quads)
        if conds:
            stmt = stmt.where(and_(*conds))
        self._begin_write().execute(stmt)
        if self.dispatcher.get_map() is not None:
            Store.remove(self, triple, context)

    # -------------------------------------------------------------------- reads

    @staticmethod
    def _pattern_ids(
        triple: tuple[Node | None, Node | None, Node | None],
    ) -> dict[str, int] | None:
        """Ids of the bound pattern positions, or ``None`` if a bound term cannot be
        stored at all (e.g. a ``Variable``), in which case nothing can match."""
        ids: dict[str, int] = {}
        for name, node in zip(_SPO, triple, strict=True):
            if node is not None:
                try:
                    ids[name] = encode(node)[0]
                except TypeError:
                    return None
        return ids

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
        ids = self._pattern_ids(triple_pattern)
        if ids is None:
            return iter(())
        gnode = self._graph_node(context)
        if gnode is None:
            return self._union_triples(triple_pattern, ids)
        return self._graph_triples(triple_pattern, ids, encode(gnode)[0], with_contexts=True)

    def _execute_match(
        self, ids: dict[str, int], union_mode: bool, gid: int | None = None
    ) -> _Rows:
        bound = ("s" in ids, "p" in ids, "o" in ids)
        params: dict[str, int] = dict(ids)
        if gid is not None:
            params["g"] = gid
        options: dict[str, Any] = {}
        stream = not bound[0]
        if stream:
            options = {"stream_results": True, "yield_per": _YIELD_PER}
        rows = _Rows(
            self._connection().execute(
                _match_statement(bound, union_mode), params, execution_options=options
            )
        )
        if stream:
            self._streams.add(rows)
        return rows

    def _release(self, rows: _Rows) -> None:
        self._streams.discard(rows)
        rows.close()

    @staticmethod
    def _row_decoder(
        pattern: tuple[Node | None, Node | None, Node | None], offset: int
    ) -> Callable[[Any], _Triple]:
        """Function turning a result row into a triple, reusing bound pattern terms."""
        slots: list[tuple[Node | None, int]] = []
        col = offset
        for node in pattern:
            if node is None:
                slots.append((None, col))
                col += _TERM_WIDTH
            else:
                slots.append((node, -1))
        (s_node, s_col), (p_node, p_col), (o_node, o_col) = slots

        def decode_row(row: Any) -> _Triple:
            return (
                s_node if s_node is not None else decode(*row[s_col : s_col + _TERM_WIDTH]),
                p_node if p_node is not None else decode(*row[p_col : p_col + _TERM_WIDTH]),
                o_node if o_node is not None else decode(*row[o_col : o_col + _TERM_WIDTH]),
            )

        return decode_row

    def _union_triples(
        self, pattern: tuple[Node | None, Node | None, Node | None], ids: dict[str, int]
    ) -> Generator[tuple[_Triple, Iterator[Graph]], None, None]:
        rows = self._execute_match(ids, union_mode=True)
        decode_row = self._row_decoder(pattern, offset=4)
        context_graphs: dict[int, Graph] = {}
        try:
            key: tuple[int, int, int] | None = None
            triple: _Triple | None = None
            contexts: list[Graph] = []
            for row in rows:
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
        ids: dict[str, int],
        gid: int,
        with_contexts: bool,
    ) -> Generator[Any, None, None]:
        rows = self._execute_match(ids, union_mode=False, gid=gid)
        decode_row = self._row_decoder(pattern, offset=3)
        try:
            for row in rows:
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
            stmt = select(func.count()).select_from(distinct)
        else:
            stmt = select(func.count()).select_from(quads).where(quads.c.g == encode(gnode)[0])
        return int(conn.execute(stmt).scalar_one())

    def contexts(self, triple: _Triple | None = None) -> Generator[Graph, None, None]:
        """Yield every graph (empty ones included), or the graphs containing ``triple``.

        The list is read before the first graph is yielded, so callers may query or
        modify the store while iterating (SPARQL ``GRAPH ?g`` does).
        """
        conn = self._connection()
        if triple is None or all(node is None for node in triple):
            rows = conn.execute(
                select(graphs.c.id, terms.c.kind, terms.c.value, terms.c.datatype, terms.c.lang)
                .select_from(graphs.join(terms, terms.c.id == graphs.c.id))
                .order_by(terms.c.value)
            ).all()
            for gid, *term in rows:
                if gid not in self._graph_names:
                    self._graph_names[gid] = decode(*term)
            gids = [row[0] for row in rows]
        else:
            ids = self._pattern_ids(triple)
            if ids is None:
                return
            gids = list(
                conn.execute(select(quads.c.g).distinct().where(*_pattern_where(ids))).scalars()
            )
        for gid in gids:
            yield self._context_graph(gid)

    # ------------------------------------------------------------------- graphs

    def add_graph(self, graph: Any) -> None:
        """Register a (possibly empty) named graph; a no-op if it already exists.

        Checks before writing so that rdflib's habit of re-adding the default graph
        on every ``Dataset.graphs()`` call does not turn reads into write
        transactions.
        """
        gnode = self._write_graph_node(graph)
        gid = encode(gnode)[0]
        if gid in self._tx_graphs:
            return
        conn = self._connection()
        found = conn.execute(select(graphs.c.id).where(graphs.c.id == gid)).first()
        if found is None:
            conn = self._begin_write()
            self._store_terms(conn, {gid: (gnode, encode(gnode)[1:])})
            _bulk_insert_graphs(conn, [gid])
        self._remember_graphs([gid])

    def remove_graph(self, graph: Any) -> None:
        """Delete a graph and its triples, and the terms only it used."""
        gnode = self._graph_node(graph)
        conn = self._begin_write()
        if gnode is None:
            # Memory-store semantics for "remove the union": all triples go, the
            # graphs stay registered.
            conn.execute(delete(quads))
            self.gc()
            return
        gid = encode(gnode)[0]
        old_ids = self._graph_term_ids(conn, gid)
        conn.execute(delete(quads).where(quads.c.g == gid))
        conn.execute(delete(graphs).where(graphs.c.id == gid))
        self._tx_graphs.discard(gid)
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
        gid = encode(graph_id)[0]
        old_ids = self._graph_term_ids(conn, gid)
        conn.execute(delete(quads).where(quads.c.g == gid))
        self.add_graph(graph_id)
        used: set[int] = set()
        for batch in _chunks(triples, BATCH_SIZE):
            used |= self._add_quads([(s, p, o, graph_id) for s, p, o in batch])
        if old_ids:
            self._gc_terms(conn, old_ids - used - {gid})
        return int(
            conn.execute(
                select(func.count()).select_from(quads).where(quads.c.g == gid)
            ).scalar_one()
        )

    def graph_triples(self, graph_id: Node) -> Iterator[_Triple]:
        """Stream the triples of one graph."""
        return self._graph_triples((None, None, None), {}, encode(graph_id)[0], with_contexts=False)

    def graph_ids(self) -> list[Node]:
        """Names of all graphs in the store, sorted."""
        return sorted((graph.identifier for graph in self.contexts()), key=str)

    @staticmethod
    def _graph_term_ids(conn: Connection, gid: int) -> set[int]:
        """Distinct term ids used by one graph (computed by the database)."""
        in_graph = quads.c.g == gid
        stmt = union(
            select(quads.c.s.label("id")).where(in_graph),
            select(quads.c.p).where(in_graph),
            select(quads.c.o).where(in_graph),
        )
        return set(conn.execute(stmt).scalars())

    # ------------------------------------------------------------ garbage collection

    @staticmethod
    def _unreferenced() -> list[Any]:
        """Conditions that hold for a ``terms`` row no quad or graph refers to.

        Each ``NOT EXISTS`` is answered by an index whose first column is the one
        compared (pk_quads for g, ix_quads_spog/posg/ospg for s/p/o).
        """
        return [~exists().where(quads.c[name] == terms.c.id) for name in ("g", "s", "p", "o")] + [
            ~exists().where(graphs.c.id == terms.c.id)
        ]

    def _gc_terms(self, conn: Connection, candidates: set[int]) -> int:
        """Delete those of ``candidates`` that nothing refers to any more.

        On PostgreSQL this needs the terms lock exclusively; if another transaction is
        writing (and might reference one of these terms in rows we cannot see yet)
        the collection is skipped and the terms stay until a later collection or
        :meth:`gc`.  Never waiting avoids deadlocks between concurrent loaders.
        """
        if not candidates:
            return 0
        if conn.dialect.name == "postgresql":
            got = conn.execute(
                text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": _PG_TERMS_LOCK}
            ).scalar_one()
            if not got:
                return 0
        deleted = 0
        conds = self._unreferenced()
        for chunk in _chunks(sorted(candidates), _IN_CHUNK):
            result = conn.execute(delete(terms).where(terms.c.id.in_(chunk), *conds))
            deleted += max(result.rowcount, 0)
        # Terms this transaction had written may be gone now.
        self._tx_terms.clear()
        return deleted

    def gc(self) -> int:
        """Delete every term nothing refers to; return how many were deleted.

        Scans the whole ``terms`` table, so it is a maintenance operation; call it in
        its own transaction and commit afterwards.  ``replace_graph`` and
        ``remove_graph`` already collect the terms they orphan.
        """
        conn = self._begin_write()
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_TERMS_LOCK})
        result = conn.execute(delete(terms).where(*self._unreferenced()))
        self._tx_terms.clear()
        return max(result.rowcount, 0)

    # --------------------------------------------------------------- namespaces

    def _namespace_map(self) -> dict[str, str]:
        if self._ns is None:
            rows = self._connection().execute(
                select(namespaces.c.prefix, namespaces.c.uri).order_by(namespaces.c.prefix)
            )
            self._ns = {prefix: uri for prefix, uri in rows}
        return self._ns

    def bind(self, prefix: str, namespace: URIRef, override: bool = True) -> None:
        """Bind ``prefix`` to ``namespace``.

        With ``override`` the pair replaces any binding of the prefix and any other
        prefix of the namespace; without it, the pair is only added when neither the
        prefix nor the namespace is bound yet (as in rdflib's Memory store).
        Unchanged bindings cause no write.
        """
        ns_map = self._namespace_map()
        uri = str(namespace)
        bound_uri = ns_map.get(prefix)
        bound_prefixes = [p for p, u in ns_map.items() if u == uri]
        if override:
            if bound_uri == uri and bound_prefixes == [prefix]:
                return
        elif bound_uri is not None or bound_prefixes:
            return
        conn = self._begin_write()
        conn.execute(
            delete(namespaces).where((namespaces.c.prefix == prefix) | (namespaces.c.uri == uri))
        )
        conn.execute(namespaces.insert(), [{"prefix": prefix, "uri": uri}])
        for p in bound_prefixes:
            ns_map.pop(p, None)
        ns_map[prefix] = uri

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
        for p, u in list(self._namespace_map().items()):
            yield p, URIRef(u)
