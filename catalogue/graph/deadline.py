"""Query time limits that stop the work itself, not just the wait for it.

A public SPARQL endpoint cannot simply stop waiting for a slow query: the
database would go on computing a cross product for minutes and the worker
thread would stay busy. :func:`query_deadline` stops the work wherever the
query spends its time:

1. **Inside the database.** SQLite: a progress handler on the raw ``sqlite3``
   connection, called every few thousand virtual-machine instructions,
   interrupts the running statement once the deadline has passed.
   PostgreSQL: ``statement_timeout`` is set with ``SET LOCAL`` semantics
   (``set_config(..., true)``) on the store's connection, so the server
   cancels a statement that runs too long and the setting can never leak past
   the store's transaction.
2. **In rdflib's evaluator, between statements.** :func:`check_deadline` is
   called where evaluation passes often: every row of
   :meth:`SQLStore.triples <catalogue.graph.store.SQLStore.triples>`, every
   algebra node handed to the SPARQL-to-SQL hook, every row of a compiled
   statement. It costs one context-variable read when no deadline is active.
3. **In pure-Python loops that touch none of those** (rdflib joining or
   aggregating in-memory solutions, a pathological parse): a watchdog thread
   raises an asynchronous exception in the query's thread shortly after the
   deadline (CPython's ``PyThreadState_SetAsyncExc``). Because such an
   exception may land anywhere, the store's connection is then reopened rather
   than trusted.

Every way out of a timed-out query raises :class:`~catalogue.errors.QueryTimeout`,
after the store's transaction has been rolled back (a cancelled PostgreSQL
statement aborts it), so the store (and the connection pool lending it) can go
on with the next query.
"""

from __future__ import annotations

import contextlib
import ctypes
import heapq
import itertools
import logging
import sys
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, Final, Protocol, TypeVar

from sqlalchemy import Engine, text
from sqlalchemy.engine import Connection

from catalogue.errors import QueryTimeout

__all__ = [
    "DeadlineStore",
    "QueryTimeout",
    "check_deadline",
    "query_deadline",
    "remaining",
    "run_with_deadline",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


class DeadlineStore(Protocol):
    """What a deadline needs of the store it limits (this module is a leaf: it imports
    no store, the store and the compiler call into it)."""

    @property
    def connection(self) -> Connection: ...

    @property
    def dialect_name(self) -> str: ...

    @property
    def engine(self) -> Engine: ...

    def rollback(self) -> None: ...

    def close(self, commit_pending_transaction: bool = False) -> None: ...

    def open(self, configuration: str, create: bool = False) -> Any: ...

#: SQLite virtual-machine instructions between two calls of the progress handler:
#: a call costs about a microsecond, the instructions tens of microseconds.
SQLITE_PROGRESS_STEPS: Final = 10_000

_ACTIVE: ContextVar[query_deadline | None] = ContextVar("catalogue_query_deadline", default=None)

# PostgreSQL: read the previous value and set the new one for the current
# transaction only (is_local = true); the target list is evaluated in order.
_PG_SET_TIMEOUT = text(
    "SELECT current_setting('statement_timeout'), set_config('statement_timeout', :ms, true)"
)
_PG_RESTORE_TIMEOUT = text("SELECT set_config('statement_timeout', :value, true)")
_PG_QUERY_CANCELED = "57014"  # SQLSTATE query_canceled (statement_timeout or a cancel)


def check_deadline() -> None:
    """Raise :class:`QueryTimeout` if the current thread's query is past its deadline.

    Cheap enough to call per row; a no-op outside :func:`query_deadline`.
    """
    active = _ACTIVE.get()
    if active is not None and time.monotonic() >= active.at:
        active.timed_out = True
        raise QueryTimeout(active.seconds)


def remaining() -> float | None:
    """Seconds left before the current query's deadline (``None`` without one)."""
    active = _ACTIVE.get()
    return None if active is None else max(0.0, active.at - time.monotonic())


class _Interrupted(BaseException):
    """Raised asynchronously in a query thread by the watchdog.

    A ``BaseException`` so that ``except Exception`` blocks in rdflib or
    SQLAlchemy do not swallow it on its way out.
    """


# ------------------------------------------------------------------ watchdog

if sys.implementation.name == "cpython":
    _SET_ASYNC_EXC: Any = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
        ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
    )
    _CLEAR_ASYNC_EXC: Any = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
        ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
    )
else:  # pragma: no cover - other interpreters: checks and database limits only
    _SET_ASYNC_EXC = _CLEAR_ASYNC_EXC = None


class _Watchdog:
    """One daemon thread interrupting the queries still running past deadline + grace.

    Deadlines wait in a heap; disarmed ones are skipped when they come up, so
    registering and finishing a query cost a heap push and a flag, not a thread.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, query_deadline]] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: query_deadline, at: float) -> None:
        with self._cond:
            heapq.heappush(self._heap, (at, next(self._seq), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="catalogue-query-watchdog", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and not self._heap[0][2].armed:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    wait = self._heap[0][0] - time.monotonic()
                    if wait <= 0:
                        deadline = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(wait)
            deadline.interrupt()


_WATCHDOG = _Watchdog()


def _grace(seconds: float) -> float:
    """How long after the deadline the watchdog steps in: long enough for the
    database limits and the in-thread checks, the clean ways out, to act first."""
    return min(2.0, max(0.25, seconds / 10))


# ------------------------------------------------------------------ the limit


class query_deadline:  # a class (not @contextmanager) so __exit__ controls every exit path
    """``with query_deadline(store, seconds):`` run a query on ``store`` for at most ``seconds``.

    Raises :class:`QueryTimeout` out of the ``with`` block when the work inside
    ran out of time; the store's transaction is then rolled back (and, if the
    watchdog had to interrupt Python code, the store's connection reopened).
    On any other error inside the block the transaction is rolled back too,
    since a PostgreSQL transaction may be aborted by then. ``seconds`` of
    ``None`` or ``0`` means no limit. Everything inside must run on the thread
    that entered the block (the store is single-threaded anyway); deadlines do
    not nest.
    """

    def __init__(self, store: DeadlineStore, seconds: float | None) -> None:
        self.store = store
        self.seconds = float(seconds or 0)
        self.at = float("inf")
        self.timed_out = False
        self.armed = False
        self._interrupted = False
        self._lock = threading.Lock()
        self._thread_id = 0
        self._token: Token[query_deadline | None] | None = None
        self._dialect = ""
        self._sqlite: Any = None
        self._pg_previous: str | None = None

    # -------------------------------------------------------------- enter/exit

    def __enter__(self) -> query_deadline:
        if self.seconds <= 0:
            return self
        if _ACTIVE.get() is not None:
            raise RuntimeError("query deadlines do not nest")
        self.at = time.monotonic() + self.seconds
        self._dialect = self.store.dialect_name
        if self._dialect == "sqlite":
            raw = self.store.connection.connection.driver_connection
            raw.set_progress_handler(self._sqlite_progress, SQLITE_PROGRESS_STEPS)
            self._sqlite = raw
        elif self._dialect == "postgresql":
            ms = min(2_147_483_647, max(1, int(self.seconds * 1000)))  # PostgreSQL int range
            row = self.store.connection.execute(_PG_SET_TIMEOUT, {"ms": f"{ms}ms"}).one()
            self._pg_previous = str(row[0])
        self._token = _ACTIVE.set(self)
        self._thread_id = threading.get_ident()
        if _SET_ASYNC_EXC is not None:
            with self._lock:
                self.armed = True
            _WATCHDOG.watch(self, self.at + _grace(self.seconds))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if self.seconds <= 0:
            return False
        try:
            self._disarm()
        except _Interrupted:
            # Delivered in the instant between the block's end and the disarm.
            self._disarm()
            exc_type, exc = _Interrupted, _Interrupted()
        self._cleanup(failed=exc_type is not None)
        if exc_type is None:
            return False
        assert exc is not None
        if isinstance(exc, QueryTimeout):
            return False
        if self._interrupted or self.timed_out or self._is_timeout(exc):
            raise QueryTimeout(self.seconds) from (None if isinstance(exc, _Interrupted) else exc)
        return False

    def _disarm(self) -> None:
        """Stop the watchdog from interrupting this thread, and drop an interruption
        it may have scheduled that has not been delivered yet."""
        with self._lock:
            if self.armed:
                self.armed = False
                if self._interrupted and _CLEAR_ASYNC_EXC is not None:
                    _CLEAR_ASYNC_EXC(self._thread_id, None)

    def _cleanup(self, *, failed: bool) -> None:
        """Remove the database limits and, after a failure, end the transaction."""
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        store = self.store
        if self._sqlite is not None:
            with contextlib.suppress(Exception):  # closed if the connection was dropped
                self._sqlite.set_progress_handler(None, 0)
            self._sqlite = None
        if self._interrupted:
            self._reopen()
            return
        if failed:
            try:
                store.rollback()
            except Exception:
                log.warning("rollback after a failed query failed; reopening the store", exc_info=True)
                self._reopen()
            return
        if self._dialect == "postgresql" and self._pg_previous is not None:
            try:
                store.connection.execute(_PG_RESTORE_TIMEOUT, {"value": self._pg_previous})
            except Exception:
                log.warning("could not restore statement_timeout; reopening the store", exc_info=True)
                self._reopen()

    def _reopen(self) -> None:
        """Replace the store's connection: after an asynchronous interruption its
        state (SQLAlchemy's, the driver's) cannot be trusted."""
        store = self.store
        url = store.engine.url.render_as_string(hide_password=False)
        with contextlib.suppress(Exception):
            store.close()
        store.open(url)

    # ---------------------------------------------------------------- triggers

    def _sqlite_progress(self) -> int:
        if time.monotonic() >= self.at:
            self.timed_out = True
            return 1  # SQLite aborts the statement: OperationalError "interrupted"
        return 0

    def interrupt(self) -> None:
        """Called by the watchdog: raise :class:`_Interrupted` in the query's thread."""
        with self._lock:
            if not self.armed or self._interrupted:
                return
            self._interrupted = True
            self.timed_out = True
            _SET_ASYNC_EXC(self._thread_id, _Interrupted)

    def _is_timeout(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the database stopping the statement for this deadline."""
        if time.monotonic() >= self.at:
            return True
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if getattr(current, "sqlstate", None) == _PG_QUERY_CANCELED:
                return True
            current = getattr(current, "orig", None) or current.__cause__ or current.__context__
        return False


def run_with_deadline(store: DeadlineStore, seconds: float | None, work: Callable[[], T]) -> T:
    """``work()`` under :class:`query_deadline`, also safe in the one instant the
    ``with`` statement cannot cover: the watchdog's interruption landing as the
    block is being left, before ``__exit__`` has disarmed it."""
    guard = query_deadline(store, seconds)
    try:
        with guard:
            return work()
    except _Interrupted:
        guard._disarm()
        guard._cleanup(failed=True)
        raise QueryTimeout(guard.seconds) from None
