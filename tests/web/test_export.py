"""``/export`` over real HTTP: every format parses to what the catalogue holds, streamed.

``web_server`` (tests/web/conftest.py) serves the example stores, a v2 hierarchy and
tensorstore's arrays; ``big_server`` serves a catalogue of one 300-array hierarchy (big
enough that its N-Quads arrive in many body chunks).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from rdflib import BNode, Dataset, Graph, Literal
from rdflib.compare import isomorphic

import catalogue
from catalogue.rdf.provenance import HARVESTS_GRAPH
from catalogue.web.settings import Settings
from tests.support import stores
from tests.support.graphs import canonical_json_literals
from tests.support.paths import EXAMPLES as EXAMPLES_DIR
from tests.support.webserver import WebServer, harvest, serve, serve_catalogue

EXAMPLES = sorted(EXAMPLES_DIR.glob("*.zarr"))
PARSE = {"turtle": "turtle", "nquads": "nquads", "trig": "trig", "jsonld": "json-ld", "ntriples": "nt"}
MEDIA = {"turtle": "text/turtle", "nquads": "application/n-quads", "trig": "application/trig",
         "jsonld": "application/ld+json", "ntriples": "application/n-triples"}


@pytest.fixture(scope="module")
def big_server(tmp_path_factory) -> Iterator[WebServer]:
    """A server over a catalogue of one 300-array hierarchy (about 15 000 triples)."""
    root = tmp_path_factory.mktemp("big")
    db = f"sqlite:///{root / 'catalogue.db'}"
    sources = [stores.big_v3_hierarchy(root, n_arrays=300, n_groups=6)]
    harvest(db, sources)
    with serve_catalogue(db, sources) as server:
        yield server


def by_value(graph: Graph) -> Graph:
    """Literals of known datatypes re-lexicalised from their values: parsers normalise lexical
    forms (an xsd:dateTime's "Z" becomes "+00:00"), the store keeps them as harvested."""
    out = Graph()
    for s, p, o in graph:
        if isinstance(o, Literal) and o.value is not None and o.datatype is not None:
            o = Literal(o.value, datatype=o.datatype)
        out.add((s, p, o))
    return out


def same(got: Graph, expected: Graph, *, json_literals: bool = False) -> bool:
    """Isomorphic for small graphs; for big ones the same size and the same triples without blank nodes.

    rdflib's canonicalisation gets very slow on thousands of look-alike blank nodes
    (the big hierarchy's codec lists), so those are compared by their ground triples.
    """
    got, expected = by_value(got), by_value(expected)
    if json_literals:
        got, expected = canonical_json_literals(got), canonical_json_literals(expected)
    if len(expected) <= 3000:
        return isomorphic(got, expected)

    def term(x):  # literals by value: parsers normalise lexical forms ("Z" becomes "+00:00")
        if isinstance(x, Literal):
            return ("literal", x.datatype, x.language, repr(x.value) if x.value is not None else str(x))
        return x

    def ground(g: Graph) -> set:
        return {tuple(map(term, t)) for t in g if not any(isinstance(x, BNode) for x in t)}

    return len(got) == len(expected) and ground(got) == ground(expected)


def stored(cat: catalogue.api.Catalogue, graph: str | None = None) -> dict[str, Graph]:
    out: dict[str, Graph] = {}
    for s, p, o, g in cat.quads(graph):
        out.setdefault(str(g), Graph()).add((s, p, o))
    return out


def parsed_graphs(text: str, fmt: str) -> dict[str, Graph]:
    ds = Dataset()
    ds.parse(data=text, format=PARSE[fmt])
    out = {}
    for g in ds.graphs():
        if g.identifier != ds.default_graph.identifier and len(g):
            copy = Graph()
            for t in g:
                copy.add(t)
            out[str(g.identifier)] = copy
    return out


def union(graphs: dict[str, Graph]) -> Graph:
    out = Graph()
    for g in graphs.values():
        for t in g:
            out.add(t)
    return out


@pytest.mark.parametrize("fmt", ["nquads", "trig", "jsonld"])
@pytest.mark.parametrize("scope", ["all", "one"])
def test_quad_formats_keep_graph_names(web_server, cat, fmt, scope):
    base, graphs = web_server.base, web_server.graphs
    graph = graphs["ocean_model_v3.zarr"] if scope == "one" else None
    params = {"format": fmt} | ({"graph": graph} if graph else {})
    r = httpx.get(base + "/export", params=params, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == MEDIA[fmt]
    got = parsed_graphs(r.text, fmt)
    expected = stored(cat, graph)
    assert set(got) == set(expected)
    if scope == "all":
        assert str(HARVESTS_GRAPH) in got  # the provenance graph is exported too
    for name, g in expected.items():
        assert same(got[name], g, json_literals=fmt == "jsonld"), name


@pytest.mark.parametrize("fmt", ["turtle", "ntriples"])
@pytest.mark.parametrize("scope", ["all", "one"])
def test_triple_formats_are_the_union(web_server, cat, fmt, scope):
    base, graphs = web_server.base, web_server.graphs
    graph = graphs["zarr_v2_plain.zarr"] if scope == "one" else None
    params = {"format": fmt} | ({"graph": graph} if graph else {})
    r = httpx.get(base + "/export", params=params, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == MEDIA[fmt]
    got = Graph().parse(data=r.text, format=PARSE[fmt])
    assert same(got, union(stored(cat, graph)))


def test_matches_the_cli_export(web_server, cat):
    base, graphs = web_server.base, web_server.graphs
    graph = graphs["cf_sea_surface_v2.zarr"]
    for fmt in ("turtle", "nquads", "trig"):
        buf = io.StringIO()
        cat.export(buf, format=fmt, graph=graph)
        web = httpx.get(base + "/export", params={"graph": graph, "format": fmt}).text
        cli_ds, web_ds = Dataset(), Dataset()
        cli_ds.parse(data=buf.getvalue(), format=PARSE[fmt])
        web_ds.parse(data=web, format=PARSE[fmt])
        cli_triples, web_triples = Graph(), Graph()
        for s, p, o, _ in cli_ds.quads((None, None, None, None)):
            cli_triples.add((s, p, o))
        for s, p, o, _ in web_ds.quads((None, None, None, None)):
            web_triples.add((s, p, o))
        assert len(cli_triples) > 100 and same(web_triples, cli_triples), fmt


@pytest.mark.parametrize(("accept", "expected"), [
    (None, "text/turtle"),
    ("*/*", "text/turtle"),
    ("application/n-quads", "application/n-quads"),
    ("application/trig", "application/trig"),
    ("application/ld+json", "application/ld+json"),
    ("application/n-triples", "application/n-triples"),
    ("text/turtle;q=0.1, application/trig", "application/trig"),
    ("application/*", "application/n-quads"),
    ("image/png", 406),
])
def test_content_negotiation(web_server, accept, expected):
    base, graphs = web_server.base, web_server.graphs
    headers = {"Accept": accept} if accept else {}
    r = httpx.get(base + "/export", params={"graph": graphs["cf_air_temperature_v3.zarr"]}, headers=headers)
    assert r.headers["vary"] == "Accept"
    if expected == 406:
        assert r.status_code == 406 and "\n" not in r.text.strip() and r.json()["status"] == 406
    else:
        assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == expected
    r = httpx.get(base + "/export", params={"graph": graphs["cf_air_temperature_v3.zarr"], "format": "trig"},
                  headers={"Accept": "image/png"})
    assert r.headers["content-type"] == "application/trig"  # format= wins over Accept


def test_content_disposition(web_server):
    base, graphs = web_server.base, web_server.graphs
    r = httpx.get(base + "/export", params={"graph": graphs["ocean_model_v3.zarr"], "format": "trig"})
    assert r.headers["content-disposition"] == 'attachment; filename="ocean_model_v3.zarr.trig"'
    r = httpx.get(base + "/export", params={"format": "nquads"})
    assert r.headers["content-disposition"] == 'attachment; filename="catalogue.nq"'
    r = httpx.get(base + "/export", params={"graph": str(HARVESTS_GRAPH), "format": "jsonld"})
    assert r.status_code == 200
    assert r.headers["content-disposition"] == 'attachment; filename="zarr-catalogue_harvests.jsonld"'


@pytest.mark.parametrize("fmt", ["nquads", "ntriples", "turtle", "trig"])
def test_big_exports_are_streamed(big_server, fmt):
    base, db, (graph,) = big_server.base, big_server.db, big_server.graphs.values()
    pieces = 0
    body = bytearray()
    with httpx.stream("GET", base + "/export", params={"format": fmt, "graph": graph}, timeout=120) as r:
        assert r.status_code == 200
        assert r.headers["transfer-encoding"] == "chunked" and "content-length" not in r.headers
        for chunk in r.iter_raw():
            pieces += 1
            body += chunk
    if fmt in ("nquads", "ntriples"):
        assert pieces > 10, pieces  # batches of rows, not one string
        with catalogue.open(db) as c:
            expected = sum(1 for _ in c.quads(graph))
        assert len(body.decode().splitlines()) == expected > 10_000
    got = Dataset()
    got.parse(data=body.decode(), format=PARSE[fmt])
    assert sum(1 for _ in got.quads((None, None, None, None))) > 10_000


@pytest.mark.parametrize("fmt", ["turtle", "trig", "jsonld"])
def test_graph_by_graph_formats_arrive_a_graph_at_a_time(web_server, fmt):
    base, graphs = web_server.base, web_server.graphs
    with httpx.stream("GET", base + "/export", params={"format": fmt}, timeout=60) as r:
        assert r.headers["transfer-encoding"] == "chunked"
        pieces = sum(1 for _ in r.iter_raw())
    assert pieces > len(graphs)  # a piece per graph (the provenance graph too), more for JSON-LD


@pytest.mark.parametrize(("params", "status"), [
    ({"graph": "file:///nowhere.zarr"}, 404),
    ({"graph": "urn:x"}, 404),
    ({"graph": "../../etc/passwd"}, 400),
    ({"graph": "%2e%2e%2f%2e%2e%2fetc%2fpasswd"}, 400),
    ({"graph": "file:///" + "a" * 5000}, 400),
    ({"graph": "http://x/\ufffd"}, 400),
    ({"graph": "http://x/a b"}, 400),
    ({"graph": "http://x/\x00"}, 400),
    ({"graph": ""}, 400),
    ({"format": "xml"}, 400),
    ({"format": "../../etc/passwd"}, 400),
    ({"format": "nquads", "graph": "file:///nowhere.zarr"}, 404),
])
def test_hostile_and_unknown_input(web_server, params, status):
    base = web_server.base
    r = httpx.get(base + "/export", params=params)
    assert r.status_code == status, r.text
    assert "\n" not in r.text.strip() and r.json() == {"error": r.json()["error"], "status": status}


def test_invalid_utf8_percent_encoding(web_server):
    base = web_server.base
    for query in ("graph=%ff%fe", "graph=http://x/%c3%28", "format=%ff"):
        r = httpx.get(f"{base}/export?{query}")
        assert r.status_code == 400 and r.json()["status"] == 400


@pytest.mark.postgres
def test_postgres_smoke(postgres_url):
    source = EXAMPLES[0]
    with catalogue.open(postgres_url) as c:
        graph = c.harvest(str(source)).graph
        expected = stored(c, graph)
    with serve(Settings(db=postgres_url)) as base:
        r = httpx.get(f"{base}/export?graph={quote(graph, safe='')}&format=nquads")
        assert r.status_code == 200
        got = parsed_graphs(r.text, "nquads")
        assert set(got) == set(expected) and same(got[graph], expected[graph])
        assert httpx.get(f"{base}/export?graph=urn:nope").status_code == 404
