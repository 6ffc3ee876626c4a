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


def _lookup_plan(store: SQLStore) -> str:
    hashes = [h for (h,) in store.connection.exec_driver_sql("SELECT hash FROM terms ORDER BY id LIMIT 200")]
    plan = store.connection.exec_driver_sql(
        "EXPLAIN SELECT hash, id, kind, value, datatype, lang FROM terms WHERE hash = ANY(%s::bigint[])",
        (hashes,)).scalars().all()
    store.rollback()
    return "\n".join(plan)


def test_statistics_follow_a_catalogue_that_grows(postgres_url):
    """A catalogue filled by harvests from empty: without statistics, the harvest's term
    lookups (``hash = ANY(...)``) were planned as scans of the whole ``terms`` table, each
    slower as it grew (autovacuum, a minute away at best, is off on some servers).
    ``analyze_grown`` refreshes the statistics of the tables that grew by half since
    their last, and only those; the lookups use the index."""
    store = SQLStore(postgres_url)
    g = Dataset(store=store).graph(URIRef(EX + "g"))
    store.addN((URIRef(f"{EX}s{i}"), RDF.value, Literal(f"value {i}"), g) for i in range(20_000))
    store.commit()
    assert "Seq Scan on terms" in _lookup_plan(store)  # what a harvest met
    store._grown_checked = float("-inf")
    grown = store.analyze_grown()
    assert {"terms", "quads"} <= set(grown)
    plan = _lookup_plan(store)
    assert "ix_terms_hash" in plan and "Seq Scan" not in plan, plan
    assert store.analyze_grown() == []  # asked again at once: not even looked at
    store._grown_checked = float("-inf")
    assert store.analyze_grown() == []  # nothing grew since
    store.addN((URIRef(f"{EX}t{i}"), RDF.value, Literal(f"other {i}"), g) for i in range(20_000))
    store.commit()
    store._grown_checked = float("-inf")
    assert {"terms", "quads"} <= set(store.analyze_grown())
    store.close()


def test_a_harvest_refreshes_the_statistics_it_outgrew(postgres_url, tmp_path):
    """``catalogue harvest`` of a store into a new catalogue leaves its tables analysed."""
    import catalogue
    from tests.support import stores

    root = stores.big_v3_hierarchy(tmp_path / "big", n_arrays=300, n_groups=3)
    with catalogue.open(postgres_url) as cat:
        cat.harvest(str(root))
        analysed = dict(cat.store.connection.exec_driver_sql(
            "SELECT c.relname, c.relpages FROM pg_class c WHERE c.relname IN ('terms', 'quads')").all())
        cat.store.rollback()
    assert analysed["terms"] > 0 and analysed["quads"] > 0, analysed


def _quads_read(plan: dict) -> int:
    """Rows the scans of ``quads`` in an EXPLAIN ANALYZE plan gave, in all their loops."""
    own = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1) if plan.get("Relation Name") == "quads" else 0
    return own + sum(_quads_read(child) for child in plan.get("Plans", ()))


def test_a_closure_seeded_from_a_few_nodes_reads_their_edges_only(postgres_url):
    """``?d member+ ?a . ?a standardName 'x'`` walks the closure back from the few arrays
    named: planned as a join, its first step merged those seeds with every ``member``
    quad (benchmark query 13 at a million triples: 23,534 quads read for 436 seeds)."""
    store = SQLStore(postgres_url)
    g = Dataset(store=store).graph(URIRef(EX + "g"))
    member, name = URIRef(EX + "member"), URIRef(EX + "standardName")
    store.addN(quad for i in range(20_000) for quad in (
        (URIRef(f"{EX}grp{i // 10}"), member, URIRef(f"{EX}arr{i}"), g),
        (URIRef(f"{EX}arr{i}"), name, Literal("x" if i % 50 == 0 else f"n{i % 97}"), g)))
    store.addN((URIRef(EX + "root"), member, URIRef(f"{EX}grp{k}"), g) for k in range(2_000))
    store.commit()
    store.connection.exec_driver_sql("ANALYZE")
    store.commit()
    query = f"SELECT DISTINCT ?d WHERE {{ ?d <{member}>+ ?a . ?a <{name}> 'x' }}"
    store.sql_log = log = []
    try:
        found = {str(row[0]) for row in Dataset(store=store, default_union=True).query(query)}
    finally:
        store.sql_log = None
    assert found == {EX + "root", *(f"{EX}grp{k}" for k in range(0, 2_000, 5))}
    sql = next(entry.sql for entry in log if entry.sql)
    plan = store.connection.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}").scalar()[0]["Plan"]
    store.rollback()
    # 400 seeds, their 400 groups, the root: about 1,200 index entries, not 22,000
    assert _quads_read(plan) < 2_000, plan
    store.close()
