"""Statements the store runs on the driver's own connection (a compiled query's rows, the
look-up of its constants, a DESCRIBE) fail as SQLAlchemy's would: a timeout is a
:class:`QueryTimeout`, nothing is logged as the query's fault, and the store answers
the next query."""

from __future__ import annotations

import itertools
import logging

import pytest
from rdflib import BNode, Literal, URIRef
from sqlalchemy.exc import OperationalError

import catalogue
from catalogue.errors import QueryTimeout
from catalogue.graph.dialect import dialect_for

ROOT, NEXT, G = URIRef("urn:root"), URIRef("urn:next"), URIRef("urn:g")
#: Blank nodes in one chain below the root: a description that takes a while to collect.
CHAIN = 60_000


def _chain(cat: catalogue.Catalogue) -> None:
    nodes = [ROOT] + [BNode(f"c{i}") for i in range(CHAIN)]
    cat.store.addN((a, NEXT, b, G) for a, b in itertools.pairwise(nodes))
    cat.store.addN([(ROOT, URIRef("urn:name"), Literal("root"), G)])
    cat.store.commit()


def test_a_describe_past_its_deadline_times_out_and_the_store_answers_on(db_url, caplog):
    with catalogue.open(db_url) as cat:
        _chain(cat)
        with caplog.at_level(logging.WARNING), pytest.raises(QueryTimeout):
            cat.answer(f"DESCRIBE <{ROOT}>", timeout=0.005)
        assert not [r for r in caplog.records if "failed" in r.getMessage()]
        answer = cat.answer(f"DESCRIBE <{ROOT}>", timeout=60)
        assert answer.graph is not None and len(answer.graph) == CHAIN + 1
        assert cat.answer("ASK { <urn:root> <urn:name> 'root' }").boolean is True


def test_a_driver_error_in_a_term_look_up_is_sqlalchemys(sqlite_url):
    with catalogue.open(sqlite_url) as cat:
        _chain(cat)
        conn = cat.store.connection
        conn.exec_driver_sql("SELECT 1")  # in a transaction, as a query's look-up is
        raw = conn.connection.driver_connection
        raw.set_progress_handler(lambda: 1, 1)  # interrupts the next statement at once
        try:
            with pytest.raises(OperationalError, match="interrupted"):
                list(dialect_for("sqlite").select_terms(conn, [1, 2, 3]))
        finally:
            raw.set_progress_handler(None, 0)
        cat.store.rollback()
        assert cat.query("ASK { <urn:root> <urn:name> 'root' }").askAnswer is True
