"""PostgreSQL's compiled SELECTs of unknown size read through a server-side cursor whose
``DECLARE`` and first ``FETCH`` share one round trip (:mod:`catalogue.graph.sparql.pg_cursor`):
every row comes back, at and around the batch size; other queries run while one is read;
cursors read to the end are closed with the next one, abandoned ones at once, and none
outlives its transaction or disturbs the next."""

from __future__ import annotations

import gc

import pytest
from rdflib import Dataset, Literal, URIRef

from catalogue.graph.sparql import evaluate
from catalogue.graph.store import SQLStore

pytestmark = pytest.mark.postgres

P = URIRef("http://x/p")
G = URIRef("http://x/g")


@pytest.fixture
def store(postgres_url):
    s = SQLStore(postgres_url)
    ds = Dataset(store=s)
    g = ds.graph(G)
    for i in range(2_500):
        g.add((URIRef(f"http://x/s{i}"), P, Literal(i)))
    s.commit()
    yield s
    s.close()


def _select(store: SQLStore, limit_below: int) -> str:
    return f"SELECT ?s ?o WHERE {{ GRAPH <{G}> {{ ?s <{P}> ?o FILTER(?o < {limit_below}) }} }}"


def _open_cursors(store: SQLStore) -> int:
    # (the statement asking is a portal too: the unnamed one)
    return int(store.connection.exec_driver_sql("SELECT count(*) FROM pg_cursors WHERE name <> ''").scalar())


@pytest.mark.parametrize("rows", [0, 1, 999, 1_000, 1_001, 2_000, 2_500])
def test_every_row_comes_back_around_the_batch_size(store, rows):
    assert evaluate._FETCH == 1_000
    found = list(Dataset(store=store).query(_select(store, rows)))
    assert sorted(int(o) for _s, o in found) == list(range(rows))


def test_other_queries_run_while_one_is_read(store):
    ds = Dataset(store=store)
    seen = 0
    for s, o in ds.query(_select(store, 2_500)):
        if int(o) % 500 == 0:  # inside the loop, on the same connection
            assert [int(x) for (x,) in ds.query(f"SELECT ?o WHERE {{ GRAPH <{G}> {{ <{s}> <{P}> ?o }} }}")] == [int(o)]
        seen += 1
    assert seen == 2_500


def test_cursors_read_to_the_end_are_closed_with_the_next_and_abandoned_ones_at_once(store):
    ds = Dataset(store=store)
    for n in range(20):
        assert len(list(ds.query(_select(store, n)))) == n
        assert _open_cursors(store) <= 1  # the last one, closed by the next cursor or the transaction's end
    rows = iter(ds.query(_select(store, 2_500)))
    next(rows)
    assert _open_cursors(store) == 1  # the one being read (its DECLARE closed the last exhausted one)
    del rows
    gc.collect()
    assert _open_cursors(store) == 0  # abandoned: closed at once
    store.commit()
    assert _open_cursors(store) == 0


def test_no_cursor_outlives_its_transaction_or_disturbs_the_next(store):
    ds = Dataset(store=store)
    small = iter(ds.query(_select(store, 10)))  # whole in its first batch
    large = iter(ds.query(_select(store, 2_500)))
    next(large)
    abandoned = iter(ds.query(_select(store, 2_500)))
    next(abandoned)
    store.commit()
    assert len(list(small)) == 10  # its rows were read with its DECLARE
    with pytest.raises(RuntimeError, match="after commit"):
        list(large)
    del abandoned
    gc.collect()  # closing it now must not touch the new transaction
    assert len(list(ds.query(_select(store, 1_500)))) == 1_500
    assert len(list(ds.query(_select(store, 5)))) == 5
    store.commit()


def test_a_savepoint_rolled_back_takes_its_cursors_and_the_next_query_works(store):
    ds = Dataset(store=store)
    conn = store.connection
    savepoint = conn.begin_nested()
    assert len(list(ds.query(_select(store, 5)))) == 5  # read to its end inside the savepoint
    rows = iter(ds.query(_select(store, 2_500)))
    next(rows)
    savepoint.rollback()
    del rows
    gc.collect()  # the savepoint took its cursor: closing it must not abort the transaction
    assert len(list(ds.query(_select(store, 7)))) == 7
    assert _open_cursors(store) <= 1


def test_the_database_errors_are_sqlalchemys(store):
    from sqlalchemy.exc import OperationalError

    conn = store.connection
    conn.exec_driver_sql("SET LOCAL statement_timeout = 50")
    sorted_pairs = (f"SELECT ?a ?b WHERE {{ GRAPH <{G}> {{ ?a <{P}> ?x . ?b <{P}> ?y }} }} "
                    "ORDER BY ?x ?y")  # 6 million pairs sorted before the first row
    with pytest.raises(OperationalError, match="statement timeout"):
        list(Dataset(store=store).query(sorted_pairs))
    store.rollback()
    assert len(list(Dataset(store=store).query(_select(store, 3)))) == 3


def test_the_statement_texts_are_kept_safely_by_threads(store):
    import threading

    from catalogue.graph.sparql import pg_cursor

    conn = store.connection
    failures: list[BaseException] = []

    def compile_many(k: int) -> None:
        import random

        draw = random.Random(k)
        try:  # 300 statements through a cache of 256: evictions all the time
            for _ in range(5_000):
                pg_cursor._driver_sql(conn, f"SELECT {draw.randrange(300)} AS n WHERE 1 = :p")
        except BaseException as exc:
            failures.append(exc)

    import sys

    threads = [threading.Thread(target=compile_many, args=(k,)) for k in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between any two bytecodes, nearly
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures
