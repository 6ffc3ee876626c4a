"""Dereferenceable nodes over real HTTP: ``/node``, ``/node/tensorstore``, ``/node/chunks``, by path.

One catalogue per module (SQLite): the three example stores, a zarr-python v2
hierarchy and tensorstore's v2 + sharded v3 arrays, served by uvicorn on a
loopback port. What the server answers is compared with the catalogue API and
with the files on disk.
"""

from __future__ import annotations

import http.client
import json
import pathlib
import re
import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from rdflib import SH, Graph, Literal, URIRef
from rdflib.compare import isomorphic

import catalogue
from catalogue.errors import display_location
from catalogue.harvest import load_hierarchy
from catalogue.model.nodes import V3_DOCUMENT
from catalogue.rdf.closure import node_closure
from catalogue.web.node_answer import REL_CHUNKS, REL_TENSORSTORE
from catalogue.web.settings import Settings
from tests.support import stores
from tests.support.graphs import canonical_json_literals
from tests.support.jsonvalues import assert_json_equal
from tests.support.paths import EXAMPLES as EXAMPLES_DIR
from tests.support.servers import http_server
from tests.support.webserver import WebServer, serve

EXAMPLES = sorted(EXAMPLES_DIR.glob("*.zarr"))
RDF_TYPES = {"text/turtle": "turtle", "application/n-triples": "nt", "application/ld+json": "json-ld"}


def uri(source: pathlib.Path, path: str = "") -> str:
    return source.absolute().as_uri() + (f"/{path}" if path else "")


def example(name: str) -> pathlib.Path:
    return next(p for p in EXAMPLES if p.name == name)


SSH = ("ocean_model_v3.zarr", "ocean/surface/ssh")  # sharded, v3


def node_url(iri: str, **params: str) -> str:
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in {"iri": iri, **params}.items())
    return f"/node?{query}"


def parse_links(header: str) -> list[tuple[str, dict[str, str]]]:
    """RFC 8288 Link header as (target, params) pairs."""
    out = []
    for target, params in re.findall(r"<([^>]*)>((?:\s*;\s*[^;,]+=\"[^\"]*\")*)", header):
        out.append((target, dict(re.findall(r'(\w+)="([^"]*)"', params))))
    return out


def expected_description(c: catalogue.api.Catalogue, iri: str) -> Graph:
    """The node closure plus its validation results, straight from the catalogue API."""
    graph = c.node_graph(iri)
    out = Graph()
    for t in node_closure(graph, URIRef(iri)):
        out.add(t)
    for result in graph.subjects(SH.focusNode, URIRef(iri)):
        for report in graph.subjects(SH.result, result):
            out.add((report, SH.result, result))
        for t in graph.triples((result, None, None)):
            out.add(t)
    return out


def assert_one_line_error(r: httpx.Response, status: int | None = None) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    if status is not None:
        assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    body = r.text.strip()
    assert "\n" not in body and "Traceback" not in body
    doc = json.loads(body)
    assert doc["status"] == r.status_code and doc["error"]


# -------------------------------------------------------------- conneg matrix
CONNEG = [
    (None, "text/turtle"),
    ("*/*", "text/turtle"),
    ("text/turtle", "text/turtle"),
    ("application/n-triples", "application/n-triples"),
    ("application/ld+json", "application/ld+json"),
    ('application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted"', "application/ld+json"),
    ("application/json", "application/json"),
    ("text/html", 303),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", 303),  # a browser
    ("application/json;q=0.5, text/turtle;q=0.9", "text/turtle"),
    ("application/json, text/turtle;q=0", "application/json"),
    ("text/turtle;q=0, */*;q=0.1", "application/n-triples"),  # next in the server's order
    ("text/*", "text/turtle"),
    ("application/*", "application/n-triples"),
    ("application/*;q=0.2, application/ld+json;q=0.3", "application/ld+json"),
    ("text/turtle;q=bogus, application/json", "application/json"),  # a malformed range is skipped
    ("image/png", 406),
    ("text/turtle;q=0", 406),
]


@pytest.mark.parametrize(("accept", "expected"), CONNEG)
def test_content_negotiation_matrix(web_server, accept, expected):
    iri = uri(example(SSH[0]), SSH[1])
    headers = {"Accept": accept} if accept is not None else {}
    r = web_server.get(node_url(iri), headers=headers, follow_redirects=False)
    assert r.headers.get("vary") == "Accept"
    if expected == 303:
        assert r.status_code == 303
        # relative: without --base-url, no link is built from the request's Host header
        assert r.headers["location"] == f"/browse?iri={quote(iri, safe='')}"
    elif expected == 406:
        assert_one_line_error(r, 406)
    else:
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].split(";")[0] == expected


@pytest.mark.parametrize(("fmt", "expected"), [
    ("turtle", "text/turtle"), ("ttl", "text/turtle"), ("ntriples", "application/n-triples"),
    ("nt", "application/n-triples"), ("jsonld", "application/ld+json"), ("json-ld", "application/ld+json"),
    ("json", "application/json"), ("html", 303), ("HTML", 303), ("bogus", 400), ("../../etc/passwd", 400),
])
def test_format_parameter_overrides_accept(web_server, fmt, expected):
    iri = uri(example(SSH[0]), SSH[1])
    r = web_server.get(node_url(iri, format=fmt), headers={"Accept": "image/png"}, follow_redirects=False)
    if expected == 400:
        assert_one_line_error(r, 400)
    elif expected == 303:
        assert r.status_code == 303 and r.headers["location"].startswith("/browse?iri=")
    else:
        assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == expected


# ----------------------------------------------------------- representations
def on_disk_documents(node) -> dict[str, Any]:
    """A node's documents read straight from the files (a v3 root's consolidated block left out)."""
    if node.primary is not None:
        return node.documents  # dependent arrays have no file of their own
    docs = {}
    for name, loc in node.locations.items():
        doc = json.loads(pathlib.Path(display_location(loc.url)).read_text(encoding="utf-8"))
        for token in loc.pointer.split("/")[1:] if loc.pointer else []:
            doc = doc[token.replace("~1", "/").replace("~0", "~")]
        docs[name] = doc
    if V3_DOCUMENT in docs:
        docs[V3_DOCUMENT] = {k: v for k, v in docs[V3_DOCUMENT].items() if k != "consolidated_metadata"}
    return docs


def test_json_is_the_metadata_documents_on_disk(web_server):
    checked = 0
    for source in web_server.sources:
        hierarchy = load_hierarchy(str(source))
        for path, node in hierarchy.nodes.items():
            r = web_server.get(node_url(hierarchy.iri(path)), headers={"Accept": "application/json"})
            assert r.status_code == 200, r.text
            assert_json_equal(json.loads(r.text), on_disk_documents(node))
            # a node with its own files: the very same JSON values as each file
            folder = pathlib.Path(display_location(hierarchy.iri(path)))
            for name in json.loads(r.text):
                if (folder / name).is_file() and node.primary is None:
                    on_file = json.loads((folder / name).read_text(encoding="utf-8"))
                    on_file.pop("consolidated_metadata", None)
                    assert_json_equal(json.loads(r.text)[name], on_file)
            checked += 1
    assert checked >= 30, checked


@pytest.mark.parametrize("media_type", sorted(RDF_TYPES))
def test_rdf_is_the_node_description(web_server, cat, media_type):
    checked = 0
    for source in web_server.sources:
        hierarchy = load_hierarchy(str(source))
        for path in hierarchy.nodes:
            iri = hierarchy.iri(path)
            r = web_server.get(node_url(iri), headers={"Accept": media_type})
            assert r.status_code == 200, r.text
            got = Graph().parse(data=r.text, format=RDF_TYPES[media_type])
            expected = expected_description(cat, iri)
            assert (URIRef(iri), URIRef("https://w3id.org/zarr-catalogue/vocab#path"), Literal(path)) in got
            if media_type == "application/ld+json":
                got, expected = canonical_json_literals(got), canonical_json_literals(expected)
                assert json.loads(r.text)["@context"]["shape"]["@container"] == "@list"  # the catalogue context
            assert isomorphic(got, expected), iri
            checked += 1
    assert checked >= 30


def test_description_links_members_and_validation_results(web_server, cat, tmp_path):
    root = uri(example("ocean_model_v3.zarr"))
    got = Graph().parse(data=web_server.get(node_url(root)).text, format="turtle")
    zarr = "https://w3id.org/zarr-catalogue/vocab#"
    members = set(got.objects(URIRef(root), URIRef(zarr + "member")))
    assert members == {URIRef(root + "/grid"), URIRef(root + "/ocean")}
    assert (URIRef(root), URIRef(zarr + "validationReport"), None) in got
    # a node with findings: its SH results come along, linked from the report
    bad = stores.BAD_STORES["wrong_types"](tmp_path)
    with catalogue.open(web_server.db) as c:
        report = c.harvest(str(bad))
    invalid = next(f.path for f in report.validation.findings)
    iri = URIRef(report.graph + (f"/{invalid}" if invalid else ""))
    got = Graph().parse(data=web_server.get(node_url(str(iri))).text, format="turtle")
    results = set(got.subjects(SH.focusNode, iri))
    assert results and all((None, SH.result, r) in got for r in results)
    assert any(str(m) for r in results for m in got.objects(r, SH.resultMessage))


def test_link_headers(web_server):
    iri = uri(example(SSH[0]), SSH[1])
    r = web_server.get(node_url(iri))
    links = parse_links(r.headers["link"])
    by_rel: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for target, params in links:
        by_rel.setdefault(params["rel"], []).append((target, params))
    alternates = {p["type"]: t for t, p in by_rel["alternate"]}
    assert set(alternates) == {"application/n-triples", "application/ld+json", "application/json", "text/html"}
    for media_type, target in alternates.items():
        if media_type == "text/html":
            assert target == f"/browse?iri={quote(iri, safe='')}"
            continue
        follow = web_server.client.get(web_server.base + target)
        assert follow.status_code == 200 and follow.headers["content-type"].startswith(media_type)
    [(dataset, _)] = by_rel["collection"]
    assert dataset == f"/node?iri={quote(uri(example(SSH[0])), safe='')}"
    [(describes, _)] = by_rel["describes"]
    assert describes == iri
    [(spec, _)] = by_rel[REL_TENSORSTORE]
    [(chunks, _)] = by_rel[REL_CHUNKS]
    assert web_server.client.get(web_server.base + spec).status_code == 200
    assert web_server.client.get(web_server.base + chunks).status_code == 200
    # a group has no TensorStore spec or chunks
    group = parse_links(web_server.get(node_url(uri(example(SSH[0]), "ocean"))).headers["link"])
    assert {p["rel"] for _, p in group} == {"describes", "alternate", "collection"}


def test_non_ascii_iris_are_percent_encoded_in_headers(web_server):
    iri = uri(web_server.sources[-1], "zarr3_sharded")  # attributes hold non-ASCII; the IRI does not
    r = web_server.get(node_url(iri))
    assert r.status_code == 200
    r.headers["link"].encode("ascii")
    assert "Zählung" in r.text or "Z\\u00e4hlung" in r.text


def test_etag_and_if_none_match(web_server):
    iri = uri(example(SSH[0]), SSH[1])
    turtle = web_server.get(node_url(iri))
    etag = turtle.headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    assert web_server.get(node_url(iri)).headers["etag"] == etag  # stable
    for header in (etag, f"W/{etag}", f'"nope", {etag}', "*"):
        r = web_server.get(node_url(iri), headers={"If-None-Match": header})
        assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == etag
    assert web_server.get(node_url(iri), headers={"If-None-Match": '"other"'}).status_code == 200
    other_formats = {web_server.get(node_url(iri), headers={"Accept": t}).headers["etag"]
                     for t in ("application/json", "application/ld+json", "application/n-triples")}
    assert etag not in other_formats and len(other_formats) == 3  # one strong ETag per representation
    # the JSON ETag follows the fingerprint: the same for another node? never
    other = web_server.get(node_url(uri(example(SSH[0]), "ocean")), headers={"Accept": "application/json"})
    assert other.headers["etag"] not in other_formats


def test_head_answers_headers_only(web_server):
    iri = uri(example(SSH[0]), SSH[1])
    r = web_server.client.head(web_server.base + node_url(iri))
    assert r.status_code == 200 and r.content == b"" and r.headers["etag"]


# ------------------------------------------------------ TensorStore and chunks
ARRAYS = [
    ("ocean_model_v3.zarr", "ocean/surface/ssh", "0,0:20,5:7"),
    ("cf_sea_surface_v2.zarr", "sst", None),
    ("zarr_v2_plain.zarr", "temperature", "1:7,::2"),
    ("tensorstore_arrays.zarr", "zarr3_sharded", "0:9,3"),
]


def array_iri(web_server: WebServer, store: str, path: str) -> str:
    return uri(next(s for s in web_server.sources if s.name == store), path)


@pytest.mark.parametrize(("store", "path", "selection"), ARRAYS)
def test_tensorstore_spec_and_chunks_equal_the_api(web_server, cat, store, path, selection):
    iri = array_iri(web_server, store, path)
    r = web_server.get("/node/tensorstore", params={"iri": iri})
    assert r.status_code == 200 and r.json() == cat.tensorstore_spec(iri)
    r = web_server.get("/node/tensorstore", params={"iri": iri, "assume_metadata": "true"})
    assert r.json() == cat.tensorstore_spec(iri, assume_metadata=True)
    params = {"iri": iri} if selection is None else {"iri": iri, "selection": selection}
    r = web_server.get("/node/chunks", params=params)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json() == cat.resolve(iri, selection)


def test_chunks_are_streamed(web_server, cat):
    iri = array_iri(web_server, "ocean_model_v3.zarr", "ocean/surface/ssh")
    with web_server.client.stream("GET", web_server.base + "/node/chunks", params={"iri": iri}) as r:
        assert r.headers.get("transfer-encoding") == "chunked"
        doc = json.loads(b"".join(r.iter_bytes()))
    assert doc["chunk_count"] == len(doc["chunks"]) == cat.resolve(iri)["chunk_count"]


def test_bad_selections_and_groups(web_server):
    iri = array_iri(web_server, "ocean_model_v3.zarr", "ocean/surface/ssh")
    for selection in ("0,0,0,0,0", "99999", "a:b", "../../etc/passwd", "%ff", "\ufffd", "0" * 5000):
        assert_one_line_error(web_server.get("/node/chunks", params={"iri": iri, "selection": selection}), 400)
    group = uri(example("ocean_model_v3.zarr"), "ocean")
    assert_one_line_error(web_server.get("/node/tensorstore", params={"iri": group}), 404)
    assert_one_line_error(web_server.get("/node/chunks", params={"iri": group}), 404)
    assert_one_line_error(web_server.get("/node/chunks", params={"iri": "file:///nowhere/x"}), 404)


# ---------------------------------------------------------------- bad input
HOSTILE = [
    ("/node", 400),  # no iri
    ("/node?iri=", 400),
    ("/node?iri=../../etc/passwd", 400),
    ("/node?iri=%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400),
    ("/node?iri=file:///etc/passwd", 404),
    ("/node?iri=file:///work/../etc/passwd", 404),
    ("/node?iri=http://x/a%20b", 400),
    ("/node?iri=http://x/%00", 400),
    ("/node?iri=http://x/%0d%0aSet-Cookie:%20a", 400),
    ("/node?iri=http://x/%ff%fe", 400),
    ("/node?iri=http://x/%c3%28", 400),
    ("/node?iri=http://x/<script>", 400),
    ("/node?iri=http://x/" + "a" * 5000, 400),
    ("/node?iri=relative/path", 400),
    ("/node/tensorstore?iri=%2e%2e%2f", 400),
    ("/node/tensorstore?iri=%ff", 400),
    ("/node/tensorstore?iri=file:///x&assume_metadata=perhaps", 400),
    ("/node/chunks?iri=" + "x" * 5000, 400),
]


@pytest.mark.parametrize(("target", "status"), HOSTILE)
def test_hostile_input_is_a_one_line_4xx(web_server, target, status):
    assert_one_line_error(web_server.get(target), status)


def raw_get(base: str, target: str) -> tuple[int, bytes]:
    """GET with the request target sent byte for byte (httpx would normalise dot segments)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest("GET", target, skip_accept_encoding=True)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


# ------------------------------------------------------- dereferencing by path
@pytest.fixture(scope="module")
def by_path(tmp_path_factory) -> Iterator[tuple[str, str, catalogue.api.Catalogue]]:
    """A store served over HTTP, harvested by URL; the catalogue server's public base is that host."""
    folder = tmp_path_factory.mktemp("http-root")
    shutil.copytree(example("cf_air_temperature_v3.zarr"), folder / "cf_air_temperature_v3.zarr")
    shutil.copytree(example("cf_sea_surface_v2.zarr"), folder / "data" / "sea surface.zarr")
    db = f"sqlite:///{folder / 'catalogue.db'}"
    with http_server(folder) as store:
        with catalogue.open(db) as c:
            assert c.harvest(f"{store.url}/cf_air_temperature_v3.zarr").ok
            assert c.harvest(f"{store.url}/data/sea%20surface.zarr").ok
        with serve(Settings(db=db, base_url=store.url)) as base, catalogue.open(db) as c:
            yield base, store.url, c


def test_node_iris_dereference_under_their_own_path(by_path):
    base, public, c = by_path
    for iri in (f"{public}/cf_air_temperature_v3.zarr", f"{public}/cf_air_temperature_v3.zarr/tas"):
        assert c.has_node(iri)
        path = iri[len(public):]
        r = httpx.get(base + path, headers={"Accept": "text/turtle"})
        assert r.status_code == 200, r.text
        assert r.headers["vary"] == "Accept"
        assert isomorphic(Graph().parse(data=r.text, format="turtle"), expected_description(c, iri))
        assert r.headers["etag"] == httpx.get(base + "/node", params={"iri": iri}).headers["etag"]
        r = httpx.get(base + path, headers={"Accept": "application/json"})
        assert r.json() == c.documents(iri)
        r = httpx.get(base + path, headers={"Accept": "text/html"}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"{public}/browse?iri={quote(iri, safe='')}"
        r = httpx.get(base + path + "?format=jsonld")
        assert r.headers["content-type"] == "application/ld+json"


def test_percent_encoded_node_paths(by_path):
    base, public, c = by_path
    sst = next(str(s) for s, in c.query("SELECT ?s WHERE { ?s zarr:path 'sst' }"))
    assert sst.startswith(public + "/data/sea")
    r = httpx.get(base + sst[len(public):], headers={"Accept": "application/n-triples"})
    assert r.status_code == 200 and f"<{sst}>" in r.text


@pytest.mark.parametrize(("target", "status"), [
    ("/nothing-here", 404),
    ("/cf_air_temperature_v3.zarr/tas/zarr.json", 404),
    ("/cf_air_temperature_v3.zarr/../cf_air_temperature_v3.zarr/tas", 400),
    ("/cf_air_temperature_v3.zarr/%2e%2e/cf_air_temperature_v3.zarr/tas", 400),
    ("/cf_air_temperature_v3.zarr/%2E%2E%2Fcf_air_temperature_v3.zarr", 400),
    ("/cf_air_temperature_v3.zarr/%252e%252e/etc/passwd", 400),
    ("/./cf_air_temperature_v3.zarr", 400),
    ("/..%5c..%5cetc%5cpasswd", 400),
    ("/%ff%fe", 404),
    ("/%00", 404),
    ("/" + "a" * 5000, 400),
])
def test_by_path_refuses_what_is_no_node(by_path, target, status):
    base, _, _ = by_path
    code, body = raw_get(base, target)
    assert code == status, (code, body)
    doc = json.loads(body)
    assert doc["status"] == status and b"\n" not in body.strip()


def test_other_routes_are_not_shadowed(by_path):
    base, _, _ = by_path
    assert httpx.get(base + "/health").json()["status"] == "ok"
    assert httpx.get(base + "/catalog").status_code == 200


# ----------------------------------------------------------------- PostgreSQL
@pytest.mark.postgres
def test_postgres_smoke(postgres_url):
    source = example("ocean_model_v3.zarr")
    with catalogue.open(postgres_url) as c:
        assert c.harvest(str(source)).ok
    iri = uri(source, "ocean/surface/ssh")
    with serve(Settings(db=postgres_url)) as base, catalogue.open(postgres_url) as c:
        r = httpx.get(base + "/node", params={"iri": iri})
        assert r.status_code == 200 and isomorphic(Graph().parse(data=r.text, format="turtle"),
                                                   expected_description(c, iri))
        assert httpx.get(base + "/node", params={"iri": iri, "format": "json"}).json() == c.documents(iri)
        assert httpx.get(base + "/node/tensorstore", params={"iri": iri}).json() == c.tensorstore_spec(iri)
        assert httpx.get(base + "/node/chunks", params={"iri": iri, "selection": "1"}).json() == c.resolve(iri, "1")
        assert httpx.get(base + "/node", params={"iri": iri + "x"}).status_code == 404
