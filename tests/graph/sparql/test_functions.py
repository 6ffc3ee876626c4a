"""SPARQL's built-in functions compiled to SQL (catalogue/graph/sparql/functions.py).

Each query must run as SQL (no fallback to rdflib) and give Oxigraph's answers, compared
by value for numbers (engines write computed numbers differently) and term by term
otherwise, on both databases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from rdflib import Dataset, Literal, URIRef
from rdflib.namespace import XSD

from catalogue.graph import SQLStore
from catalogue.graph.sparql.arithmetic import sparql_arith, sparql_lex
from tests.graph.sparql.reference import compiled, same_as_oxigraph

EX = "http://x/"
VALUES = [
    ("chat", None, None), ("Chat", None, "en"), ("chat noir", None, "fr"), ("abc", XSD.string, None),
    ("", None, None), ("épée ☃", None, None), ("a/b c?d", None, None), ("12", None, None),
    ("1.5", None, None), ("1e2", None, None), ("-INF", None, None), ("x", None, None),
    ("5", XSD.integer, None), ("-2.5", XSD.decimal, None), ("2.5E0", XSD.double, None), ("3", XSD.byte, None),
    ("true", XSD.boolean, None), ("false", XSD.boolean, None),
    ("2020-03-04T05:06:07.5Z", XSD.dateTime, None), ("-0044-03-15T12:00:00-05:30", XSD.dateTime, None),
    ("1999-12-31T23:59:59", XSD.dateTime, None), ("2020-01-01", XSD.date, None),
]
PREFIX = f"PREFIX xsd: <{XSD}> PREFIX : <{EX}> "


def _ox_literal(value: str, dt: URIRef | None, lang: str | None) -> ox.Literal:
    if lang:
        return ox.Literal(value, language=lang)
    return ox.Literal(value, datatype=ox.NamedNode(str(dt))) if dt else ox.Literal(value)


@pytest.fixture(scope="module")
def catalogue_ds(module_db_url: str) -> Iterator[Dataset]:
    store = SQLStore(module_db_url)
    ds = Dataset(store=store, default_union=True)
    g = ds.graph(URIRef(f"{EX}g"))
    for i, (value, dt, lang) in enumerate(VALUES):
        g.add((URIRef(f"{EX}{i}"), URIRef(f"{EX}v"), Literal(value, datatype=dt, lang=lang, normalize=False)))
    g.add((URIRef(f"{EX}iri"), URIRef(f"{EX}v"), URIRef(f"{EX}thing")))
    store.commit()
    yield ds
    store.close()


@pytest.fixture(scope="module")
def oxigraph() -> ox.Store:
    store = ox.Store()
    for i, (value, dt, lang) in enumerate(VALUES):
        store.add(ox.Quad(ox.NamedNode(f"{EX}{i}"), ox.NamedNode(f"{EX}v"), _ox_literal(value, dt, lang)))
    store.add(ox.Quad(ox.NamedNode(f"{EX}iri"), ox.NamedNode(f"{EX}v"), ox.NamedNode(f"{EX}thing")))
    return store


def _compiled(ds: Dataset, query: str) -> list:
    return compiled(ds, PREFIX + query)


def _same_as_oxigraph(ds: Dataset, oxi: ox.Store, query: str) -> Counter:
    return same_as_oxigraph(ds, oxi, PREFIX + query)


ONE = "SELECT ?a (%s AS ?r) WHERE { ?x :v ?a }"
TWO = "SELECT ?a ?b (%s AS ?r) WHERE { ?x :v ?a . ?y :v ?b FILTER(?x != ?y || true) }"


@pytest.mark.parametrize("query", [
    ONE % "STRLEN(?a)",
    ONE % "SUBSTR(?a, 2)",
    ONE % "SUBSTR(?a, 2, 3)",
    ONE % "SUBSTR(?a, 0, 2)",
    ONE % "SUBSTR(?a, 1.5, 2)",  # positions are xsd:integer (rdflib rounds decimals)
    ONE % "SUBSTR(?a, -1)",
    ONE % "SUBSTR(?a, 2, -1)",
    ONE % "CONCAT(?a, ?a)",
    ONE % 'CONCAT(?a, "-", ?a)',
    ONE % 'CONCAT(?a, "x"@en)',
    ONE % 'STRBEFORE(?a, "a")',
    ONE % 'STRAFTER(?a, "a")',
    ONE % 'STRBEFORE(?a, "")',
    ONE % 'STRAFTER(?a, "a"@en)',
    ONE % 'STRBEFORE(?a, "zz")',
    ONE % "ENCODE_FOR_URI(?a)",
    ONE % "COALESCE(?nothing, ?a)",
    ONE % "COALESCE(1/0, STRLEN(?a), 7)",
    ONE % 'IF(isNumeric(?a), ?a * 2, "no")',
    ONE % "IF(?a, 1, 0)",
    # The W3C tests (strdt03, strlang03) make an xsd:string argument an error; Oxigraph takes it.
    'SELECT ?a (STRDT(?a, :dt) AS ?r) WHERE { ?x :v ?a FILTER(str(?a) != "abc") }',
    'SELECT ?a (STRLANG(?a, "de") AS ?r) WHERE { ?x :v ?a FILTER(str(?a) != "abc") }',
    ONE % "IRI(?a)",
    ONE % "ABS(?a)", ONE % "CEIL(?a)", ONE % "FLOOR(?a)", ONE % "ROUND(?a)",
    ONE % "xsd:integer(?a)", ONE % "xsd:decimal(?a)", ONE % "xsd:double(?a)", 'SELECT ?a (xsd:string(?a) AS ?r) WHERE { ?x :v ?a FILTER(datatype(?a) != xsd:double) }',
    ONE % "YEAR(?a)", ONE % "MONTH(?a)", ONE % "DAY(?a)", ONE % "HOURS(?a)", ONE % "MINUTES(?a)",
    ONE % "SECONDS(?a)", ONE % "TZ(?a)", ONE % "TIMEZONE(?a)",
    ONE % "MD5(?a)", ONE % "SHA256(?a)", ONE % "SHA384(?a)", ONE % "SHA512(?a)",
    TWO % "CONCAT(?a, ?b)",
    TWO % "STRBEFORE(?a, ?b)",
])
def test_functions_give_oxigraphs_answers(catalogue_ds, oxigraph, query):
    _same_as_oxigraph(catalogue_ds, oxigraph, query)


def test_sha1_is_compiled_on_sqlite(module_db_url, catalogue_ds, oxigraph):
    """PostgreSQL has no SHA-1 without pgcrypto: there it is rdflib's."""
    if module_db_url.startswith("postgresql"):
        pytest.skip("SHA1 stays with rdflib on PostgreSQL")
    _same_as_oxigraph(catalogue_ds, oxigraph, ONE % "SHA1(?a)")


def test_functions_in_filters(catalogue_ds, oxigraph):
    _same_as_oxigraph(catalogue_ds, oxigraph, 'SELECT ?a WHERE { ?x :v ?a FILTER(YEAR(?a) < 2000 && STRLEN(STR(?a)) > 3) }')
    _same_as_oxigraph(catalogue_ds, oxigraph, "SELECT ?a WHERE { ?x :v ?a FILTER(xsd:integer(?a) >= 5) }")


@pytest.mark.parametrize(("op", "source", "expected"), [
    ("to0", "S: 12 ", "12"), ("to0", "S:1.5", None), ("to0", "3:2.7", "2"), ("to0", "3:-2.7", "-2"),
    ("to0", "3:inf", None), ("to1", "3:0.1", "0.1"), ("to1", "S:.5", "0.5"), ("to3", "S:-INF", "-INF"),
    ("to3", "B:true", "1.0E0"), ("to0", "B:false", "0"), ("to0", "B:yes", None), ("to2", "S:abc", None),
    ("round", "1:2.5", "3"), ("round", "1:-2.5", "-2"), ("to1", "S: 1.50 ", "1.50"), ("abs", "1:-0.50", "0.50"), ("ceil", "3:-0.5", "-0.0E0"), ("abs", "0:-3", "3"),
])
def test_sqlite_casts_and_functions(op, source, expected):
    assert sparql_lex(sparql_arith(op, source, None)) == expected
