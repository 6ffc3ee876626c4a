"""Writers of different graphs side by side on PostgreSQL: the shared write lock.

Harvests write with ``SQLStore.write_transaction(shared=True, graph=G)``: on PostgreSQL
they hold the writers' lock shared, and G's lock alone. Two such writers of different
graphs run at the same time; two of one graph, or a writer that needs the lock alone
(a load, an update, garbage collection), wait. Terms a shared writer orphans are
queued, not deleted, and collected by the next writer holding the lock alone. On
SQLite every writer is alone, whatever it asks.
"""

from __future__ import annotations

import threading
import time

import pytest
from rdflib import Literal, URIRef
from sqlalchemy import text

from catalogue.graph.store import SQLStore

G1, G2 = URIRef("urn:test:g1"), URIRef("urn:test:g2")


def _store(url: str) -> SQLStore:
    store = SQLStore(private=True)
    store.open(url)
    return store


def _writer(url: str, graph: URIRef, started: threading.Event, release: threading.Event,
            finished: list[float], shared: bool = True) -> None:
    store = _store(url)
    try:
        with store.write_transaction(shared=shared, graph=graph if shared else None):
            started.set()
            store.addN([(URIRef("urn:s"), URIRef("urn:p"), Literal(str(graph)), graph)])
            release.wait(10)
        finished.append(time.monotonic())
    finally:
        store.close()


def _first_writer_holding(url: str, terms: list[str]) -> tuple[threading.Thread, threading.Event]:
    """``terms`` stored beforehand (so that waiting is for the locks alone), then a writer
    of G1 that holds its transaction open until the event is set."""
    setup = _store(url)
    with setup.write_transaction():
        setup.addN([(URIRef("urn:s"), URIRef("urn:p"), Literal(t), URIRef("urn:test:other")) for t in terms])
    setup.close()
    started, release = threading.Event(), threading.Event()
    first = threading.Thread(target=_writer, args=(url, G1, started, release, []))
    first.start()
    assert started.wait(10)
    return first, release


def test_writers_of_different_graphs_do_not_wait(postgres_url):
    first, release = _first_writer_holding(postgres_url, ["two"])
    other = _store(postgres_url)
    began = time.monotonic()
    with other.write_transaction(shared=True, graph=G2):
        other.addN([(URIRef("urn:s"), URIRef("urn:p"), Literal("two"), G2)])
    took = time.monotonic() - began
    other.close()
    release.set()
    first.join(20)
    assert took < 0.5, took  # did not wait for the first writer


@pytest.mark.parametrize("case", ["same graph", "alone"])
def test_the_same_graph_or_a_writer_alone_waits(postgres_url, case):
    first, release = _first_writer_holding(postgres_url, [str(G1), "later"])
    other = _store(postgres_url)
    threading.Timer(0.8, release.set).start()
    began = time.monotonic()
    with other.write_transaction(shared=case == "same graph", graph=G1 if case == "same graph" else None):
        other.addN([(URIRef("urn:s"), URIRef("urn:p"), Literal("later"), G1)])
    took = time.monotonic() - began
    other.close()
    first.join(20)
    assert took >= 0.6, took


def test_terms_orphaned_by_a_shared_writer_are_collected_later(db_url):
    store = _store(db_url)
    try:
        with store.write_transaction():
            store.replace_graph(G1, [(URIRef("urn:s"), URIRef("urn:p"), Literal(f"v{i}")) for i in range(5)])
        with store.write_transaction(shared=True, graph=G1):
            store.replace_graph(G1, [(URIRef("urn:s"), URIRef("urn:p"), Literal("new"))])
        conn = store.connection
        values = set(conn.execute(text("SELECT value FROM terms WHERE kind = 3")).scalars())
        queued = conn.execute(text("SELECT count(*) FROM term_gc_queue")).scalar_one()
        store.rollback()
        if store.dialect_name == "postgresql":
            assert {f"v{i}" for i in range(5)} <= values and queued == 5  # left for later
        else:
            assert not values & {f"v{i}" for i in range(5)} and queued == 0  # SQLite: alone, collected
        assert store.collect_queued() == (5 if store.dialect_name == "postgresql" else 0)
        conn = store.connection
        assert not set(conn.execute(text("SELECT value FROM terms WHERE kind = 3")).scalars()) & {
            f"v{i}" for i in range(5)}
        assert conn.execute(text("SELECT count(*) FROM term_gc_queue")).scalar_one() == 0
        store.rollback()
    finally:
        store.close()


def test_a_queued_term_used_again_is_kept(postgres_url):
    store = _store(postgres_url)
    try:
        with store.write_transaction():
            store.replace_graph(G1, [(URIRef("urn:s"), URIRef("urn:p"), Literal("kept"))])
        with store.write_transaction(shared=True, graph=G1):
            store.replace_graph(G1, [])
        with store.write_transaction(shared=True, graph=G2):
            store.addN([(URIRef("urn:s"), URIRef("urn:p"), Literal("kept"), G2)])
        assert store.collect_queued(wait=True) >= 0
        assert (URIRef("urn:s"), URIRef("urn:p"), Literal("kept")) in set(store.graph_triples(G2))
    finally:
        store.close()


def test_collection_waits_or_skips_while_a_shared_writer_works(postgres_url):
    store = _store(postgres_url)
    with store.write_transaction():
        store.replace_graph(G1, [(URIRef("urn:s"), URIRef("urn:p"), Literal("x"))])
    with store.write_transaction(shared=True, graph=G1):
        store.replace_graph(G1, [])
    started, release, done = threading.Event(), threading.Event(), []
    writer = threading.Thread(target=_writer, args=(postgres_url, G2, started, release, done))
    writer.start()
    assert started.wait(10)
    try:
        assert store.collect_queued() == 0  # busy: left for later, at once
    finally:
        release.set()
        writer.join(20)
    assert store.collect_queued() == 1
    store.close()
