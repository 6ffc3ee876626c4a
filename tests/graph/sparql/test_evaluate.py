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
from catalogue.graph.store import SQLStore, install_sparql

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
    install_sparql()  # as every entry to SPARQL does first (store_query is called straight)
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


def test_a_query_calling_a_function_runs_while_another_calling_it_is_being_read(tmp_path):
    """SQLite refuses to define a function again while a statement is being read
    ("Error creating function", fuzzer seed 800: rdflib reads a compiled part inside its
    loop over another's rows); each is defined once per connection."""
    store = SQLStore(f"sqlite:///{tmp_path / 'c.db'}")
    ds = Dataset(store=store, default_union=True)
    g = ds.graph(EX.g)
    g.addN((EX[f"s{i}"], EX.t, Literal(f"café {i}"), g) for i in range(1500))
    store.commit()
    # Non-ASCII patterns are matched by the Python function, and 1,500 rows are more
    # than one batch: the first statement stays open while the second runs.
    reading = iter(ds.query(f"SELECT ?s WHERE {{ ?s <{EX.t}> ?t FILTER(REGEX(?t, 'é', 'i')) }}"))
    next(reading)
    assert len(list(ds.query(f"SELECT ?s WHERE {{ ?s <{EX.t}> ?t FILTER(REGEX(?t, 'É 1', 'i')) }}"))) == 611
    assert 1 + len(list(reading)) == 1500
    store.close()
