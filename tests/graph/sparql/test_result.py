"""The store's query result (:class:`catalogue.graph.sparql.result.StoreResult`) behaves as
rdflib's: the same rows, each a :class:`ResultRow` answering by position, name and
variable, read twice, empty solutions skipped; in a query, a generator read once."""

from __future__ import annotations

import pytest
from rdflib import Literal, URIRef, Variable
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.query import ResultRow

import catalogue
from catalogue.graph.sparql.result import StoreResult

A, B = Variable("a"), Variable("b")
SOLUTIONS = [{A: URIRef("urn:x"), B: Literal(1)}, {}, {A: Literal("y", lang="en")}, {B: Literal("z")}]


def _rows(result_class, generated: bool) -> tuple[list[ResultRow], list[ResultRow]]:
    bindings = (s for s in SOLUTIONS) if generated else list(SOLUTIONS)
    result = result_class({"type_": "SELECT", "bindings": bindings, "vars_": [A, B]})
    return list(result), list(result)


@pytest.mark.parametrize("generated", [True, False])
def test_rows_are_rdflibs(generated):
    ours, theirs = _rows(StoreResult, generated), _rows(SPARQLResult, generated)
    assert ours == theirs
    for mine, reference in zip(ours[0] + ours[1], theirs[0] + theirs[1], strict=True):
        assert type(mine) is ResultRow
        assert mine.labels == reference.labels
        assert mine.asdict() == reference.asdict()
        for name in ("a", "b", A, B):
            assert mine[name] == reference[name]
            assert mine.get(name, "?") == reference.get(name, "?")
        assert mine.a == reference.a and mine.b == reference.b
        with pytest.raises(KeyError):
            mine["c"]
        with pytest.raises(AttributeError):
            mine.c  # noqa: B018


def test_a_store_query_gives_such_rows(tmp_path):
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.update("INSERT DATA { GRAPH <urn:g> { <urn:s> <urn:p> 'one', 'two' } }")
        result = cat.query("SELECT ?o ?s WHERE { ?s <urn:p> ?o } ORDER BY ?o")
        assert isinstance(result, StoreResult)
        rows = list(result)
        assert [(str(r.o), str(r["s"])) for r in rows] == [("one", "urn:s"), ("two", "urn:s")]
        assert list(result) == rows
        assert len(result) == 2


def test_a_partly_read_generator_is_read_on_as_rdflib_reads_it():
    def passes(result_class) -> list[list[ResultRow]]:
        result = result_class({"type_": "SELECT", "bindings": (s for s in SOLUTIONS), "vars_": [A, B]})
        iterator = iter(result)
        first = [next(iterator)]
        return [first, list(result), list(iterator), list(result)]

    assert passes(StoreResult) == passes(SPARQLResult)
