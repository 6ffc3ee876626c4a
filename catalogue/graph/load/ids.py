"""Term and datatype ids of a store session: read, cached, allocated and written.

The primitives every writer of the store shares, as public functions over a
:class:`~catalogue.graph.session.Session` and its connection: ``SQLStore`` (``add``,
``addN``, ``replace_graph``, term lookups and decoding) and the bulk writer
(:mod:`.writer`) both go through them, so neither reaches into the other's private
members.  Ids are cached per session (see :class:`~catalogue.graph.session.Session`
for how long each cache stays right).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Final, cast

from rdflib.namespace import RDF
from rdflib.term import Node
from sqlalchemy import select, text
from sqlalchemy.engine import Connection

from catalogue.errors import UsageError

from ..dialect.base import NewTermRow, StoredTermRow
from ..dialect.driver import driver_connection, driver_errors
from ..dialect.sqlite import next_term_id
from ..schema import datatypes
from ..session import Session
from ..spatial import index_literals, is_wkt
from ..terms import BLANK, LITERAL, TermCollisionError, comparable_value, encode, same_content
from ..written import WrittenGraph

__all__ = [
    "TermRow",
    "add_graph_triples",
    "add_quads",
    "datatype_id",
    "datatype_iri",
    "load_datatypes",
    "lookup_term_ids",
    "note_ids_written",
    "remember_graphs",
    "reserve_term_ids",
    "store_terms",
    "stored_content",
    "write_datatypes",
]

#: ``(kind, value, datatype IRI, lang)``: a term's content, as compared for collisions.
TermRow = tuple[int, str, str | None, str | None]
# Bound on the per-transaction caches of terms and graphs known to be stored.
_TX_CACHE_LIMIT: Final = 200_000
_RDF_TYPE: Final = RDF.type

_INSERT_DATATYPE = text("INSERT INTO datatypes (iri) VALUES (:iri) ON CONFLICT (iri) DO NOTHING")


# ------------------------------------------------------------------ datatypes


def load_datatypes(session: Session, conn: Connection) -> None:
    """Read every datatype into the session's caches."""
    _take_datatypes(session, conn.execute(select(datatypes.c.id, datatypes.c.iri)).all())


def _take_datatypes(session: Session, rows: Iterable[tuple[int, str]]) -> None:
    """Every datatype's row (id, IRI) into the session's caches."""
    rows = list(rows)
    session.dt_iris = {dt_id: iri for dt_id, iri in rows}
    session.dt_ids = {iri: dt_id for dt_id, iri in rows}
    session.dt_fresh = True


def datatype_iri(session: Session, conn: Connection, dt_id: int) -> str:
    """The IRI of datatype ``dt_id``; :class:`LookupError` if there is none.

    Answered from a cache (datatypes never change once written), which is
    refreshed when it does not know the id.
    """
    iri = session.dt_iris.get(dt_id)
    if iri is None:
        load_datatypes(session, conn)
        iri = session.dt_iris.get(dt_id)
        if iri is None:
            raise LookupError(f"datatype id {dt_id} does not exist")
    return iri


def datatype_id(session: Session, conn: Connection, iri: str) -> int | None:
    """Id of a stored datatype, or ``None`` if it is not stored (cache, then table)."""
    dt_id = session.dt_ids.get(iri)
    if dt_id is None:
        load_datatypes(session, conn)
        dt_id = session.dt_ids.get(iri)
    return dt_id


def stored_content(session: Session, conn: Connection, row: StoredTermRow) -> TermRow:
    """The content of a stored row in the form :func:`.terms.encode` gives."""
    dt_id = row[4]
    return (row[2], row[3], None if dt_id is None else datatype_iri(session, conn, dt_id), row[5])


# ------------------------------------------------------------------ term ids


def lookup_term_ids(session: Session, conn: Connection, nodes: Iterable[Node]) -> dict[Node, int]:
    """Ids of those of ``nodes`` that are stored; nothing is inserted.

    Terms are looked up by hash in batched ``IN`` queries and their stored content
    is compared with the node; a different term under the same hash raises
    :class:`~catalogue.graph.terms.TermCollisionError`.  Nodes that cannot be
    stored at all (variables, quoted graphs) are left out like missing ones.  The
    answer is valid for the current transaction: a term not referenced by any
    quad may be garbage-collected (and, if written again, get a new id) later.
    """
    if session.dialect.name == "sqlite":
        return _kept_term_ids(session, conn, nodes)
    wanted = _wanted_terms(nodes)
    if not wanted:
        return {}
    return _matched_term_ids(session, conn, wanted, session.dialect.select_terms(conn, list(wanted)))


#: SQLite: at most this many lookups kept (:func:`_kept_term_ids`).
_KEPT_LOOKUPS: Final = 20_000
_UNKNOWN: Final = object()


def _kept_term_ids(session: Session, conn: Connection, nodes: Iterable[Node]) -> dict[Node, int]:
    """:func:`lookup_term_ids` on SQLite, through the lookups kept in the session.

    Looking a query's constants up was a third of a small query's time (query 14 of the
    benchmark: a statement and the Python around it, more than the query's own
    statement). A term's id changes only when the term is deleted and written again, and
    whether a term is stored only when terms are written or deleted: neither happens
    without changing ``PRAGMA data_version`` (a commit by another connection, as this
    transaction sees the database) or the connection's own count of rows changed. While
    both are as they were (on the same driver connection), what was looked up holds; when
    either moved, the lookups are dropped. A rollback restores deleted terms without
    counting as a change: ``SQLStore.rollback`` drops the lookups after a transaction that
    wrote. (Read in the transaction, which the pragma's read begins: the ids hold for the
    snapshot the query then reads.)"""
    raw = driver_connection(conn)
    with driver_errors(conn, "PRAGMA data_version"):
        key = (id(raw), raw.execute("PRAGMA data_version").fetchone()[0], raw.total_changes)
    kept = session.read_ids
    if key != session.read_key or len(kept) > _KEPT_LOOKUPS:
        kept.clear()
        session.read_key = key
    found: dict[Node, int] = {}
    missing: list[Node] = []
    for node in nodes:
        term_id = kept.get(node, _UNKNOWN)
        if term_id is _UNKNOWN:
            missing.append(node)
        elif term_id is not None:
            found[node] = cast(int, term_id)
    wanted = _wanted_terms(missing)
    if wanted:
        stored = _matched_term_ids(session, conn, wanted, session.dialect.select_terms(conn, list(wanted)))
        for entries in wanted.values():
            for node, _content in entries:
                kept[node] = stored.get(node)
        found.update(stored)
    return found


#: Hash -> the nodes looked up under it, with their content (:func:`_wanted_terms`).
_WantedTerms = dict[int, list[tuple[Node, TermRow]]]


def _wanted_terms(nodes: Iterable[Node]) -> _WantedTerms:
    """The storable ``nodes`` by hash, for :func:`_matched_term_ids`."""
    wanted: _WantedTerms = {}
    for node in nodes:
        try:
            term_hash, kind, value, datatype, lang = encode(node)
        except TypeError:
            continue
        wanted.setdefault(term_hash, []).append((node, (kind, value, datatype, lang)))
    return wanted


def _matched_term_ids(session: Session, conn: Connection, wanted: _WantedTerms,
                     rows: Iterable[StoredTermRow]) -> dict[Node, int]:
    """The ids of the ``wanted`` nodes among the stored ``rows`` of their hashes (a
    different term under a node's hash raises :class:`TermCollisionError`)."""
    found: dict[Node, int] = {}
    for row in rows:
        stored = stored_content(session, conn, row)
        for node, content in wanted[row[0]]:
            if not same_content(stored, content):
                raise TermCollisionError(row[0], stored, content)
            found[node] = row[1]
    return found


def reserve_term_ids(session: Session, conn: Connection, count: int) -> int:
    """SQLite: the first of ``count`` consecutive new term ids, reserved for the
    caller in this write transaction (the store numbers terms itself there)."""
    first = _next_term_id(session, conn)
    session.tx_next_id = first + count
    session.tx_wrote_ids = True
    return first


def note_ids_written(session: Session) -> None:
    """Record that terms were inserted: a rollback must then drop the id caches
    filled in this transaction."""
    session.tx_wrote_ids = True


# ------------------------------------------------------------------ writes


class _Slots(dict[Node, int]):
    """Node -> slot (its position in ``nodes``), a slot given on first sight (through
    ``__missing__``), so that a batch costs one dictionary lookup per node, rdflib's
    ``__eq__`` being the expensive part.  ``ids`` holds each slot's known term id (None
    for a term the database does not have yet)."""

    __slots__ = ("ids", "known", "nodes")

    def __init__(self, known: dict[Node, int]) -> None:
        super().__init__()
        self.known = known
        self.nodes: list[Node] = []
        self.ids: list[int | None] = []

    def __missing__(self, node: Node) -> int:
        self[node] = slot = len(self.nodes)
        self.nodes.append(node)
        self.ids.append(self.known.get(node))
        return slot


def add_quads(
    session: Session, conn: Connection, batch: list[tuple[Node, Node, Node, Node]],
    sink: WrittenGraph | None = None,
) -> set[int]:
    """Store one batch of ``(s, p, o, graph name)``; return the term ids used.

    ``conn`` holds the write lock (``SQLStore._begin_write``). ``sink`` keeps the rows and
    their nodes, for the derived indexes (:mod:`..written`).

    One pass gives every distinct node of the batch a slot (one dictionary lookup
    per node, rdflib's ``__eq__`` being the expensive part); the quads are kept as
    slot numbers until the new terms have ids.
    """
    slots = _Slots(session.tx_terms)
    # g first, as the rows are stored: the tuple is built left to right.
    local_rows = [(slots[g], slots[s], slots[p], slots[o]) for s, p, o, g in batch]
    return _store_rows(session, conn, slots, local_rows, None, sink)


def add_graph_triples(
    session: Session, conn: Connection, graph: Node, batch: list[tuple[Node, Node, Node]],
    sink: WrittenGraph | None = None,
) -> set[int]:
    """:func:`add_quads` of one graph's triples (``SQLStore.replace_graph``, whose ``sink``
    keeps them for the derived indexes): the graph's slot is found once, not once per row,
    and no quad tuples are built to carry it. An empty batch stores nothing, not even the
    graph's name."""
    if not batch:
        return set()
    slots = _Slots(session.tx_terms)
    g = slots[graph]
    local_rows = [(g, slots[s], slots[p], slots[o]) for s, p, o in batch]
    return _store_rows(session, conn, slots, local_rows, g, sink)


def _store_rows(
    session: Session, conn: Connection, slots: _Slots, local_rows: list[tuple[int, int, int, int]],
    graph_slot: int | None, sink: WrittenGraph | None,
) -> set[int]:
    """The rows of a batch, as slots (``graph_slot``: the slot of every row's graph, when
    the batch is one graph's), into the quads table once their new terms are stored."""
    nodes, slot_ids = slots.nodes, slots.ids
    if None in slot_ids:
        graph_slots = {row[0] for row in local_rows} if graph_slot is None else {graph_slot}
        _resolve_slots(session, conn, nodes, slot_ids, local_rows, slots.get(_RDF_TYPE), graph_slots)
    ids = cast(list[int], slot_ids)
    # A dictionary, not a set, drops duplicates: it keeps the batch's order, in which a
    # converted graph's rows come nearly sorted already, so the sort below (for local
    # b-tree inserts) is a merge of long runs (9 ms for a 1,000-array harvest's 49,000
    # rows, against 19 ms from a set's order).
    rows = list(dict.fromkeys([(ids[g], ids[s], ids[p], ids[o]) for g, s, p, o in local_rows]))
    written = {row[0] for row in rows} if graph_slot is None else ({ids[graph_slot]} if rows else set())
    session.touch(written)
    if sink is not None:
        sink.take(rows, ids, nodes)
    graph_ids = written - session.tx_graphs
    if graph_ids:
        session.dialect.insert_graphs(conn, list(graph_ids))
        remember_graphs(session, graph_ids)
    if rows:
        rows.sort()  # primary-key order: local b-tree inserts
        session.dialect.insert_quads(conn, rows)
    return set(ids)


def _resolve_slots(
    session: Session,
    conn: Connection,
    nodes: list[Node],
    slot_ids: list[int | None],
    local_rows: list[tuple[int, int, int, int]],
    type_slot: int | None,
    graph_slots: set[int],
) -> None:
    """Fill in the ids of the slots not known to be stored, storing new terms.

    New terms are numbered predicates first, then classes (objects of
    ``rdf:type``), then graph names, then the rest, each group in order of first
    appearance: the terms that recur in most quads get the smallest ids, which
    SQLite stores in the fewest bytes.
    """
    predicates = {row[2] for row in local_rows}
    classes = {row[3] for row in local_rows if row[2] == type_slot}
    ranked: tuple[list[int], ...] = ([], [], [], [])  # each in order of first appearance
    for slot, tid in enumerate(slot_ids):
        if tid is None:
            ranked[0 if slot in predicates else 1 if slot in classes else 2 if slot in graph_slots else 3].append(slot)

    # hash -> (node, content), in id-assignment order; slots -> hash
    pending: dict[int, tuple[Node, TermRow]] = {}
    slot_hashes: list[tuple[int, int]] = []
    for slot in itertools.chain.from_iterable(ranked):
        node = nodes[slot]
        term_hash, kind, value, datatype, lang = encode(node)
        content = (kind, value, datatype, lang)
        previous = pending.get(term_hash)
        if previous is None:
            pending[term_hash] = (node, content)
        elif not same_content(previous[1], content):
            raise TermCollisionError(term_hash, previous[1], content)
        slot_hashes.append((slot, term_hash))
    by_hash = store_terms(
        session,
        conn, [(term_hash, node, content) for term_hash, (node, content) in pending.items()]
    )
    known = session.tx_terms
    if len(known) + len(slot_hashes) > _TX_CACHE_LIMIT:
        known.clear()
    for slot, term_hash in slot_hashes:
        slot_ids[slot] = known[nodes[slot]] = by_hash[term_hash]

def store_terms(
    session: Session, conn: Connection, new_terms: list[tuple[int, Node, TermRow]]
) -> dict[int, int]:
    """Ids of ``(hash, node, content)`` terms, inserting those not stored yet.

    Stored rows are read back by hash and compared first, so re-loading known data
    sends no term values at all; except blank nodes, whose labels each conversion mints
    afresh (15,000 of the 20,000 terms of a 1,000-array harvest): they are inserted
    straight away. New terms are numbered in the order given.  A hash that turns out
    to be taken, by another transaction's insert (PostgreSQL) or by a blank node
    stored before, is read back and compared too.  A different term under the same
    hash raises :class:`TermCollisionError`.
    """
    contents = {term_hash: content for term_hash, _node, content in new_terms}
    ids = _check_stored_terms(session, conn, contents, [h for h, c in contents.items() if c[0] != BLANK])
    missing = [term_hash for term_hash, _node, _content in new_terms if term_hash not in ids]
    if missing:
        _insert_terms(session, conn, contents, missing, ids)
        still_missing = [term_hash for term_hash in missing if term_hash not in ids]
        if still_missing:
            ids.update(_check_stored_terms(session, conn, contents, still_missing))
            if any(term_hash not in ids for term_hash in still_missing):
                raise RuntimeError(f"terms with hashes {still_missing[:5]} could not be stored")
    return ids

def _insert_terms(
    session: Session,
    conn: Connection,
    contents: dict[int, TermRow],
    hashes: list[int],
    ids: dict[int, int],
) -> None:
    """Insert the terms ``hashes``; record the ids of those inserted in ``ids``."""
    dt_ids = write_datatypes(
        session,
        conn, {contents[h][2] for h in hashes if contents[h][2] is not None}
    )
    rows: list[NewTermRow] = []
    can_hold = session.dialect.can_hold
    geometries: list[int] = []  # hashes of WKT literals
    for term_hash in hashes:
        kind, value, datatype, lang = contents[term_hash]
        if not can_hold(value) or (lang is not None and not can_hold(lang)):
            raise UsageError(f"the database cannot store this term (PostgreSQL text holds no NUL "
                             f"character): {value[:60]!r}")
        if datatype is None:
            rows.append((term_hash, kind, value, None, lang, None))
        else:
            num = comparable_value(value, datatype) if kind == LITERAL else None
            rows.append((term_hash, kind, value, dt_ids[datatype], lang, num))
            if is_wkt(datatype):
                geometries.append(term_hash)
    session.tx_wrote_ids = True
    # Terms missing from the answer were stored meanwhile (PostgreSQL: by another
    # transaction); the caller reads them back by hash.
    inserted = session.dialect.insert_terms(
        conn, rows, lambda count: reserve_term_ids(session, conn, count)
    )
    ids.update(inserted)
    # Geometries go into the spatial index with the terms (a hash missing from
    # ``inserted`` was stored, and indexed, by another transaction).
    indexed = [(inserted[h], contents[h][1]) for h in geometries if h in inserted]
    if indexed:
        index_literals(conn, indexed)

def _next_term_id(session: Session, conn: Connection) -> int:
    """SQLite: the first id for new terms, read once per write transaction.

    Safe because the transaction holds the write lock (see ``SQLStore._begin_write``):
    nobody else can insert terms until it ends.
    """
    if session.tx_next_id is None:
        session.tx_next_id = next_term_id(conn)
    return session.tx_next_id

def write_datatypes(session: Session, conn: Connection, iris: set[str]) -> dict[str, int]:
    """Ids of datatype IRIs, inserting the unknown ones (rare: once per datatype)."""
    if not iris <= session.dt_ids.keys():
        load_datatypes(session, conn)
        new = sorted(iris - session.dt_ids.keys())
        if new:
            session.tx_wrote_ids = True
            conn.execute(_INSERT_DATATYPE, [{"iri": iri} for iri in new])
            load_datatypes(session, conn)
    return {iri: session.dt_ids[iri] for iri in iris}

def _check_stored_terms(
    session: Session, conn: Connection, contents: dict[int, TermRow], hashes: list[int]
) -> dict[int, int]:
    """Ids of those ``hashes`` that are stored, after comparing their content."""
    found: dict[int, int] = {}
    for row in session.dialect.select_terms(conn, hashes):
        stored = stored_content(session, conn, row)
        wanted = contents[row[0]]
        if not same_content(stored, wanted):
            raise TermCollisionError(row[0], stored, wanted)
        found[row[0]] = row[1]
    return found

def remember_graphs(session: Session, graph_ids: Iterable[int]) -> None:
    """Note graphs known to be registered in this transaction (a bounded cache)."""
    if len(session.tx_graphs) > _TX_CACHE_LIMIT:
        session.tx_graphs.clear()
    session.tx_graphs.update(graph_ids)
