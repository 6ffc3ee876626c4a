"""The bulk writer: batches of parsed terms and quads into the store's tables, fast.

Local term ids of a batch are mapped to store ids in large steps: terms the database
may already hold are found by hash with one join against a temporary table, new terms
get their ids in Python (SQLite: the transaction holds the write lock, so the next ids
are ours; PostgreSQL: reserved from the sequence in bulk), and rows go in with
multi-row ``INSERT`` statements (SQLite) or binary ``COPY`` straight into the tables
(PostgreSQL).  It writes into the transaction of a :class:`WriteTarget` (the store),
through the store's public methods for bulk writers only.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from itertools import chain
from typing import Any, Final, Protocol

import numpy as np
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex, DropIndex, Index

from ..dialect.sqlite import insert_values
from ..schema import quads as quads_table
from ..schema import terms as terms_table
from ..session import Session
from ..spatial import index_literals, is_wkt
from ..terms import COMPARABLE_DATATYPES, TermCollisionError, comparable_value, same_content
from .batches import Batch
from .ids import datatype_iri, note_ids_written, reserve_term_ids, write_datatypes
from .ntriples import EncodedTerm

__all__ = ["REBUILD_MIN_QUADS", "REBUILD_RATIO", "SQLITE_LOAD_CACHE_KIB", "WriteTarget", "Writer"]

#: Loads expected to bring at least this many quads, into a ``quads`` table holding
#: at most :data:`REBUILD_RATIO` times as many, drop and rebuild the secondary indexes.
REBUILD_MIN_QUADS: Final = 50_000
REBUILD_RATIO: Final = 0.25
# Indexes a large load drops and rebuilds (see Writer._decide_rebuild): all of them
# when parsing and writing take turns, the two whose inserts land at random places when
# the parser runs in its own process (see Writer.__init__).
_REBUILT_ALL: Final = frozenset(
    {"ix_quads_spog", "ix_quads_posg", "ix_quads_ospg", "ix_terms_hash"}
)
_REBUILT_OVERLAPPED: Final = frozenset({"ix_quads_posg", "ix_quads_ospg"})
#: SQLite page cache during a load (KiB): the quad indexes of a few million quads fit.
SQLITE_LOAD_CACHE_KIB: Final = 512 * 1024


class WriteTarget(Protocol):
    """What the bulk writer needs of the store it writes into
    (:class:`~catalogue.graph.store.SQLStore`): its write lock, its session (for the
    write primitives of :mod:`.ids` it shares with the store) and its statistics."""

    def begin_write(self) -> Connection: ...

    @property
    def session(self) -> Session: ...

    def analyze(self) -> None: ...


# Binary COPY framing (PostgreSQL "COPY ... FORMAT BINARY"): signature, flags, header
# extension length; each row: field count, then length and value of each field.
_PG_COPY_HEADER: Final = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
_PG_COPY_TRAILER: Final = b"\xff\xff"


def _pg_binary_int8_rows(columns: list[np.ndarray]) -> bytes:
    """Binary COPY data for rows of BIGINT columns, built by numpy in one go."""
    fields: list[tuple[str, str]] = [("count", ">i2")]
    for i in range(len(columns)):
        fields += [(f"len{i}", ">i4"), (f"val{i}", ">i8")]
    records = np.empty(len(columns[0]), dtype=np.dtype(fields))
    records["count"] = len(columns)
    for i, column in enumerate(columns):
        records[f"len{i}"] = 8
        records[f"val{i}"] = column
    return _PG_COPY_HEADER + records.tobytes() + _PG_COPY_TRAILER


class _GrowingIds:
    """Local id -> store id, an int64 array that grows by doubling."""

    def __init__(self) -> None:
        self._data = np.empty(1024, dtype=np.int64)
        self.size = 0

    def extend(self, ids: np.ndarray) -> None:
        needed = self.size + len(ids)
        if needed > len(self._data):
            grown = np.empty(max(needed, 2 * len(self._data)), dtype=np.int64)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : needed] = ids
        self.size = needed

    @property
    def array(self) -> np.ndarray:
        return self._data[: self.size]


class Writer:
    """Writes batches of a :class:`TermTable` into the store's transaction.

    It takes the store's write lock (``begin_write``) and then goes through the write
    primitives it shares with the store (:mod:`.ids`), on the store's session:
    ``write_datatypes`` (datatype ids, cached by the session), ``reserve_term_ids``
    (SQLite term numbering) and ``note_ids_written`` (so that a rollback makes the
    store forget ids of this transaction).
    """

    def __init__(self, store: WriteTarget, *, overlapped: bool = False) -> None:
        """``overlapped``: batches come from a parser in another process, so the
        writer has time to spare while the next batch is parsed.  Then a large load
        keeps the indexes whose inserts are cheap appends for new terms (sequential
        ids: ``ix_quads_spog``; ``ix_terms_hash`` is random but only per new term) and
        maintains them while it waits, instead of rebuilding them in the serial tail.
        """
        self.store = store
        self._rebuilt = _REBUILT_OVERLAPPED if overlapped else _REBUILT_ALL
        # The write lock (see SQLStore._begin_write): our term numbering (SQLite) and
        # the terms our quads are about to use (both) rely on being the only writer.
        self.conn: Connection = store.begin_write()
        self.session = store.session
        self.dialect = self.conn.dialect.name
        self.sqlite = self.dialect == "sqlite"
        self.raw: Any = self.conn.connection.driver_connection
        self.cursor: Any = self.raw.cursor()
        self.local_ids = _GrowingIds()
        self.quads_added = 0
        self.terms_added = 0
        self._graphs: set[int] = set()
        self._decided = False
        self._dropped: list[Index] = []
        self._temp_tables: set[str] = set()
        self._saved_pragmas: dict[str, Any] = {}
        self._copy_quads = True  # PostgreSQL: COPY straight into quads (see _pg_copy)
        self._pg_sequence: str | None = None  # PostgreSQL: the sequence of term ids
        # Whether terms new to this load may be stored already.  Not if the terms table
        # is empty on SQLite: nobody else can write until we commit.  (PostgreSQL's
        # concurrent writers can, unless a large load locks them out: _decide_rebuild.)
        self._lookup = not self.sqlite or self._scalar("SELECT 1 FROM terms LIMIT 1") is not None
        if self.sqlite:
            self._set_pragma("cache_size", -SQLITE_LOAD_CACHE_KIB)

    # -------------------------------------------------------------- helpers

    def _scalar(self, sql: str, params: Any = ()) -> Any:
        self.cursor.execute(sql, params)
        row = self.cursor.fetchone()
        return None if row is None else row[0]

    def _set_pragma(self, name: str, value: int) -> None:
        """Set a SQLite connection setting for the load; :meth:`restore_settings`
        puts the previous value back."""
        if name not in self._saved_pragmas:
            self._saved_pragmas[name] = self._scalar(f"PRAGMA {name}")
        self.cursor.execute(f"PRAGMA {name} = {int(value)}")

    def restore_settings(self) -> None:
        """Undo the connection settings of the load (after commit or rollback)."""
        for name, value in self._saved_pragmas.items():
            with suppress(Exception):
                self.raw.execute(f"PRAGMA {name} = {int(value)}")
        self._saved_pragmas.clear()

    def _temp_table(self, name: str, columns: str) -> None:
        if name in self._temp_tables:
            return
        if self.sqlite:
            self.cursor.execute(f"CREATE TEMP TABLE {name} ({columns})")
        else:
            self.cursor.execute(f"CREATE TEMP TABLE {name} ({columns}) ON COMMIT DROP")
        self._temp_tables.add(name)

    def _sqlite_insert(self, head: str, width: int, values: list[Any], tail: str = "") -> int:
        """Multi-row ``VALUES`` inserts of a flat list of ``values`` (:func:`..dialect.sqlite.insert_values`)."""
        return insert_values(self.cursor, head, width, values, tail)

    # --------------------------------------------------------------- batches

    def write(self, batch: Batch) -> None:
        """Store a batch: its new terms, then its quads.

        The first batch's ``expected_quads`` (the whole load's, estimated) decides
        whether to rebuild indexes (see :meth:`_decide_rebuild`).
        """
        if not self._decided:
            self._decide_rebuild(batch.expected_quads)
        self._map_terms(batch.new_terms, batch.quads, batch.rdf_type)
        if len(batch.quads):
            self._write_quads(self.local_ids.array[batch.quads])

    def _decide_rebuild(self, expected_quads: int) -> None:
        """Drop the secondary quad indexes if rebuilding them will be cheaper (SQLite only).

        Keeping an index costs a b-tree insert at a random place per new quad;
        rebuilding costs one sort of the whole table.  Measured (see ``bench/load.py``),
        the rebuild wins while the table holds fewer quads than the load brings.  A
        load into an empty ``terms`` table also rebuilds ``ix_terms_hash``: nothing is
        looked up by hash then, and the load's terms are distinct.
        """
        self._decided = True
        if expected_quads < REBUILD_MIN_QUADS:
            return
        limit = int(expected_quads * REBUILD_RATIO) + 1
        existing = self._scalar(f"SELECT count(*) FROM (SELECT 1 FROM quads LIMIT {limit}) AS q")
        terms_empty = self._scalar("SELECT 1 FROM terms LIMIT 1") is None
        if not self.sqlite:
            # No index is dropped on PostgreSQL: DROP INDEX locks the table against
            # readers until the load commits, and readers must never wait. The write
            # lock (SQLStore._begin_write) keeps other writers out, so terms that were
            # absent stay absent: nothing needs to be looked up.
            self._lookup = not terms_empty
            return
        drop_hash = terms_empty and "ix_terms_hash" in self._rebuilt
        if existing < limit:
            self._dropped += [ix for ix in quads_table.indexes if ix.name in self._rebuilt]
        if terms_empty:
            self._lookup = False
            if drop_hash:
                self._dropped += terms_table.indexes
        for index in self._dropped:
            self.conn.execute(DropIndex(index))

    def finish(self) -> None:
        """Rebuild dropped indexes, drop temporary tables, refresh statistics."""
        if self._dropped:
            for index in sorted(self._dropped, key=lambda ix: ix.name):
                self.conn.execute(CreateIndex(index))
            self._dropped = []
        if self.sqlite:
            for name in self._temp_tables:
                self.cursor.execute(f"DROP TABLE temp.{name}")
        self._temp_tables.clear()
        if self.quads_added:
            # A full ANALYZE: SQLite's sampled one (PRAGMA analysis_limit) reads the first
            # entries of each index only, and took predicates for 16 times as selective
            # as they are in the benchmark data.
            self.store.analyze()

    # ----------------------------------------------------------------- terms

    def _map_terms(
        self, new_terms: list[EncodedTerm], local_quads: np.ndarray, rdf_type: int | None
    ) -> None:
        """Give the batch's new local ids their store ids, inserting the new terms."""
        count = len(new_terms)
        if not count:
            return
        first_local = self.local_ids.size
        store_ids = np.full(count, -1, dtype=np.int64)
        if self._lookup:
            for index, term_id in self._existing_terms(new_terms).items():
                store_ids[index] = term_id
        missing = np.flatnonzero(store_ids < 0)
        if len(missing):
            # Number new terms predicates first, then classes, then graph names, then
            # the rest (as SQLStore._add_quads does): the terms repeated in most quads
            # get the smallest ids, which SQLite stores in one or two bytes.  Within a
            # rank, terms with a datatype or language come last, so that SQLite can
            # insert the others with fewer columns (see _sqlite_insert_terms).
            base = np.full(count, 3, dtype=np.int8)
            columns = local_quads - first_local
            graphs, predicates = columns[:, 0], columns[:, 2]
            base[graphs[graphs >= 0]] = 2
            if rdf_type is not None:
                classes = columns[:, 3][local_quads[:, 2] == rdf_type]
                base[classes[classes >= 0]] = 1
            base[predicates[predicates >= 0]] = 0  # later assignments are smaller
            typed = np.fromiter(
                (term[3] is not None or term[4] is not None for term in new_terms),
                dtype=np.int8,
                count=count,
            )
            rank = 2 * base + typed
            order = missing[np.argsort(rank[missing], kind="stable")]
            ids = self._reserve_ids(len(order))
            store_ids[order] = ids
            for index, term_id in self._insert_terms(new_terms, order, ids).items():
                store_ids[index] = term_id
        self.local_ids.extend(store_ids)

    def _existing_terms(self, new_terms: list[EncodedTerm]) -> dict[int, int]:
        """Index in ``new_terms`` -> id, for the terms the store already holds.

        The batch's hashes go into a temporary table that is joined to ``terms``: one
        statement instead of hundreds of ``IN`` lists.  Stored content is compared, so
        a different term under the same hash raises :class:`TermCollisionError`.
        """
        index_of = {term[0]: i for i, term in enumerate(new_terms)}
        if self.sqlite:
            self._temp_table("bulk_hashes", "hash INTEGER PRIMARY KEY")
            # In key order, the temporary b-tree is built by appends.
            self._sqlite_insert("INSERT INTO temp.bulk_hashes (hash)", 1, sorted(index_of))
            table = "temp.bulk_hashes"
        else:
            self._temp_table("bulk_hashes", "hash bigint")
            hashes = np.fromiter(index_of, dtype=np.int64, count=len(index_of))
            with self.cursor.copy("COPY bulk_hashes (hash) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(_pg_binary_int8_rows([hashes]))
            table = "bulk_hashes"
        self.cursor.execute(
            "SELECT t.hash, t.id, t.kind, t.value, t.datatype, t.lang "
            f"FROM {table} AS h JOIN terms AS t ON t.hash = h.hash"
        )
        rows = self.cursor.fetchall()
        self.cursor.execute(f"DELETE FROM {table}")
        found: dict[int, int] = {}
        for term_h, term_id, kind, value, dt_id, lang in rows:
            index = index_of[term_h]
            self._check_same(term_h, (kind, value, dt_id, lang), new_terms[index])
            found[index] = term_id
        return found

    def _check_same(self, term_h: int, stored: tuple, term: EncodedTerm) -> None:
        """Raise :class:`TermCollisionError` unless a stored row (datatype as id) holds
        ``term``."""
        kind, value, dt_id, lang = stored
        content = (kind, value, None if dt_id is None else datatype_iri(self.session, self.conn, dt_id), lang)
        wanted = term[1:]
        if not same_content(content, wanted):
            raise TermCollisionError(term_h, content, wanted)

    def _reserve_ids(self, count: int) -> np.ndarray:
        """``count`` new term ids, ascending."""
        if self.sqlite:
            # SQLite: the store numbers terms itself while it holds the write lock.
            first = reserve_term_ids(self.session, self.conn, count)
            return np.arange(first, first + count, dtype=np.int64)
        if self._pg_sequence is None:
            self._pg_sequence = self._scalar("SELECT pg_get_serial_sequence('terms', 'id')")
        # One statement takes all ids; unless concurrent writers took some in between,
        # they are consecutive, and only their range needs to come back.
        self.cursor.execute(
            "SELECT min(id), max(id) FROM "
            "(SELECT nextval(%s::regclass) AS id FROM generate_series(1, %s)) AS ids",
            (self._pg_sequence, count),
        )
        low, high = self.cursor.fetchone()
        if high - low + 1 == count:
            return np.arange(low, high + 1, dtype=np.int64)
        self.cursor.execute(
            "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", (self._pg_sequence, count)
        )
        return np.sort(np.array([row[0] for row in self.cursor.fetchall()], dtype=np.int64))

    def _insert_terms(
        self, new_terms: list[EncodedTerm], order: np.ndarray, ids: np.ndarray
    ) -> dict[int, int]:
        """Insert ``new_terms[order]`` with ``ids``; return index -> id for any term
        that turned out to be stored already (PostgreSQL: by a concurrent load)."""
        selected = [new_terms[i] for i in order.tolist()]
        hashes, kinds, values, datatypes, langs = zip(*selected, strict=True)
        dt_ids: dict[str | None, int | None] = {None: None}
        iris = {dt for dt in datatypes if dt is not None}
        if iris:
            dt_ids.update(write_datatypes(self.session, self.conn, iris))
        nums = [
            comparable_value(value, dt) if dt in COMPARABLE_DATATYPES else None
            for value, dt in zip(values, datatypes, strict=True)
        ]
        note_ids_written(self.session)
        dts = list(map(dt_ids.__getitem__, datatypes))
        if self.sqlite:
            self._sqlite_insert_terms(int(ids[0]), hashes, kinds, values, dts, langs, nums)
            fixes: dict[int, int] = {}
        else:
            rows = list(zip(ids.tolist(), hashes, kinds, values, dts, langs, nums, strict=True))
            fixes = self._pg_insert_terms(rows, new_terms, order)
        self.terms_added += len(selected) - len(fixes)
        geometries = [
            (int(ids[k]), values[k])
            for k, dt in enumerate(datatypes)
            if is_wkt(dt) and int(order[k]) not in fixes
        ]
        if geometries:  # a term in ``fixes`` was stored and indexed by another load
            index_literals(self.conn, geometries)
        return fixes

    def _sqlite_insert_terms(
        self,
        first_id: int,
        hashes: tuple[int, ...],
        kinds: tuple[int, ...],
        values: tuple[str, ...],
        dts: list[int | None],
        langs: tuple[str | None, ...],
        nums: list[float | None],
    ) -> None:
        """Insert terms numbered ``first_id, first_id + 1, ...``, in that order.

        The ids are left to ``AUTOINCREMENT``, which hands out exactly these numbers
        while we hold the write lock (checked after every statement), and the rows
        without datatype and language (most of them, all sorted first within their rank
        by :meth:`_map_terms`) leave out the three columns that are NULL for them:
        binding values is most of the cost of an insert.
        """
        split = 0
        # Rows with a datatype or language form runs after the plain ones of each rank;
        # insert maximal runs of each shape, in id order.
        count = len(hashes)
        next_id = first_id
        while split < count:
            plain = dts[split] is None and langs[split] is None
            end = split
            while end < count and (dts[end] is None and langs[end] is None) == plain:
                end += 1
            if plain:
                flat = list(
                    chain.from_iterable(
                        zip(hashes[split:end], kinds[split:end], values[split:end], strict=True)
                    )
                )
                self._sqlite_insert("INSERT INTO terms (hash, kind, value)", 3, flat)
            else:
                flat = list(
                    chain.from_iterable(
                        zip(
                            hashes[split:end],
                            kinds[split:end],
                            values[split:end],
                            dts[split:end],
                            langs[split:end],
                            nums[split:end],
                            strict=True,
                        )
                    )
                )
                self._sqlite_insert(
                    "INSERT INTO terms (hash, kind, value, datatype, lang, num)", 6, flat
                )
            next_id += end - split
            if self.cursor.lastrowid != next_id - 1:  # pragma: no cover - needs a bug
                raise RuntimeError(
                    f"term ids out of step: expected {next_id - 1}, got {self.cursor.lastrowid}"
                )
            split = end

    def _pg_copy(self, statement: str, write: Callable[[Any], None]) -> bool:
        """Run a ``COPY ... FROM STDIN`` straight into a table, inside a savepoint;
        ``False`` (and nothing written) if a row violated a unique index.

        Straight into the table is two to three times faster than through a temporary
        table and ``INSERT ... ON CONFLICT``, and a conflict is rare: new terms were
        looked up first (a conflict means a concurrent load stored one meanwhile), and
        a file rarely repeats quads across batches or holds stored ones.
        """
        from psycopg.errors import UniqueViolation

        self.cursor.execute("SAVEPOINT bulk_copy")
        try:
            with self.cursor.copy(statement) as copy:
                write(copy)
        except UniqueViolation:
            self.cursor.execute("ROLLBACK TO SAVEPOINT bulk_copy")
            return False
        self.cursor.execute("RELEASE SAVEPOINT bulk_copy")
        return True

    def _pg_insert_terms(
        self, rows: list[tuple], new_terms: list[EncodedTerm], order: np.ndarray
    ) -> dict[int, int]:
        """COPY new terms into ``terms``; if another transaction stored one of them
        meanwhile, go through a temporary table and ``ON CONFLICT DO NOTHING`` instead,
        and let the quads use the other transaction's id."""
        columns = "id, hash, kind, value, datatype, lang, num"

        def write_rows(copy: Any) -> None:
            for row in rows:
                copy.write_row(row)

        if self._pg_copy(f"COPY terms ({columns}) FROM STDIN", write_rows):
            return {}
        self._temp_table(
            "bulk_terms",
            "id bigint, hash bigint, kind smallint, value text, datatype integer, lang text, "
            "num double precision",
        )
        with self.cursor.copy(f"COPY bulk_terms ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        self.cursor.execute(
            f"INSERT INTO terms ({columns}) SELECT {columns} FROM bulk_terms "
            "ON CONFLICT (hash) DO NOTHING"
        )
        fixes: dict[int, int] = {}
        if self.cursor.rowcount != len(rows):
            self.cursor.execute(
                "SELECT t.hash, t.id, t.kind, t.value, t.datatype, t.lang "
                "FROM bulk_terms AS b JOIN terms AS t ON t.hash = b.hash AND t.id <> b.id"
            )
            index_of = {new_terms[i][0]: i for i in order.tolist()}
            for term_h, theirs, *stored in self.cursor.fetchall():
                self._check_same(term_h, tuple(stored), new_terms[index_of[term_h]])
                fixes[index_of[term_h]] = theirs
        self.cursor.execute("TRUNCATE bulk_terms")
        return fixes

    # ----------------------------------------------------------------- quads

    def _write_quads(self, rows: np.ndarray) -> None:
        """Insert store-id quads (columns g, s, p, o), sorted and without duplicates."""
        order = np.lexsort((rows[:, 3], rows[:, 2], rows[:, 1], rows[:, 0]))
        rows = rows[order]
        if len(rows) > 1:
            keep = np.empty(len(rows), dtype=bool)
            keep[0] = True
            np.any(rows[1:] != rows[:-1], axis=1, out=keep[1:])
            rows = rows[keep]
        written = np.unique(rows[:, 0]).tolist()
        self.session.touch(written)  # derived indexes: catalogue.graph.derived
        graphs = [g for g in written if g not in self._graphs]
        if self.sqlite:
            if graphs:
                self._sqlite_insert("INSERT INTO graphs (id)", 1, graphs, "ON CONFLICT DO NOTHING")
            self.quads_added += self._sqlite_insert(
                "INSERT INTO quads (g, s, p, o)", 4, rows.ravel().tolist(), "ON CONFLICT DO NOTHING"
            )
        else:
            if graphs:
                self.cursor.execute(
                    "INSERT INTO graphs (id) SELECT unnest(%s::bigint[]) ON CONFLICT DO NOTHING",
                    (graphs,),
                )
            data = _pg_binary_int8_rows([rows[:, i] for i in range(4)])
            copy_into = "COPY {} (g, s, p, o) FROM STDIN (FORMAT BINARY)"
            if self._copy_quads and self._pg_copy(
                copy_into.format("quads"), lambda copy: copy.write(data)
            ):
                self.quads_added += len(rows)
            else:
                # Some quads are stored already: from now on, skip those that are.
                self._copy_quads = False
                self._temp_table("bulk_quads", "g bigint, s bigint, p bigint, o bigint")
                with self.cursor.copy(copy_into.format("bulk_quads")) as copy:
                    copy.write(data)
                self.cursor.execute(
                    "INSERT INTO quads (g, s, p, o) SELECT g, s, p, o FROM bulk_quads "
                    "ON CONFLICT DO NOTHING"
                )
                self.quads_added += max(self.cursor.rowcount, 0)
                self.cursor.execute("TRUNCATE bulk_quads")
        self._graphs.update(graphs)
