"""The compiler's entry into rdflib (catalogue/graph/sparql/evaluate.py), called directly.

``store_query`` is what ``SQLStore.query`` runs.  On a small graph, a property path and
an aggregate must each run as exactly one SQL statement (nothing left to rdflib's
evaluator) and give the answer rdflib's Memory store gives; the explain log renders
what ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from rdflib import Dataset, Graph, Literal, Namespace

from catalogue.graph.sparql.evaluate import ExplainEntry
from catalogue.graph.sparql.query import store_query
from catalogue.graph.store import SQLStore

EX = Namespace("http://x/")
P = "PREFIX : <http://x/> "


def _fill(graph: Graph) -> None:
    graph.add((EX.root, EX.member, EX.a))
    graph.add((EX.a, EX.member, EX.b))
    graph.add((EX.b, EX.member, EX.c))
    for node, size in ((EX.a, 3), (EX.b, 4), (EX.c, 4)):
        graph.add((node, EX.size, Literal(size)))


@pytest.fixture
def store(sqlite_url: str) -> Iterator[SQLStore]:
    sql = SQLStore(sqlite_url)
    _fill(Dataset(store=sql, default_union=True).graph(EX.g))
    sql.commit()
    yield sql
    sql.close()


@pytest.fixture(scope="module")
def memory() -> Dataset:
    ds = Dataset(default_union=True)
    _fill(ds.graph(EX.g))
    return ds


def _bag(result) -> Counter:
    return Counter(tuple(sorted((str(k), v) for k, v in zip(result.vars, row, strict=True))) for row in result)


@pytest.mark.parametrize("query", [
    "SELECT ?x WHERE { :root :member+ ?x }",
    "SELECT ?x ?y WHERE { ?x :member/:member ?y }",
    "SELECT ?s (COUNT(?n) AS ?c) WHERE { ?n :size ?s } GROUP BY ?s",
    "SELECT (MIN(?s) AS ?lo) (MAX(?s) AS ?hi) (COUNT(DISTINCT ?s) AS ?k) WHERE { ?n :size ?s }",
])
def test_path_and_aggregate_run_as_one_statement_with_rdflibs_answer(store, memory, query):
    store.sql_log = log = []
    try:
        got = _bag(store_query(store, P + query, {}, {}, "__UNION__"))
    finally:
        store.sql_log = None
    assert got == _bag(memory.query(P + query))
    assert [e.note for e in log if e.sql is None] == []
    assert len([e for e in log if e.sql]) == 1


def test_explain_entries_render_the_sql_or_the_note():
    assert ExplainEntry("SELECT 1", {"a": 1}).render() == "SELECT 1;\n-- parameters:\n--   :a = 1"
    assert ExplainEntry("SELECT 1", {}).render() == "SELECT 1;"
    assert ExplainEntry(None, {}, "Graph").render() == "-- evaluated by rdflib: Graph"
