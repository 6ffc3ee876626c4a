"""The Graph Store HTTP Protocol (/sparql/graph) against a real server, on both databases.

Every write is checked through another door: the graph read back by GET and directly from
the database, the search index (a dataset's graph dropped and put back is gone from and
back in ``/datasets`` at once), and rdflib's ``SPARQLUpdateStore`` writing through the
update endpoint while the Graph Store reads what it wrote.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import XSD
from rdflib.plugins.stores.sparqlstore import SPARQLUpdateStore

import catalogue
from catalogue.web.settings import Settings
from tests.support.paths import REPO
from tests.support.postgres import temporary_postgres_database
from tests.support.webserver import serve

EXAMPLES = sorted((REPO / "examples").glob("*.zarr"))
TOKEN = "gsp-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DOC = """@prefix ex: <http://example.org/> .
ex:a ex:p "01"^^<http://www.w3.org/2001/XMLSchema#integer> ; ex:q [ ex:r "blank" ] .
"""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request, tmp_path) -> Iterator[str]:
    """A fresh catalogue of the examples on each database."""
    if request.param == "sqlite":
        url = str(tmp_path / "catalogue.db")
        _harvest(url)
        yield url
        return
    with temporary_postgres_database() as url:
        _harvest(url)
        yield url


def _harvest(url: str) -> None:
    with catalogue.open(url) as cat:
        for example in EXAMPLES:
            assert cat.harvest(str(example)).ok


def _get(http: httpx.Client, graph: str | None, **params: str) -> httpx.Response:
    return http.get("/sparql/graph", params={"graph": graph, **params} if graph else {"default": "", **params})


def _turtle(response: httpx.Response) -> Graph:
    assert response.status_code == 200, response.text
    return Graph().parse(data=response.text, format="turtle")


def test_put_post_get_delete_one_graph(db: str) -> None:
    g = "urn:test:gsp"
    with serve(Settings(db=db, admin_token=TOKEN)) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert _get(http, g).status_code == 404
        turtle = {**AUTH, "Content-Type": "text/turtle"}
        response = http.put("/sparql/graph", params={"graph": g}, content=DOC, headers=turtle)
        assert response.status_code == 201, response.text
        got = _get(http, g, format="nt")
        assert isomorphic(Graph().parse(data=got.text, format="nt"), Graph().parse(data=DOC, format="turtle"))
        assert f'"01"^^<{XSD.integer}>' in got.text  # exact lexical forms (rdflib's parser would write "1")

        # POST merges; the same document again adds nothing (its blank nodes are its content's)
        more = "<http://example.org/b> <http://example.org/p> \"two\" .\n"
        response = http.post("/sparql/graph", params={"graph": g}, content=more,
                             headers={**AUTH, "Content-Type": "application/n-triples"})
        assert response.status_code == 204, response.text
        assert http.post("/sparql/graph", params={"graph": g}, content=DOC, headers=turtle).status_code == 204
        assert len(_turtle(_get(http, g))) == 4
        nt = _get(http, g, format="nt")
        assert nt.headers["content-type"].startswith("application/n-triples") and nt.text.count("\n") == 4

        # PUT replaces
        assert http.put("/sparql/graph", params={"graph": g}, content=more, headers=turtle).status_code == 204
        assert len(_turtle(_get(http, g))) == 1

        # a document that does not parse: 400 naming it, nothing changed
        response = http.put("/sparql/graph", params={"graph": g}, content="<http://x> <http://y> .",
                            headers=turtle)
        assert response.status_code == 400 and "request body" in response.json()["error"]
        assert len(_turtle(_get(http, g))) == 1
        for media in ("application/n-quads", "application/trig", "text/plain"):
            response = http.put("/sparql/graph", params={"graph": g}, content=more,
                                headers={**AUTH, "Content-Type": media})
            assert response.status_code == 415, media

        # the same through the library
        with catalogue.open(db) as cat:
            assert len(cat.graph(g)) == 1

        assert http.delete("/sparql/graph", params={"graph": g}, headers=AUTH).status_code == 204
        assert _get(http, g).status_code == 404
        assert http.delete("/sparql/graph", params={"graph": g}, headers=AUTH).status_code == 404

        # an empty document makes (or leaves) an empty graph, which exists
        assert http.put("/sparql/graph", params={"graph": g}, content="", headers=turtle).status_code == 201
        assert len(_turtle(_get(http, g))) == 0
        assert http.post("/sparql/graph", params={"graph": g}, content=DOC, headers=turtle).status_code == 204
        assert http.put("/sparql/graph", params={"graph": g}, content="", headers=turtle).status_code == 204
        assert len(_turtle(_get(http, g))) == 0


def test_requests_that_name_no_graph_or_lack_the_token(db: str) -> None:
    with serve(Settings(db=db, admin_token=TOKEN)) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/sparql/graph").status_code == 400
        assert http.get("/sparql/graph", params={"graph": "urn:x", "default": ""}).status_code == 400
        assert http.get("/sparql/graph", params={"graph": "not an iri"}).status_code == 400
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            response = http.put("/sparql/graph", params={"graph": "urn:x"}, content=DOC,
                                headers={**headers, "Content-Type": "text/turtle"})
            assert response.status_code == 401
            assert http.delete("/sparql/graph", params={"graph": "urn:x"}, headers=headers).status_code == 401
        assert _get(http, "urn:x").status_code == 404
    with serve(Settings(db=db)) as url, httpx.Client(base_url=url, timeout=30) as http:  # read-only server
        response = http.post("/sparql/graph", params={"default": ""}, content=DOC,
                             headers={**AUTH, "Content-Type": "text/turtle"})
        assert response.status_code == 403 and "read-only" in response.json()["error"]


def test_a_dataset_graph_dropped_and_put_back_leaves_and_rejoins_the_search_at_once(db: str) -> None:
    with serve(Settings(db=db, admin_token=TOKEN)) as url, httpx.Client(base_url=url, timeout=30) as http:
        before = http.get("/datasets", params={"limit": 100}).json()
        hit = before["hits"][0]
        graph = hit["iri"]
        saved = _get(http, graph, format="nt")
        assert saved.status_code == 200
        assert http.delete("/sparql/graph", params={"graph": graph}, headers=AUTH).status_code == 204
        after = http.get("/datasets", params={"limit": 100}).json()
        assert after["total"] == before["total"] - 1
        assert graph not in {h["iri"] for h in after["hits"]}
        response = http.put("/sparql/graph", params={"graph": graph}, content=saved.content,
                            headers={**AUTH, "Content-Type": "application/n-triples"})
        assert response.status_code == 201, response.text
        back = http.get("/datasets", params={"limit": 100}).json()
        assert back["total"] == before["total"]
        assert [h["iri"] for h in back["hits"]] == [h["iri"] for h in before["hits"]]


def test_rdflib_sparql_update_store_writes_what_the_graph_store_reads(db: str) -> None:
    g = URIRef("urn:test:rdflib")
    with serve(Settings(db=db, admin_token=TOKEN)) as url, httpx.Client(base_url=url, timeout=30) as http:
        store = SPARQLUpdateStore(query_endpoint=f"{url}/sparql", update_endpoint=f"{url}/sparql",
                                  headers=AUTH)
        ds = Dataset(store=store)
        graph = ds.graph(g)
        triple = (URIRef("urn:test:s"), URIRef("urn:test:p"), Literal("written by rdflib"))
        graph.add(triple)
        assert triple in _turtle(_get(http, str(g)))
        assert triple in graph  # read back through the query endpoint
        graph.remove(triple)
        assert _get(http, str(g)).status_code in (200, 404)
        assert triple not in graph
        store.close()


def test_cli_load_replace(tmp_path) -> None:
    from click.testing import CliRunner

    from catalogue.cli import main

    db = str(tmp_path / "c.db")
    first, second = tmp_path / "one.ttl", tmp_path / "two.nt"
    first.write_text(DOC)
    second.write_text("<http://example.org/b> <http://example.org/p> \"two\" .\n")
    runner = CliRunner()
    for path in (first, second):
        result = runner.invoke(main, ["load", str(path), "--graph", "urn:test:g", "--replace", "--db", db])
        assert result.exit_code == 0, result.output
    with catalogue.open(db) as cat:
        assert [str(o) for _s, _p, o in cat.graph("urn:test:g")] == ["two"]
    quads = tmp_path / "q.nq"
    quads.write_text("<http://x/s> <http://x/p> <http://x/o> <http://x/g> .\n")
    result = runner.invoke(main, ["load", str(quads), "--graph", "urn:test:g", "--replace", "--db", db])
    assert result.exit_code == 2 and "triple format" in result.output
