"""PostgreSQL's statements for the store: array parameters, ids from a sequence."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from ..database import busy_error
from .base import NewTermRow, StoredTermRow

__all__ = ["POSTGRES", "PostgresDialect"]

# PostgreSQL numbers new terms from the terms_id_seq sequence (the column default);
# RETURNING tells which hashes were inserted and the ids they got.  A hash inserted
# by a concurrent transaction makes ON CONFLICT wait for it and then skip the row.
_INSERT_TERMS = (
    "INSERT INTO terms (hash, kind, value, datatype, lang, num) "
    "SELECT * FROM unnest(%s::bigint[], %s::smallint[], %s::text[], %s::integer[], "
    "%s::text[], %s::double precision[]) "
    "ON CONFLICT (hash) DO NOTHING RETURNING hash, id"
)
_INSERT_QUADS = (
    "INSERT INTO quads (g, s, p, o) "
    "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[]) "
    "ON CONFLICT DO NOTHING"
)
_INSERT_GRAPHS = "INSERT INTO graphs (id) SELECT unnest(%s::bigint[]) ON CONFLICT DO NOTHING"
_SELECT_TERMS = (
    "SELECT hash, id, kind, value, datatype, lang FROM terms WHERE hash = ANY(%s::bigint[])"
)
#: A table's statistics are refreshed after a write once it holds this many pages (of 8 KB)
#: more than this multiple of its pages at the last ``ANALYZE`` (or ``VACUUM``)
#: (:meth:`PostgresDialect.analyze_grown`): about seventeen times as a catalogue grows a
#: thousandfold, a few milliseconds each while small. Sizes, not the statistics
#: collector's change counts: those reach other sessions up to a second or more late.
GROWN_PAGES: Final = 16
GROWN_FACTOR: Final = 1.5
_GROWN_TABLES = (  # the tables as the search path finds them, as ANALYZE will
    "SELECT c.relname FROM pg_class c "
    "WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(%s::text[]) AS t) "
    "AND pg_relation_size(c.oid) / current_setting('block_size')::integer > %s + %s * c.relpages "
    "ORDER BY c.relname"
)
#: The tables a bulk load writes: analysed in its transaction, vacuumed after it.
STORE_TABLES: Final = ("datatypes", "terms", "quads", "graphs", "namespaces", "geo_index", "search_datasets",
                       "search_facets", "search_facet_counts")
# Advisory lock held by every writing transaction (see SQLStore._begin_write): alone,
# or shared by transactions that each write graphs of their own (harvests side by side),
# which then also hold their graph's lock alone.
_WRITE_LOCK: Final = 0x63617462  # "catb"
_TAKE_WRITE_LOCK = text("SELECT pg_advisory_xact_lock(:key)")
_SHARE_WRITE_LOCK = text("SELECT pg_advisory_xact_lock_shared(:key)")
_TRY_WRITE_LOCK = text("SELECT pg_try_advisory_xact_lock(:key)")


def graph_lock_key(graph: str) -> int:
    """A 63-bit advisory lock key for one graph (distinct from the harvest locks' keys,
    which hash ``harvest|<source>``, and from the fixed keys, with overwhelming
    probability)."""
    digest = hashlib.blake2b(f"graph|{graph}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF_FFFF_FFFF


def _int_array(values: Iterable[int | None]) -> str:
    """PostgreSQL array literal for integers: building the text in C (``str.join``)
    is several times faster than psycopg adapting a list element by element."""
    return "{" + ",".join("NULL" if v is None else str(v) for v in values) + "}"


def _columns(rows: list[tuple]) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


class PostgresDialect:
    """The store's PostgreSQL statements (see :class:`.base.Dialect`)."""

    name = "postgresql"

    def insert_quads(self, conn: Connection, rows: list[tuple[int, int, int, int]]) -> None:
        columns = zip(*rows, strict=True)
        conn.exec_driver_sql(_INSERT_QUADS, tuple(_int_array(c) for c in columns))

    def insert_graphs(self, conn: Connection, ids: list[int]) -> None:
        conn.exec_driver_sql(_INSERT_GRAPHS, (_int_array(ids),))

    def select_terms(self, conn: Connection, hashes: list[int]) -> Iterator[StoredTermRow]:
        yield from conn.exec_driver_sql(_SELECT_TERMS, (_int_array(hashes),))

    def insert_terms(
        self, conn: Connection, rows: list[NewTermRow], reserve: Callable[[int], int]
    ) -> dict[int, int]:
        hash_col, kinds, values, dts, langs, nums = _columns(rows)
        params = (
            _int_array(hash_col),
            _int_array(kinds),
            values,
            _int_array(dts),
            langs,
            nums,
        )
        return {term_hash: term_id for term_hash, term_id in conn.exec_driver_sql(_INSERT_TERMS, params)}

    def lock_writers(self, conn: Connection, *, shared: bool = False, graph: str | None = None) -> None:
        conn.execute(_SHARE_WRITE_LOCK if shared else _TAKE_WRITE_LOCK, {"key": _WRITE_LOCK})
        if graph is not None:
            conn.execute(_TAKE_WRITE_LOCK, {"key": graph_lock_key(graph)})

    def try_lock_writers(self, conn: Connection) -> bool:
        return bool(conn.execute(_TRY_WRITE_LOCK, {"key": _WRITE_LOCK}).scalar())

    def analyze(self, conn: Connection, tables: tuple[str, ...] = STORE_TABLES) -> None:
        """``ANALYZE`` waits for a VACUUM of the same table (an anti-wraparound
        autovacuum, or the one after another process's load, is not cancelled for it):
        statistics are not worth failing the write they follow, so it waits briefly, in a
        savepoint, and leaves them to autovacuum if it cannot."""
        before = conn.exec_driver_sql("SELECT current_setting('lock_timeout')").scalar()
        try:
            with conn.begin_nested():
                conn.exec_driver_sql("SELECT set_config('lock_timeout', '2s', true)")
                conn.exec_driver_sql(f"ANALYZE {', '.join(tables)}")
        except OperationalError as exc:
            if busy_error(exc) is None:
                raise
        finally:
            conn.exec_driver_sql("SELECT set_config('lock_timeout', %(v)s, true)", {"v": before})

    def analyze_grown(self, engine: Engine, tables: tuple[str, ...] = STORE_TABLES) -> list[str]:
        """``ANALYZE`` the tables that grew by half (:data:`GROWN_FACTOR`, :data:`GROWN_PAGES`)
        since their last statistics, as autovacuum would without waiting for it (a minute
        after the change at best, never where it is off).
        A catalogue filled by harvests from empty otherwise plans the harvest's own term
        lookups (``hash = ANY(...)``) with no statistics: sequential scans of ``terms``,
        each slower as it grows. Measured harvesting 1,000 small stores into a new
        catalogue with autovacuum off: 116 million rows read by 2,919 scans, and a
        throughput that fell by a quarter over the run. ``SKIP_LOCKED``: a table another
        process is analysing is left to it."""
        with engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            grown = [name for (name,) in conn.exec_driver_sql(
                _GROWN_TABLES, (list(tables), GROWN_PAGES, GROWN_FACTOR))]
            if grown:
                conn.exec_driver_sql(f"ANALYZE (SKIP_LOCKED) {', '.join(grown)}")
        return grown

    def vacuum(self, engine: Engine, tables: tuple[str, ...] = STORE_TABLES) -> None:
        """``VACUUM`` ``tables``, outside any transaction. What a bulk load has just
        committed is not settled for readers until autovacuum comes round (a minute or
        much later): the text index's new entries wait in GIN's pending list, which
        every text search scans whole, and the rows carry no hint bits and are missing
        from the visibility map. On a fresh 100,000-dataset load text searches took
        497 ms at p50, 197 ms after this VACUUM (0.2 s for those tables; one with
        ``INDEX_CLEANUP OFF``, which leaves the pending list, changed nothing). VACUUM
        skips pages already all-visible, so it costs about what was written (seconds for
        ten million quads). ``SKIP_LOCKED``: a table another VACUUM (or an ANALYZE)
        holds is skipped, not waited for; that one does the same work."""
        with engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            conn.exec_driver_sql(f"VACUUM (SKIP_LOCKED) {', '.join(tables)}")

    def can_hold(self, text: str) -> bool:
        return "\x00" not in text  # PostgreSQL text cannot hold NUL


POSTGRES: Final = PostgresDialect()
