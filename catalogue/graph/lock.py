"""One harvest at a time per catalogue, across processes and machines.

Two harvests writing one catalogue would interleave their graph replacements
and provenance records. A harvest therefore holds a lock for its whole run:

* PostgreSQL: a session-level advisory lock (``pg_advisory_lock``) on a
  connection of its own, so harvests on different machines sharing one
  server exclude each other. The server releases it if the process dies.
* SQLite: an exclusive ``flock`` on ``<database>.harvest-lock`` beside the
  file. SQLite's own write lock only lasts one transaction (one source), so
  it cannot span a run; the kernel releases the flock if the process dies,
  even on SIGKILL. (SQLite on a network file system is unsupported anyway.)
* An in-memory SQLite database belongs to one process: no lock is needed.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine, make_url

from catalogue.errors import CatalogueError

#: The advisory lock key: a fixed 63-bit number derived from the project's name.
ADVISORY_KEY = int.from_bytes(b"zarrcatH", "big") & 0x7FFFFFFFFFFFFFFF


class HarvestLocked(CatalogueError):
    """Another harvest holds the catalogue's lock (and we were told not to wait)."""


@contextlib.contextmanager
def harvest_lock(engine: Engine, *, wait: bool = False, poll: float = 0.2) -> Iterator[None]:
    """Hold the catalogue's harvest lock for the ``with`` block.

    Without ``wait``, raise :class:`HarvestLocked` at once when another harvest
    holds it; with ``wait``, block until it is free.
    """
    url = make_url(str(engine.url))
    if url.get_backend_name() == "postgresql":
        with _advisory(engine, wait):
            yield
        return
    database = url.database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        yield
        return
    with _flock(f"{database}.harvest-lock", wait, poll):
        yield


@contextlib.contextmanager
def _advisory(engine: Engine, wait: bool) -> Iterator[None]:
    conn = engine.connect()
    try:
        if wait:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": ADVISORY_KEY})
        elif not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": ADVISORY_KEY}).scalar():
            raise HarvestLocked(
                f"another harvest is running on this catalogue ({_holder(conn)}); use --wait to wait for it"
            )
        conn.commit()
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": ADVISORY_KEY})
            conn.commit()
    finally:
        conn.close()


def _holder(conn: Any) -> str:
    row = conn.execute(text(
        "SELECT a.pid, a.client_addr, a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted "
        "AND ((l.classid::bigint << 32) | l.objid::bigint) = :k LIMIT 1"), {"k": ADVISORY_KEY}).first()
    if row is None:
        return "holder unknown"
    return f"server process {row.pid} from {row.client_addr or 'a local socket'}, connected since {row.backend_start:%Y-%m-%d %H:%M:%S}"


@contextlib.contextmanager
def _flock(path: str, wait: bool, poll: float) -> Iterator[None]:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
                    raise HarvestLocked(
                        f"another harvest is running on this catalogue (lock {path}, held by {holder}); "
                        "use --wait to wait for it"
                    ) from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
