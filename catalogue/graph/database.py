"""Database URLs, engines and schema migrations for the catalogue.

The catalogue runs on SQLite (a single file, the default) or PostgreSQL.  This module
hides the differences that matter for correctness:

* SQLite's Python driver does not really open a transaction before a ``SELECT`` or
  DDL statement, so by default a "rolled back" schema change or a half-replaced graph
  could already be on disk.  :func:`make_engine` switches the driver's own transaction
  handling off and lets SQLAlchemy emit ``BEGIN`` itself (SQLAlchemy's documented
  recipe), which makes ``commit``/``rollback`` real.
* Schema changes go through Alembic (:func:`upgrade`), so every database carries a
  revision and can be migrated in place.  Opening a database that is already at the
  head (the normal case) imports no Alembic: the head is recorded in
  :data:`catalogue.migrations.HEAD` (a test holds it to Alembic's own answer) and the
  database's revision is one ``SELECT``. Alembic and its script scan cost about 0.4 s
  per process, a fifth of the time ``catalogue serve`` may take to answer.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import StaticPool

from catalogue.errors import Busy, UsageError
from catalogue.migrations import HEAD

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "DEFAULT_DATABASE",
    "DIRECTORY_DATABASE",
    "ENV_VAR",
    "LOCK_TIMEOUT_ENV_VAR",
    "DatabaseBusy",
    "alembic_config",
    "begin_write_transaction",
    "busy_error",
    "current_revision",
    "database_key",
    "database_url",
    "downgrade",
    "ensure_schema",
    "head_revision",
    "is_memory_sqlite",
    "lock_timeout",
    "make_engine",
    "upgrade",
]

#: Environment variable that names the database when none is given explicitly.
ENV_VAR = "CATALOGUE_DB"
#: Database file used when neither an argument nor :data:`ENV_VAR` is given.
DEFAULT_DATABASE = "catalogue.db"
#: Name of the database file inside a directory given as the database (rdflib's
#: convention for file-backed stores, as with BerkeleyDB: ``store.open(directory)``).
DIRECTORY_DATABASE = "catalogue.db"
#: Environment variable: seconds a writer waits for another writer's lock before giving up.
LOCK_TIMEOUT_ENV_VAR = "CATALOGUE_LOCK_TIMEOUT"
#: Default of :data:`LOCK_TIMEOUT_ENV_VAR`: long enough for any harvest's write
#: transaction, short enough that a stuck writer is reported within the minute.
DEFAULT_LOCK_TIMEOUT = 60.0

# Execution option read by the SQLite "begin" hook: the migration connection takes the
# write lock up front (BEGIN IMMEDIATE) so two processes upgrading the same fresh file
# serialise instead of failing half-way.
_BEGIN_IMMEDIATE = "catalogue_sqlite_begin_immediate"
# Arbitrary constant key for the PostgreSQL advisory lock that serialises upgrades.
_PG_MIGRATION_LOCK = 0x63617461  # "cata"


def database_url(value: str | os.PathLike[str] | None = None) -> str:
    """Normalise a database location to a SQLAlchemy URL string.

    ``None`` (or an empty string) falls back to ``$CATALOGUE_DB`` and then to
    ``catalogue.db`` in the working directory.  A plain filesystem path becomes an
    absolute ``sqlite:///`` URL, so the database does not move when the process
    changes directory; an existing directory means the file
    :data:`DIRECTORY_DATABASE` inside it (rdflib opens file-backed stores on a
    directory).  PostgreSQL URLs are pointed at the psycopg 3 driver, the only
    PostgreSQL driver the catalogue depends on.
    """
    if isinstance(value, os.PathLike):  # a pathlib.Path: always a file, never a URL
        value = os.fspath(value)
        if not value:
            raise ValueError("the database path is empty")
        value = str(Path(value).expanduser().absolute())
    if not value:
        value = os.environ.get(ENV_VAR) or DEFAULT_DATABASE
    if "://" not in value:
        path = Path(value).expanduser().absolute()
        if path.is_dir():
            path = path / DIRECTORY_DATABASE
        return f"sqlite:///{path}"
    scheme, rest = value.split("://", 1)
    lowered = scheme.lower()
    if lowered in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    if lowered == "postgresql+psycopg" or lowered == "sqlite" or lowered.startswith("sqlite+"):
        return value
    raise ValueError(
        f"unsupported database URL scheme {scheme!r}: use a file path, sqlite://..., "
        "postgresql://... or postgresql+psycopg://..."
    )


def is_memory_sqlite(url: str | URL) -> bool:
    """True for SQLite URLs that name an in-memory database."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite":
        return False
    database = u.database or ""
    return (
        database in ("", ":memory:")
        or u.query.get("mode") == "memory"
        or ("mode=memory" in database)
    )


class DatabaseBusy(Busy):
    """Another writer kept the database locked for longer than the lock timeout.

    Nothing was written by the operation that gave up; trying again later is safe.
    """


def lock_timeout() -> float:
    """Seconds a writer waits for the database's write lock (``$CATALOGUE_LOCK_TIMEOUT``)."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        raise UsageError(
            f"{LOCK_TIMEOUT_ENV_VAR}={raw!r}: expected a number of seconds"
        ) from None
    if not 0 < seconds <= 86_400:
        raise UsageError(f"{LOCK_TIMEOUT_ENV_VAR}={raw!r}: expected seconds between 0 and 86400")
    return seconds


# SQLite result codes (the low byte of the extended code) that mean "locked by another
# connection", and PostgreSQL SQLSTATEs for lock_timeout, deadlocks and serialisation.
_SQLITE_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
_SQLITE_BUSY_SNAPSHOT = 517
_PG_BUSY_STATES = frozenset({"55P03", "40P01", "40001"})


def busy_error(exc: BaseException, url: str | URL | None = None, *, waited: bool = True) -> DatabaseBusy | None:
    """The :class:`DatabaseBusy` a driver error stands for, or ``None`` if it is another error.

    Lock waits end in driver errors (``database is locked``, ``lock timeout``) that say
    neither which database nor what to do; this gives them one line that does. A
    conflict that no wait could have avoided (a deadlock, a serialisation failure, a
    SQLite snapshot that another process wrote past; ``waited=False``) says so: the
    remedy is to try again, not to wait longer.
    """
    orig = getattr(exc, "orig", exc)
    code = getattr(orig, "sqlite_errorcode", None)
    state = getattr(orig, "sqlstate", None)
    if code is not None:
        busy = (code & 0xFF) in _SQLITE_BUSY_CODES
        waited = waited and code != _SQLITE_BUSY_SNAPSHOT
    else:
        busy = state in _PG_BUSY_STATES
        waited = waited and state == "55P03"
    if not busy:
        return None
    where = _shown(url) if url is not None else "the catalogue database"
    if not waited:
        return DatabaseBusy(
            f"{where}: another process wrote what this operation had read (a conflict between "
            f"two writers); nothing was changed, try again"
        )
    return DatabaseBusy(
        f"{where} is locked by another writer and stayed locked for {lock_timeout():g} s "
        f"(a harvest, load or update is writing); nothing was changed, try again later "
        f"or wait longer with {LOCK_TIMEOUT_ENV_VAR}=SECONDS"
    )


def database_key(engine: Engine) -> str:
    """Which database ``engine`` is on, as the per-database caches key it (its URL with the
    password hidden): rendered once per engine, where SQLAlchemy renders it afresh each
    time (1.2 us, three times for every compiled query; a URL's own hash renders it too,
    so it is no cheaper a key)."""
    key = _KEYS.get(engine)
    if key is None:
        key = _KEYS[engine] = engine.url.render_as_string(hide_password=True)
    return key


# An engine's URL never changes; the key goes with the engine.
_KEYS: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()


def _shown(url: str | URL) -> str:
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        return u.database or "the in-memory database"
    return u.render_as_string(hide_password=True)


def make_engine(url: str | URL, **kwargs: Any) -> Engine:
    """Create an engine with the settings the catalogue relies on.

    SQLite: WAL journal (readers never block the writer), ``synchronous=NORMAL`` (safe
    with WAL, much faster than FULL), a busy timeout of :func:`lock_timeout` instead of
    instant "database is locked" errors (set first: switching a new file to WAL needs
    a lock too), foreign keys off (the store keeps its own integrity and bulk
    deletes must not cascade), and real transactions (see the module docstring).  An
    in-memory database uses a single shared connection, since every new connection
    would otherwise see a different, empty database.

    PostgreSQL: ``pool_pre_ping`` so connections dropped by a server restart or an idle
    timeout are replaced instead of failing the next request, and ``lock_timeout`` so
    that no lock wait lasts longer than :func:`lock_timeout`.

    Extra keyword arguments go to :func:`sqlalchemy.create_engine`.
    """
    url = make_url(url)
    backend = url.get_backend_name()
    if backend == "sqlite":
        if is_memory_sqlite(url):
            kwargs.setdefault("poolclass", StaticPool)
            connect_args = dict(kwargs.pop("connect_args", {}))
            connect_args.setdefault("check_same_thread", False)
            kwargs["connect_args"] = connect_args
        engine = create_engine(url, **kwargs)
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        kwargs.setdefault("pool_pre_ping", True)
        # TCP keepalives: a session of a machine that vanished (and the harvest lock it
        # held) is ended within about a minute and a half, not the system's two hours.
        # Statements prepared when they run a second time on a connection (psycopg's
        # default is the sixth): a compiled SPARQL query has its terms inlined as ids, so
        # its plan is reused as it is, and a small query costs its planning (most of a
        # millisecond) once per connection instead of every time (docs/sparql.md).
        connect_args = {"keepalives": 1, "keepalives_idle": 60, "keepalives_interval": 10,
                        "keepalives_count": 3, "prepare_threshold": 1, **kwargs.pop("connect_args", {})}
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        _configure_postgres(engine)
        return engine
    raise ValueError(f"unsupported database backend {backend!r}")


#: Joined items PostgreSQL orders by itself, in each window of a statement's written order.
JOIN_COLLAPSE: Final = 6


def _configure_postgres(engine: Engine) -> None:
    """Let the planner order a compiled SPARQL query's joins in windows, on every connection.

    A basic graph pattern of n triple patterns is an n-way self-join written with
    explicit JOINs. PostgreSQL searches every order of up to ``join_collapse_limit``
    of them, a search that grows exponentially (eleven patterns: 440 ms of planning for
    18 ms of execution), and follows the written order beyond. So the SPARQL compiler
    writes them in a good order (:mod:`catalogue.graph.sparql.join_order`) and the
    planner reorders windows of :data:`JOIN_COLLAPSE` items. And no JIT compilation: a
    compiled query's many self-joins look
    expensive to the planner (costs over ``jit_above_cost``), and compiling them cost
    30 ms of a 180 ms query at ten million triples, for index probes that JIT does not
    speed up. And no parallel plans: a compiled statement whose rows came through a
    cursor never had one (PostgreSQL does not run a cursor's plan in parallel), and the
    same statements read at once got them, with a hash aggregate above the ``Gather``
    that now and then spilled its input into one batch per row (the benchmark's query 9
    at ten million triples: 0.2 s serial, 94 s in one run of three in parallel, on
    PostgreSQL 15). Set when the connection is made and committed, so that no
    rollback of a later transaction (the web server rolls back after every request)
    undoes it.
    """

    timeout_ms = int(lock_timeout() * 1000)

    @event.listens_for(engine, "connect")
    def _tune(dbapi_connection: Any, connection_record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"SET lock_timeout = {timeout_ms}")
        cursor.execute(f"SET join_collapse_limit = {JOIN_COLLAPSE}")
        cursor.execute(f"SET from_collapse_limit = {JOIN_COLLAPSE}")
        cursor.execute("SET jit = off")
        cursor.execute("SET max_parallel_workers_per_gather = 0")
        cursor.close()
        dbapi_connection.commit()


def _configure_sqlite(engine: Engine) -> None:
    timeout_ms = int(lock_timeout() * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Stop pysqlite from issuing (or skipping) BEGIN on its own; see _on_begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # The busy timeout first: turning a new file's journal into WAL takes a lock.
            cursor.execute(f"PRAGMA busy_timeout={timeout_ms}")
            _wal(cursor, timeout_ms / 1000)
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=OFF")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if conn.get_execution_options().get(_BEGIN_IMMEDIATE):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


def _wal(cursor: Any, timeout: float) -> None:
    """Turn the database's journal into WAL (a no-op once it is).

    Two connections turning a new file's journal into WAL at once can make one of them
    fail at once with "database is locked": each holds a shared lock and wants the
    other's gone, and SQLite breaks the tie without calling the busy handler. So the
    loser waits and tries again, within the same lock timeout as any other wait."""
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in _SQLITE_BUSY_CODES or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(2 * delay, 0.05)


def is_deadlock(exc: BaseException) -> bool:
    """Whether PostgreSQL broke a deadlock by failing this statement (SQLSTATE 40P01): the
    transaction was rolled back and may simply be tried again."""
    return getattr(getattr(exc, "orig", None), "sqlstate", None) == "40P01"


def begin_write_transaction(conn: Connection) -> None:
    """Begin a transaction on ``conn`` that holds the write lock from the start.

    On SQLite this is ``BEGIN IMMEDIATE``: a plain ``BEGIN`` only takes the write lock
    at the first write, and if another connection committed in between, the upgrade
    from reader to writer fails at once with "database is locked" (the busy timeout
    does not apply).  Taking the lock first makes concurrent writers queue up instead,
    and it makes everything the transaction reads (such as the highest term id)
    current until it ends.  PostgreSQL needs no special begin.
    """
    if conn.dialect.name != "sqlite":
        conn.begin()
        return
    conn.execution_options(**{_BEGIN_IMMEDIATE: True})
    try:
        conn.begin()
    finally:
        conn.execution_options(**{_BEGIN_IMMEDIATE: False})


def _migrations_path() -> str:
    return str(files("catalogue.migrations"))


def alembic_config() -> Config:
    """An Alembic configuration pointing at the migrations shipped in the package.

    No ini file is needed: ``script_location`` is the installed
    ``catalogue.migrations`` package, found with :mod:`importlib.resources`.
    """
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", _migrations_path())
    return config


def head_revision() -> str:
    """The newest revision shipped with this version of the catalogue (Alembic's answer)."""
    return _scripts_head()


@lru_cache(maxsize=1)
def _scripts_head() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships a revision
        raise RuntimeError("no Alembic revisions found in catalogue.migrations")
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or ``None`` for an empty database.

    Read as Alembic reads it (its ``alembic_version`` table, one row), without importing
    Alembic: see the module docstring.
    """
    with engine.connect() as conn:
        try:
            if not inspect(conn).has_table("alembic_version"):
                return None
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        finally:
            conn.rollback()
    if len(rows) > 1:  # branches: none ship with the catalogue; Alembic would refuse to run
        raise RuntimeError(f"the database has several Alembic heads: {', '.join(sorted(rows))}")
    return rows[0] if rows else None


#: Alembic runs a migration through module-level proxies (``alembic.context``,
#: ``alembic.op``) that each command installs for its duration: two threads migrating at
#: once would run each other's steps on each other's connections (seen as a 60 s lock
#: wait between the two). Processes have their own proxies; threads take turns here.
_ALEMBIC = threading.Lock()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database to ``revision`` in one transaction.

    Concurrent upgrades of the same database are serialised (an advisory lock on
    PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), and Alembic re-reads the revision
    inside the lock, so the loser of a race finds the work done instead of failing on
    "table already exists".
    """
    from alembic import command

    config = alembic_config()
    backend = engine.dialect.name
    try:
        with _ALEMBIC, engine.connect() as conn:
            if backend == "sqlite":
                conn.execution_options(**{_BEGIN_IMMEDIATE: True})
            with conn.begin():
                if backend == "postgresql":
                    conn.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
                    )
                config.attributes["connection"] = conn
                command.upgrade(config, revision)
    except OperationalError as exc:
        busy = busy_error(exc, engine.url)
        if busy is None:
            raise
        raise busy from None


def downgrade(engine: Engine, revision: str) -> None:
    """Migrate the database down to ``revision`` (``"base"`` removes everything)."""
    from alembic import command

    config = alembic_config()
    with _ALEMBIC, engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


def ensure_schema(engine: Engine) -> None:
    """Bring the database to the head revision unless it is already there.

    The check costs one small query, so it is cheap to call whenever a store opens.
    A private in-memory SQLite database (``rdflib.Dataset(store="catalogue")``) starts
    empty and dies with its engine, so it gets the head schema directly and is stamped
    with the head revision: running every migration would cost ~40 ms per store, which
    matters for code that makes many small stores, as with rdflib's Memory store.
    """
    try:
        revision = current_revision(engine)
    except OperationalError as exc:
        busy = busy_error(exc, engine.url)
        if busy is None:
            raise
        raise busy from None
    if revision == HEAD:
        return
    if revision is None and _private_memory(engine):
        _create_head_schema(engine)
        return
    upgrade(engine)


def _private_memory(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite" and engine.url.database in (None, "", ":memory:")


def _create_head_schema(engine: Engine) -> None:
    from .schema import metadata  # the head schema (tests check it matches the migrations)
    from .search_schema import create_search_indexes
    from .spatial import create_index
    from .statistics import create_statistics

    with engine.begin() as conn:
        metadata.create_all(conn)
        create_index(conn)
        create_search_indexes(conn)
        create_statistics(conn)
        conn.execute(
            text(
                "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
                "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
            )
        )
        conn.execute(text("INSERT INTO alembic_version VALUES (:v)"), {"v": HEAD})


@contextlib.contextmanager
def scratch_postgres_database(server_url: str, prefix: str = "catalogue_scratch", *,
                              template: str | None = None) -> Iterator[str]:
    """Create a uniquely named database on ``server_url``'s PostgreSQL server, yield its
    URL, and drop it afterwards (even with sessions still open).

    For tests and benchmarks that need a database of their own on a shared server.
    ``template`` names a database to copy (no one may be connected to it), as
    ``CREATE DATABASE ... TEMPLATE`` does: one with the extensions a DBA installs once
    (PostGIS's install script is half a second per database).
    """
    base = make_url(database_url(server_url))
    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            copy = f' TEMPLATE "{template}"' if template else ""
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"{copy}')
        try:
            yield base.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()
