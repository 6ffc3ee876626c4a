"""Many processes on one catalogue: reads never write, lock waits are bounded, and a
stress run of every kind of process side by side ends with no failure and complete
graphs (``bench/stress.py``), on SQLite and PostgreSQL, fresh and existing.

The write lock is held, where a test needs it held, by another connection taking it
the way every writer does (:meth:`SQLStore.begin_write`: SQLite ``BEGIN IMMEDIATE``,
the PostgreSQL writers' advisory lock), so a process that tried to write would wait.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
from collections.abc import Iterator

import httpx
import pytest

import catalogue
from bench import stress
from catalogue.graph.store import SQLStore
from tests.support.paths import (
    REPO,  # bench/ (not an installed package) is found through pyproject's pythonpath
)

EXAMPLE = REPO / "examples" / "cf_air_temperature_v3.zarr"
pytestmark = pytest.mark.slow


def cli(*args: str, db: str, timeout_s: str = "2") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CATALOGUE_DB": db, "CATALOGUE_LOCK_TIMEOUT": timeout_s}
    return subprocess.run([*stress.catalogue_command(), *args], env=env, capture_output=True,
                          text=True, timeout=300, check=False)


@contextlib.contextmanager
def write_lock_held(db: str) -> Iterator[None]:
    """Another connection holds the database's write lock for the block."""
    holder = SQLStore(db, private=True)
    try:
        holder.begin_write()
        yield
    finally:
        holder.close()


@pytest.fixture
def harvested(db_url: str) -> tuple[str, str]:
    """A catalogue with one hierarchy; returns (database URL, an array IRI)."""
    with catalogue.open(db_url) as cat:
        cat.harvest(str(EXAMPLE))
    return db_url, f"{EXAMPLE.absolute().as_uri()}/tas"


def test_reading_never_takes_the_write_lock(harvested: tuple[str, str], tmp_path: pathlib.Path) -> None:
    """Every read command (and the web server) answers while another process holds the
    write lock: none of them writes, so none waits (a 2 s lock timeout would fail it)."""
    db, array = harvested
    reads = [
        ("query", "SELECT ?a ?u WHERE { ?a a zarr:Array OPTIONAL { ?a zarr:units ?u } }"),
        ("query", f"DESCRIBE <{array}>", "--format", "turtle"),
        ("graphs",), ("harvests",), ("export", "--format", "nquads"), ("export", "--format", "turtle"),
        ("metadata", array), ("validate", array), ("resolve", array),
        ("read", array, "-o", str(tmp_path / "tas.npy")),
    ]
    with write_lock_held(db):
        for args in reads:
            done = cli(*args, db=db)
            assert done.returncode == 0, (args, done.stderr)
            assert "Traceback" not in done.stderr and "locked" not in done.stderr, (args, done.stderr)
        env = {**os.environ, "CATALOGUE_LOCK_TIMEOUT": "2"}
        with stress.server(db, env) as base:
            for path, params in [("/datasets", {"q": "air"}), ("/sparql", {"query": "ASK { ?s ?p ?o }"}),
                                 ("/node", {"iri": array}), ("/catalog", {}), ("/export", {}), ("/", {})]:
                response = httpx.get(f"{base}{path}", params=params, timeout=60,
                                     headers={"Accept": "text/turtle"} if path in ("/node", "/catalog") else {})
                assert response.status_code == 200, (path, response.status_code, response.text[:300])


def test_a_writer_gives_up_after_the_lock_timeout_with_one_line(harvested: tuple[str, str],
                                                                 tmp_path: pathlib.Path) -> None:
    db, _ = harvested
    data = tmp_path / "one.nt"
    data.write_text('<urn:x:s> <urn:x:p> "o" .\n', encoding="utf-8")
    with catalogue.open(db) as cat:
        before = cat.graphs()
    with write_lock_held(db):
        done = cli("load", str(data), "--graph", "urn:x:g", db=db, timeout_s="1")
        update = cli("harvest", "--full", str(EXAMPLE), db=db, timeout_s="1")
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "locked by another writer" in lines[0], lines
    assert "CATALOGUE_LOCK_TIMEOUT" in lines[0]
    assert update.returncode == 3 and "Traceback" not in update.stderr, update.stderr
    with catalogue.open(db) as cat:
        assert cat.graphs() == before  # nothing was written
        assert cat.harvests()[0]["outcome"] in ("succeeded", "failed", "interrupted")


def test_processes_opening_a_fresh_catalogue_at_once(db_url: str, tmp_path: pathlib.Path) -> None:
    """The first use migrates once, under a lock, while the others wait for it."""
    procs = []
    for i in range(6):
        args = ["graphs"] if i % 2 else ["query", "ASK { ?s ?p ?o }"]
        env = {**os.environ, "CATALOGUE_DB": db_url}
        procs.append(subprocess.Popen([*stress.catalogue_command(), *args], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and not err.strip(), err


@pytest.mark.parametrize("existing", [False, True], ids=["fresh", "existing"])
def test_eight_processes_for_twenty_seconds(db_url: str, tmp_path: pathlib.Path, existing: bool) -> None:
    """Harvests (waiting and not, same and different sources, --full), queries, exports,
    loads, validations, the web server with searches, SPARQL and SPARQL Update, and
    stores changing underneath: no failure, and complete graphs afterwards."""
    db = str(tmp_path / "catalogue.db") if db_url.startswith("sqlite") else db_url
    report = stress.run_stress(db, tmp_path / "work", processes=8, seconds=20.0, existing=existing, seed=14)
    summary = {k: report[k] for k in ("database", "catalogue", "processes", "seconds", "operations", "failures")}
    print(f"stress: {summary}")
    assert report["failures"] == 0, report["failed"]
    assert all(value is True for value in report["checks"].values()), report["checks"]
    assert set(report["by_operation"]) == {name for name, _ in stress.OPERATIONS}, report["by_operation"]


def test_an_update_that_cannot_get_the_write_lock_is_503(harvested: tuple[str, str]) -> None:
    db, _ = harvested
    update = {"update": "INSERT DATA { GRAPH <urn:x:g> { <urn:x:s> <urn:x:p> 1 } }"}
    auth = {"Authorization": f"Bearer {stress.ADMIN_TOKEN}"}
    with stress.server(db, {**os.environ, "CATALOGUE_LOCK_TIMEOUT": "1"}) as base:
        with write_lock_held(db):
            busy = httpx.post(f"{base}/sparql", data=update, headers=auth, timeout=60)
        assert busy.status_code == 503, busy.text
        assert busy.headers["Retry-After"] and "locked by another writer" in busy.json()["error"]
        done = httpx.post(f"{base}/sparql", data=update, headers=auth, timeout=60)
        assert done.status_code == 200, done.text


def test_a_large_load_on_postgresql_never_makes_readers_wait(postgres_url: str) -> None:
    """No index is dropped (DROP INDEX would lock readers out until the load commits)."""
    from sqlalchemy import text

    from catalogue.graph.database import make_engine
    from catalogue.graph.load import writer as bulk

    loader = SQLStore(postgres_url, private=True)
    reader = make_engine(postgres_url)
    try:
        writer = bulk.Writer(loader)
        writer._decide_rebuild(bulk.REBUILD_MIN_QUADS * 100)  # what a large first load decides
        with reader.connect() as conn:
            conn.execute(text("SET lock_timeout = '1s'"))
            assert conn.execute(text("SELECT count(*) FROM quads")).scalar_one() == 0
            assert conn.execute(text("SELECT count(*) FROM terms")).scalar_one() == 0
        assert writer._dropped == []
    finally:
        loader.close()
        reader.dispose()


_COUNTER = """PREFIX : <urn:x:>
DELETE { GRAPH :g { :c :count ?old } } INSERT { GRAPH :g { :c :count ?new } }
WHERE { GRAPH :g { :c :count ?old } BIND(?old + 1 AS ?new) }"""


def _increment(db: str, times: int) -> None:
    from rdflib import Dataset

    dataset = Dataset(store="catalogue")
    dataset.open(db)
    try:
        for _ in range(times):
            dataset.update(_COUNTER)
            dataset.commit()
    finally:
        dataset.close()


def test_concurrent_rdflib_updates_lose_nothing(db_url: str, tmp_path: pathlib.Path) -> None:
    """rdflib's Graph.update on the store takes the write lock before its WHERE is read."""
    import multiprocessing

    from rdflib import Dataset, Literal, URIRef

    db = str(tmp_path / "counter.db") if db_url.startswith("sqlite") else db_url
    dataset = Dataset(store="catalogue")
    dataset.open(db, create=True)
    dataset.add((URIRef("urn:x:c"), URIRef("urn:x:count"), Literal(0), URIRef("urn:x:g")))
    dataset.commit()
    dataset.close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_increment, args=(db, 15)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(300)
        assert worker.exitcode == 0
    dataset = Dataset(store="catalogue")
    dataset.open(db)
    try:
        values = [int(o) for o in dataset.graph(URIRef("urn:x:g")).objects(URIRef("urn:x:c"), URIRef("urn:x:count"))]
    finally:
        dataset.close()
    assert values == [30]


def test_a_harvest_whose_lock_connection_dies_writes_nothing(postgres_url: str) -> None:
    """The PostgreSQL advisory lock goes with its connection; another harvest of the
    source may then start, so the first one must not write."""
    from sqlalchemy import create_engine, text

    from catalogue.graph.lock import HarvestLockLost

    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")

    def cut_the_lock_connection(_nodes: int) -> None:
        with admin.connect() as conn:
            # this test's database only: other tests share the server
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_locks "
                              "WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() "
                              "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"))

    try:
        with catalogue.open(postgres_url) as cat:
            with pytest.raises(HarvestLockLost):
                cat.harvest(str(EXAMPLE), progress=cut_the_lock_connection)
            assert cat.graphs() == []
            cat.harvest(str(EXAMPLE))  # the next run goes ahead
            runs = cat.harvests()
            assert [r["outcome"] for r in runs] == ["succeeded", "interrupted"]
    finally:
        admin.dispose()
