"""Catalogue connections shared by the server's requests, in two lanes.

A :class:`~catalogue.api.Catalogue` holds one database connection and must not
be shared between threads, so the server keeps a fixed set of them and lends
one to each request that touches the database, on a worker thread (the event
loop never blocks on SQL). A request that cannot get one within
``queue_timeout`` gets HTTP 503 with ``Retry-After``: under overload the
server sheds requests instead of queueing without bound.

Requests, streamed responses and writes use separate lanes. A stream (an
export, a chunk listing) holds its connection for as long as the client takes
to read it, and a client can read as slowly as it likes; in a lane of their
own, slow readers can only delay other streams, never queries and pages.
Writes (SPARQL Update) take turns at the database's write lock anyway, and
one waiting for it (another process is harvesting) holds its connection
meanwhile: one connection of their own, so that waiting writes never take the
connections reads need.

Before each use the connection's transaction is ended, so every request sees
what harvests committed since the previous one (SQLite and PostgreSQL
connections otherwise keep reading their old snapshot).
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar

import anyio
from starlette.concurrency import run_in_threadpool

from catalogue.api import Catalogue

T = TypeVar("T")


class Overloaded(Exception):
    """No connection became free in time (HTTP 503)."""


def _fresh(cat: Catalogue) -> None:
    """End the connection's transaction: the next statement sees everything committed."""
    cat.store.rollback()


class _Lane:
    """``size`` connections and the semaphore that admits one borrower per connection."""

    def __init__(self, db: str | None, size: int) -> None:
        self.db = db
        self.size = size
        self.idle: queue.LifoQueue[Catalogue] = queue.LifoQueue()
        self.every: list[Catalogue] = []
        self.gate = asyncio.Semaphore(size)

    def open(self) -> None:
        """Connections are opened when first needed (a server starts at once, and one that
        is never asked for streams never opens their connections)."""

    def close(self) -> None:
        for cat in self.every:
            cat.close()
        self.every.clear()

    async def acquire(self, queue_timeout: float) -> Catalogue:
        try:
            await asyncio.wait_for(self.gate.acquire(), queue_timeout)
        except TimeoutError:
            raise Overloaded("the server is busy; try again shortly") from None
        try:
            return self.idle.get_nowait()
        except queue.Empty:  # fewer than ``size`` opened so far: the semaphore admits one more
            try:
                cat = await run_in_threadpool(Catalogue, self.db)
            except BaseException:
                self.gate.release()
                raise
            self.every.append(cat)
            return cat

    async def release(self, cat: Catalogue, *, ended: bool = False) -> None:
        """Give the connection back, its transaction ended on a worker thread (unless the
        borrower's work ``ended`` it there itself), even when cancelled."""
        with anyio.CancelScope(shield=True):
            try:
                if not ended:
                    await run_in_threadpool(_fresh, cat)
            finally:
                self.idle.put(cat)
                self.gate.release()


class CataloguePool:
    """Connections to one database: ``size`` for requests, ``stream_size`` for streamed responses."""

    #: What :meth:`run` raises when no connection is free (see :class:`catalogue.discovery.refresh.IndexRunner`).
    overloaded: type[Exception] = Overloaded

    def __init__(self, db: str | None, size: int, queue_timeout: float, stream_size: int = 2) -> None:
        self.db = db
        self.queue_timeout = queue_timeout
        self._requests = _Lane(db, size)
        self._streams = _Lane(db, stream_size)
        self._writes = _Lane(db, 1)

    @property
    def size(self) -> int:
        return self._requests.size

    def open(self) -> None:
        self._requests.open()
        self._streams.open()
        self._writes.open()

    def close(self) -> None:
        self._requests.close()
        self._streams.close()
        self._writes.close()

    async def run(self, work: Callable[[Catalogue], T], *, write: bool = False) -> T:
        """Run ``work(catalogue)`` on a worker thread with a connection of the request lane
        (of the write lane with ``write``).

        Raises :class:`Overloaded` when no connection is free within ``queue_timeout``.
        """
        lane = self._writes if write else self._requests
        cat = await lane.acquire(self.queue_timeout)
        try:
            def call() -> T:
                _fresh(cat)  # a fresh snapshot: see what was committed meanwhile
                try:
                    return work(cat)
                finally:
                    # Ended on this thread: no second hop to a worker thread (and, on
                    # PostgreSQL, no snapshot held) between the answer and the next borrower.
                    _fresh(cat)

            return await run_in_threadpool(call)
        finally:
            # A cancelled request's thread still runs ``call`` to its end (anyio does not
            # abandon it), and one that never started left no transaction open.
            await lane.release(cat, ended=True)

    async def stream(self, work: Callable[[Catalogue], Iterator[T]]) -> AsyncIterator[T]:
        """Iterate ``work(catalogue)`` on worker threads, holding a stream-lane connection until it ends.

        The connection is returned when the stream ends, fails or the client
        goes away, and only after the iterator was closed (releasing its
        cursor) on a worker thread.
        """
        cat = await self._streams.acquire(self.queue_timeout)
        try:
            def start() -> Iterator[T]:
                _fresh(cat)
                return iter(work(cat))

            items = await run_in_threadpool(start)
            try:
                sentinel = object()
                while True:
                    item = await run_in_threadpool(next, items, sentinel)
                    if item is sentinel:
                        break
                    yield item  # type: ignore[misc]
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    with anyio.CancelScope(shield=True):
                        await run_in_threadpool(close)
        finally:
            await self._streams.release(cat)
