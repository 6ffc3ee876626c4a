"""``Catalogue.query`` with ``FROM``/``FROM NAMED`` reads the catalogue's graphs of those
names, never the web (rdflib on its own fetches a graph it does not hold, into memory)."""

from __future__ import annotations

import catalogue
from tests.web.sparql.test_endpoint import counting_http_server


def test_from_names_catalogue_graphs_and_fetches_nothing(tmp_path):
    with catalogue.open(str(tmp_path / "c.db")) as cat, counting_http_server() as (remote, hits):
        cat.update("INSERT DATA { GRAPH <urn:one> { <urn:s> <urn:p> 'one' } GRAPH <urn:two> { <urn:s> <urn:p> 'two' } }")
        assert {str(r[0]) for r in cat.query("SELECT ?o FROM <urn:one> WHERE { ?s ?p ?o }")} == {"one"}
        named = "SELECT ?g ?o FROM NAMED <urn:two> WHERE { GRAPH ?g { ?s ?p ?o } }"
        assert {(str(r[0]), str(r[1])) for r in cat.query(named)} == {("urn:two", "two")}
        assert list(cat.query(f"SELECT ?o FROM <{remote}/x.ttl> WHERE {{ ?s ?p ?o }}")) == []
        assert cat.query(f"ASK FROM NAMED <{remote}/y.ttl> {{ GRAPH ?g {{ ?s ?p ?o }} }}").askAnswer is False
        assert hits == []
        assert {str(r[0]) for r in cat.query("SELECT ?o WHERE { ?s ?p ?o }")} == {"one", "two"}
