"""Indexes derived from graphs, kept in the transaction that changes the graphs.

Some tables are functions of a graph's triples (the dataset search index of
:mod:`catalogue.discovery`).  They must change in the same transaction as the graph,
or a reader could see a dataset that its search does not find, or find one that is
gone.  The store therefore notes which graphs each transaction writes to (every write
path: ``add``/``addN``, ``remove``, ``remove_graph``, ``replace_graph``, the bulk
loader, and so SPARQL Update and ``catalogue load`` too), and just before it commits
hands them to its :class:`IndexHook`\\ s, which update their rows through the same
connection.  The higher room that owns such an index installs its hook on the store
(:attr:`catalogue.graph.store.SQLStore.index_hooks`): this room never imports it.

Graphs that no hook took (a store opened without hooks, as ``rdflib.Dataset(store=
"catalogue")`` is, or a hook that could not index a graph) go into ``reindex_queue``
in the same transaction, so nothing is forgotten: whoever owns the index processes
the queue later (``catalogue reindex``, and the web server within a second).

A writer that knows its change affects no derived index says so with
:meth:`~catalogue.graph.store.SQLStore.exempt_from_index` (harvest run records: a
run's end time only matters to the dataset written in the same transaction).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from .schema import reindex_queue
from .written import WrittenGraph

__all__ = ["IndexHook", "dequeue", "queue_graphs", "queued_graphs"]


class IndexHook(Protocol):
    """Brings a derived index up to date with ``graphs`` (term ids of graphs written in
    the transaction of ``conn``, which holds the write lock and has not committed);
    returns those it indexed.  The others are queued.  ``shared``: the transaction
    shares the write lock with writers of other graphs (``SQLStore.write_transaction``),
    so it must touch no other graph's rows (it may not, say, work off the queue).
    ``written``: of those graphs, the ones replaced whole and not touched since, with
    what was written (:mod:`.written`), which the hook may take instead of reading it."""

    def __call__(self, conn: Connection, graphs: set[int], *, shared: bool,
                 written: Mapping[int, WrittenGraph]) -> set[int]: ...


def queue_graphs(conn: Connection, gids: Iterable[int]) -> None:
    """Queue graphs for reindexing (in ``conn``'s transaction)."""
    rows = [{"gid": gid} for gid in sorted(set(gids))]
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    conn.execute(insert(reindex_queue).on_conflict_do_nothing(), rows)


def queued_graphs(conn: Connection, limit: int | None = None) -> list[int]:
    """Graph ids waiting to be reindexed, lowest first."""
    stmt = select(reindex_queue.c.gid).order_by(reindex_queue.c.gid)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [int(g) for g in conn.execute(stmt).scalars()]


def dequeue(conn: Connection, gids: Iterable[int]) -> None:
    """Take reindexed graphs off the queue."""
    ids = sorted(set(gids))
    for start in range(0, len(ids), 500):
        conn.execute(delete(reindex_queue).where(reindex_queue.c.gid.in_(ids[start:start + 500])))
