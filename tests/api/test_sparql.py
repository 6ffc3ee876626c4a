"""SPARQL over the catalogue from Python: what the endpoint does, without the web.

``Catalogue.answer`` (a whole answer under limits, over an explicit dataset) and
``Catalogue.update`` (SPARQL Update, committed whole) raise the library's errors;
``catalogue.rdf.results.serialise`` writes what the endpoint writes.
"""

from __future__ import annotations

import json

import pytest
from rdflib import URIRef

import catalogue
from catalogue.errors import QueryError, TooLarge
from catalogue.graph.sparql.dataset import RDFDataset
from catalogue.rdf.results import serialise


def test_answer_limits_dataset_and_errors(db_url, good_stores) -> None:
    store = good_stores["xarray_cf_v3"]
    root = store.absolute().as_uri()
    with catalogue.open(db_url) as cat:
        cat.harvest(str(store))
        answer = cat.answer("SELECT ?a WHERE { ?a a zarr:Array }", max_results=10)
        assert answer.form == "SELECT" and len(answer.rows) == 4
        body = json.loads(serialise(answer, "json"))
        assert len(body["results"]["bindings"]) == 4
        with pytest.raises(TooLarge, match="max_results"):
            cat.answer("SELECT ?a WHERE { ?a a zarr:Array }", max_results=3)
        # an explicit dataset of a graph that is not catalogued is empty, never fetched
        empty = cat.answer("ASK { ?s ?p ?o }", dataset=RDFDataset(("http://example.org/absent",)))
        assert empty.boolean is False
        assert cat.answer("ASK { ?s ?p ?o }", dataset=RDFDataset((root,))).boolean is True
        forms: list[str] = []
        graph = cat.answer("CONSTRUCT WHERE { ?a a zarr:Array }", check_form=forms.append).graph
        assert forms == ["CONSTRUCT"] and graph is not None and len(graph) == 4
        with pytest.raises(QueryError, match="malformed query"):
            cat.answer("SELECT WHERE")
        with pytest.raises(QueryError, match="SERVICE"):
            cat.answer("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")


def test_update_commits_or_refuses(db_url) -> None:
    graph = "http://example.org/edits"
    with catalogue.open(db_url) as cat:
        cat.update(f"INSERT DATA {{ GRAPH <{graph}> {{ <http://example.org/s> <http://example.org/p> 1 }} }}")
        assert (URIRef("http://example.org/s"), None, None) in cat.dataset
        with pytest.raises(QueryError, match="LOAD"):
            cat.update("LOAD <http://example.org/data.ttl>")
        with pytest.raises(QueryError, match="malformed update"):
            cat.update("INSERT NOTHING")
        with pytest.raises(QueryError, match="update failed"):
            cat.update(f"INSERT DATA {{ GRAPH <{graph}x> {{ <http://example.org/t> <http://example.org/p> 2 }} }}; "
                       f"CREATE GRAPH <{graph}>")
        assert (URIRef("http://example.org/t"), None, None) not in cat.dataset
