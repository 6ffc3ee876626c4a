"""One harvest at a time per source, across processes and machines.

Two harvests of one source would both diff the source against the same previous
version and write it twice. A harvest therefore holds its source's lock for its
whole run (reading the store, validating, writing). Harvests of different sources
run side by side; their write transactions take turns at the database's write lock
(:meth:`catalogue.graph.store.SQLStore._begin_write`).

* PostgreSQL: a session-level advisory lock keyed by the source, on a connection of
  its own, so harvests on different machines sharing one server exclude each other.
  The server releases it when the process dies.
* SQLite: an exclusive ``flock`` on a file named after the source in
  ``<database>-harvest-locks/`` beside the database (named like SQLite's own ``-wal``
  and ``-shm`` files, so what removes those removes it). The kernel releases it when the
  process dies, even on SIGKILL. (SQLite on a network file system is unsupported.)
* An in-memory SQLite database belongs to one process: an in-process lock.

A lock that a dead process held is therefore never in the way of the next run. The
holder's identity (:class:`Holder`) goes into the run's provenance record, so that
``catalogue harvests`` can tell a run that is still going from one whose process is
gone (:func:`holder_alive`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine, make_url

from catalogue.errors import Busy


class HarvestLocked(Busy):
    """Another harvest of the same source is running (and we were told not to wait)."""

    def __init__(self, source: str, holder: str = "") -> None:
        self.source = source
        detail = f" ({holder})" if holder else ""
        super().__init__(
            f"another harvest of {source} is running{detail}; use --wait to wait for it"
        )


@dataclass(frozen=True)
class Holder:
    """Who holds a harvest lock: recorded with the run, checked by :func:`holder_alive`."""

    host: str
    pid: int
    #: ``proc:<host>:<pid>:<start ticks>`` (the process) or ``pg:<backend pid>:<lock key>``
    #: (the server session holding the advisory lock).
    token: str
    #: Whether the lock is still held (a PostgreSQL advisory lock goes with its
    #: connection, which a server restart or a network failure can end mid-harvest).
    still_held: Callable[[], bool] = field(default=lambda: True, compare=False, repr=False)


class HarvestLockLost(Busy):
    """The source's harvest lock went with its database connection before the harvest
    could write: another harvest of the source may have started, so nothing is written."""


#: Whether server process ``:p`` holds the advisory lock ``:k`` (a bigint key is split into
#: classid, the high half, and objid, the low half, with objsubid 1). pg_locks shows every
#: session's locks to every role, where pg_stat_activity hides other roles' details.
_HELD = text(
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND pid = :p AND ((classid::bigint << 32) | objid::bigint) = :k AND objsubid = 1)"
)


def _key(source: str) -> int:
    """A 63-bit advisory lock key for one source (distinct from the catalogue's fixed
    keys with overwhelming probability)."""
    digest = hashlib.blake2b(f"harvest|{source}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF_FFFF_FFFF


def _process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), so that a reused pid
    is not mistaken for the original process; empty where ``/proc`` does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def this_process() -> Holder:
    host, pid = socket.gethostname(), os.getpid()
    return Holder(host, pid, f"proc:{host}:{pid}:{_process_start(pid)}")


@contextlib.contextmanager
def harvest_lock(
    engine: Engine, source: str, *, wait: bool = False, poll: float = 0.2
) -> Iterator[Holder]:
    """Hold ``source``'s harvest lock for the ``with`` block; yield the :class:`Holder`.

    Without ``wait``, raise :class:`HarvestLocked` at once when another harvest of the
    source holds it; with ``wait``, wait until it is free (polling: a lock wait of the
    database would end after its lock timeout, and a harvest may run for hours).
    """
    url = make_url(str(engine.url))
    if url.get_backend_name() == "postgresql":
        with _advisory(engine, source, wait, poll) as holder:
            yield holder
        return
    database = url.database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        with _in_process(f"{id(engine)}|{source}", source, wait):
            yield this_process()
        return
    folder = Path(f"{_database_file(database)}-harvest-locks")
    folder.mkdir(exist_ok=True)
    name = hashlib.blake2b(source.encode(), digest_size=10).hexdigest()
    with _flock(folder / f"{name}.lock", source, wait, poll) as holder:
        yield holder


def _database_file(database: str) -> str:
    """The real path of a SQLite database (a ``file:`` URI's path; symbolic links resolved),
    so that every name of one file gets the same lock folder."""
    if database.startswith("file:"):
        database = database[len("file:"):].split("?", 1)[0]
        if database.startswith("//"):
            database = database[2:]
    return os.path.realpath(database)


_LOCAL_LOCKS: dict[str, threading.Lock] = {}
_LOCAL_GUARD = threading.Lock()


@contextlib.contextmanager
def _in_process(key: str, source: str, wait: bool) -> Iterator[None]:
    with _LOCAL_GUARD:
        lock = _LOCAL_LOCKS.setdefault(key, threading.Lock())
    if not lock.acquire(blocking=wait):
        raise HarvestLocked(source)
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def _advisory(engine: Engine, source: str, wait: bool, poll: float) -> Iterator[Holder]:
    key = _key(source)
    # Autocommit: the session's lock needs no transaction, and each statement is then one
    # round trip, not three (BEGIN, the statement, COMMIT): a harvest of a small store
    # took, released and checked its lock in nine.
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        while True:
            taken, backend, version = conn.execute(text(
                "SELECT pg_try_advisory_lock(:k), pg_backend_pid(), current_setting('server_version_num')"),
                {"k": key}).one()
            if taken:
                break
            if not wait:
                raise HarvestLocked(source)
            time.sleep(poll)
        # The lock lives as long as this idle connection: a server-wide idle session
        # timeout (PostgreSQL 14+) must not end it in the middle of a long harvest.
        if int(version) >= 140000:
            conn.execute(text("SET idle_session_timeout = 0"))
        local = this_process()

        def still_held() -> bool:
            try:
                return bool(conn.execute(_HELD, {"p": backend, "k": key}).scalar())
            except Exception:
                return False

        try:
            yield Holder(local.host, local.pid, f"pg:{backend}:{key}", still_held)
        finally:
            # A connection that died meanwhile (idle timeout, network) took the lock with it.
            with contextlib.suppress(Exception):
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
    finally:
        with contextlib.suppress(Exception):
            conn.close()


@contextlib.contextmanager
def _flock(path: Path, source: str, wait: bool, poll: float) -> Iterator[Holder]:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)  # the umask decides, as for the database
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise HarvestLocked(source, _described(os.pread(fd, 4096, 0))) from None
                time.sleep(poll)
        holder = this_process()
        record = {"source": source, "host": holder.host, "pid": holder.pid,
                  "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        try:
            yield holder
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _described(raw: bytes) -> str:
    """``pid 123 on host h since …`` from a lock file's record (empty if unreadable)."""
    try:
        record = json.loads(raw.decode("utf-8"))
        return f"pid {record['pid']} on host {record['host']} since {record['since']}"
    except (ValueError, KeyError, TypeError):
        return ""


def holder_alive(engine: Engine, token: str) -> bool | None:
    """Whether the holder a run recorded is still there: ``None`` when this process cannot
    tell (another host's process, with a SQLite catalogue)."""
    kind, _, rest = token.partition(":")
    if kind == "pg":
        backend, _, key = rest.partition(":")
        if make_url(str(engine.url)).get_backend_name() != "postgresql" or not key:
            return None
        # The key makes a reused backend pid no false positive.
        with engine.connect() as conn:
            held = conn.execute(_HELD, {"p": int(backend), "k": int(key)}).scalar()
        return bool(held)
    if kind == "proc":
        host, pid_text, start = rest.rsplit(":", 2)
        if host != socket.gethostname():
            return None
        pid = int(pid_text)
        if start and Path("/proc").is_dir():
            return _process_start(pid) == start
        return process_alive(pid)
    return None


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (one of another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
