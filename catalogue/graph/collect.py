"""Term garbage collection: deleting ``terms`` rows no quad or graph refers to any more.

Terms are shared by every graph, so removing quads cannot delete their terms on the
spot: :func:`collect_terms` checks the candidates a removal orphaned (a replaced or
removed graph's), :func:`collect_all` the whole table (``SQLStore.gc``); the deleted geometries leave the spatial index
with them (:mod:`.spatial`).  Both run
under the store's write lock, so no other transaction can be about to reference one of
the terms they delete.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, exists, select, union
from sqlalchemy.engine import Connection

from .dialect.base import IN_CHUNK, chunks
from .schema import datatypes, graphs, quads, term_gc_queue, terms
from .spatial import drop_orphans, drop_terms
from .wkt import WKT_LITERAL

__all__ = ["collect_all", "collect_terms", "graph_term_ids", "queue_terms"]


def graph_term_ids(conn: Connection, gid: int) -> set[int]:
    """Distinct term ids used by one graph (computed by the database)."""
    in_graph = quads.c.g == gid
    stmt = union(
        select(quads.c.s.label("id")).where(in_graph),
        select(quads.c.p).where(in_graph),
        select(quads.c.o).where(in_graph),
    )
    return set(conn.execute(stmt).scalars())


def _unreferenced() -> list[Any]:
    """Conditions that hold for a ``terms`` row no quad or graph refers to.

    Each ``NOT EXISTS`` is answered by an index whose first column is the one
    compared (pk_quads for g, ix_quads_spog/posg/ospg for s/p/o).  Datatypes are
    never collected: they are few, and their ids are cached as permanent.
    """
    return [~exists().where(quads.c[name] == terms.c.id) for name in ("g", "s", "p", "o")] + [
        ~exists().where(graphs.c.id == terms.c.id)
    ]


def collect_terms(conn: Connection, candidates: set[int]) -> int:
    """Delete those of ``candidates`` that nothing refers to any more; return how many.

    ``conn`` must hold the write lock (``SQLStore._begin_write``).
    """
    deleted = 0
    conds = _unreferenced()
    wkt = conn.execute(select(datatypes.c.id).where(datatypes.c.iri == WKT_LITERAL)).scalar()
    for chunk in chunks(sorted(candidates), IN_CHUNK):
        result = conn.execute(
            delete(terms).where(terms.c.id.in_(chunk), *conds).returning(terms.c.id, terms.c.datatype)
        )
        gone = result.all()
        deleted += len(gone)
        if wkt is not None:
            drop_terms(conn, [term_id for term_id, dt in gone if dt == wkt])
    return deleted


def queue_terms(conn: Connection, candidates: set[int]) -> None:
    """Leave ``candidates`` for a later collection (a writer sharing the write lock may
    not delete terms: ``SQLStore.write_transaction``)."""
    from sqlalchemy.dialects.postgresql import insert

    rows = [{"term": t} for t in sorted(candidates)]
    for chunk in chunks(rows, 5_000):
        conn.execute(insert(term_gc_queue).on_conflict_do_nothing(), chunk)


def collect_all(conn: Connection) -> int:
    """Delete every term nothing refers to; return how many (scans the whole table).

    ``conn`` must hold the write lock (``SQLStore._begin_write``).
    """
    result = conn.execute(delete(terms).where(*_unreferenced()))
    drop_orphans(conn)
    return max(result.rowcount, 0)
