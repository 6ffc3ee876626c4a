"""A query asked again reuses its compiled statement, and only while everything it was
compiled from is the same: a constant's term id (a term collected and stored again has a
new one), the datatypes, the database (another catalogue's ids differ)."""

from __future__ import annotations

import pytest

import catalogue
from catalogue.graph.sparql import compiler as compiler_module
from catalogue.graph.sparql.statement_cache import STATEMENTS

QUERY = "SELECT ?s WHERE { ?s <http://x/p> 'needle' }"


@pytest.fixture
def compiled(monkeypatch) -> list[str]:
    """The statements actually compiled (not taken from the cache)."""
    made: list[str] = []
    original = compiler_module.Compiler.statement

    def counting(self, part, **kwargs):
        statement = original(self, part, **kwargs)
        made.append(statement.sql)
        return statement

    monkeypatch.setattr(compiler_module.Compiler, "statement", counting)
    STATEMENTS.clear()
    return made


def _subjects(cat: catalogue.Catalogue, query: str = QUERY) -> set[str]:
    return {str(row[0]) for row in cat.query(query)}


def test_a_query_asked_again_is_compiled_once(db_url, compiled):
    with catalogue.open(db_url) as cat:
        cat.update("INSERT DATA { <http://x/a> <http://x/p> 'needle' }")
        assert _subjects(cat) == {"http://x/a"}
        assert _subjects(cat) == {"http://x/a"}
        assert len(compiled) == 1


def test_a_constant_stored_again_under_a_new_id_is_compiled_again(db_url, compiled):
    with catalogue.open(db_url) as cat:
        cat.update("INSERT DATA { <http://x/a> <http://x/p> 'needle' . <http://x/keep> <http://x/q> 1 }")
        assert _subjects(cat) == {"http://x/a"}
        cat.update("DELETE DATA { <http://x/a> <http://x/p> 'needle' }")
        cat.store.gc()
        cat.store.commit()
        assert _subjects(cat) == set()  # 'needle' is no stored term now
        cat.update("INSERT DATA { <http://x/b> <http://x/p> 'needle' }")  # a new id
        assert _subjects(cat) == {"http://x/b"}
        assert len(compiled) == 3


def test_two_catalogues_with_different_ids_each_get_their_own_answer(tmp_path, compiled):
    first, second = str(tmp_path / "one.db"), str(tmp_path / "two.db")
    with catalogue.open(first) as one, catalogue.open(second) as two:
        one.update("INSERT DATA { <http://x/a> <http://x/p> 'needle' }")
        two.update("INSERT DATA { <http://x/z> <http://x/other> 'hay' . <http://x/b> <http://x/p> 'needle' }")
        for _ in range(2):
            assert _subjects(one) == {"http://x/a"}
            assert _subjects(two) == {"http://x/b"}  # one entry per query: each recompiles


def test_a_statement_with_a_spatial_lookup_is_not_kept(db_url, compiled):
    """Its geometry would be shared by the threads that take it from the cache, and GEOS's
    prepared geometries are not safe to use from two threads at once (the process
    aborted); and its parameters are filled in before each run."""
    query = ("PREFIX geo: <http://www.opengis.net/ont/geosparql#> "
             "PREFIX geof: <http://www.opengis.net/def/function/geosparql/> "
             "SELECT ?s WHERE { ?s <http://x/where> ?w FILTER(geof:sfIntersects(?w, "
             "'POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))'^^geo:wktLiteral)) }")
    with catalogue.open(db_url) as cat:
        cat.update("PREFIX geo: <http://www.opengis.net/ont/geosparql#> INSERT DATA { "
                   "<http://x/in> <http://x/where> 'POINT(5 5)'^^geo:wktLiteral . "
                   "<http://x/out> <http://x/where> 'POINT(50 50)'^^geo:wktLiteral }")
        assert _subjects(cat, query) == {"http://x/in"}
        cat.update("PREFIX geo: <http://www.opengis.net/ont/geosparql#> INSERT DATA { "
                   "<http://x/in2> <http://x/where> 'POINT(6 6)'^^geo:wktLiteral }")
        assert _subjects(cat, query) == {"http://x/in", "http://x/in2"}
    assert len(compiled) == 2
