"""A short campaign of the query fuzzer (:mod:`tests.graph.sparql.fuzz`) on both databases:
random graphs and random queries, the compiler's answers checked against rdflib's Memory
store and Oxigraph (DESCRIBE against the Memory store). A longer one:
``python -m tests.graph.sparql.fuzz --seeds 20``."""

from __future__ import annotations

import random

import pytest

from tests.graph.sparql.fuzz import Engines, _answer, campaign, case, exact_literals, graph_quads


@pytest.mark.parametrize("seed", [1, 2])
def test_random_queries_agree_with_a_reference(db_url: str, seed: int) -> None:
    ran, problems = campaign(seed, 150, db_url)
    assert ran == 195  # and 30 closure ASKs, 15 DESCRIBEs
    assert not problems, "\n".join(problems)


def test_cases_are_reproducible() -> None:
    assert case(3, 17) == case(3, 17)
    assert case(3, 17).query != case(3, 18).query


def test_optional_first_then_a_union_beside_a_path_to_an_unstored_term(db_url: str) -> None:
    """Found by seed 603: the path to a term the database does not hold leaves the join
    to rdflib, which joins with a set of the union's solutions; the compiled branch
    ``?b ?p []`` gave its two solutions for ``s1`` without the blank node's value, so the
    set made them one and rows were lost (rdflib keeps the blank node in a solution)."""
    query = 'SELECT * WHERE { OPTIONAL { ?a ?p ?d . } ?a ex:p0 ?d . { ?b ?p [] . } UNION { ex:s0 ex:p0+ "chat"@en . } }'
    engines = Engines(graph_quads(random.Random(603)), db_url)
    try:
        with exact_literals():
            assert _answer(engines.catalogue_answer, query, False) == _answer(engines.memory_answer, query, False)
    finally:
        engines.close()


# Where the fuzzer's references depart from SPARQL. Each campaign disagreement traced
# row by row (seeds 3003-3010, 2026-11-29/30) came down to one of these: the catalogue
# answered as the specification says, and one reference or both did not. The data and
# the expected answers are written out here, so the cases hold whatever the references
# do next.
TRIG = """
@prefix ex: <http://fuzz.example/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:g1 {
  ex:a ex:n "x"^^xsd:integer , 1 ;
       ex:p1 ex:b ; ex:p2 ex:b ;
       ex:odd "q"^^ex:dt , 3 ;
       ex:loop ex:a , ex:c ;
       ex:blank [ ex:n 2 ] .
}
ex:g2 { ex:c ex:n 5 . }
"""

DEPARTURES = [
    pytest.param(
        'SELECT ?o WHERE { ex:a ex:n ?o FILTER isNumeric(?o) }',
        [{"o": "1"}],
        id="ill-typed-literal-is-not-numeric",  # 3003/54: rdflib counts "x"^^xsd:integer
    ),
    pytest.param(
        'SELECT ?s (MIN(?o) AS ?n) WHERE { ?s ex:nothing ?o } GROUP BY ?s',
        [{}],
        id="group-by-over-nothing-is-one-empty-row",  # 3003/54: Oxigraph gives none (W3C agg-empty-group: one)
    ),
    pytest.param(
        'SELECT ?c WHERE { ex:a ex:loop* ?c }',
        [{"c": "http://fuzz.example/a"}, {"c": "http://fuzz.example/c"}],
        id="zero-or-more-visits-each-node-once",  # 3009/168: rdflib gives ex:a twice (itself and its loop)
    ),
    pytest.param(
        'SELECT ?g ?o WHERE { GRAPH ?g { { SELECT * WHERE { ex:c ex:n ?o } } } }',
        [{"g": "http://fuzz.example/g2", "o": "5"}],
        id="graph-around-a-subquery-binds-the-graph",  # 3009/168: Oxigraph leaves ?g unbound
    ),
    pytest.param(
        'SELECT (GROUP_CONCAT(str(?o)) AS ?c) WHERE { ex:a ex:blank ?o }',
        [{}],
        id="an-error-in-group-concat-leaves-it-unbound",  # 3010/69: rdflib gives STR of a blank node its label
    ),
    pytest.param(
        'SELECT ?x WHERE { ex:a (ex:p1|ex:p2) ?x }',
        [{"x": "http://fuzz.example/b"}, {"x": "http://fuzz.example/b"}],
        id="an-alternative-is-a-union",  # 3006/232: Oxigraph counts ex:b once
    ),
    pytest.param(
        'SELECT ?o WHERE { ex:a ex:odd ?o FILTER(?o NOT IN (2)) }',
        [{"o": "3"}],
        id="an-unknown-datatype-does-not-compare-with-a-number",  # 3006/232: rdflib keeps "q"^^ex:dt
    ),
    pytest.param(
        'SELECT ?o WHERE { ?s ex:p2 ?o . { ex:a ex:p1 ?o . MINUS { ?x ex:loop ?y } } }',
        [{"o": "http://fuzz.example/b"}],
        # seed 27, describe 4 (its WHERE, minimised): rdflib evaluates the MINUS with the
        # outer solution's bindings, so the domains meet and every row is removed
        id="minus-sharing-no-variable-removes-nothing-inside-a-join",
    ),
    pytest.param(
        'SELECT ?c WHERE { ex:c ex:n ?a . { ?c ex:n 5 . VALUES ?c { UNDEF ex:c } } }',
        [{"c": "http://fuzz.example/c"}, {"c": "http://fuzz.example/c"}],
        # seed 33, case 55 (minimised): the group has ex:c twice (through UNDEF and through
        # ex:c); rdflib joins it with the outer pattern as a set and keeps one
        id="a-group-joined-keeps-its-duplicate-solutions",
    ),
    pytest.param(
        'SELECT ?b WHERE { ?d ex:n ?o . { VALUES ?z { 1 } ?d ex:p1 ?y } UNION { ?d (ex:p1|ex:p2) ?b } }',
        [{"b": "http://fuzz.example/b"}] * 4 + [{}] * 2,
        # seed 40, case 143 (minimised): the same for a union's branch (rdflib gives ex:b
        # twice, Oxigraph too: it counts the alternative's ex:b once)
        id="a-union-joined-keeps-its-duplicate-solutions",
    ),
    pytest.param(
        'SELECT ?o WHERE { VALUES ?o { "01"^^<http://www.w3.org/2001/XMLSchema#integer> } FILTER(?o IN (1)) }',
        [{"o": "01"}],
        # seed 34, case 53: IN is a disjunction of = (numbers compare by value); rdflib
        # compares the terms
        id="in-compares-numbers-by-value",
    ),
    pytest.param(
        'SELECT ?o WHERE { ex:a ex:odd ?o . ?o ex:zz? ?x .'
        ' FILTER(?o != "2020-01-01T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }',
        [{"o": "3"}],
        # seed 301, case 53 (minimised): a number and a date-time are known to differ (the
        # W3C open-eq tests' KnownTypesDefault2Neq); "q"^^ex:dt may be anything, so its
        # != is an error. rdflib drops 3; Oxigraph keeps "q"^^ex:dt where a path follows
        id="not-equal-knows-types-and-not-an-unknown-datatype",
    ),
]


@pytest.mark.parametrize(("query", "expected"), DEPARTURES)
def test_where_a_reference_departs_the_catalogue_answers_as_sparql_says(
    db_url: str, query: str, expected: list[dict[str, str]]
) -> None:
    from collections import Counter

    from rdflib import Dataset

    from catalogue.graph.store import SQLStore

    store = SQLStore(db_url)
    try:
        ds = Dataset(store=store, default_union=True)
        ds.parse(data=TRIG, format="trig")
        store.commit()
        result = ds.query("PREFIX ex: <http://fuzz.example/> " + query)
        got = Counter(
            tuple(sorted((str(k), str(v)) for k, v in b.items())) for b in result.bindings
        )
        assert got == Counter(tuple(sorted(row.items())) for row in expected)
    finally:
        store.close()
