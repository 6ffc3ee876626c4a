"""PostgreSQL's planner knows which objects go with which predicates
(:mod:`catalogue.graph.statistics`): a pattern naming both is estimated at its rows, and
the upgrade brings the statistics to catalogues made before them."""

from __future__ import annotations

import re

import pytest
from rdflib import Dataset, Literal, URIRef
from rdflib.namespace import RDF

from catalogue.graph.database import downgrade, make_engine, upgrade
from catalogue.graph.statistics import QUADS_STATISTICS, TARGET
from catalogue.graph.store import SQLStore

pytestmark = pytest.mark.postgres

EX = "http://x/"


def _target(engine) -> int | None:
    """The object column's statistics target, if the extended statistics are there."""
    with engine.connect() as conn:
        found = conn.exec_driver_sql("SELECT stxkind FROM pg_statistic_ext WHERE stxname = %(n)s",
                                     {"n": QUADS_STATISTICS}).first()
        target = conn.exec_driver_sql("SELECT attstattarget FROM pg_attribute WHERE attrelid = 'quads'::regclass "
                                      "AND attname = 'o'").scalar()
    if found is None:
        assert int(target) in (-1, 100) or target is None  # the default
        return None
    return int(target)


def test_a_predicate_and_its_object_are_estimated_together(postgres_url):
    store = SQLStore(postgres_url)
    g = Dataset(store=store).graph(URIRef(EX + "g"))
    # 299 datasets among 20,000 typed nodes of six statements each: the independent column
    # frequencies put (rdf:type, Dataset) at a sixth of its rows
    store.addN(quad for i in range(20_000) for quad in (
        (URIRef(f"{EX}n{i}"), RDF.type, URIRef(EX + ("Dataset" if i % 67 == 0 else f"C{i % 5}")), g),
        *((URIRef(f"{EX}n{i}"), URIRef(f"{EX}p{k}"), Literal(i * 10 + k), g) for k in range(5))))
    store.commit()
    conn = store.connection
    conn.exec_driver_sql("ANALYZE quads")
    ids = dict(conn.exec_driver_sql("SELECT value, id FROM terms WHERE value IN (%(a)s, %(b)s)",
                                    {"a": str(RDF.type), "b": EX + "Dataset"}).all())
    plan = conn.exec_driver_sql(f"EXPLAIN SELECT * FROM quads WHERE p = {ids[str(RDF.type)]} "
                                f"AND o = {ids[EX + 'Dataset']}").scalar()
    estimated = int(re.search(r"rows=(\d+)", plan).group(1))
    actual = int(conn.exec_driver_sql(f"SELECT count(*) FROM quads WHERE p = {ids[str(RDF.type)]} "
                                      f"AND o = {ids[EX + 'Dataset']}").scalar())
    assert actual == 299 and actual / 2 <= estimated <= actual * 2, plan
    store.close()


def test_the_upgrade_brings_the_statistics(postgres_url):
    engine = make_engine(postgres_url)
    try:
        upgrade(engine)
        assert _target(engine) == TARGET
        downgrade(engine, "0010_search_huge")
        assert _target(engine) is None
        upgrade(engine)
        assert _target(engine) == TARGET
    finally:
        engine.dispose()
