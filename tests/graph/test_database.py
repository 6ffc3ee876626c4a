"""Database URLs, engine settings and Alembic migrations."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from rdflib import RDF, XSD, BNode, Dataset, Literal, Namespace
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from sqlalchemy import Engine, inspect, text

from catalogue.graph.database import (
    DIRECTORY_DATABASE,
    current_revision,
    database_url,
    downgrade,
    ensure_schema,
    head_revision,
    make_engine,
    upgrade,
)
from catalogue.graph.schema import metadata
from catalogue.graph.spatial import POSTGIS_TABLES, include_name
from catalogue.graph.store import SQLStore
from catalogue.graph.terms import decode, encode

TABLES = {"datatypes", "terms", "quads", "graphs", "namespaces"}
TABLES_0001 = {"terms", "quads", "graphs", "namespaces"}

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
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60000  # lock_timeout()
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


def _comparison(conn):
    """A migration context comparing like migrations/env.py does: the spatial index's
    tables are database-specific DDL that schema.py leaves out (graph/spatial.py)."""
    return MigrationContext.configure(conn, opts={"include_name": include_name})


def test_migration_matches_schema_module(db_engine):
    """The hand-written revision and schema.py must describe the same tables."""
    upgrade(db_engine)
    with db_engine.connect() as conn:
        diffs = compare_metadata(_comparison(conn), metadata)
    assert diffs == []


def test_ensure_schema_is_idempotent(db_engine):
    ensure_schema(db_engine)
    with db_engine.begin() as conn:
        conn.execute(
            text("INSERT INTO namespaces (prefix, uri) VALUES ('ex', 'http://example.org/')")
        )
    ensure_schema(db_engine)
    ensure_schema(db_engine)
    assert current_revision(db_engine) == head_revision() == "0013_pgcrypto"
    with db_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM namespaces")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1


def test_downgrade_to_base_drops_tables(db_engine):
    upgrade(db_engine)
    downgrade(db_engine, "base")
    assert not TABLES & set(inspect(db_engine).get_table_names())
    # PostGIS's own table stays with the extension (downgrading never drops it).
    assert not set(inspect(db_engine).get_table_names()) - {"alembic_version"} - POSTGIS_TABLES
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


# ------------------------------------------------ upgrade of 0001 databases

EX = Namespace("http://example.org/")
G1, G2, EMPTY = EX.g1, EX.g2, EX.empty
B1 = BNode("N9dcd888a311c4e1b9ce6606c877481ab")
ODD_JSON = '{"b": 1,  "a": [1.0, 1e2],\n "c": "ü€😀"}'

#: What a 0001-era catalogue held; lexical forms that normalisation would change.
QUADS_0001 = [
    (EX.a, RDF.type, EX.Dataset, G1),
    (EX.a, EX.title, Literal("Alpha", lang="en-GB"), G1),
    (EX.a, EX.title, Literal("Alfa", lang="IT"), G1),
    (EX.a, EX.size, Literal("0010", datatype=XSD.integer, normalize=False), G1),
    (EX.a, EX.ratio, Literal("1.0", datatype=XSD.double, normalize=False), G1),
    (EX.a, EX.ratio, Literal("-INF", datatype=XSD.float, normalize=False), G1),
    (EX.a, EX.flag, Literal("1", datatype=XSD.boolean, normalize=False), G1),
    (
        EX.a,
        EX.modified,
        Literal("1970-01-02T00:00:00.5+01:00", datatype=XSD.dateTime, normalize=False),
        G1,
    ),
    (EX.a, EX.local, Literal("2024-02-29T12:00:00", datatype=XSD.dateTime, normalize=False), G1),
    (EX.a, EX.attributes, Literal(ODD_JSON, datatype=RDF.JSON, normalize=False), G1),
    (EX.a, EX.label, Literal("plain"), G1),
    (EX.a, EX.label, Literal("typed", datatype=XSD.string), G1),
    (EX.a, EX.label, Literal(""), G1),
    (EX.a, EX.shape, B1, G2),
    (B1, RDF.first, Literal("-5", datatype=XSD.int), G2),
    (B1, RDF.rest, RDF.nil, G2),
    (EX.a, RDF.type, EX.Dataset, G2),  # the same triple in two graphs
    (EX.b, EX.size, Literal("ten", datatype=XSD.integer, normalize=False), G2),
    (EX.b, EX.size, Literal("3.50", datatype=XSD.decimal, normalize=False), G2),
    (EX.c, EX.seeAlso, EX.a, DATASET_DEFAULT_GRAPH_ID),
]
NAMESPACES_0001 = {"ex": str(EX), "zarr": "https://w3id.org/zarr-catalogue/vocab#", "": "urn:x:"}


def _fill_0001(engine: Engine, quads=QUADS_0001, extra_quads=()) -> dict[str, list[tuple]]:
    """Write data the way the 0001 store did: hash ids, datatype IRIs as text."""
    terms: dict[int, tuple] = {}
    rows = []
    for quad in quads:
        ids = []
        for node in (quad[3], *quad[:3]):
            tid, *content = encode(node)
            terms[tid] = (tid, *content)
            ids.append(tid)
        rows.append(tuple(ids))
    rows += list(extra_quads)
    graphs = {row[0] for row in rows} | {encode(EMPTY)[0]}
    terms[encode(EMPTY)[0]] = encode(EMPTY)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO terms (id, kind, value, datatype, lang) "
                "VALUES (:id, :kind, :value, :datatype, :lang)"
            ),
            [
                dict(zip(("id", "kind", "value", "datatype", "lang"), t, strict=True))
                for t in terms.values()
            ],
        )
        conn.execute(
            text("INSERT INTO quads (g, s, p, o) VALUES (:g, :s, :p, :o)"),
            [dict(zip("gspo", row, strict=True)) for row in set(rows)],
        )
        conn.execute(text("INSERT INTO graphs (id) VALUES (:id)"), [{"id": g} for g in graphs])
        conn.execute(
            text("INSERT INTO namespaces (prefix, uri) VALUES (:p, :u)"),
            [{"p": p, "u": u} for p, u in NAMESPACES_0001.items()],
        )
    return _dump_0001(engine)


def _dump_0001(engine: Engine) -> dict[str, list[tuple]]:
    with engine.connect() as conn:
        return {
            table: sorted(
                (tuple(row) for row in conn.execute(text(f"SELECT * FROM {table}"))), key=repr
            )
            for table in ("terms", "quads", "graphs", "namespaces")
        }


def _exact(node) -> tuple:
    """A term with everything that must survive: type, lexical form, datatype, tag."""
    if isinstance(node, Literal):
        return ("literal", str(node), node.datatype, node.language)
    return (type(node).__name__, str(node))


def test_upgrade_from_0001_keeps_every_quad_exactly(db_engine, db_url):
    upgrade(db_engine, "0001_initial")
    assert current_revision(db_engine) == "0001_initial"
    _fill_0001(db_engine)

    store = SQLStore(db_url)  # upgrades through ensure_schema, like any user
    try:
        assert current_revision(db_engine) == head_revision()
        ds = Dataset(store=store)
        got = {tuple(_exact(n) for n in quad) for quad in ds.quads((None, None, None, None))}
        assert got == {tuple(_exact(n) for n in quad) for quad in QUADS_0001}
        assert len(got) == len(QUADS_0001)
        assert set(store.graph_ids()) == {G1, G2, EMPTY, DATASET_DEFAULT_GRAPH_ID}
        assert {p: str(u) for p, u in store.namespaces()} == NAMESPACES_0001
        # Pattern reads find terms by their (copied) hash.
        json_literal = Literal(ODD_JSON, datatype=RDF.JSON, normalize=False)
        matches = [triple for triple, _ in store.triples((None, None, json_literal), None)]
        assert matches == [(EX.a, EX.attributes, json_literal)]
        assert {g.identifier for g in store.contexts((EX.a, RDF.type, EX.Dataset))} == {G1, G2}

        conn = store.connection
        rows = conn.execute(
            text(
                "SELECT t.id, t.hash, t.kind, t.value, d.iri, t.lang, t.num "
                "FROM terms t LEFT JOIN datatypes d ON d.id = t.datatype"
            )
        ).all()
        # The old id is the hash; new ids are 1..n with the predicates first.
        ids = sorted(row[0] for row in rows)
        assert ids == list(range(1, len(rows) + 1))
        by_value = {(row[3], row[4]): row for row in rows}
        predicates = {str(q[1]) for q in QUADS_0001}
        assert {by_value[(p, None)][0] for p in predicates} == set(range(1, len(predicates) + 1))
        assert by_value[(str(EX.Dataset), None)][0] == len(predicates) + 1  # the class
        for _tid, term_hash, kind, value, datatype, lang, _num in rows:
            assert term_hash == encode(decode(kind, value, datatype, lang))[0]
        nums = {value: row[6] for (value, _dt), row in by_value.items()}
        assert nums["0010"] == 10.0
        assert nums["1.0"] == 1.0
        assert nums["-INF"] == float("-inf")
        assert nums["1"] == 1.0
        assert nums["1970-01-02T00:00:00.5+01:00"] == 82800.5
        assert nums["-5"] == -5.0
        assert nums["3.50"] == 3.5
        assert nums["2024-02-29T12:00:00"] == 1709208000.0  # zoneless: as if in UTC
        for no_num in ("ten", ODD_JSON, "plain", "typed", str(EX.a)):
            assert nums[no_num] is None
        assert set(store.datatype_ids()) == {
            str(dt) for dt in (XSD.integer, XSD.double, XSD.float, XSD.boolean, XSD.dateTime)
        } | {str(RDF.JSON), str(XSD.string), str(XSD.int), str(XSD.decimal)}

        # New writes continue after the highest id and reuse existing terms.
        highest = ids[-1]
        store.addN(
            [
                (EX.a, EX.title, Literal("Alpha", lang="en-gb"), EX.g3),  # known term
                (EX.new, EX.size, Literal("7", datatype=XSD.integer), EX.g3),
            ]
        )
        store.commit()
        new_ids = dict(
            conn.execute(text("SELECT value, id FROM terms WHERE id > :h"), {"h": highest}).all()
        )
        assert set(new_ids) == {str(EX.g3), str(EX.new), "7"}
        assert min(new_ids.values()) == highest + 1
        assert conn.execute(text("SELECT num FROM terms WHERE value = '7'")).scalar_one() == 7.0
        assert set(store.graph_triples(EX.g3)) == {
            (EX.a, EX.title, Literal("Alpha", lang="en-GB")),
            (EX.new, EX.size, Literal("7", datatype=XSD.integer)),
        }
    finally:
        store.close()

    with db_engine.connect() as conn:
        diffs = compare_metadata(_comparison(conn), metadata)
    assert diffs == []


def test_downgrade_to_0001_restores_the_old_rows(db_engine):
    upgrade(db_engine, "0001_initial")
    before = _fill_0001(db_engine)
    upgrade(db_engine)
    downgrade(db_engine, "0001_initial")
    assert current_revision(db_engine) == "0001_initial"
    assert _dump_0001(db_engine) == before
    tables = set(inspect(db_engine).get_table_names()) - POSTGIS_TABLES  # the extension's
    assert tables == TABLES_0001 | {"alembic_version"}
    indexes = {ix["name"] for ix in inspect(db_engine).get_indexes("quads")}
    assert {"ix_quads_spog", "ix_quads_posg", "ix_quads_ospg"} <= indexes
    upgrade(db_engine)  # and up again
    assert current_revision(db_engine) == head_revision()


def test_upgrade_refuses_to_drop_quads_of_an_inconsistent_database(db_engine):
    upgrade(db_engine, "0001_initial")
    missing = encode(EX.missing)[0]
    g1 = encode(G1)[0]
    before = _fill_0001(db_engine, extra_quads=[(g1, missing, missing, missing)])
    with pytest.raises(RuntimeError, match="inconsistent"):
        upgrade(db_engine)
    assert current_revision(db_engine) == "0001_initial"
    assert _dump_0001(db_engine) == before


def _sqlite_layout(engine) -> dict:
    """Tables, columns (name, type, notnull, pk), indexes (name, unique, columns)."""
    out: dict = {}
    with engine.connect() as conn:
        tables = [
            r[0]
            for r in conn.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        for t in tables:
            cols = [
                (r[1], r[2].upper(), r[3], r[5])
                for r in conn.exec_driver_sql(f'PRAGMA table_info("{t}")')
            ]
            idx = []
            for r in conn.exec_driver_sql(f'PRAGMA index_list("{t}")'):
                info = [c[2] for c in conn.exec_driver_sql(f'PRAGMA index_info("{r[1]}")')]
                idx.append(
                    (r[1] if not r[1].startswith("sqlite_autoindex") else "auto", r[2], info)
                )
            without_rowid = (
                "WITHOUT ROWID"
                in conn.exec_driver_sql(
                    "SELECT sql FROM sqlite_master WHERE name = ?", (t,)
                ).scalar_one()
            )
            out[t] = (cols, sorted(idx), without_rowid)
    return out


def test_private_in_memory_store_gets_the_migrated_schema(tmp_path) -> None:
    """``Dataset(store="catalogue")`` skips the migrations for its throw-away database;
    the tables it creates must be the ones the migrations build."""
    from catalogue.graph.database import current_revision, ensure_schema, head_revision

    memory = make_engine("sqlite://")
    ensure_schema(memory)
    migrated = make_engine(f"sqlite:///{tmp_path / 'm.db'}")
    ensure_schema(migrated)
    assert current_revision(memory) == head_revision() == current_revision(migrated)
    assert _sqlite_layout(memory) == _sqlite_layout(migrated)


def test_recorded_head_is_alembics_head():
    """Opening a catalogue compares with catalogue.migrations.HEAD instead of scanning the
    scripts through Alembic: a new migration must update it."""
    from catalogue.migrations import HEAD

    assert head_revision() == HEAD


def test_opening_an_up_to_date_catalogue_imports_no_alembic(tmp_path):
    """A server process or a query pays for Alembic only when a migration runs."""
    db = tmp_path / "c.db"
    subprocess.run([sys.executable, "-c", f"import catalogue; catalogue.open({str(db)!r}).close()"], check=True)
    probe = (f"import sys, catalogue; catalogue.open({str(db)!r}).close(); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_database_url_takes_a_pathlib_path(monkeypatch, tmp_path):
    """``catalogue.open(pathlib.Path(...))`` is what a Python user writes: a path object is a
    file, and a directory means the file inside it, as for a string."""
    monkeypatch.chdir(tmp_path)
    assert database_url(tmp_path / "a.db") == f"sqlite:///{tmp_path / 'a.db'}"
    assert database_url(Path("b.db")) == f"sqlite:///{tmp_path / 'b.db'}"
    assert database_url(tmp_path) == f"sqlite:///{tmp_path / DIRECTORY_DATABASE}"


def test_database_key_names_each_engine_once_without_its_password(tmp_path):
    """The per-database caches' key: the engine's URL, the password hidden, kept with the
    engine (a URL's hash would render it again)."""
    import gc

    from catalogue.graph import database

    pg = make_engine("postgresql+psycopg://user:secret@127.0.0.1:5432/one")
    lite = make_engine(f"sqlite:///{tmp_path / 'two.db'}")
    try:
        assert database.database_key(pg) == "postgresql+psycopg://user:***@127.0.0.1:5432/one"
        assert database.database_key(lite) == f"sqlite:///{tmp_path / 'two.db'}"
        assert database.database_key(pg) is database.database_key(pg)
        assert len(database._KEYS) >= 2
    finally:
        pg.dispose()
        lite.dispose()
    del pg, lite
    gc.collect()
    assert not [k for k in database._KEYS.values() if k.endswith("/one") or k.endswith("two.db")]
