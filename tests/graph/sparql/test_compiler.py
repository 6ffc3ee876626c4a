"""The SPARQL-to-SQL compiler: same answers as rdflib's Memory store, as one statement.

Every query in ``COMPILED`` must run as SQL with no part left to rdflib (the explain log
has no fallback note) *and* give the rows rdflib's Memory store gives.  Where rdflib
itself departs from the SPARQL specification, ``SPEC`` states the specified answer.
The W3C suites (test_w3c_sparql.py) cover the breadth; this file pins down the
compiled path on catalogue-shaped data and fails loudly if a query silently stops
being compiled.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from rdflib import BNode, Dataset, Graph, Literal, Namespace, Variable
from rdflib.namespace import XSD

from catalogue.graph import SQLStore
from catalogue.graph.sparql import ExplainEntry
from catalogue.graph.sparql.compiler import _connected_order

EX = Namespace("http://x/")
P = "PREFIX : <http://x/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "


def _fill(ds: Dataset) -> None:
    g1, g2 = ds.graph(EX.g1), ds.graph(EX.g2)
    for i in range(8):
        a = EX[f"a{i}"]
        g1.add((EX.root, EX.member, a))
        g1.add((a, EX.type, EX.Array))
        g1.add((a, EX.title, Literal(f"Temperature {i}" if i % 2 else f"salinity {i}")))
        g1.add((a, EX.n, Literal(i)))
        g1.add((a, EX.dtype, Literal(["float32", "int16", "uint8"][i % 3])))
        if i % 3:
            g2.add((a, EX.units, Literal("K")))
        # The same triple in two graphs: the union default graph holds it once.
        g2.add((a, EX.type, EX.Array))
    g1.add((EX.a1, EX.member, EX.b1))
    g1.add((EX.b1, EX.member, EX.c1))
    g1.add((EX.c1, EX.label, Literal("chat", lang="en")))
    g1.add((EX.c1, EX.label, Literal("chat", lang="fr")))
    g1.add((EX.c1, EX.when, Literal("2025-06-01T12:00:00Z", datatype=XSD.dateTime)))
    g1.add((EX.b1, EX.when, Literal("2024-01-01T00:00:00+02:00", datatype=XSD.dateTime)))
    g1.add((EX.b1, EX.ratio, Literal("0.5", datatype=XSD.decimal)))
    g1.add((EX.b1, EX.ratio, Literal("1e0", datatype=XSD.double)))
    g1.add((EX.c1, EX.ok, Literal(True)))
    g2.add((EX.c1, EX.blank, BNode("b0")))
    g2.add((EX.b1, EX.also, EX.c1))  # two predicates between the same two nodes
    g2.add((EX.c1, EX.odd, Literal("x", datatype=XSD.integer)))  # ill-typed
    ds.default_graph.add((EX.d, EX.inDefault, Literal("yes")))


COMPILED = [
    # an EXISTS inside an EXISTS, its filter reading variables of both scopes above it
    # (each scope's resolver asked itself again: RecursionError; found by a review)
    "SELECT ?a WHERE { ?a :member ?b FILTER EXISTS { ?a :member ?d FILTER NOT EXISTS { ?d :units ?e } } }",
    "SELECT ?a ?b WHERE { ?a :member ?b FILTER EXISTS { ?b :type ?t FILTER NOT EXISTS "
    "{ ?b :units ?u FILTER(?u = 'K' && ?t != ?a) } } }",
    "SELECT ?a WHERE { ?a :n ?n OPTIONAL { ?a :units ?u FILTER EXISTS { ?a :dtype ?d FILTER EXISTS "
    "{ ?a :title ?t FILTER(?n > 2 && CONTAINS(?t, 'T')) } } } }",
    # a closure walked back from its object's patterns, then every pattern looked up from
    # the nodes bound before it: in a named graph, with a pattern sharing nothing, with
    # the subject's patterns reached through another variable
    "SELECT ?x ?t ?n WHERE { GRAPH :g1 { ?x :title ?t ; :n ?n ; :member+ ?a . ?a :label 'chat'@fr } }",
    "SELECT ?x ?a ?w ?y WHERE { ?x :type :Array ; :member+ ?a . ?a :ok true ; :label 'chat'@fr ; :when ?w . "
    "?z :inDefault ?y }",
    "SELECT ?r ?x ?d WHERE { ?x :member+ ?a ; :dtype ?d . ?a :label 'chat'@en . ?r :member ?x }",
    # a group that starts with OPTIONAL: the optional part joins the one empty solution
    "SELECT ?x WHERE { OPTIONAL { :nobody :p ?x } }",
    "SELECT ?s ?o WHERE { OPTIONAL { ?s :p ?o } }",
    "SELECT ?s ?o ?n WHERE { OPTIONAL { ?s :p ?o } OPTIONAL { ?s :name ?n } }",
    "SELECT ?a WHERE { ?a :type :Array }",
    "SELECT ?a ?t WHERE { ?a :type :Array ; :title ?t FILTER(regex(?t, 'temp', 'i')) }",
    "SELECT ?a ?t WHERE { ?a :title ?t FILTER(regex(?t, '^sal.*[0-4]$')) }",
    "SELECT ?a ?u WHERE { ?a :type :Array OPTIONAL { ?a :units ?u } }",
    "SELECT ?a ?u WHERE { ?a :type :Array OPTIONAL { ?a :units ?u FILTER(?u = 'K') } }",
    "SELECT ?r (COUNT(?a) AS ?n) WHERE { ?r :member ?a } GROUP BY ?r",
    "SELECT ?r (COUNT(DISTINCT ?a) AS ?n) WHERE { ?r :member ?a . ?a :type :Array } "
    "GROUP BY ?r HAVING (COUNT(?a) > 2)",
    "SELECT ?d (COUNT(?a) AS ?n) WHERE { ?a :dtype ?d } GROUP BY ?d ORDER BY DESC(?n) ?d",
    "SELECT ?x WHERE { :root :member+ ?x }",
    "SELECT ?x WHERE { :root :member* ?x }",
    "SELECT ?x WHERE { ?x :member+ :c1 }",
    "SELECT ?x WHERE { ?x ^:member :a1 }",
    "SELECT ?x ?y WHERE { ?x :member/:member ?y }",
    "SELECT ?x ?y WHERE { ?x :units|:dtype ?y }",
    "SELECT ?x ?y WHERE { ?x :member/:member* ?y }",
    "SELECT ?x ?y WHERE { ?x :member/:member+/:label ?y }",
    "SELECT ?x WHERE { ?x :member/:member*/:label 'chat'@en }",
    "SELECT ?x ?y WHERE { ?x :member/:member? ?y }",
    "SELECT ?x WHERE { ?x :member* :b1 }",
    # closures seeded from one end while patterns bind the other (benchmark query 13's shape)
    "SELECT ?x ?a ?l WHERE { ?x :title ?t . ?x :member+ ?a . ?a :label ?l }",
    "SELECT DISTINCT ?x WHERE { ?x :type :Array ; :title ?t ; :member+ ?a . ?a :label 'chat'@fr }",
    "SELECT DISTINCT ?x ?t WHERE { ?x :title ?t ; :member+ ?a . ?a :label 'chat'@fr }",
    # negated property sets and alternatives: one solution per matching triple (found by
    # tests/graph/sparql/fuzz.py: the union graph's DISTINCT merged :member and :also)
    "SELECT ?o WHERE { :b1 !:type ?o }",
    "SELECT ?o WHERE { :b1 (:member|:also) ?o }",
    "SELECT ?s ?o WHERE { ?s !(:type|:title|:n|:dtype) ?o }",
    # a negated set as one arm of an alternative (its arms once had different columns: SQL error)
    "SELECT DISTINCT ?s ?o WHERE { ?s (!:type|:member) ?o }",
    # ... inside UNION branches too, and query blank nodes (found by the review of the fuzzer's fixes)
    "SELECT ?o WHERE { { :b1 (:member|:also) ?o } UNION { :nothing :p ?o } }",
    "SELECT ?s WHERE { { ?s :member [] } UNION { ?s :nothing ?o } }",
    # ... and alternatives with an inverse arm, or the same arm twice: one solution per arm
    # (found by tests/graph/sparql/fuzz.py, seed 300: the union graph's DISTINCT merged them)
    "SELECT ?s WHERE { :c1 (^:member|^:also) ?s }",
    "SELECT ?s ?o WHERE { ?s (:also|^:nothing|:member) ?o }",
    "SELECT ?o WHERE { :b1 (:member|:member)/:label ?o }",
    # ... per intermediate node of a sequence arm, and per predicate of a negated arm
    # (found by the review of that fix; the type triples are in both graphs)
    "SELECT ?t WHERE { :root (:member/:type|^:nothing) ?t }",
    "SELECT ?o WHERE { :b1 (!:type|^:nothing) ?o }",
    # MIN/MAX grouped by a variable the pattern never binds (found by tests/graph/sparql/fuzz.py:
    # the compiler raised KeyError)
    "SELECT ?d (MAX(?n) AS ?m) (MIN(?n) AS ?l) WHERE { ?a :n ?n } GROUP BY ?d",
    "SELECT ?d ?a (MAX(?n) AS ?m) WHERE { ?a :n ?n } GROUP BY ?d ?a",
    # COUNT of a computed value counts the rows where it is bound (it fell back to rdflib)
    "SELECT ?a (COUNT(?v) AS ?n) WHERE { ?a :n ?x OPTIONAL { ?a :units ?u } BIND(CONCAT(?u, '!') AS ?v) } "
    "GROUP BY ?a ORDER BY ?a",
    # STRLANG with a computed tag (fell back to rdflib)
    "SELECT ?v WHERE { :c1 :label ?l BIND(STRLANG(STR(?l), LANG(?l)) AS ?v) }",
    "SELECT ?v (LANG(?v) AS ?g) WHERE { :c1 :label ?l BIND(STRLANG('x', LANG(?l)) AS ?v) } ORDER BY ?g",
    "SELECT ?x ?a WHERE { ?x :member+ ?a . ?a :when ?w . ?x :n ?n FILTER(?n > 0) }",
    "SELECT ?a ?n WHERE { ?a :n ?n FILTER(?n > 2) }",
    "SELECT ?a ?n WHERE { ?a :n ?n FILTER(?n >= 2 && ?n < 4.5) } ORDER BY DESC(?n) ?a",
    "SELECT ?a ?t WHERE { ?a :type :Array ; :title ?t } ORDER BY ?t LIMIT 3 OFFSET 1",
    "SELECT DISTINCT ?t WHERE { ?a :type ?t }",
    "SELECT ?a WHERE { ?a :type :Array MINUS { ?a :units ?u } }",
    "SELECT ?a WHERE { ?a :type :Array FILTER NOT EXISTS { ?a :units ?u } }",
    "SELECT ?a WHERE { ?a :type :Array FILTER EXISTS { ?a :units 'K' } }",
    "SELECT ?g ?a WHERE { GRAPH ?g { ?a :units ?u } }",
    "SELECT ?g WHERE { GRAPH ?g { } }",
    "SELECT ?a WHERE { GRAPH :g2 { ?a :units ?u } }",
    "SELECT ?x WHERE { { ?x :units ?u } UNION { ?x :member ?y } }",
    "SELECT ?a ?s WHERE { ?a :title ?t BIND(str(?t) AS ?s) FILTER(contains(?s, '3')) }",
    "SELECT ?l WHERE { :c1 :label ?l FILTER(lang(?l) = 'en') }",
    "SELECT ?l WHERE { :c1 :label ?l FILTER(langMatches(lang(?l), 'FR')) }",
    "SELECT ?r WHERE { :b1 :ratio ?r FILTER(datatype(?r) = xsd:decimal) }",
    "SELECT ?r WHERE { :b1 :ratio ?r FILTER(?r = 1) }",
    "SELECT ?a ?n WHERE { VALUES ?a { :a1 :a2 } ?a :n ?n }",
    # VALUES holding terms the database does not store (fell back to rdflib): carried as
    # values, joined with stored terms, projected, ordered, compared, left unbound
    "SELECT ?a ?n WHERE { VALUES ?a { :a1 :nothing :a2 } ?a :n ?n }",
    "SELECT ?a WHERE { VALUES ?a { :a1 :nothing <http://other.example/x> } } ORDER BY ?a",
    "SELECT ?a ?u WHERE { VALUES (?a ?u) { (:a1 'K') (:a2 'no such units') (UNDEF 'K') (:nothing UNDEF) } ?a :units ?u }",
    "SELECT ?u ?l WHERE { VALUES (?u ?l) { ('K' 'x') ('new'@en 'y') (UNDEF 'z') (42 UNDEF) } } ORDER BY ?u ?l",
    "SELECT ?v WHERE { VALUES ?v { 'new' 'K' 7 2.5 } FILTER(?v != 'K') }",
    "SELECT ?v (STR(?v) AS ?s) (DATATYPE(?v) AS ?d) WHERE { VALUES ?v { 'fresh' 1000 true } }",
    "SELECT (COUNT(DISTINCT ?v) AS ?n) WHERE { VALUES ?v { :nothing :nothing :a1 } }",
    "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }",
    "SELECT ?a WHERE { ?a :title ?t FILTER(strstarts(?t, 'Temp') || strends(?t, '4')) }",
    "SELECT * WHERE { ?a :n ?n { SELECT ?a WHERE { ?a :units ?u } } }",
    "SELECT ?a WHERE { ?a :title ?t FILTER(isLiteral(?t) && !isIRI(?t) && bound(?t) "
    "&& !bound(?zz)) }",
    "SELECT ?x WHERE { ?x :when ?w FILTER(?w >= '2025-01-01T00:00:00Z'^^xsd:dateTime) }",
    "SELECT ?x ?w WHERE { ?x :when ?w } ORDER BY ?w",
    "SELECT ?x WHERE { ?x :ok ?b FILTER(?b) }",
    "SELECT ?x WHERE { ?x :blank ?b FILTER(isBlank(?b)) }",
    "SELECT ?v WHERE { :d :inDefault ?v }",
    "ASK { :a1 :units 'K' }",
    # ASK over triples held in two graphs, a path and a pattern that matches nothing
    "ASK { ?a :type :Array ; :units 'K' . :root :member+ ?a }",
    "ASK { ?a :type :Array ; :units 'mm' }",
    "ASK { :root :member/:member ?b . ?b :member* ?c . ?c :label ?l }",
    # OFFSET counts distinct solutions: each :type triple is in two graphs
    "ASK { ?a :type :Array } OFFSET 8",
    "ASK { ?a :type :Array } OFFSET 7",
    "ASK { ?a :type :Array } ORDER BY ?a OFFSET 8",
    "SELECT ?a (SAMPLE(?t) AS ?any) WHERE { ?a :title ?t } GROUP BY ?a",
    "SELECT ?d (MIN(?n) AS ?lo) (MAX(?n) AS ?hi) WHERE { ?a :dtype ?d ; :n ?n } GROUP BY ?d",
    "SELECT (MAX(?r) AS ?m) (MIN(?r) AS ?l) WHERE { :b1 :ratio ?r }",
    "SELECT (MIN(?t) AS ?first) (COUNT(?t) AS ?c) WHERE { ?a :title ?t }",
    "SELECT ?a ?t WHERE { ?a :title ?t FILTER(?t != 'salinity 0' && sameTerm(?a, ?a)) }",
    "SELECT ?a WHERE { ?a :title ?t FILTER(CONTAINS(LCASE(?t), 'temperature')) }",
    "SELECT ?a ?u WHERE { ?a :title ?t BIND(UCASE(?t) AS ?u) FILTER(STRSTARTS(?u, 'SAL')) }",
    "SELECT ?l WHERE { :c1 :label ?l FILTER(LCASE(?l) = 'chat'@en) }",
    # ASK with one closure: walked from each subject in a correlated EXISTS (paths.lazy)
    "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member* ?x . ?x :when ?w }",
    "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member+ ?x . ?x :ok true }",
    "ASK { ?a :type :Array ; :title 'salinity 2' ; :member+ ?x . ?x :ok true }",
    "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member* ?x }",
    "ASK { ?c :ok true ; ^:member+ ?x . ?x :member ?y . ?y :type :Array }",
    "ASK { ?c :ok true ; ^:member+ ?x . ?x :dtype 'float32' }",
    "ASK { ?a :title 'Temperature 1' ; :member* ?x . ?x :label ?l ; :label ?m . ?m :p ?l }",
    "ASK { GRAPH :g1 { ?a :title 'Temperature 1' ; :member+ ?x . ?x :label 'chat'@fr } }",
    "ASK { GRAPH :g2 { ?a :units 'K' ; :member+ ?x } }",
]

# Answers the specification gives where rdflib's evaluator gives another.
SPEC = [
    # OPTIONAL after VALUES: a row the right side does not extend stays, as it is
    # (rdflib drops it when the left side is VALUES; Oxigraph keeps it). The variable
    # carries a term the database does not hold (:nothing, 'no such units'): it is
    # compared with the stored terms as a term, not by id.
    ("SELECT ?a ?n WHERE { VALUES ?a { :a1 :nothing } OPTIONAL { ?a :n ?n } }",
     [{"a": EX.a1, "n": Literal(1)}, {"a": EX.nothing}]),
    ("SELECT ?a ?n WHERE { VALUES ?a { :a1 :nothing } OPTIONAL { ?a :n ?n FILTER(?n > 1) } }",
     [{"a": EX.a1}, {"a": EX.nothing}]),
    ("SELECT ?a ?u WHERE { VALUES ?a { :a1 :nothing UNDEF } OPTIONAL { ?a :units ?u } }",
     [{"a": EX.a1, "u": Literal("K")}] * 2 + [{"a": EX[f"a{i}"], "u": Literal("K")} for i in (2, 4, 5, 7)]
     + [{"a": EX.nothing}]),
    ("SELECT ?v ?a WHERE { VALUES ?v { 'K' 'no such units' } OPTIONAL { ?a :units ?v } }",
     [{"v": Literal("K"), "a": EX[f"a{i}"]} for i in (1, 2, 4, 5, 7)] + [{"v": Literal("no such units")}]),
    ("SELECT ?v ?a WHERE { VALUES ?v { 'K' 'no such units' } OPTIONAL { ?a :units ?v } FILTER(!BOUND(?a)) }",
     [{"v": Literal("no such units")}]),
    # SPARQL orders no ill-typed literal, not even against itself: the filter's error
    # removes the row (rdflib and Oxigraph answer true; fuzzer seed 400).
    ('SELECT ?x WHERE { :c1 :odd ?x FILTER(?x <= "x"^^xsd:integer) }', []),
    ('SELECT ?x WHERE { :c1 :odd ?x FILTER(sameTerm(?x, "x"^^xsd:integer)) }', [{"x": Literal("x", datatype=XSD.integer)}]),
    # A negated property set between two given nodes is one solution per matching
    # triple (b1 :member c1, b1 :also c1), as a triple pattern (rdflib gives one per pair
    # of nodes; fuzzer seed 401).
    ("SELECT (COUNT(*) AS ?n) WHERE { :b1 !:nothing :c1 }", [{"n": Literal(2)}]),
    # IN compares with '=', so 1.0e0 (double) is IN (1) although it is a different term.
    (
        "SELECT ?r WHERE { :b1 :ratio ?r FILTER(?r IN (1, 7)) }",
        [{"r": Literal("1e0", datatype=XSD.double)}],
    ),
    # COUNT over an empty implicit group is 0, not unbound.
    ("SELECT (COUNT(?x) AS ?c) WHERE { ?x :nothing ?y }", [{"c": Literal(0)}]),
    # GRAPH of an IRI that names no graph matches nothing, whatever its group (rdflib
    # gives one empty solution); of a named graph, the group's solutions.
    ("SELECT * WHERE { GRAPH :nograph { } }", []),
    ("SELECT ?x WHERE { GRAPH :nograph { OPTIONAL { ?s :nothing ?x } } }", []),
    ("SELECT ?x WHERE { GRAPH :g1 { OPTIONAL { ?s :nothing ?x } } }", [{}]),
    # Groups that start with OPTIONAL, joined (each its own one-row table; rdflib
    # evaluates the right side under the left's bindings and gives other rows).
    ("SELECT ?x ?y WHERE { { OPTIONAL { :nobody :p ?x } } { OPTIONAL { :nobody :q ?y } } }", [{}]),
    ("SELECT ?x ?y WHERE { OPTIONAL { :nobody :p ?x } { OPTIONAL { :nobody :q ?y } } }", [{}]),
    ("SELECT ?x ?y WHERE { GRAPH :g1 { OPTIONAL { :nobody :p ?x } } GRAPH :g2 { OPTIONAL { :nobody :q ?y } } }",
     [{}]),
    # STR of a blank node is an error, so nothing to count (rdflib gives the node's label);
    # COUNT DISTINCT of a computed value counts terms (found by tests/graph/sparql/fuzz.py,
    # seed 105, with GROUP_CONCAT(DISTINCT STR(?b)), where Oxigraph answered "1.0E0" for 1e0).
    ("SELECT (COUNT(?s) AS ?n) WHERE { ?x :blank ?o BIND(STR(?o) AS ?s) }", [{"n": Literal(0)}]),
    ("SELECT (COUNT(?s) AS ?n) (COUNT(DISTINCT ?s) AS ?d) WHERE { ?x :title ?t BIND(SUBSTR(?t, 1, 4) AS ?s) }",
     [{"n": Literal(8), "d": Literal(2)}]),
    # distinct terms, not texts: "chat"@en and "chat"@fr; "1" and 1
    ("SELECT (COUNT(DISTINCT ?v) AS ?d) WHERE { :c1 :label ?l BIND(SUBSTR(?l, 1) AS ?v) }", [{"d": Literal(2)}]),
    ("SELECT (COUNT(DISTINCT ?v) AS ?d) WHERE { ?a :n ?n BIND(IF(?n > 3, '1', ?n - ?n + 1) AS ?v) }",
     [{"d": Literal(2)}]),
    # STRLANG with a computed tag: tags compare without case; a text that is no language
    # tag is an error (rdflib raises ValueError from Literal)
    ("SELECT (COUNT(DISTINCT ?v) AS ?d) (COUNT(?v) AS ?n) WHERE { ?x :label ?t "
     "BIND(STRLANG(STR(?t), IF(LANG(?t) = 'en', 'EN', 'en')) AS ?v) }", [{"d": Literal(1), "n": Literal(2)}]),
    ("SELECT (COUNT(?v) AS ?n) WHERE { ?a :title ?t BIND(STRLANG('x', STR(?t)) AS ?v) }", [{"n": Literal(0)}]),
    # STR keeps the lexical form as written: "0.5|1e0"
    ("SELECT (STRLEN(GROUP_CONCAT(STR(?r); separator='|')) AS ?n) WHERE { :b1 :ratio ?r }", [{"n": Literal(7)}]),
]


@pytest.fixture(scope="module")
def memory() -> Dataset:
    ds = Dataset(default_union=True)
    _fill(ds)
    return ds


@pytest.fixture(scope="module")
def catalogue_ds(module_db_url: str) -> Iterator[Dataset]:
    store = SQLStore(module_db_url)
    ds = Dataset(store=store, default_union=True)
    _fill(ds)
    store.commit()
    yield ds
    store.close()


def _rows(result) -> list[dict[str, object]]:
    if result.type == "ASK":
        return [{"ask": result.askAnswer}]
    # From the bindings: iterating an rdflib result leaves out solutions that bind nothing.
    return [{str(k): b[k] for k in result.vars if b.get(k) is not None} for b in result.bindings]


def _run(ds: Dataset, query: str) -> tuple[list[dict[str, object]], list[ExplainEntry]]:
    store = ds.store
    store.sql_log = log = []
    try:
        rows = _rows(ds.query(P + query))
    finally:
        store.sql_log = None
    return rows, log


def _bag(rows: list[dict[str, object]]) -> Counter:
    return Counter(tuple(sorted((k, repr(v)) for k, v in r.items())) for r in rows)


@pytest.mark.parametrize("query", COMPILED)
def test_compiled_query_matches_memory(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    got, log = _run(catalogue_ds, query)
    expected = _rows(memory.query(P + query))
    fallbacks = [e.note for e in log if e.sql is None]
    assert not fallbacks, f"not compiled: {fallbacks}"
    assert any(e.sql for e in log), "no SQL ran"
    if "ORDER BY" in query:
        assert got == expected
    else:
        assert _bag(got) == _bag(expected)


@pytest.mark.parametrize(("query", "expected"), SPEC)
def test_compiled_query_follows_the_specification(
    catalogue_ds: Dataset, query: str, expected: list[dict[str, object]]
) -> None:
    got, log = _run(catalogue_ds, query)
    assert not [e for e in log if e.sql is None]
    assert _bag(got) == _bag(expected)


@pytest.mark.parametrize(
    "query",
    [
        "DESCRIBE :c1",
        "DESCRIBE :a1 :root",
        "DESCRIBE ?x WHERE { ?x :units 'K' }",
        "DESCRIBE :nothing",
    ],
)
def test_describe_matches_memory(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    from rdflib.compare import isomorphic

    store = catalogue_ds.store
    store.sql_log = log = []
    try:
        got = catalogue_ds.query(P + query).graph
    finally:
        store.sql_log = None
    expected = memory.query(P + query).graph
    assert isomorphic(got, expected)
    assert len(got) == len(expected)
    assert any(e.sql and "WITH RECURSIVE cbd" in e.sql for e in log) or not len(expected)


def test_unsupported_operator_falls_back_but_still_compiles_its_patterns(
    catalogue_ds: Dataset, memory: Dataset
) -> None:
    query = "SELECT ?a ?u WHERE { ?a :title ?t BIND(CONCAT(?t, STR(IRI('relative'))) AS ?u) }"  # a relative IRI: rdflib's
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    assert any(e.sql is None and "Extend" in (e.note or "") for e in log)
    assert any(e.sql and "FROM quads" in e.sql for e in log)


def test_ask_asks_the_database_for_one_solution_of_any_kind(catalogue_ds: Dataset) -> None:
    """ASK stops at the first solution: no DISTINCT over the pattern (duplicates do not
    change whether there is one), which PostgreSQL would otherwise compute whole first
    (a scale-10 ASK took 10 s instead of 0.13 s)."""
    got, log = _run(catalogue_ds, "ASK { ?a :type :Array ; :units 'K' }")
    assert got == [{"ask": True}]
    statement = next(e.sql for e in log if e.sql)
    assert "LIMIT 1" in statement and "DISTINCT" not in statement


def test_compiler_can_be_switched_off(catalogue_ds: Dataset, memory: Dataset) -> None:
    query = "SELECT ?a WHERE { ?a :type :Array }"
    catalogue_ds.store.compile_sparql = False
    try:
        got, log = _run(catalogue_ds, query)
    finally:
        catalogue_ds.store.compile_sparql = True
    assert not log
    assert _bag(got) == _bag(_rows(memory.query(P + query)))


def test_init_bindings_are_constants(catalogue_ds: Dataset) -> None:
    store = catalogue_ds.store
    store.sql_log = log = []
    try:
        rows = list(
            catalogue_ds.query(P + "SELECT ?a ?n WHERE { ?a :n ?n }", initBindings={"a": EX.a3})
        )
    finally:
        store.sql_log = None
    assert [(r.a, r.n) for r in rows] == [(EX.a3, Literal(3))]
    assert log and log[0].sql is not None


def test_a_closure_seeded_from_its_object_comes_first_and_the_patterns_probe_it(
    catalogue_ds: Dataset, memory: Dataset
) -> None:
    """SQLite keeps a CROSS JOIN's order: the closure walked back from the object's
    patterns first, its rows kept where the subject's own patterns give their subject,
    then every plain pattern looked up from the nodes bound before it (those with a
    constant first), each constant written as depending on a bound column
    (``q.p = 8 + 0 * pp.s``). Left to itself SQLite joined both ends' patterns first and
    probed the closure for every pair of their nodes (1.4 s for benchmark query 13 at
    scale 10); with the subject's patterns first it scanned the closure once per dataset
    (68 ms at scale 1 against 3.7 ms); with plain equalities on the constants it built a
    Bloom filter of each pattern by scanning the whole table."""
    query = "SELECT DISTINCT ?x ?t WHERE { ?x :title ?t ; :member+ ?a . ?a :when ?w ; :label 'chat'@fr }"
    got, log = _run(catalogue_ds, query)
    assert got and _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    if catalogue_ds.store.engine.dialect.name != "sqlite":
        # PostgreSQL orders joins itself; its closure's recursive step is a LATERAL probe.
        assert "CROSS JOIN (" not in sql and "CROSS JOIN LATERAL (SELECT" in sql
        return
    # the block's first item is the closure
    block = re.search(r"SELECT DISTINCT [^\n]*\nFROM \(\nSELECT o AS s, s AS o FROM \(\nWITH RECURSIVE", sql)
    assert block is not None
    after = sql[block.end():].partition(") AS pp")[2]
    joined = re.findall(r"CROSS JOIN quads (q\d+)", after)
    assert len(joined) == 3  # then the three patterns in this order
    where = after.partition("\nWHERE ")[2]
    # only the closure rows whose subject the subject's own patterns give, found once
    assert re.match(r"pp\d+\.s IN \(SELECT n FROM \(\nSELECT DISTINCT q\d+\.s AS n\nFROM quads", where)
    where = where.partition(") AS sk")[2]
    # looked up from the closure's nodes, the pattern with a constant first
    q = joined[0]
    assert re.search(rf"{q}\.s = pp\d+\.o AND {q}\.p = \d+ \+ 0 \* pp\d+\.o AND {q}\.o = \d+ \+ 0 \* pp", where)
    # each constant depends on a bound column, so that SQLite builds no Bloom filter of
    # the pattern (a scan of the whole table)
    constants = re.findall(r"q\d+\.[po] = [^ ]+( \+ 0 \* (?:pp|q)\d+\.[so])?", where)
    assert len(constants) == 4 and all(constants), where


@pytest.mark.parametrize("query", [
    "SELECT ?x (COUNT(?a) AS ?n) WHERE { ?x :member ?y . ?x :member+ ?a . ?a :type :Array } GROUP BY ?x",
    "SELECT ?x ?a WHERE { ?x :member ?y . ?x :member+ ?a . ?a :label ?l }",
])
def test_a_closure_seeded_from_its_subject_comes_first_too(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    """Left to SQLite, both ends' patterns were joined first and the closure probed for
    every pair of their nodes (arrays per dataset at scale 1: 1.15 s -> 82 ms)."""
    got, log = _run(catalogue_ds, query)
    assert got and _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    if catalogue_ds.store.engine.dialect.name == "sqlite":
        assert re.search(r"SELECT DISTINCT [^\n]*\nFROM \(\n(SELECT o AS s, s AS o FROM \(\n)?WITH RECURSIVE", sql), sql


def test_an_ask_walks_its_closure_from_each_subject_until_one_answers(catalogue_ds: Dataset) -> None:
    """ASK needs one solution: its closure is walked from one matching subject at a time
    in a correlated EXISTS with the patterns hanging off its end, which the database
    leaves at the first node that satisfies them. Computed whole first, the closure of
    every matching subject cost benchmark query 14 (``?dims rdf:rest*/rdf:first "time"``)
    100 times Oxigraph's time at scale 10."""
    got, log = _run(catalogue_ds, "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member+ ?x . ?x :ok true }")
    assert got == [{"ask": True}]
    sql = next(e.sql for e in log if e.sql)
    assert "EXISTS (WITH RECURSIVE" in sql
    if catalogue_ds.store.engine.dialect.name == "sqlite":
        # the recursive step and the patterns after it probe by one-value ranges
        after_first_step = sql.partition("EXISTS (")[2].partition("UNION")[2].partition(") AS a_")[0]
        assert "BETWEEN" in after_first_step and " = " not in after_first_step
    # Not when a solution's values matter, nor with a second closure; nor from the less
    # constrained end, or an end as constrained (walked from each of many subjects, a long
    # closure they share is walked again and again: a 2,000-node chain under one class
    # took 4 s instead of 0.3 s on SQLite, 67 s instead of 0.7 s on PostgreSQL); nor with a
    # hanging constant the database does not hold (the plain plan finds no match at once).
    for query in ("SELECT ?x WHERE { ?a :title 'Temperature 1' ; :member+ ?x . ?x :ok true }",
                  "ASK { ?a :title 'Temperature 1' ; :member+ ?x . ?x :member* ?y . ?y :ok true }",
                  "ASK { ?a :type :Array ; :member+ ?x . ?x :ok true }",
                  "ASK { ?a :type :Array ; :member+ ?x . ?x :type :Array }",
                  "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member+ ?x . ?x :ok 'not stored' }"):
        _, log = _run(catalogue_ds, query)
        assert "EXISTS (WITH RECURSIVE" not in next(e.sql for e in log if e.sql)


@pytest.mark.parametrize("query", [
    "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member+ ?x . ?x :label 'chat'@fr }",
    "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member* ?x . ?x :label 'chat'@de }",
    "ASK { ?c :label 'chat'@fr ; :ok true ; (^:member)* ?x . ?x :n ?n }",
    "ASK { ?a :type :Array ; :title 'Temperature 1' ; :member+ ?x . ?x :when ?w }",
])
def test_the_lazy_ask_in_a_named_graph_and_under_bindings(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    """The correlated EXISTS keeps the graph a query runs on (one named graph: its
    patterns and steps read that graph only) and values bound from outside."""
    for graph in (EX.g1, EX.g2):
        mine = Graph(store=catalogue_ds.store, identifier=graph)
        catalogue_ds.store.sql_log = log = []
        try:
            got = mine.query(P + query).askAnswer
        finally:
            catalogue_ds.store.sql_log = None
        assert got == memory.graph(graph).query(P + query).askAnswer, graph
        lazy = any(e.sql and "EXISTS (WITH RECURSIVE" in e.sql for e in log)
        assert lazy == ("@de" not in query)  # 'chat'@de is stored nowhere: the plain plan
    bound = {"w": Literal("2025-06-01T12:00:00Z", datatype=XSD.dateTime)}
    got = catalogue_ds.query(P + query, initBindings=bound).askAnswer
    assert got == memory.query(P + query, initBindings=bound).askAnswer


def test_a_negated_set_with_an_inverse_member_is_not_guessed(catalogue_ds: Dataset, memory: Dataset) -> None:
    """rdflib's parser leaves ``!^p`` unfinished (its evaluator refuses it); the compiler
    answered it as "every triple". Now both refuse it alike."""
    query = "SELECT * WHERE { ?s !^:member ?o }"
    with pytest.raises(Exception) as expected:
        _rows(memory.query(P + query))
    with pytest.raises(type(expected.value)):
        _run(catalogue_ds, query)


def test_a_blank_node_bound_from_outside_is_that_node(catalogue_ds: Dataset, memory: Dataset) -> None:
    """rdflib evaluates this EXISTS row by row (a zero-length path between two variables
    is not compiled), handing the compiled pattern each row's ?b, a blank node: it must
    stand for that node (found by tests/graph/sparql/fuzz.py: it became a fresh variable,
    so the EXISTS held for every row)."""
    query = "SELECT ?x ?b WHERE { ?x :blank ?b FILTER NOT EXISTS { ?b :member* ?x } }"
    got, _log = _run(catalogue_ds, query)
    expected = _rows(memory.query(P + query))
    assert len(got) == len(expected) == 1


def test_an_optional_over_a_variable_bound_outside_its_group(catalogue_ds: Dataset, memory: Dataset) -> None:
    """rdflib joins the outer ``:root :member ?a`` lazily (the group holds a path from a
    term that is not stored), evaluating the group once per ``?a``. Its OPTIONAL must not
    take that ``?a`` as a constant: SPARQL makes the group's solutions without it, so a
    ``?b`` whose optional part matches another ``?a`` gives no row for this one (found by
    tests/graph/sparql/fuzz.py, seed 105: 80 rows instead of 65)."""
    query = ("SELECT * WHERE { :root :member ?a . "
             "{ ?b :member ?c OPTIONAL { ?a :member ?b } OPTIONAL { ?d :member+ :nothing } } }")
    got, log = _run(catalogue_ds, query)
    expected = _rows(memory.query(P + query))
    assert any(e.sql is None for e in log), "the lazy join this is about did not happen"
    assert len(got) == len(expected) == 65
    assert _bag(got) == _bag(expected)


def test_an_output_value_a_filter_read_is_not_looked_up_again(catalogue_ds: Dataset, memory: Dataset) -> None:
    """The title the FILTER joined ``terms`` for leaves the DISTINCT as its value: one
    ``terms`` join for it and one for ``?a`` (there was a third, after the DISTINCT)."""
    query = "SELECT ?a ?t WHERE { ?a :title ?t FILTER(regex(?t, '^sal.*[0-4]$')) }"
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query))) and len(got) == 3
    [sql] = [e.sql for e in log if e.sql]
    assert sql.count("JOIN terms") == 2


def test_results_stream(catalogue_ds: Dataset) -> None:
    """Stopping after the first row leaves the store usable (the cursor is closed)."""
    result = catalogue_ds.query(P + "SELECT ?s ?p ?o WHERE { ?s ?p ?o }")
    first = next(iter(result))
    assert first is not None
    try:
        catalogue_ds.add((EX.z, EX.z, EX.z))
        assert (EX.z, EX.z, EX.z) in catalogue_ds
    finally:
        catalogue_ds.store.rollback()
    assert (EX.z, EX.z, EX.z) not in catalogue_ds


def test_cli_explain_prints_the_sql_that_ran(tmp_path) -> None:
    from click.testing import CliRunner

    from catalogue.cli import main

    db = tmp_path / "c.db"
    store = SQLStore(f"sqlite:///{db}")
    ds = Dataset(store=store, default_union=True)
    _fill(ds)
    store.commit()
    store.close()
    query = "PREFIX : <http://x/> SELECT ?a WHERE { ?a :units 'K' } ORDER BY ?a"
    result = CliRunner().invoke(
        main, ["query", "--db", str(db), "--explain", "--format", "tsv", query]
    )
    assert result.exit_code == 0, result.output
    assert "<http://x/a1>" in result.stdout
    assert "FROM quads" in result.stderr and "ORDER BY" in result.stderr
    assert "-- parameters:" not in result.stdout
    plain = CliRunner().invoke(main, ["query", "--db", str(db), "--format", "tsv", query])
    assert plain.exit_code == 0 and plain.stderr == ""
    assert plain.stdout == result.stdout


@pytest.mark.parametrize("path", ["?", "*"])
def test_zero_length_path_between_two_unbound_variables(catalogue_ds: Dataset, path: str) -> None:
    """``?x :member? ?y`` pairs every node of the active graph (subjects and objects,
    literals included: SPARQL 1.1, 18.4) with itself, once each (set semantics; rdflib
    repeats a pair that is also one step, Oxigraph leaves out literal nodes)."""
    ds = Dataset(default_union=True)
    _fill(ds)
    for query, graph in ((f"SELECT ?x ?y WHERE {{ GRAPH :g1 {{ ?x :member{path} ?y }} }}", ds.graph(EX.g1)),
                         (f"SELECT ?x ?y WHERE {{ ?x :member{path} ?y }}", ds)):
        got, log = _run(catalogue_ds, query)
        assert not [e.note for e in log if e.sql is None]
        triples = list(graph.triples((None, None, None)))
        pairs = {(n, n) for s, _, o in triples for n in (s, o)}
        edges = {(s, o) for s, p, o in triples if p == EX.member}
        pairs |= edges
        if path == "*":
            while True:
                more = {(a, d) for a, b in pairs for c, d in edges if b == c} - pairs
                if not more:
                    break
                pairs |= more
        assert _bag(got) == _bag([{"x": x, "y": y} for x, y in pairs])


def test_a_filter_of_a_constant_is_kept(db_url: str) -> None:
    """rdflib's algebra dropped a group's filters when Python found them false
    (``if filters:``): FILTER(false) filtered nothing, and a DELETE whose WHERE had one
    deleted every match, through the catalogue and through rdflib's own Graph.update."""
    import catalogue

    with catalogue.open(db_url) as cat:
        cat.update("INSERT DATA { GRAPH <http://x/g> { <http://x/a> <http://x/p> 1, 2, 3 } }")

        def count(where: str) -> int:
            ((n,),) = list(cat.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}"))
            return int(n)

        assert count("?s <http://x/p> ?o FILTER(false)") == 0
        assert count("?s <http://x/p> ?o FILTER(0)") == 0
        assert count('?s <http://x/p> ?o FILTER("")') == 0
        assert count("?s <http://x/p> ?o FILTER(true)") == 3
        assert count('?s <http://x/p> ?o OPTIONAL { ?s <http://x/p> ?x FILTER("") } FILTER(!BOUND(?x))') == 3
        cat.update("DELETE { GRAPH <http://x/g> { ?s ?p ?o } } WHERE { GRAPH <http://x/g> { ?s ?p ?o FILTER(false) } }")
        assert count("?s <http://x/p> ?o") == 3
        # rdflib's own update processor, on the catalogue's store
        cat.dataset.update("DELETE { GRAPH <http://x/g> { ?s ?p ?o } } WHERE { GRAPH <http://x/g> { ?s ?p ?o FILTER(0) } }")
        cat.store.commit()
        assert count("?s <http://x/p> ?o") == 3


GRAPH_SUBSELECTS = [
    "SELECT ?g ?x ?p WHERE { GRAPH ?g { { SELECT * WHERE { ?x ?p ?y } } } }",
    "SELECT ?g ?x WHERE { GRAPH ?g { { SELECT ?x WHERE { ?x ?p ?g } } } }",  # the inner ?g is another variable
    "SELECT ?g ?x WHERE { GRAPH ?g { { SELECT * WHERE { ?x ?p ?g } } } }",  # ... unless projected
    "SELECT ?g ?y WHERE { GRAPH ?g { { SELECT DISTINCT ?y WHERE { ?x ?p ?y } } } }",  # DISTINCT per graph
    "SELECT ?g ?x ?z WHERE { GRAPH ?g { { SELECT ?x ?z WHERE { ?x :p ?y OPTIONAL { ?y :p ?z } } ORDER BY ?x } } }",
    "SELECT ?x WHERE { ?x :p :b . GRAPH ?g { { SELECT ?x WHERE { ?x :q ?y } } } }",
    "SELECT ?g ?x WHERE { VALUES ?g { :g1 } GRAPH ?g { { SELECT ?x WHERE { ?x :q ?y } } } }",
]


def _in_three_engines(db_url: str, quads: list[tuple[str, str, str, str]]) -> tuple[SQLStore, Dataset, Dataset, Any]:
    """``(s, p, o, graph)`` names under EX, in the catalogue (on ``db_url``), rdflib's
    Memory store and Oxigraph (whose default graph is then EX.default)."""
    import pyoxigraph as ox

    store = SQLStore(db_url)
    ds, memory, oxi = Dataset(store=store, default_union=True), Dataset(default_union=True), ox.Store()
    for s, p, o, g in quads:
        for d in (ds, memory):
            d.graph(EX[g]).add((EX[s], EX[p], EX[o]))
        oxi.add(ox.Quad(*(ox.NamedNode(str(EX[t])) for t in (s, p, o, g))))
    store.commit()
    return store, ds, memory, oxi


def _bags(ds: Dataset, memory: Dataset, query: str) -> tuple[str, Counter, Counter]:
    """The query with EX as its default prefix, and its solutions (as comparable keys)
    from the catalogue (all compiled) and from rdflib's Memory store."""
    from tests.graph.sparql.reference import compiled, term_key

    text = f"PREFIX : <{EX}> {query}"
    result = memory.query(text)
    return (text, Counter(tuple(term_key(x) for x in row) for row in compiled(ds, text)),
            Counter(tuple(term_key(b.get(v)) for v in result.vars) for b in result.bindings))


@contextlib.contextmanager
def _answered(db_url: str, quads: list[tuple[str, str, str, str]], query: str) -> Iterator[tuple[SQLStore, str]]:
    """The catalogue over ``quads`` (see :func:`_in_three_engines`) with its answer to
    ``query`` checked against rdflib's Memory store (not empty), and the SQL it ran."""
    store, ds, memory, _oxi = _in_three_engines(db_url, quads)
    try:
        text, mine, theirs = _bags(ds, memory, query)
        assert mine == theirs and mine, query
        store.sql_log = log = []
        try:
            list(ds.query(text))
        finally:
            store.sql_log = None
        yield store, next(e.sql for e in log if e.sql)
    finally:
        store.close()


GRAPH_PATHS = [
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x :p+ ?y } }",
    "SELECT ?g ?y WHERE { GRAPH ?g { :a :p* ?y } }",  # :a itself in every named graph
    "SELECT ?g ?x WHERE { GRAPH ?g { ?x :p* :a } }",
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x :p/:q ?y } }",
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x (:p|:q)+ ?y } }",
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x :p/:p* ?y } }",
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x !:p ?y } }",
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x ^:p+ ?y } }",
    "SELECT ?g ?y WHERE { GRAPH ?g { :a :p? ?y } }",
    "SELECT ?g ?x ?y WHERE { GRAPH ?g { ?x :p* ?y } }",  # every node of each graph with itself
    "SELECT ?g ?x WHERE { ?x :p :e . GRAPH ?g { ?x :p+ ?y } }",
]


def test_sub_selects_and_paths_inside_graph_var_are_evaluated_per_graph(db_url: str) -> None:
    """Sub-selects compared with rdflib's Memory store (Oxigraph evaluates them on the
    whole dataset, leaving ?g unbound, where the W3C tests subquery01-05 bind it); paths
    (each step in the graph of the step before) with it and with Oxigraph too (the graphs
    hold IRIs only, where they agree on zero-length paths)."""
    import pyoxigraph as ox

    from tests.graph.sparql.reference import term_key

    store, ds, memory, oxi = _in_three_engines(db_url, [
        ("a", "p", "b", "g1"), ("b", "p", "c", "g1"), ("a", "q", "g2", "g1"), ("b", "q", "g1", "g1"),
        ("c", "q", "d", "g1"), ("a", "p", "b", "g2"), ("b", "q", "a", "g2"), ("c", "q", "d", "g2"),
        ("c", "p", "g1", "g2"), ("c", "p", "a", "g2"), ("a", "p", "c", "default"), ("c", "p", "e", "default")])
    try:
        for query in GRAPH_SUBSELECTS:
            _, mine, theirs = _bags(ds, memory, query)
            assert mine == theirs and mine, query
        for query in GRAPH_PATHS:
            text, mine, theirs = _bags(ds, memory, query)
            assert mine == theirs, query
            solutions = oxi.query(text, default_graph=[ox.NamedNode(str(EX.default))])
            width = len(solutions.variables)
            assert mine == Counter(tuple(term_key(s[i]) for i in range(width)) for s in solutions), query
    finally:
        store.close()


def test_after_a_leading_closure_patterns_with_a_constant_come_first() -> None:
    """Each pattern shares a variable with what is bound before it, and among those the
    ones with a constant subject or object come first: they cut the rows down before
    the others fan them out (SQLite keeps the order)."""
    x, t, a, m, d = (Variable(n) for n in "xtamd")
    title, member, label, dtype = (x, EX.title, t), (x, EX.member, m), (a, EX.label, Literal("chat")), (m, EX.dtype, d)
    assert _connected_order([title, member, label, dtype], {x, a}) == [label, title, member, dtype]
    assert _connected_order([dtype, title], {x}) == [title, dtype]  # dtype shares nothing until ?m


def test_a_value_given_from_outside_counts_as_a_constant_for_the_closure_order(
    catalogue_ds: Dataset, memory: Dataset
) -> None:
    """``initBindings`` (as rdflib evaluating a join row by row) constrain the closure's
    object end as a constant does: the closure is walked back from there and the given
    value is written like a constant of a probed pattern (benchmark query 13 with its
    standard name given: 115 -> 9 ms at scale 1, walked down from every dataset before)."""
    query = P + "SELECT DISTINCT ?x ?t WHERE { ?x :title ?t ; :member+ ?a . ?a :label ?l ; :when ?w }"
    given = {Variable("l"): Literal("chat", lang="fr")}
    store = catalogue_ds.store
    store.sql_log = log = []
    try:
        got = _rows(catalogue_ds.query(query, initBindings=given))
    finally:
        store.sql_log = None
    assert got and _bag(got) == _bag(_rows(memory.query(query, initBindings=given)))
    if store.engine.dialect.name == "sqlite":
        sql = next(e.sql for e in log if e.sql)
        assert re.search(r"SELECT DISTINCT [^\n]*\nFROM \(\nSELECT o AS s, s AS o FROM \(\nWITH RECURSIVE", sql)
        assert re.search(r"q\d+\.o = \d+ \+ 0 \* pp\d+\.o", sql)  # the given value, probed


@pytest.mark.parametrize("query", [
    "SELECT (COUNT(DISTINCT *) AS ?n) WHERE { ?s ?p [] }",
    "SELECT (COUNT(DISTINCT *) AS ?n) WHERE { ?s :member [] }",
])
def test_a_part_left_to_rdflib_keeps_the_query_blank_nodes(
    catalogue_ds: Dataset, memory: Dataset, query: str
) -> None:
    """``COUNT(DISTINCT *)`` is rdflib's to evaluate, over the compiled pattern's
    solutions: those carry the pattern's blank nodes, as rdflib's own do, or distinct
    solutions that differ only there were counted once (found by the review of the
    seed 603 fix)."""
    got, _ = _run(catalogue_ds, query)
    assert got == _rows(memory.query(P + query))


def test_a_constant_not_stored_keeps_the_written_order(catalogue_ds: Dataset) -> None:
    """A constant the database does not hold matches nothing: the group is joined as
    written, which SQLite finds empty at once, not after walking the whole closure (the
    review measured 0.8 against 180 ms)."""
    query = "SELECT ?x WHERE { ?x :title 'no such title' ; :member+ ?a . ?a :ok true ; :label 'chat'@fr }"
    got, log = _run(catalogue_ds, query)
    assert got == []
    if catalogue_ds.store.engine.dialect.name == "sqlite":
        sql = next(e.sql for e in log if e.sql)
        assert "+ 0 * pp" not in sql
        stored = query.replace("'no such title'", "?t")
        assert "+ 0 * pp" in next(e.sql for e in _run(catalogue_ds, stored)[1] if e.sql)


@pytest.mark.parametrize(("query", "computed"), [
    # A BIND's value met by an OPTIONAL's stored term stays with rdflib: compared by its
    # parts, no index or hash join serves it (a nested loop of every pair of rows).
    ("SELECT ?a ?u ?b WHERE { ?a :n ?n BIND(IF(?n > 2, 'K', 'none') AS ?u) OPTIONAL { ?b :units ?u } }", True),
    # ... unless its values are all stored terms: then it is their ids
    ("SELECT ?a ?u ?b WHERE { ?a :n ?n BIND(IF(?n > 2, 1, 'K') AS ?u) OPTIONAL { ?b :n ?u } }", False),
])
def test_an_optional_on_a_bind_value(catalogue_ds: Dataset, memory: Dataset, query: str, computed: bool) -> None:
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    assert any("OPTIONAL joining on a computed value" in (e.note or "") for e in log) == computed


@pytest.mark.parametrize("aggregate", ["AVG", "SUM"])
def test_an_optional_on_an_aggregate_left_unbound_by_an_error(catalogue_ds: Dataset, aggregate: str) -> None:
    """The average of titles is an error, which leaves ?m unbound: every right solution
    is compatible (as Oxigraph answers; rdflib raises; the review found ?m left unbound
    in each row when the OPTIONAL compared computed values)."""
    query = f"SELECT ?m ?y WHERE {{ {{ SELECT ({aggregate}(?t) AS ?m) WHERE {{ :a1 :title ?t }} }} OPTIONAL {{ ?y :n ?m }} }}"
    got, _ = _run(catalogue_ds, query)
    assert _bag(got) == _bag([{"m": Literal(i), "y": EX[f"a{i}"]} for i in range(8)])


def test_values_with_a_term_not_stored_join_stored_patterns_by_id(catalogue_ds: Dataset) -> None:
    """An index probe per VALUES row, not the terms' parts compared for every quad (the
    review measured 2.5 s against 2.5 ms at ten million triples)."""
    query = "SELECT ?a ?n WHERE { VALUES ?a { :a1 :nothing } ?a :n ?n }"
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag([{"a": EX.a1, "n": Literal(1)}])
    sql = next(e.sql for e in log if e.sql)
    # the patterns probed from the VALUES rows, compared by id, the DISTINCT after the join
    assert re.search(r'q\d+\.s = vals\d+\."v\d+_i"', sql) and "JOIN (\nSELECT DISTINCT" not in sql, sql
    query = "SELECT ?a ?n WHERE { VALUES ?a { :a1 :nothing } OPTIONAL { ?a :n ?n } }"
    got, log = _run(catalogue_ds, query)
    sql = next(e.sql for e in log if e.sql)
    # a flat LEFT JOIN probed by id, its DISTINCT after it (a derived table of every
    # match took 10 s at ten million triples, the second review found)
    assert re.search(r'vals\d+\."v\d+_i" = q\d+\.s', sql) and "JOIN (\nSELECT DISTINCT" not in sql, sql


@pytest.mark.parametrize("query", [
    "SELECT ?a ?n WHERE { { SELECT ?a WHERE { VALUES ?a { :a1 :nothing } } } ?a :n ?n }",
    "SELECT ?a ?n WHERE { { SELECT DISTINCT ?a WHERE { VALUES ?a { :a1 :nothing :a2 } } } ?a :n ?n FILTER(?n > 1) }",
])
def test_values_in_a_sub_select_join_outside_by_id(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    """The id of a VALUES value is carried out of a derived table (compared by its parts
    outside, every quad was read: 2.5 s at ten million triples, the second review found)."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    assert re.search(r'sq\d+\."v\d+_i"', sql), sql


@pytest.mark.parametrize("query", [
    "SELECT ?a ?p ?o WHERE { { SELECT DISTINCT ?a WHERE { ?a :type :Array } ORDER BY ?a LIMIT 2 } ?a ?p ?o }",
    "SELECT ?a ?n WHERE { { SELECT DISTINCT ?a WHERE { ?a :units ?u } } OPTIONAL { ?a :n ?n } }",
])
def test_a_distinct_sub_select_probes_the_patterns_joined_with_it(catalogue_ds: Dataset, memory: Dataset,
                                                                   query: str) -> None:
    """A portal's "the first datasets, then what is said of them": the patterns are probed
    from the sub-select's rows, their union-graph DISTINCT after the join (wrapped in a
    DISTINCT of all their matches, SQLite read every quad: 180 -> 0.7 ms at a million)."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    assert "JOIN (\nSELECT DISTINCT q" not in sql, sql


@pytest.mark.parametrize("query", [
    # ?a repeats in the sub-select's rows (a0 four times, a1 twice): each row stays a solution
    "SELECT ?a ?t WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 6 } ?a :type ?t }",
    "SELECT ?a ?q ?o WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 6 } ?a ?q ?o }",
    "SELECT (COUNT(*) AS ?c) WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 6 } ?a :type ?t }",
    "SELECT DISTINCT ?a ?t WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 6 } ?a :type ?t }",
    "SELECT ?a ?u WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 7 } OPTIONAL { ?a :units ?u } }",
    "SELECT ?a ?t WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 7 } ?a :type ?t MINUS { ?a :units ?u } }",
    # an unbound output, a computed one, one shared with nothing
    "SELECT ?a ?u ?q WHERE { { SELECT ?a ?u WHERE { ?a :n ?n OPTIONAL { ?a :units ?u } } ORDER BY ?a LIMIT 5 } ?a ?q ?u }",
    "SELECT ?a ?s ?t WHERE { { SELECT ?a (STR(?n) AS ?s) WHERE { ?a :n ?n } ORDER BY ?a LIMIT 4 } ?a :type ?t }",
    "SELECT ?x ?a WHERE { { SELECT ?x WHERE { ?x ?p ?y } ORDER BY ?x LIMIT 3 } ?a :type :Array }",
    # in a UNION branch, and beside GRAPH ?g (which owes no DISTINCT)
    "SELECT ?a ?t ?n WHERE { { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 6 } ?a :type ?t } UNION { ?a :n ?n } }",
    "SELECT ?a ?g ?t WHERE { { SELECT ?a WHERE { ?a ?p ?x } ORDER BY ?a LIMIT 6 } GRAPH ?g { ?a :type ?t } }",
])
def test_a_sliced_sub_select_is_numbered_and_probes_the_patterns_joined_with_it(
    catalogue_ds: Dataset, memory: Dataset, query: str
) -> None:
    """Not DISTINCT but a few rows: each numbered, they are a set; the patterns joined
    with them are probed from them, the union graph's DISTINCT after the join (283 ->
    1 ms on SQLite at a million triples), and rows that repeat stay apart."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    assert "ROW_NUMBER() OVER ()" in sql and "JOIN (\nSELECT DISTINCT q" not in sql, sql


@pytest.mark.parametrize("query", [
    "SELECT ?a ?t WHERE { VALUES ?a { :a1 :a1 :a2 } ?a :type ?t }",
    "SELECT ?a ?x ?t WHERE { VALUES (?a ?x) { (:a1 1) (:a1 UNDEF) (UNDEF 2) } ?a :type ?t }",
    "SELECT ?a ?u WHERE { VALUES ?a { :a1 :a1 :a2 } OPTIONAL { ?a :units ?u } }",  # (rdflib drops the rows not extended)
    "SELECT (COUNT(*) AS ?c) WHERE { VALUES (?a ?x) { (:a1 'new') (:a1 'new') } ?a ?p ?o }",
])
def test_values_that_repeat_or_leave_unbound_are_numbered(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    """Numbered in a hidden column, such rows are a set too: the patterns joined with them
    are probed from them, not read whole into a DISTINCT first (304 -> 1 ms on SQLite at a
    million triples), and a row that repeats stays a solution of its own."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    assert "JOIN (\nSELECT DISTINCT q" not in sql, sql


@pytest.mark.parametrize("query", [
    "SELECT ?g ?a ?p ?o WHERE { GRAPH ?g { ?a :type :Array } ?a ?p ?o }",  # each a in both graphs
    "SELECT ?a ?p ?o WHERE { GRAPH :g1 { ?a :type :Array } ?a ?p ?o }",
    "SELECT ?g ?a ?u WHERE { GRAPH ?g { ?a :type :Array } OPTIONAL { ?a :units ?u } }",
    "SELECT ?g ?x ?p WHERE { GRAPH ?g { ?x :blank [] } ?x ?p ?o }",
    "SELECT (COUNT(*) AS ?c) WHERE { GRAPH ?g { ?a :type :Array } ?a :n ?n }",
])
def test_patterns_in_one_graph_are_a_set(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    """Triple patterns matched in a named graph give distinct solutions, as its triples
    are: patterns of the union graph joined with them are probed from them (wrapped in a
    DISTINCT of all their matches, SQLite read every quad: 3.6 s -> 10 ms at a million)."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    assert "JOIN (\nSELECT DISTINCT q" not in sql, sql


@pytest.mark.parametrize(("query", "limit"), [
    ("SELECT ?a ?t WHERE { ?a :type ?t }", 5),  # each triple in two graphs
    ("SELECT * WHERE { ?s ?p ?o }", 7),
    ("SELECT ?a WHERE { ?a :type :Array ; :n ?n . ?b :type :Array ; :n ?m FILTER(?n < ?m) }", 12),
    ("SELECT ?a WHERE { ?a :type :Array }", 100),  # fewer than the limit
])
def test_a_limit_without_order_gives_distinct_solutions_of_the_union_graph(
    catalogue_ds: Dataset, memory: Dataset, query: str, limit: int
) -> None:
    """PostgreSQL reads the first solutions only for a LIMIT without ORDER BY (its
    DISTINCT otherwise reads all of them first): any ``limit`` of the solutions, as many
    as there are up to it."""
    every = _bag(_rows(memory.query(P + query)))
    for offset in (0, 3):
        got, _ = _run(catalogue_ds, f"{query} LIMIT {limit} OFFSET {offset}")
        assert len(got) == min(limit, max(sum(every.values()) - offset, 0))
        assert not _bag(got) - every


@pytest.mark.parametrize(("query", "plain"), [
    ("SELECT ?a WHERE { ?a :type :Array FILTER NOT EXISTS { ?a :units ?u } }", True),
    ("SELECT ?a WHERE { ?a :type :Array FILTER EXISTS { ?a :units 'K' } }", True),
    # ?u unbound in some rows: any ?u then matches
    ("SELECT ?a ?u WHERE { ?a :type :Array OPTIONAL { ?a :units ?u } FILTER NOT EXISTS { ?b :units ?u } }", False),
])
def test_an_exists_on_a_variable_every_solution_binds_compares_ids_plainly(
    catalogue_ds: Dataset, memory: Dataset, query: str, plain: bool
) -> None:
    """``q.s IS NULL OR q1.s = q.s`` kept SQLite from the index on the subject (FILTER NOT
    EXISTS over 212 datasets at a million triples: 11.7 -> 0.6 ms); the ``IS NULL``
    stays for a variable an OPTIONAL may leave unbound."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    assert ("IS NULL OR" not in sql) is plain, sql


@pytest.mark.parametrize(("query", "looked_up"), [
    ("SELECT ?a ?u WHERE { ?a :type :Array OPTIONAL { ?a :units ?u FILTER(?u = 'K') } }", True),
    ("SELECT ?a ?n ?t WHERE { ?a :n ?n OPTIONAL { ?a :title ?t FILTER(CONTAINS(?t, STR(?n)) && ?n > 2) } }", True),
    ("SELECT ?a ?b ?w WHERE { ?a :member ?b OPTIONAL { ?b :when ?w . ?b :member ?c FILTER(?w > '2024-06-01T00:00:00Z'^^xsd:dateTime && isIRI(?c)) } }", True),
    ("SELECT ?a ?u WHERE { ?a :type :Array OPTIONAL { ?a :units ?u FILTER NOT EXISTS { ?a :dtype 'int16' } } }", True),
    ("SELECT ?a ?u WHERE { ?a :n ?n OPTIONAL { ?a :units ?u FILTER(?u = 'none') } }", True),  # the filter never holds
    # a variable the right side may leave unbound, which the filter reads (the first
    # review: looked up, it made the condition NULL and the OPTIONAL never match)
    ("SELECT ?a ?n WHERE { ?a :type :Array OPTIONAL { ?a :n ?n OPTIONAL { ?a :units ?u } FILTER(COALESCE(?u, ?n) != 'K') } }", None),
    ("SELECT ?a ?n WHERE { ?a :type :Array OPTIONAL { ?a :n ?n BIND(?nothing AS ?y) FILTER(!BOUND(?y)) } }", False),
    # a condition that is always an error: a NULL PostgreSQL typed as text
    ("SELECT ?a ?n WHERE { ?a :type :Array OPTIONAL { ?a :n ?n FILTER(?n > 'chat'@fr) } }", True),
])
def test_an_optional_filter_reads_the_right_sides_terms_in_its_condition(
    catalogue_ds: Dataset, memory: Dataset, query: str, looked_up: bool | None
) -> None:
    """The filter of an OPTIONAL reads the right side's terms in a scalar subquery of the
    ON condition: joined into the right-hand group, SQLite materialised the group whole
    (every quad of the predicate, with its term) before the LEFT JOIN (4.5 -> 0.6 ms)."""
    got, log = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))
    sql = next(e.sql for e in log if e.sql)
    if looked_up is not None:  # (None: some terms looked up, some joined)
        assert (not re.search(r"LEFT JOIN \([^()]*JOIN terms", sql)) is looked_up, sql


def test_values_with_a_nul_character(catalogue_ds: Dataset, memory: Dataset) -> None:
    """PostgreSQL text cannot hold NUL: such a VALUES is rdflib's there (it failed)."""
    query = 'SELECT ?v WHERE { VALUES ?v { "x\\u0000y" :a1 } }'
    got, _ = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))


@pytest.mark.parametrize("query", [
    # rdflib evaluates these OPTIONALs for each left row, with its values bound: the
    # VALUES inside keeps the rows that agree with them (all rows were paired with every
    # left row; the second review found both)
    "SELECT ?a ?u ?b WHERE { ?a :n ?n BIND(IF(?n > 2, 'K', 'none') AS ?u) OPTIONAL { VALUES ?u { 't1' } ?b :units 'K' } }",
    "SELECT ?b ?x ?a ?t WHERE { ?b :units ?x OPTIONAL { VALUES ?x { :zz } ?a :type ?t } }",
    "SELECT ?b ?x ?a WHERE { ?b :units ?x OPTIONAL { VALUES ?x { 'K' :zz UNDEF } ?a :type :Array } }",
])
def test_values_under_bindings_from_outside(catalogue_ds: Dataset, memory: Dataset, query: str) -> None:
    got, _ = _run(catalogue_ds, query)
    assert _bag(got) == _bag(_rows(memory.query(P + query)))


@pytest.mark.parametrize("query", [
    # the closure's first step and its zero-length pairs read the arrays' lists
    "SELECT ?a ?d WHERE { ?a :dt :f32 ; :dims ?d . ?d :rest*/:first :depth }",
    # ... and the hinge (SQLite) the same nodes a third time
    "SELECT ?g ?a ?n WHERE { ?g :member ?a . ?a :dt :f32 ; :dims ?d . ?d :rest* ?c . ?c :first ?n }",
    # on PostgreSQL read once (no zero-length pairs, no hinge): written out where it is read
    "SELECT ?a ?c WHERE { ?a :dt :f32 ; :dims ?d . ?d :rest+ ?c }",
])
def test_a_closure_reads_its_seeds_from_one_shared_set(db_url: str, query: str) -> None:
    """The nodes a closure is seeded from (the values its patterns give one end) are one
    common table expression where the statement reads them more than once: written out
    at each place, their join ran up to three times (benchmark query 1 at a million
    triples: SQLite 314 -> 181 ms, PostgreSQL 353 -> 273 ms)."""
    quads = [("g", "member", f"a{i}", "g1") for i in range(6)]
    for i in range(6):
        quads += [(f"a{i}", "dt", "f32" if i % 2 else "i16", "g1"), (f"a{i}", "dims", f"l{i}_0", "g1")]
        for k, name in enumerate(["time", "depth", "lat"][: 1 + i % 3]):
            quads.append((f"l{i}_{k}", "first", name, "g1"))
            quads.append((f"l{i}_{k}", "rest", f"l{i}_{k + 1}" if k < i % 3 else "nil", "g1"))
    quads.append(("a1", "dt", "f32", "g2"))  # a copy in another graph: the union holds it once
    with _answered(db_url, quads, query) as (store, sql):
        seed_joins = re.findall(r"SELECT DISTINCT q\d+\.[so] AS n\nFROM quads", sql)
        assert len(seed_joins) == 1, sql  # the seeds' join, written once
        shared = re.match(r"WITH (seeds\d+) AS (MATERIALIZED )?\(\nSELECT DISTINCT", sql)
        postgres = store.engine.dialect.name == "postgresql"
        if "rest+" in query and postgres:
            assert shared is None, sql
        else:
            assert shared is not None, sql
            assert (shared.group(2) is not None) is postgres
            assert sql.count(f"FROM {shared.group(1)} AS ") >= 2


@pytest.mark.parametrize(("query", "quads"), [
    # benchmark query 1's shape: 40 arrays' lists against the 2 list cells holding
    # :depth (the constants around each end tie)
    ("SELECT ?a WHERE { ?a :dt :f32 ; :dims ?d . ?d :rest*/:first :depth }",
     [q for i in range(40) for q in (
         (f"a{i}", "dt", "f32", "g1"), (f"a{i}", "dims", f"l{i}_0", "g1"),
         *((f"l{i}_{k}", "first", "depth" if i % 20 == 0 and k == 1 else f"dim{k}", "g1") for k in range(3)),
         *((f"l{i}_{k}", "rest", f"l{i}_{k + 1}" if k < 2 else "nil", "g1") for k in range(3)))]),
    # query 13's: 3 datasets (more constants around them) against 6 arrays named :x,
    # but from a dataset :member fans out to 10 arrays, from an array it climbs to one
    ("SELECT DISTINCT ?d WHERE { ?d :type :Dataset ; :kind :k . ?d :member+ ?a . ?a :name :x }",
     [q for i in range(3) for q in (
         (f"d{i}", "type", "Dataset", "g1"), (f"d{i}", "kind", "k", "g1"),
         *((f"d{i}", "member", f"a{i}_{k}", "g1") for k in range(10)),
         *((f"a{i}_{k}", "name", "x" if k < 2 else f"n{k}", "g1") for k in range(10)))]),
    # a walk down a tree multiplies at every level: 20 groups, 4 subgroups each, 4 arrays
    # each: one step of the groups' (80 nodes) looks cheaper than the 320 arrays, three
    # (1,680) do not (the review's shape: 1,000 groups down, 0.39 s against 0.28 s up)
    ("SELECT ?g ?a WHERE { ?g :type :Group . ?g :member+ ?a . ?a :dt :f32 }",
     [q for i in range(20) for q in (
         (f"g{i}", "type", "Group", "g1"),
         *((f"g{i}", "member", f"s{i}_{k}", "g1") for k in range(4)),
         *((f"s{i}_{k}", "member", f"a{i}_{k}_{j}", "g1") for k in range(4) for j in range(4)),
         *((f"a{i}_{k}_{j}", "dt", "f32", "g1") for k in range(4) for j in range(4)))]),
    # an inverse step seeded from its object walks the predicate forwards, reading quads
    # directly: as ^^member it was a derived table of every member quad, joined again in
    # each round (104 s against 0.5 s at a million triples; found by the review)
    ("SELECT ?g ?a WHERE { ?a :dt :f32 . ?a (^:member)+ ?g . ?g :type :Group }",
     [("g0", "type", "Group", "g1"), ("g0", "member", "a0", "g1"), ("g0", "member", "a1", "g1"),
      ("g1", "member", "g0", "g1"), *((f"a{i}", "dt", "f32", "g1") for i in range(200))]),
])
def test_a_closure_is_seeded_from_the_end_that_walks_fewer_rows(db_url: str, query: str,
                                                                quads: list[tuple[str, str, str, str]]) -> None:
    """The end a closure is walked from costs the rows of its most selective pattern times
    the step's typical fan-out that way (:mod:`catalogue.graph.sparql.cardinality`):
    counting constants seeded query 1 from 11,740 arrays' lists rather than 2,558 list
    cells (SQLite 181 -> 101 ms at a million triples), and rows alone would seed query 13
    from the datasets, below which everything lies. SQLite only: PostgreSQL's planner
    misjudged the other end's joined patterns (472 ms against about 420 ms for query 1)."""
    with _answered(db_url, quads, query) as (store, sql):
        # walked backwards, from the object's end (PostgreSQL: as the constants decide)
        assert (") AS ci_" in sql) is (store.engine.dialect.name == "sqlite"), sql
        # each recursive round reads quads, not a derived table of every quad of the step
        assert re.search(r"FROM \(\nSELECT DISTINCT q\d+\.s AS s, q\d+\.o AS o FROM quads", sql) is None, sql


@pytest.mark.parametrize("query", [
    "SELECT ?x WHERE { ?x (^:member)+ :root }",  # walked back from a constant object
    "SELECT ?x WHERE { ?x (^:member)* :root }",
    "SELECT ?x WHERE { :a0 (^:member)+ ?x }",  # ... and from a constant subject
])
def test_an_inverse_step_walked_backwards_reads_quads(db_url: str, query: str) -> None:
    """Walked backwards, ``(^p)+`` is ``p+``: its rounds read ``quads`` by index. As
    ``^^p`` each round joined a derived table of every ``p`` quad (found by a review,
    seeded from a closure's object; the same held from a constant object)."""
    quads = [("root", "member", f"g{i}", "g1") for i in range(3)]
    quads += [(f"g{i}", "member", f"a{i}", "g1") for i in range(3)] + [("g0", "member", "a0", "g2")]
    with _answered(db_url, quads, query) as (_store, sql):
        assert re.search(r"FROM \(\nSELECT DISTINCT q\d+\.s AS s, q\d+\.o AS o FROM quads", sql) is None, sql
        assert re.search(r"FROM quads st\d+ WHERE st\d+\.p = \d+", sql), sql


def test_a_distinct_query_reads_the_union_graph_once_over_its_projection(db_url: str) -> None:
    """SELECT DISTINCT over the union of graphs: the copies of a triple in two graphs and
    the solutions differing only in a variable left out are merged by one DISTINCT over
    the projected variables, below the ORDER BY's reading of terms; a function drawing a
    value per solution keeps the union graph's own DISTINCT first."""
    quads = [("d1", "member", "a1", "g1"), ("d1", "member", "a1", "g2"), ("d1", "member", "a2", "g1"),
             ("a1", "name", "t", "g1"), ("a2", "name", "t", "g1"), ("d2", "member", "a3", "g2"),
             ("a3", "name", "t", "g2")]
    query = "SELECT DISTINCT ?d WHERE { ?d :member+ ?a . ?a :name :t } ORDER BY DESC(?d)"
    with _answered(db_url, quads, query) as (_store, sql):
        inner = [c for c in re.findall(r"SELECT DISTINCT ([^\n]*)\nFROM quads", sql) if ' AS "v' in c]
        assert len(inner) == 1 and inner[0].count(" AS ") == 1, sql  # ?d alone, not ?a
    drawn = "SELECT DISTINCT ?d (RAND() < 2 AS ?r) WHERE { ?d :member ?a }"
    with _answered(db_url, quads, drawn) as (_store, sql):
        assert re.search(r'SELECT DISTINCT [^\n]*"v0"[^\n]*"v1"[^\n]*\nFROM quads', sql), sql


def test_describe_of_odd_iris_in_a_graph_and_with_reifications_matches_memory(db_url: str) -> None:
    """On both databases, as rdflib's Memory store answers: quotes, percent signs,
    ``:name``-like text and non-ASCII in the described IRIs; an IRI not stored describes
    nothing; the union, one graph, a graph not stored; reified statements about a resource
    are part of its description once ``rdf:subject`` is stored."""
    from rdflib import BNode, URIRef
    from rdflib.compare import isomorphic
    from rdflib.namespace import RDF

    from catalogue.graph.store import SQLStore

    g_iri, other_iri, q = URIRef("http://x/g"), URIRef("http://x/other"), URIRef("http://x/q")
    braces_iri = URIRef("http://x/{q}")  # a graph named so (through the API: SPARQL cannot write it)
    odd = [URIRef("http://x/it's"), URIRef("http://x/50%25%s"), URIRef("http://x/é"), URIRef("urn:x:abc")]
    store = SQLStore(db_url)
    memory = Dataset(default_union=True)
    try:
        for ds in (Dataset(store=store), memory):
            for i, iri in enumerate(odd):
                ds.graph(g_iri).add((iri, q, Literal(i)))
                ds.graph(other_iri).add((iri, q, Literal("elsewhere")))
            ds.graph(braces_iri).add((odd[0], q, Literal("in braces")))
        store.commit()

        def both(query: str, graph: URIRef | None = None) -> tuple[Graph, Graph]:
            mine = (Dataset(store=store, default_union=True) if graph is None
                    else Dataset(store=store).graph(graph)).query(query).graph
            theirs = (memory if graph is None else memory.graph(graph)).query(query).graph
            store.rollback()
            return mine, theirs

        everything = "DESCRIBE " + " ".join(f"<{iri}>" for iri in [*odd, URIRef("http://x/unstored")])
        for _asked in range(2):  # the second time from the statement kept (PostgreSQL)
            for graph, size in ((None, 9), (g_iri, 4), (braces_iri, 1), (URIRef("http://x/unstored-graph"), 0)):
                mine, theirs = both(everything, graph)
                assert isomorphic(mine, theirs) and len(mine) == len(theirs) == size
        statement = BNode()
        for ds in (Dataset(store=store), memory):
            ds.graph(g_iri).addN([(statement, RDF.type, RDF.Statement, ds.graph(g_iri)),
                                  (statement, RDF.subject, odd[0], ds.graph(g_iri)),
                                  (statement, RDF.predicate, q, ds.graph(g_iri)),
                                  (statement, RDF.object, Literal(0), ds.graph(g_iri))])
        store.commit()
        mine, theirs = both(f"DESCRIBE <{odd[0]}>")
        assert (statement, RDF.subject, odd[0]) in mine
        assert isomorphic(mine, theirs) and len(mine) == len(theirs)
    finally:
        store.destroy()
        store.close()


@pytest.mark.postgres
def test_a_kept_description_statement_reads_the_same_whatever_the_strings_setting(postgres_url: str) -> None:
    """PostgreSQL's DESCRIBE keeps its statement by IRIs, quoted once: an IRI with a
    backslash (bound by a WHERE: SPARQL cannot write one) must read the same with
    ``standard_conforming_strings`` on and off (psycopg writes it ``E'...'``; quoted
    ``'...'`` by hand, ``\\b`` would be a backspace with it off, and describe nothing)."""
    from rdflib import URIRef

    from catalogue.graph.store import SQLStore

    odd, q = URIRef("http://x/a\\b"), URIRef("http://x/q")
    store = SQLStore(postgres_url)
    try:
        Dataset(store=store).graph(URIRef("http://x/g")).add((odd, q, Literal(7)))
        store.commit()
        query = "DESCRIBE ?x WHERE { ?x <http://x/q> 7 }"
        from catalogue.graph.sparql import describe

        describe._PG_STATEMENTS.clear()  # the text made with the setting off first, then kept
        for conforming in ("off", "on", "off"):
            store.connection.exec_driver_sql(f"SET LOCAL standard_conforming_strings = {conforming}")
            described = Dataset(store=store, default_union=True).query(query).graph
            assert set(described) == {(odd, q, Literal(7))}, conforming
            store.rollback()
    finally:
        store.destroy()
        store.close()


@pytest.mark.postgres
def test_a_long_description_statement_is_not_kept(postgres_url: str) -> None:
    """PostgreSQL's DESCRIBE keeps statements of at most 16,384 characters: one describing
    hundreds of resources (bound by a WHERE that each harvest changes) is made afresh."""
    from rdflib import URIRef

    from catalogue.graph.sparql import describe
    from catalogue.graph.store import SQLStore

    q = URIRef("http://x/q")
    many = [URIRef(f"http://example.org/a/rather/long/path/to/resource/number/{i:05d}") for i in range(300)]
    store = SQLStore(postgres_url)
    try:
        graph = Dataset(store=store).graph(URIRef("http://x/g"))
        for i, iri in enumerate(many):
            graph.add((iri, q, Literal(i)))
        store.commit()
        describe._PG_STATEMENTS.clear()
        for query, kept in (("DESCRIBE ?x WHERE { ?x <http://x/q> ?n }", 0),
                            (f"DESCRIBE <{many[0]}> <{many[1]}>", 1)):
            described = Dataset(store=store, default_union=True).query(query).graph
            store.rollback()
            assert len(described) == (300 if kept == 0 else 2)
            assert len(describe._PG_STATEMENTS) == kept, query
    finally:
        store.destroy()
        store.close()
