"""The SPARQL 1.1 Protocol endpoint (/sparql) against a real server on a loopback port.

Real clients (SPARQLWrapper, rdflib's SPARQLStore, curl) talk to it unchanged;
answers are compared with ``Catalogue.query`` run directly on the same database.
The limits are checked where the work happens: a pathological query must come
back as 503 within seconds and leave nothing running in the database.
"""

from __future__ import annotations

import contextlib
import csv
import http.server
import io
import json
import pathlib
import shutil
import subprocess
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from rdflib import RDF, Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.query import Result

import catalogue
from catalogue.graph.deadline import QueryTimeout, check_deadline, query_deadline
from catalogue.rdf.vocabulary import ZARR
from catalogue.web.http.negotiation import best_media_type, parse_accept
from catalogue.web.settings import Settings
from catalogue.web.sparql.protocol import nesting_depth
from tests.support.paths import REPO as ROOT
from tests.support.postgres import temporary_postgres_database
from tests.support.webserver import WebServer, serve

EXAMPLES = sorted((ROOT / "examples").glob("*.zarr"))
SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
FORMATS = Namespace("http://www.w3.org/ns/formats/")

SELECT = """SELECT ?array ?path ?units WHERE {
  ?array a zarr:Array ; zarr:path ?path .
  OPTIONAL { ?array zarr:units ?units }
} ORDER BY ?array"""
ASK = "ASK { ?a a zarr:Array ; zarr:units 'K' }"
CONSTRUCT = "CONSTRUCT { ?array zarr:path ?path } WHERE { ?array a zarr:Array ; zarr:path ?path }"
DESCRIBE = "DESCRIBE ?d WHERE { ?d a dcat:Dataset }"
#: 770 triples to the fourth power: a COUNT the database cannot finish.
CROSS_PRODUCT = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
#: The pattern runs as SQL, the filter in rdflib (REPLACE with a pattern computed per row
#: is not compiled).
PYTHON_FILTER = (
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . "
    "FILTER(STRLEN(REPLACE(CONCAT(STR(?c), STR(?f)), STR(?c), 'y')) < 0) }"
)
#: Pure-Python work: rdflib joins and filters 27 million in-memory solutions.
_VALUES = " ".join(str(i) for i in range(300))
PYTHON_VALUES = (
    f"SELECT (COUNT(*) AS ?n) WHERE {{ VALUES ?x {{ {_VALUES} }} VALUES ?y {{ {_VALUES} }} "
    f"VALUES ?z {{ {_VALUES} }} FILTER(?x + ?y + ?z < 0) }}"
)

RESULT_MEDIA = ["application/sparql-results+json", "application/sparql-results+xml", "text/csv",
                "text/tab-separated-values"]
GRAPH_MEDIA = ["text/turtle", "application/n-triples", "application/ld+json", "application/rdf+xml"]
RDFLIB_GRAPH_FORMAT = {"text/turtle": "turtle", "application/n-triples": "nt",
                       "application/ld+json": "json-ld", "application/rdf+xml": "xml"}


# --------------------------------------------------------------------- fixtures


def harvest_examples(url: str) -> None:
    with catalogue.open(url) as cat:
        for example in EXAMPLES:
            report = cat.harvest(str(example))
            assert report.ok, report.errors


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory) -> str:
    """A SQLite catalogue of examples/*.zarr, harvested once for the module (read-only)."""
    path = tmp_path_factory.mktemp("sparql") / "catalogue.db"
    harvest_examples(str(path))
    return str(path)


@pytest.fixture(scope="module")
def catalogue_db(sqlite_db: str) -> str:
    """The database the module's servers serve; ``cat`` (tests/web/conftest.py) opens it
    directly for the reference answers."""
    return sqlite_db


@pytest.fixture(autouse=True)
def _fresh_reference(request) -> Iterator[None]:
    """End the reference connection's transaction after each test: a fresh snapshot
    next time, and no lock left behind (rdflib's DESCRIBE binds prefixes, a write)."""
    yield
    if "cat" in request.fixturenames:
        request.getfixturevalue("cat").store.rollback()


@pytest.fixture(scope="module")
def catalogue_sources() -> list[pathlib.Path]:
    """The stores in ``sqlite_db``: ``web_server`` (tests/web/conftest.py) serves it with the
    default limits."""
    return EXAMPLES


@pytest.fixture(scope="module")
def client(web_server: WebServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_server.base, timeout=30) as http:
        yield http


@pytest.fixture(scope="module")
def graphs(cat) -> list[str]:
    return [iri for iri, _ in cat.graphs()]


@pytest.fixture
def writable_db(sqlite_db: str, tmp_path) -> str:
    """A private copy of the harvested catalogue, for tests that write."""
    copy = tmp_path / "writable.db"
    shutil.copy(sqlite_db, copy)
    return str(copy)


@pytest.fixture(scope="module")
def postgres_db() -> Iterator[str]:
    """A PostgreSQL catalogue of the examples (skips without CATALOGUE_TEST_POSTGRES_URL)."""
    with temporary_postgres_database() as url:
        harvest_examples(url)
        yield url


def sparql(client: httpx.Client, query: str, accept: str | None = None, **params: Any) -> httpx.Response:
    headers = {"Accept": accept} if accept is not None else {}
    return client.get("/sparql", params={"query": query, **params}, headers=headers)


def error_of(response: httpx.Response) -> str:
    """The one-line error of a 4xx/5xx answer (and proof it is no stack trace)."""
    assert "Traceback" not in response.text
    body = response.json()
    assert body["status"] == response.status_code
    assert "\n" not in body["error"]
    return body["error"]


def rows(result: Result) -> set[tuple[Any, ...]]:
    return {tuple(row) for row in result}


# --------------------------------------------------------------------- unit: negotiation


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, "a/x"),
        ("", "a/x"),
        ("*/*", "a/x"),
        ("b/*", "b/y"),
        ("b/y;q=0.4, a/x;q=0.3", "b/y"),
        ("a/x;q=0, */*", "b/y"),  # explicitly refused, the rest acceptable
        ("a/*;q=0.2, a/x;q=0.9, b/y;q=0.5", "a/x"),  # the most specific range wins
        ("a/x;q=0.5, a/*;q=1", "a/z"),  # a/x pinned at 0.5 by its own range; a/z gets a/*
        ("c/d", None),
        ("a/x;q=0", None),
        ("a/x;q=abc, b/y", "b/y"),  # malformed range skipped
        ("garbage", "a/x"),  # nothing valid: as if no Accept header
        ("A/X", "a/x"),  # media types are case-insensitive
        ("a/x;charset=utf-8;q=0.7, */*;q=0.1", "a/x"),
    ],
)
def test_negotiate(accept: str | None, expected: str | None) -> None:
    assert best_media_type(accept, ["a/x", "b/y", "a/z"]) == expected


def test_parse_accept_ignores_accept_extensions_and_bad_q() -> None:
    assert parse_accept("text/csv;q=0.5;ext=1, */x, text/plain;q=2") == [("text", "csv", 0.5, 0)]


def test_nesting_depth_ignores_strings_iris_and_comments() -> None:
    assert nesting_depth("SELECT * { { ?s ?p '{{{{' } } # {{{{\n") == 2
    assert nesting_depth('ASK { <http://x/(a)> ?p """((( """ . FILTER((1)) }') == 3
    assert nesting_depth("{" * 500) == 500


# --------------------------------------------------------------------- real clients


def test_sparqlwrapper_select_json_xml_csv(web_server: WebServer, cat) -> None:
    from SPARQLWrapper import CSV, JSON, POST, POSTDIRECTLY, XML, SPARQLWrapper

    expected = [(str(r.array), str(r.path), None if r.units is None else str(r.units))
                for r in cat.query(SELECT)]
    assert len(expected) == 16

    client = SPARQLWrapper(web_server.base + "/sparql")
    client.setQuery(SELECT)
    client.setReturnFormat(JSON)
    data = client.query().convert()
    got = [(b["array"]["value"], b["path"]["value"], b.get("units", {}).get("value"))
           for b in data["results"]["bindings"]]
    assert got == expected
    assert data["head"]["vars"] == ["array", "path", "units"]

    client.setReturnFormat(XML)
    client.setMethod(POST)  # form-encoded POST
    document = client.query().convert()
    uris = [node.firstChild.data for node in document.getElementsByTagName("uri")]
    assert uris == [row[0] for row in expected]

    client.setReturnFormat(CSV)
    client.setRequestMethod(POSTDIRECTLY)  # application/sparql-query body
    table = list(csv.reader(io.StringIO(client.query().convert().decode("utf-8"))))
    assert table[0] == ["array", "path", "units"]
    assert [tuple(r[:2]) for r in table[1:]] == [row[:2] for row in expected]


def test_sparqlwrapper_ask_and_construct(web_server: WebServer, cat) -> None:
    from SPARQLWrapper import JSON, TURTLE, SPARQLWrapper

    client = SPARQLWrapper(web_server.base + "/sparql")
    client.setQuery(ASK)
    client.setReturnFormat(JSON)
    assert client.query().convert() == {"head": {}, "boolean": True}
    client.setQuery("ASK { ?a zarr:units 'no such unit' }")
    assert client.query().convert()["boolean"] is False

    client.setQuery(CONSTRUCT)
    client.setReturnFormat(TURTLE)
    answer = client.query()
    assert answer.response.headers["Content-Type"].startswith("text/turtle")
    graph = Graph().parse(data=answer.convert(), format="turtle")
    assert len(graph) == 16
    assert isomorphic(graph, cat.query(CONSTRUCT).graph)


def test_sparqlwrapper_errors_are_client_errors(web_server: WebServer) -> None:
    from SPARQLWrapper import JSON, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import QueryBadFormed

    client = SPARQLWrapper(web_server.base + "/sparql")
    client.setQuery("SELECT ?x WHERE { ?x ")
    client.setReturnFormat(JSON)
    with pytest.raises(QueryBadFormed, match="malformed query"):
        client.query()


def test_rdflib_sparqlstore(web_server: WebServer, cat, graphs: list[str]) -> None:
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    store = SPARQLStore(query_endpoint=web_server.base + "/sparql", returnFormat="json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from rdflib import ConjunctiveGraph

        union = ConjunctiveGraph(store=store)
    got = {(r.array, r.path) for r in union.query(SELECT)}
    assert got == {(r.array, r.path) for r in cat.query(SELECT)}
    assert union.query(ASK).askAnswer is True

    # A Graph named after one hierarchy: SPARQLStore sends default-graph-uri.
    one = graphs[0]
    graph = Graph(store=store, identifier=URIRef(one))
    expected = dict(cat.graphs())[one]
    assert len(graph) == expected
    arrays = set(graph.subjects(RDF.type, ZARR.Array))
    assert arrays and all(str(a).startswith(one + "/") for a in arrays)
    assert arrays == {
        r.a for r in cat.query(f"SELECT ?a WHERE {{ GRAPH <{one}> {{ ?a a zarr:Array }} }}")
    }

    # CONSTRUCT through SPARQLStore's default XML format (RDF/XML for graphs).
    xml_store = SPARQLStore(query_endpoint=web_server.base + "/sparql")
    constructed = Graph(store=xml_store).query(CONSTRUCT).graph
    assert isomorphic(constructed, cat.query(CONSTRUCT).graph)


def test_curl(web_server: WebServer, cat) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed, so the curl protocol test cannot run")
    expected = {str(r.array) for r in cat.query(SELECT)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([curl, "-sS", "--max-time", "30", "-w", "\n%{http_code} %{content_type}",
                               *args], capture_output=True, text=True, check=True, timeout=60)

    def split(done: subprocess.CompletedProcess[str]) -> tuple[str, str, str]:
        body, _, status_line = done.stdout.rpartition("\n")
        status, _, ctype = status_line.partition(" ")
        return body, status, ctype

    body, status, ctype = split(run("-G", web_server.base + "/sparql", "--data-urlencode", f"query={SELECT}"))
    assert (status, ctype) == ("200", "application/sparql-results+json")
    assert {b["array"]["value"] for b in json.loads(body)["results"]["bindings"]} == expected

    body, status, ctype = split(run(web_server.base + "/sparql", "--data-urlencode", f"query={SELECT}",
                                    "-H", "Accept: text/csv"))
    assert (status, ctype) == ("200", "text/csv; charset=utf-8")
    assert {r[0] for r in list(csv.reader(io.StringIO(body)))[1:]} == expected

    body, status, ctype = split(run(web_server.base + "/sparql", "-H", "Content-Type: application/sparql-query",
                                    "-H", "Accept: application/sparql-results+xml",
                                    "--data-binary", SELECT))
    assert (status, ctype) == ("200", "application/sparql-results+xml")
    assert {str(r[0]) for r in Result.parse(io.StringIO(body), format="xml")} == expected

    body, status, ctype = split(run("-G", web_server.base + "/sparql", "--data-urlencode", f"query={CONSTRUCT}",
                                    "-H", "Accept: application/n-triples"))
    assert (status, ctype) == ("200", "application/n-triples")
    assert isomorphic(Graph().parse(data=body, format="nt"), cat.query(CONSTRUCT).graph)


# --------------------------------------------------------------------- content negotiation


def _check_results(response: httpx.Response, media: str, query: str, cat) -> None:
    direct = cat.query(query)
    if direct.type == "ASK":
        if media in ("text/csv", "text/tab-separated-values"):
            lines = response.text.split()
            assert lines == ["_askResult" if media == "text/csv" else "?_askResult",
                             "true" if direct.askAnswer else "false"]
            return
        parsed = Result.parse(io.BytesIO(response.content),
                              format="json" if "json" in media else "xml")
        assert parsed.askAnswer == direct.askAnswer
        return
    if media == "text/csv":  # CSV carries no term types: compare the text
        table = list(csv.reader(io.StringIO(response.text)))
        assert table[0] == [str(v) for v in direct.vars]
        assert [tuple(r) for r in table[1:]] == [
            tuple("" if t is None else str(t) for t in row) for row in direct
        ]
        return
    fmt = {"application/sparql-results+json": "json", "application/sparql-results+xml": "xml",
           "text/tab-separated-values": "tsv"}[media]
    parsed = Result.parse(io.BytesIO(response.content), format=fmt)
    assert [str(v) for v in parsed.vars] == [str(v) for v in direct.vars]
    assert [tuple(row) for row in parsed] == [tuple(row) for row in direct]


MATRIX: list[tuple[str, str | None, str | None]] = []
for _query in (SELECT, ASK):
    MATRIX += [(_query, None, "application/sparql-results+json"),
               (_query, "*/*", "application/sparql-results+json")]
    MATRIX += [(_query, media, media) for media in RESULT_MEDIA]
    MATRIX += [
        (_query, "text/*", "text/csv"),
        (_query, "application/*", "application/sparql-results+json"),
        (_query, "text/csv;q=0.5, application/sparql-results+xml;q=0.9", "application/sparql-results+xml"),
        (_query, "application/sparql-results+json;q=0, */*;q=0.1", "application/sparql-results+xml"),
        (_query, "text/tab-separated-values, text/csv;q=0.8", "text/tab-separated-values"),
        (_query, "text/turtle", None),
        (_query, "image/png, text/html;q=0.9", None),
    ]
for _query in (CONSTRUCT, DESCRIBE):
    MATRIX += [(_query, None, "text/turtle"), (_query, "*/*", "text/turtle")]
    MATRIX += [(_query, media, media) for media in GRAPH_MEDIA]
    MATRIX += [
        (_query, "application/*;q=0.5, text/turtle;q=0.1", "application/n-triples"),
        (_query, "application/ld+json;q=0.9, application/rdf+xml", "application/rdf+xml"),
        (_query, "text/turtle;q=0, */*", "application/n-triples"),
        (_query, "application/sparql-results+json", None),
        (_query, "text/csv", None),
    ]


@pytest.mark.parametrize(("query", "accept", "expected"), MATRIX)
def test_content_negotiation_matrix(client, cat, query: str, accept: str | None,
                                    expected: str | None) -> None:
    response = sparql(client, query, accept)
    if expected is None:
        assert response.status_code == 406
        assert "available" in error_of(response)
        return
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == expected
    assert "Accept" in response.headers["vary"]
    if expected in RDFLIB_GRAPH_FORMAT:
        graph = Graph().parse(data=response.content, format=RDFLIB_GRAPH_FORMAT[expected])
        direct = cat.query(query).graph
        assert len(graph) == len(direct) > 0
        assert isomorphic(graph, direct)
    else:
        _check_results(response, expected, query, cat)


@pytest.mark.parametrize(
    ("query", "fmt", "accept", "expected"),
    [
        (SELECT, "csv", "application/sparql-results+json", "text/csv"),
        (SELECT, "json", "text/csv", "application/sparql-results+json"),
        (SELECT, "xml", None, "application/sparql-results+xml"),
        (SELECT, "text/tab-separated-values", None, "text/tab-separated-values"),
        (CONSTRUCT, "json", None, "application/ld+json"),
        (CONSTRUCT, "xml", None, "application/rdf+xml"),
        (CONSTRUCT, "n3", None, "text/turtle"),
        (CONSTRUCT, "nt", "text/turtle", "application/n-triples"),
    ],
)
def test_format_parameter_overrides_accept(client, query, fmt, accept, expected) -> None:
    response = sparql(client, query, accept, format=fmt)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == expected


@pytest.mark.parametrize(("accept", "rows"), [("application/sparql-results+json", None),
                                              ("text/tab-separated-values", "?x\n\n"), ("text/csv", 'x\r\n""\r\n')])
def test_a_solution_that_binds_nothing_is_answered(client, accept: str, rows: str | None) -> None:
    """An OPTIONAL that matches nothing is one solution with nothing bound, in every format
    (CSV quotes the one empty field, so that the row is not a blank line)."""
    response = sparql(client, "SELECT ?x WHERE { OPTIONAL { <urn:nobody> <urn:p> ?x } }", accept)
    assert response.status_code == 200, response.text
    if rows is None:
        assert response.json()["results"]["bindings"] == [{}]
    else:
        assert response.text == rows


@pytest.mark.parametrize("fmt", ["bogus", "turtle", "../../etc/passwd", "%2e%2e%2f"])
def test_format_parameter_unavailable_is_406(client, fmt: str) -> None:
    response = sparql(client, SELECT, format=fmt)
    assert response.status_code == 406
    assert "format=" in error_of(response)


# --------------------------------------------------------------------- the RDF dataset


def _subjects(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {b["s"]["value"] for b in response.json()["results"]["bindings"]}


def test_default_graph_uri_limits_the_default_graph(client, cat, graphs: list[str]) -> None:
    one, two = graphs[0], graphs[1]
    query = "SELECT DISTINCT ?s WHERE { ?s a zarr:Array }"
    direct = {str(r.a) for r in cat.query(f"SELECT ?a WHERE {{ GRAPH <{one}> {{ ?a a zarr:Array }} }}")}
    assert _subjects(sparql(client, query, **{"default-graph-uri": one})) == direct

    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    sizes = dict(cat.graphs())
    response = sparql(client, count, **{"default-graph-uri": one})
    assert int(response.json()["results"]["bindings"][0]["n"]["value"]) == sizes[one]

    # Two default graphs are merged (evaluated in memory, by rdflib).
    merged = {str(r.s) for r in cat.query(
        f"SELECT DISTINCT ?s WHERE {{ {{ GRAPH <{one}> {{ ?s a zarr:Array }} }} UNION "
        f"{{ GRAPH <{two}> {{ ?s a zarr:Array }} }} }}")}
    both = sparql(client, query, **{"default-graph-uri": [one, two]})
    assert _subjects(both) == merged
    response = sparql(client, count, **{"default-graph-uri": [one, two]})
    assert int(response.json()["results"]["bindings"][0]["n"]["value"]) == sizes[one] + sizes[two]


def test_named_graph_uri_without_default_graph(client, graphs: list[str]) -> None:
    one = graphs[0]
    params = {"named-graph-uri": one}
    # The default graph of that dataset is empty ...
    assert sparql(client, "ASK { ?s ?p ?o }", **params).json()["boolean"] is False
    # ... and GRAPH ?g sees the named graph only.
    response = sparql(client, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", **params)
    assert [b["g"]["value"] for b in response.json()["results"]["bindings"]] == [one]
    # Over the catalogue's own dataset GRAPH ?g sees every hierarchy.
    response = sparql(client, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s a zarr:Array } }")
    assert {b["g"]["value"] for b in response.json()["results"]["bindings"]} == set(graphs)


def test_protocol_parameters_override_from(client, graphs: list[str]) -> None:
    one, two = graphs[0], graphs[1]
    query = f"SELECT DISTINCT ?s FROM <{one}> WHERE {{ ?s a dcat:Dataset }}"
    assert _subjects(sparql(client, query)) == {one}
    assert _subjects(sparql(client, query, **{"default-graph-uri": two})) == {two}
    named = f"SELECT DISTINCT ?g FROM NAMED <{two}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}"
    response = sparql(client, named)
    assert [b["g"]["value"] for b in response.json()["results"]["bindings"]] == [two]


@contextlib.contextmanager
def counting_http_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request it gets."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b"<urn:s> <urn:p> <urn:o> .\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/turtle")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_unknown_graphs_are_empty_and_never_fetched(client) -> None:
    with counting_http_server() as (remote, hits):
        query = f"SELECT * FROM <{remote}/data.ttl> WHERE {{ ?s ?p ?o }}"
        response = sparql(client, query)
        assert response.status_code == 200
        assert response.json()["results"]["bindings"] == []
        response = sparql(client, "SELECT * WHERE { ?s ?p ?o }",
                          **{"default-graph-uri": f"{remote}/other.ttl"})
        assert response.json()["results"]["bindings"] == []
        response = sparql(client, f"SELECT * WHERE {{ SERVICE <{remote}/sparql> {{ ?s ?p ?o }} }}")
        assert response.status_code == 400
        assert "SERVICE" in error_of(response)
        assert hits == []


@pytest.mark.parametrize(
    "iri",
    ["not an iri", "<http://example.org/g>", "http://exa mple.org/", "../../etc/passwd",
     "%2e%2e%2f", "http://example.org/{x}", "", "file:///work/\x00",
     "http://example.org/\ufffd", "http://example.org/\x85", "http://example.org/" + "a" * 5000],
)
@pytest.mark.parametrize("param", ["default-graph-uri", "named-graph-uri"])
def test_malformed_graph_iris_are_400(client, param: str, iri: str) -> None:
    response = sparql(client, "ASK { ?s ?p ?o }", **{param: iri})
    assert response.status_code == 400
    assert param in error_of(response)


# --------------------------------------------------------------------- protocol errors


def test_malformed_query_is_400_with_position(client) -> None:
    response = sparql(client, "SELECT ?x WHERE { ?x ?y }")
    assert response.status_code == 400
    message = error_of(response)
    assert message.startswith("malformed query:") and "col:" in message
    response = sparql(client, "SELECT ?x WHERE { ?x nope:p ?y }")
    assert response.status_code == 400
    assert "nope" in error_of(response)


def test_prefixes_are_prebound(client) -> None:
    response = sparql(client, "SELECT ?a WHERE { ?a a zarr:Array ; zarr:units 'K' }")
    names = {b["a"]["value"].rsplit("/", 1)[1] for b in response.json()["results"]["bindings"]}
    assert names == {"tas", "sst"}


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("query=", "empty query"),
        ("query=%20%0A", "empty query"),
        ("query=%FF%FE", "UTF-8"),
        ("query=SELECT%20%C3%28", "UTF-8"),
        ("query=" + "%7B" * 10_000, "nests"),
        ("query=ASK%20" + "%28" * 10_000, "nests"),
        ("query=ASK%7B%7D&query=ASK%7B%7D", "more than one query"),
        ("update=CLEAR%20ALL", "POST"),
        ("query=..%2F..%2Fetc%2Fpasswd", "malformed query"),
        ("query=%2e%2e%2f%2e%2e%2fetc%2fpasswd", "malformed query"),
    ],
)
def test_bad_get_requests_are_400(client, raw: str, needle: str) -> None:
    response = client.get("/sparql?" + raw)
    assert response.status_code == 400
    assert needle in error_of(response)


def test_moderate_nesting_beyond_the_parser_is_400_not_500(client) -> None:
    query = "ASK { FILTER(" + "(" * 40 + "1" + ")" * 40 + ") }"
    response = sparql(client, query)
    assert response.status_code == 400
    assert "nested too deeply" in error_of(response)


@pytest.mark.parametrize(
    ("content_type", "body", "status", "needle"),
    [
        ("application/x-www-form-urlencoded", b"query=%C3%28", 400, "UTF-8"),
        ("application/x-www-form-urlencoded", b"foo=bar", 400, "neither"),
        ("application/x-www-form-urlencoded", b"query=ASK%7B%7D&update=CLEAR%20ALL", 400, "not both"),
        ("application/sparql-query", b"\xff\xfe", 400, "not valid utf-8"),
        ("application/sparql-query", b"", 400, "empty query"),
        ("application/sparql-query; charset=klingon", b"ASK {}", 415, "charset"),
        ("text/plain", b"ASK {}", 415, "Content-Type"),
        ("application/json", b'{"query": "ASK {}"}', 415, "Content-Type"),
    ],
)
def test_bad_post_requests(client, content_type: str, body: bytes, status: int, needle: str) -> None:
    response = client.post("/sparql", content=body, headers={"Content-Type": content_type})
    assert response.status_code == status
    assert needle in error_of(response)


def test_post_query_in_body_and_url_is_400(client) -> None:
    response = client.post("/sparql?query=ASK%7B%7D", content=b"ASK {}",
                           headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 400


def test_unknown_parameters_are_ignored(client, cat) -> None:
    # SPARQLWrapper sends output= and results= next to format=; others send timeouts, callbacks.
    response = sparql(client, ASK, output="json", results="json", timeout="5", foo="bar")
    assert response.status_code == 200
    assert response.json()["boolean"] is True


def test_sparql_query_body_with_latin1_charset(client) -> None:
    query = "ASK { ?a zarr:units 'K' . FILTER('é' != 'e') }"
    response = client.post("/sparql", content=query.encode("latin-1"),
                           headers={"Content-Type": "application/sparql-query; charset=ISO-8859-1"})
    assert response.status_code == 200
    assert response.json()["boolean"] is True


def test_query_size_cap(sqlite_db: str) -> None:
    with serve(Settings(db=sqlite_db, max_query_chars=200)) as url, httpx.Client(base_url=url) as http:
        padded = "ASK { ?s ?p ?o } #" + "x" * 300
        response = sparql(http, padded)
        assert response.status_code == 413
        assert "max_query_chars" in error_of(response)
        response = http.post("/sparql", content=padded, headers={"Content-Type": "application/sparql-query"})
        assert response.status_code == 413
        assert sparql(http, "ASK { ?s ?p ?o }").status_code == 200


def test_result_cap(sqlite_db: str) -> None:
    with serve(Settings(db=sqlite_db, max_results=16)) as url, httpx.Client(base_url=url) as http:
        # 16 arrays: exactly at the cap is fine.
        response = sparql(http, SELECT)
        assert response.status_code == 200
        assert len(response.json()["results"]["bindings"]) == 16
        response = sparql(http, "SELECT * WHERE { ?s ?p ?o }")
        assert response.status_code == 413
        assert "LIMIT" in error_of(response)
        assert len(sparql(http, "SELECT * WHERE { ?s ?p ?o } LIMIT 16").json()["results"]["bindings"]) == 16
        for query in ("CONSTRUCT WHERE { ?s ?p ?o }", DESCRIBE):
            response = sparql(http, query)
            assert response.status_code == 413
            assert "max_results" in error_of(response)
        # CONSTRUCT WHERE with a LIMIT (rdflib alone fails on this form)
        response = sparql(http, "CONSTRUCT WHERE { ?s a zarr:Array } LIMIT 3", "application/n-triples")
        assert response.status_code == 200
        assert len(Graph().parse(data=response.text, format="nt")) == 3


# --------------------------------------------------------------------- time limit


def _timed(http: httpx.Client, query: str, **params: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = sparql(http, query, **params)
    return response, time.monotonic() - started


@pytest.mark.parametrize("query", [CROSS_PRODUCT, PYTHON_FILTER, PYTHON_VALUES],
                         ids=["sql", "rdflib-filter", "rdflib-values"])
def test_timeout_sqlite(sqlite_db: str, query: str) -> None:
    with serve(Settings(db=sqlite_db, query_timeout=1, workers=2)) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        response, took = _timed(http, query)
        assert response.status_code == 503
        assert "query_timeout" in error_of(response)
        assert took < 4, took
        ok = sparql(http, ASK)
        assert ok.status_code == 200 and ok.json()["boolean"] is True


def test_timeout_in_memory_dataset(sqlite_db: str, graphs: list[str]) -> None:
    """A dataset of two graphs is evaluated by rdflib in memory: the watchdog stops it."""
    with serve(Settings(db=sqlite_db, query_timeout=1)) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        response, took = _timed(http, CROSS_PRODUCT, **{"default-graph-uri": graphs[:2]})
        assert response.status_code == 503
        assert took < 4, took
        assert sparql(http, ASK).json()["boolean"] is True


def test_concurrent_timeouts_leave_the_pool_usable(sqlite_db: str) -> None:
    with serve(Settings(db=sqlite_db, query_timeout=1, workers=2)) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(lambda q: sparql(http, q).status_code,
                                     [CROSS_PRODUCT, PYTHON_VALUES, CROSS_PRODUCT, PYTHON_FILTER]))
        assert statuses == [503] * 4
        for _ in range(4):  # every connection of the pool answers again
            assert sparql(http, ASK).json()["boolean"] is True


@pytest.mark.postgres
def test_timeout_postgres_stops_the_statement(postgres_db: str) -> None:
    import psycopg

    from catalogue.graph.database import database_url

    with serve(Settings(db=postgres_db, query_timeout=1, workers=2)) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        response, took = _timed(http, CROSS_PRODUCT)
        assert response.status_code == 503
        assert "query_timeout" in error_of(response)
        assert took < 4, took
        dsn = database_url(postgres_db).replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn) as conn:
            running = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
                "AND state = 'active'"
            ).fetchone()
            assert running == (0,)
        response, took = _timed(http, PYTHON_FILTER)
        assert response.status_code == 503
        assert took < 4, took
        ok = sparql(http, ASK)
        assert ok.status_code == 200 and ok.json()["boolean"] is True


@pytest.mark.postgres
def test_protocol_smoke_postgres(postgres_db: str) -> None:
    from SPARQLWrapper import JSON, TURTLE, SPARQLWrapper

    with serve(Settings(db=postgres_db)) as url, catalogue.open(postgres_db) as direct:
        client = SPARQLWrapper(url + "/sparql")
        client.setQuery(SELECT)
        client.setReturnFormat(JSON)
        got = [b["array"]["value"] for b in client.query().convert()["results"]["bindings"]]
        assert got == [str(r.array) for r in direct.query(SELECT)]
        client.setQuery(DESCRIBE)
        client.setReturnFormat(TURTLE)
        graph = Graph().parse(data=client.query().convert(), format="turtle")
        assert isomorphic(graph, direct.query(DESCRIBE).graph)
        one = direct.graphs()[0][0]
        with httpx.Client(base_url=url) as http:
            response = sparql(http, "SELECT DISTINCT ?s WHERE { ?s a dcat:Dataset }",
                              **{"default-graph-uri": one})
            assert _subjects(response) == {one}


def test_query_deadline_directly(sqlite_db: str) -> None:
    """The context manager on its own: it raises QueryTimeout, cleans up, and checks
    are no-ops outside it."""
    with catalogue.open(sqlite_db) as direct:
        started = time.monotonic()
        with pytest.raises(QueryTimeout), query_deadline(direct.store, 0.5):
            list(direct.query(CROSS_PRODUCT))
        assert time.monotonic() - started < 3
        check_deadline()  # no deadline active any more
        # The progress handler is gone: a query after the block is not interrupted.
        time.sleep(0.1)
        assert len(list(direct.query(SELECT))) == 16
        with query_deadline(direct.store, 5):
            assert direct.query(ASK).askAnswer is True


@pytest.mark.postgres
def test_query_deadline_restores_statement_timeout(postgres_db: str) -> None:
    with catalogue.open(postgres_db) as direct:
        conn = direct.store.connection
        before = conn.exec_driver_sql("SHOW statement_timeout").scalar()
        with query_deadline(direct.store, 7):
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "7s"
        assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == before
        with pytest.raises(QueryTimeout), query_deadline(direct.store, 0.5):
            list(direct.query(CROSS_PRODUCT))
        assert direct.store.connection.exec_driver_sql("SHOW statement_timeout").scalar() == before


# --------------------------------------------------------------------- update


UPDATE_TOKEN = "correct horse battery staple"


def test_update_refused_without_admin_token(client) -> None:
    for headers in ({}, {"Authorization": "Bearer anything"}):
        response = client.post("/sparql", data={"update": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"},
                               headers=headers)
        assert response.status_code == 403
        assert "read-only" in error_of(response)
    response = client.post("/sparql", content="CLEAR ALL",
                           headers={"Content-Type": "application/sparql-update"})
    assert response.status_code == 403
    assert sparql(client, ASK).json()["boolean"] is True


def test_update_with_admin_token(writable_db: str, graphs: list[str]) -> None:
    settings = Settings(db=writable_db, admin_token=UPDATE_TOKEN)
    insert = "INSERT DATA { <urn:test:s> <urn:test:p> 'added' . GRAPH <urn:test:g> { <urn:test:s> zarr:note 'x' } }"
    probe = "ASK { <urn:test:s> <urn:test:p> 'added' }"
    with serve(settings) as url, httpx.Client(base_url=url) as http:
        for headers, detail in (({}, "Authorization"),
                                ({"Authorization": "Bearer wrong"}, "not valid"),
                                ({"Authorization": "Basic " + UPDATE_TOKEN}, "Authorization"),
                                ({"Authorization": f"Bearer {UPDATE_TOKEN}x"}, "not valid")):
            response = http.post("/sparql", data={"update": insert}, headers=headers)
            assert response.status_code == 401
            assert detail in error_of(response)
            assert response.headers["www-authenticate"].startswith("Bearer")
        assert sparql(http, probe).json()["boolean"] is False

        auth = {"Authorization": f"Bearer {UPDATE_TOKEN}"}
        response = http.post("/sparql", data={"update": insert}, headers=auth)
        assert response.status_code == 200, response.text
        assert sparql(http, probe).json()["boolean"] is True
        response = sparql(http, "SELECT ?n WHERE { GRAPH <urn:test:g> { ?s zarr:note ?n } }")
        assert response.json()["results"]["bindings"][0]["n"]["value"] == "x"

        # A failing operation rolls back the whole request.
        failing = f"INSERT DATA {{ <urn:test:t> <urn:test:p> 1 }} ; CREATE GRAPH <{graphs[0]}>"
        response = http.post("/sparql", content=failing,
                             headers={**auth, "Content-Type": "application/sparql-update"})
        assert response.status_code == 400
        assert "already exists" in error_of(response)
        assert sparql(http, "ASK { <urn:test:t> ?p ?o }").json()["boolean"] is False

        # Network-reaching operations are refused even for the admin; USING names graphs
        # of the catalogue only (one it does not hold is empty, never fetched).
        with counting_http_server() as (remote, hits):
            response = http.post("/sparql", data={"update": f"LOAD <{remote}/x.ttl>"}, headers=auth)
            assert response.status_code == 400
            using_remote = f"INSERT {{ GRAPH <urn:test:copy> {{ ?s ?p ?o }} }} USING <{remote}/x.ttl> WHERE {{ ?s ?p ?o }}"
            response = http.post("/sparql", data={"update": using_remote}, headers=auth)
            assert response.status_code == 200, response.text
            assert hits == []
        assert sparql(http, "ASK { GRAPH <urn:test:copy> { ?s ?p ?o } }").json()["boolean"] is False
        using = ("PREFIX zarr: <https://w3id.org/zarr-catalogue/vocab#> "
                 "INSERT { GRAPH <urn:test:copy> { ?s zarr:note ?n } } USING <urn:test:g> WHERE { ?s zarr:note ?n }")
        response = http.post("/sparql", data={"update": using}, headers=auth)
        assert response.status_code == 200, response.text
        response = sparql(http, "SELECT ?n WHERE { GRAPH <urn:test:copy> { ?s zarr:note ?n } }")
        assert [b["n"]["value"] for b in response.json()["results"]["bindings"]] == ["x"]
        response = http.post("/sparql", data={"update": "DROP GRAPH <urn:test:copy>"}, headers=auth)
        assert response.status_code == 200

        # A bare DELETE WHERE works on the store's own default graph, not on the hierarchies.
        response = http.post("/sparql", data={"update": "DELETE WHERE { ?s ?p ?o }"}, headers=auth)
        assert response.status_code == 200
        assert sparql(http, probe).json()["boolean"] is False
        assert sparql(http, ASK).json()["boolean"] is True

        response = http.post("/sparql", data={"update": "INSERT DATA { <urn:a> }"}, headers=auth)
        assert response.status_code == 400
        assert error_of(response).startswith("malformed update")

    # Committed: visible to a fresh connection after the server is gone.
    with catalogue.open(writable_db) as direct:
        assert direct.query("ASK { GRAPH <urn:test:g> { <urn:test:s> zarr:note 'x' } }").askAnswer


def test_update_timeout_rolls_back(writable_db: str) -> None:
    settings = Settings(db=writable_db, admin_token=UPDATE_TOKEN, query_timeout=1)
    update = ("INSERT DATA { <urn:test:before> <urn:test:p> 1 } ; "
              "INSERT { <urn:test:s> <urn:test:n> ?n } WHERE { "
              "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?w { ?a ?b ?c } GRAPH ?x { ?d ?e ?f } "
              "GRAPH ?y { ?g ?h ?i } GRAPH ?z { ?j ?k ?l } } }")
    with serve(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        started = time.monotonic()
        response = http.post("/sparql", data={"update": update},
                             headers={"Authorization": f"Bearer {UPDATE_TOKEN}"})
        assert response.status_code == 503
        assert time.monotonic() - started < 4
        after = sparql(http, "ASK { <urn:test:before> ?p ?o }")
        assert after.status_code == 200, after.text
        assert after.json()["boolean"] is False


# --------------------------------------------------------------------- service description


def test_service_description(client, web_server: WebServer, cat) -> None:
    response = client.get("/sparql")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/turtle; charset=utf-8"
    sd = Graph().parse(data=response.text, format="turtle")
    service = URIRef(web_server.base + "/sparql")
    assert (service, RDF.type, SD.Service) in sd
    assert (service, SD.endpoint, service) in sd
    assert set(sd.objects(service, SD.supportedLanguage)) == {SD.SPARQL11Query}
    assert {FORMATS.SPARQL_Results_JSON, FORMATS.SPARQL_Results_CSV, FORMATS.Turtle,
            FORMATS["JSON-LD"]} <= set(sd.objects(service, SD.resultFormat))
    assert (service, SD.feature, SD.UnionDefaultGraph) in sd
    dataset = sd.value(service, SD.defaultDataset)
    assert sd.value(dataset, SD.defaultGraph) is not None
    names = {sd.value(ng, SD.name) for ng in sd.objects(dataset, SD.namedGraph)}
    assert {str(n) for n in names} == {str(g) for g in cat.store.graph_ids()}
    for named in sd.objects(dataset, SD.namedGraph):
        size = sd.value(sd.value(named, SD.graph), URIRef("http://rdfs.org/ns/void#triples"))
        name = str(sd.value(named, SD.name))
        if name in dict(cat.graphs()):
            assert size == Literal(dict(cat.graphs())[name])


@pytest.mark.parametrize(("accept", "fmt", "rdflib_format"), [
    ("application/ld+json", None, "json-ld"),
    ("application/n-triples", None, "nt"),
    ("application/rdf+xml", None, "xml"),
    (None, "json-ld", "json-ld"),
])
def test_service_description_formats(client, accept, fmt, rdflib_format) -> None:
    params = {"format": fmt} if fmt else {}
    response = client.get("/sparql", params=params, headers={"Accept": accept} if accept else {})
    assert response.status_code == 200
    sd = Graph().parse(data=response.content, format=rdflib_format)
    assert any(sd.subjects(RDF.type, SD.Service))


def test_service_description_for_browsers(client) -> None:
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    response = client.get("/sparql", headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert 'href="/"' in response.text and "<form" in response.text and "sd:Service" in response.text
    assert client.get("/sparql", headers={"Accept": "image/png"}).status_code == 406


def test_service_description_with_update_and_base_url(sqlite_db: str) -> None:
    settings = Settings(db=sqlite_db, admin_token="t", base_url="https://data.example.org/cat")
    with serve(settings) as url, httpx.Client(base_url=url) as http:
        sd = Graph().parse(data=http.get("/sparql").text, format="turtle")
        service = URIRef("https://data.example.org/cat/sparql")
        assert set(sd.objects(service, SD.supportedLanguage)) == {SD.SPARQL11Query, SD.SPARQL11Update}
