"""A fixed set of catalogue connections shared by the server's requests.

A :class:`~catalogue.api.Catalogue` holds one database connection and must not
be shared between threads, so the server keeps ``workers`` of them and lends
one to each request that touches the database, on a worker thread (the event
loop never blocks on SQL). A request that cannot get one within
``queue_timeout`` gets HTTP 503 with ``Retry-After``: under overload the
server sheds requests instead of queueing without bound.

Before each use the connection's transaction is ended, so every request sees
what harvests committed since the previous one (SQLite and PostgreSQL
connections otherwise keep reading their old snapshot).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar

from starlette.concurrency import run_in_threadpool

from catalogue.api import Catalogue

T = TypeVar("T")


class Overloaded(Exception):
    """No connection became free in time (HTTP 503)."""


class CataloguePool:
    """``size`` Catalogue connections to one database, lent one request at a time."""

    def __init__(self, db: str | None, size: int, queue_timeout: float) -> None:
        self.db = db
        self.size = size
        self.queue_timeout = queue_timeout
        self._idle: queue.LifoQueue[Catalogue] = queue.LifoQueue()
        self._all: list[Catalogue] = []
        self._gate = asyncio.Semaphore(size)

    def open(self) -> None:
        for _ in range(self.size):
            cat = Catalogue(self.db)
            self._all.append(cat)
            self._idle.put(cat)

    def close(self) -> None:
        for cat in self._all:
            cat.close()
        self._all.clear()

    @contextlib.contextmanager
    def _borrow(self) -> Iterator[Catalogue]:
        cat = self._idle.get_nowait()  # the semaphore guarantees one is idle
        try:
            cat.store.rollback()  # a fresh snapshot: see what was committed meanwhile
            yield cat
        finally:
            try:
                cat.store.rollback()
            finally:
                self._idle.put(cat)

    async def run(self, work: Callable[[Catalogue], T]) -> T:
        """Run ``work(catalogue)`` on a worker thread with a connection of the pool.

        Raises :class:`Overloaded` when no connection is free within ``queue_timeout``.
        """
        try:
            await asyncio.wait_for(self._gate.acquire(), self.queue_timeout)
        except TimeoutError:
            raise Overloaded("the server is busy; try again shortly") from None
        try:
            def call() -> T:
                with self._borrow() as cat:
                    return work(cat)

            return await run_in_threadpool(call)
        finally:
            self._gate.release()

    async def stream(self, work: Callable[[Catalogue], Iterator[T]]) -> AsyncIterator[T]:
        """Iterate ``work(catalogue)`` on worker threads, holding one connection until it ends.

        For streamed responses (exports): the connection is lent for the whole
        stream and returned when the stream ends, fails or the client goes away.
        """
        try:
            await asyncio.wait_for(self._gate.acquire(), self.queue_timeout)
        except TimeoutError:
            raise Overloaded("the server is busy; try again shortly") from None
        try:
            with self._borrow() as cat:
                items = await run_in_threadpool(lambda: iter(work(cat)))
                try:
                    sentinel = object()
                    while True:
                        item = await run_in_threadpool(next, items, sentinel)
                        if item is sentinel:
                            break
                        yield item  # type: ignore[misc]
                finally:
                    # A stream cut short (the client went away) must release its cursor
                    # before the connection goes back to the pool.
                    close = getattr(items, "close", None)
                    if close is not None:
                        await run_in_threadpool(close)
        finally:
            self._gate.release()
