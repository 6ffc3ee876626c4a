"""On PostgreSQL a statement that runs again on a connection is prepared, and stays so
when a read ends (``SQLStore.rollback`` ends a transaction that wrote nothing with
COMMIT: psycopg forgets its prepared statements at a ROLLBACK); a transaction that
wrote, or failed, is still rolled back."""

from __future__ import annotations

import psycopg
import pytest
from rdflib import Dataset, Literal, URIRef
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from catalogue.graph.store import SQLStore

pytestmark = pytest.mark.postgres

EX = "http://x/"
# a LIMIT within one batch: run as a plain statement (an open-ended SELECT is DECLAREd)
QUERY = "SELECT ?o WHERE { <http://x/s> <http://x/p> ?o } LIMIT 5"


def _prepared(store: SQLStore) -> list[str]:
    return [row[0] for row in store.connection.exec_driver_sql("SELECT statement FROM pg_prepared_statements")]


def test_a_query_stays_prepared_across_reads(postgres_url):
    store = SQLStore(postgres_url)
    ds = Dataset(store=store, default_union=True)
    ds.graph(URIRef(EX + "g")).add((URIRef(EX + "s"), URIRef(EX + "p"), Literal(1)))
    store.commit()
    for _ in range(3):  # each in a read transaction of its own, as the web server runs them
        assert [row[0] for row in ds.query(QUERY)] == [Literal(1)]
        store.rollback()
    prepared = _prepared(store)
    assert [sql for sql in prepared if "FROM quads" in sql], prepared
    store.close()


def test_a_write_or_a_failure_is_still_rolled_back(postgres_url):
    store = SQLStore(postgres_url)
    ds = Dataset(store=store, default_union=True)
    graph = ds.graph(URIRef(EX + "g"))
    graph.add((URIRef(EX + "s"), URIRef(EX + "p"), Literal(1)))
    store.rollback()  # a write: discarded
    assert len(store) == 0
    graph.add((URIRef(EX + "s"), URIRef(EX + "p"), Literal(2)))
    store.commit()
    with pytest.raises(DBAPIError):
        store.connection.exec_driver_sql("SELECT no_such_column FROM quads")
    store.rollback()  # a failed read: rolled back, and the connection usable again
    assert [row[0] for row in ds.query(QUERY)] == [Literal(2)]
    store.close()


def test_a_read_whose_connection_was_lost_is_rolled_back_and_the_store_reconnects(postgres_url):
    store = SQLStore(postgres_url)
    ds = Dataset(store=store, default_union=True)
    ds.graph(URIRef(EX + "g")).add((URIRef(EX + "s"), URIRef(EX + "p"), Literal(3)))
    store.commit()
    assert [row[0] for row in ds.query(QUERY)] == [Literal(3)]
    pid = store.connection.exec_driver_sql("SELECT pg_backend_pid()").scalar()
    with psycopg.connect(make_url(postgres_url).set(drivername="postgresql").render_as_string(hide_password=False),
                         autocommit=True) as killer:
        killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(DBAPIError):  # the server is gone mid-transaction
        store.connection.exec_driver_sql("SELECT 1")
    store.rollback()  # ends it (a COMMIT cannot): the next read reconnects
    assert [row[0] for row in ds.query(QUERY)] == [Literal(3)]
    store.close()
