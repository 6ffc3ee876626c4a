"""Database URLs, engine settings and Alembic migrations."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from catalogue.graph.database import (
    current_revision,
    database_url,
    downgrade,
    ensure_schema,
    head_revision,
    make_engine,
    upgrade,
)
from catalogue.graph.schema import metadata

TABLES = {"terms", "quads", "graphs", "namespaces"}

# ----------------------------------------------------------------- database_url


def test_database_url_default_is_catalogue_db_in_cwd(monkeypatch, tmp_path):
    monkeypatch.delenv("CATALOGUE_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    assert database_url() == f"sqlite:///{tmp_path / 'catalogue.db'}"
    assert database_url("") == f"sqlite:///{tmp_path / 'catalogue.db'}"


def test_database_url_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CATALOGUE_DB", "postgres://u:pw@db.example/cat")
    assert database_url() == "postgresql+psycopg://u:pw@db.example/cat"
    monkeypatch.setenv("CATALOGUE_DB", str(tmp_path / "x.db"))
    assert database_url(None) == f"sqlite:///{tmp_path / 'x.db'}"


def test_database_url_argument_beats_environment(monkeypatch):
    monkeypatch.setenv("CATALOGUE_DB", "postgres://elsewhere/db")
    assert database_url("sqlite://") == "sqlite://"


def test_database_url_relative_path_becomes_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    url = database_url("data/cat.db")
    assert url == f"sqlite:///{tmp_path / 'data' / 'cat.db'}"
    assert Path(url.removeprefix("sqlite:///")).is_absolute()


def test_database_url_absolute_path():
    assert database_url("/var/lib/cat.db") == "sqlite:////var/lib/cat.db"


def test_database_url_home_is_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert database_url("~/cat.db") == f"sqlite:///{tmp_path / 'cat.db'}"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite://", "sqlite://"),
        ("sqlite:///relative.db", "sqlite:///relative.db"),
        ("sqlite:////abs/cat.db", "sqlite:////abs/cat.db"),
        ("sqlite+pysqlite:///x.db", "sqlite+pysqlite:///x.db"),
        ("postgresql://u@h:5432/db", "postgresql+psycopg://u@h:5432/db"),
        ("postgres://u:p@h/db?sslmode=require", "postgresql+psycopg://u:p@h/db?sslmode=require"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
    ],
)
def test_database_url_normalisation(given, expected):
    assert database_url(given) == expected


@pytest.mark.parametrize("given", ["mysql://u@h/db", "postgresql+psycopg2://u@h/db"])
def test_database_url_rejects_unsupported_schemes(given):
    with pytest.raises(ValueError, match="unsupported"):
        database_url(given)


# ------------------------------------------------------------------- engines


def test_sqlite_engine_pragmas(sqlite_url):
    engine = make_engine(sqlite_url)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 0
    finally:
        engine.dispose()


def test_sqlite_transactions_are_real(sqlite_url):
    """pysqlite alone would autocommit DDL; the engine must make rollback undo it."""
    engine = make_engine(sqlite_url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            conn.exec_driver_sql("INSERT INTO t VALUES (1)")
            conn.rollback()
        assert "t" not in inspect(engine).get_table_names()
        with engine.connect() as conn:
            conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
            conn.commit()
            conn.exec_driver_sql("INSERT INTO t VALUES (1)")
            # A SELECT belongs to the same transaction as the INSERT before it.
            assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar() == 1
            conn.rollback()
            assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar() == 0
    finally:
        engine.dispose()


def test_in_memory_sqlite_is_one_shared_database():
    engine = make_engine("sqlite://")
    try:
        ensure_schema(engine)
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) >= TABLES
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_postgres_engine_pings(postgres_url):
    engine = make_engine(database_url(postgres_url))
    try:
        assert engine.pool._pre_ping
        with engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()


# ---------------------------------------------------------------- migrations


def test_fresh_upgrade_creates_schema(db_engine):
    assert current_revision(db_engine) is None
    upgrade(db_engine)
    tables = set(inspect(db_engine).get_table_names())
    assert TABLES | {"alembic_version"} <= tables
    indexes = {ix["name"] for ix in inspect(db_engine).get_indexes("quads")}
    assert {"ix_quads_spog", "ix_quads_posg", "ix_quads_ospg"} <= indexes
    pk = inspect(db_engine).get_pk_constraint("quads")
    assert pk["constrained_columns"] == ["g", "s", "p", "o"]
    assert current_revision(db_engine) == head_revision()


def test_migration_matches_schema_module(db_engine):
    """The hand-written revision and schema.py must describe the same tables."""
    upgrade(db_engine)
    with db_engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diffs == []


def test_ensure_schema_is_idempotent(db_engine):
    ensure_schema(db_engine)
    with db_engine.begin() as conn:
        conn.execute(
            text("INSERT INTO namespaces (prefix, uri) VALUES ('ex', 'http://example.org/')")
        )
    ensure_schema(db_engine)
    ensure_schema(db_engine)
    assert current_revision(db_engine) == head_revision() == "0001_initial"
    with db_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM namespaces")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1


def test_downgrade_to_base_drops_tables(db_engine):
    upgrade(db_engine)
    downgrade(db_engine, "base")
    assert not TABLES & set(inspect(db_engine).get_table_names())
    assert current_revision(db_engine) is None
    upgrade(db_engine)
    assert current_revision(db_engine) == head_revision()


def test_concurrent_ensure_schema(db_url):
    """Two processes opening a fresh database at once must both succeed."""
    engines = [make_engine(db_url) for _ in range(3)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(engines))

    def run(engine):
        try:
            barrier.wait()
            ensure_schema(engine)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert current_revision(engines[0]) == head_revision()
    finally:
        for engine in engines:
            engine.dispose()
