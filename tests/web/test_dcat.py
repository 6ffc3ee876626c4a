"""``/catalog`` over real HTTP: DCAT 3 that parses, has the required properties, and pages.

One SQLite catalogue per module: the example stores, zarr-python v2 stores
(a hierarchy and a lone array) and 24 small generated JSON-only hierarchies,
so paging at page_size 4 spans many pages.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from rdflib import DCAT, DCTERMS, FOAF, RDF, RDFS, BNode, Dataset, Graph, Literal, URIRef
from rdflib.compare import isomorphic

import catalogue
from catalogue.api import Catalogue
from catalogue.rdf.dcat import HYDRA, ZARR_SPECS
from catalogue.rdf.provenance import timestamp
from catalogue.web.settings import Settings
from tests.support import stores
from tests.support.paths import EXAMPLES as EXAMPLES_DIR
from tests.support.webserver import WebServer, harvest, serve, serve_catalogue

EXAMPLES = sorted(EXAMPLES_DIR.glob("*.zarr"))
GENERATED = 24


def write_hierarchy(folder: pathlib.Path, i: int, *, title: bool = True) -> pathlib.Path:
    """A tiny v3 hierarchy (a group and one array), metadata only."""
    attrs = {"summary": f"Generated dataset number {i}.", "keywords": f"generated, n{i % 3}",
             "institution": "Test Institute"}
    if title:
        attrs["title"] = f"Generated {i:02d}"
    store = folder / f"gen_{i:02d}.zarr"
    (store / "x").mkdir(parents=True)
    (store / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": attrs}))
    (store / "x" / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }))
    return store


@dataclass(frozen=True)
class PagedCatalogue:
    """The module's catalogue, served: enough datasets that ``/catalog`` pages, and one
    (gen_00) harvested unchanged, then changed."""

    server: WebServer
    datasets: set[str]  #: every dataset IRI
    runs: dict[str, Any]  #: gen_00's "unchanged" and "changed" harvest runs, and its "graph"


@pytest.fixture(scope="module")
def paged(tmp_path_factory) -> Iterator[PagedCatalogue]:
    root = tmp_path_factory.mktemp("stores")
    generated = [write_hierarchy(root, i, title=i % 5 != 0) for i in range(GENERATED)]
    sources = [*EXAMPLES, stores.build_zarr_v2_plain(root), stores.build_zarr_v2_lone_array(root), *generated]
    db = f"sqlite:///{root / 'catalogue.db'}"
    harvest(db, sources)
    with catalogue.open(db) as cat:
        # dataset gen_00: harvested unchanged, then changed: issued stays, modified moves
        unchanged = cat.harvest(str(generated[0]))  # the loop above was its first harvest
        attrs = json.loads((generated[0] / "zarr.json").read_text())
        attrs["attributes"]["summary"] = "Changed."
        (generated[0] / "zarr.json").write_text(json.dumps(attrs))
        changed = cat.harvest(str(generated[0]))
        runs = {"unchanged": unchanged.run, "changed": changed.run, "graph": changed.graph}
        datasets = {str(d) for d, in cat.query("SELECT ?d WHERE { GRAPH ?d { ?d a dcat:Dataset } }")}
    assert len(datasets) == len(sources)
    with serve_catalogue(db, sources, timeout=60) as server:
        yield PagedCatalogue(server, datasets, runs)


def get(paged: PagedCatalogue, accept: str | None = None, **params: object) -> httpx.Response:
    headers = {"Accept": accept} if accept else {}
    return httpx.get(paged.server.base + "/catalog", params=params, headers=headers, timeout=60)


def turtle(paged: PagedCatalogue, **params: object) -> Graph:
    r = get(paged, **params)
    assert r.status_code == 200, r.text
    return Graph().parse(data=r.text, format="turtle")


def one(graph: Graph, s: object, p: URIRef) -> object:
    values = list(graph.objects(s, p))
    assert len(values) == 1, (s, p, values)
    return values[0]


def test_required_properties(paged):
    g = turtle(paged, page_size=1000)
    base = paged.server.base
    [catalog] = list(g.subjects(RDF.type, DCAT.Catalog))
    assert catalog == URIRef(base + "/catalog")
    for p in (DCTERMS.title, DCTERMS.description, FOAF.homepage, DCTERMS.modified):
        assert isinstance(one(g, catalog, p), Literal | URIRef)
    datasets = set(g.objects(catalog, DCAT.dataset))
    assert {str(d) for d in datasets} == paged.datasets
    assert set(g.subjects(RDF.type, DCAT.Dataset)) == datasets

    [service] = list(g.objects(catalog, DCAT.service))
    assert (service, RDF.type, DCAT.DataService) in g
    assert one(g, service, DCAT.endpointURL) == URIRef(base + "/sparql")
    assert one(g, service, DCAT.endpointDescription) == URIRef(base + "/sparql")
    assert isinstance(one(g, service, DCTERMS.title), Literal)
    assert set(g.objects(service, DCAT.servesDataset)) == datasets

    for ds in datasets:
        for p in (DCTERMS.title, DCTERMS.description, DCTERMS.issued, DCTERMS.modified):
            assert isinstance(one(g, ds, p), Literal) and str(one(g, ds, p)).strip(), (ds, p)
        assert one(g, ds, DCTERMS.identifier) == Literal(str(ds))
        assert one(g, ds, DCAT.landingPage) == URIRef(f"{base}/browse?iri={quote(str(ds), safe='')}")
        assert one(g, ds, DCTERMS.issued).datatype == URIRef("http://www.w3.org/2001/XMLSchema#dateTime")
        distributions = list(g.objects(ds, DCAT.distribution))
        assert len(distributions) == 2
        for dist in distributions:
            assert (dist, RDF.type, DCAT.Distribution) in g
            for p in (DCTERMS.title, DCAT.accessURL, DCAT.mediaType, DCTERMS["format"]):
                one(g, dist, p)
            imt = one(g, dist, DCTERMS["format"])
            assert (imt, RDF.type, DCTERMS.IMT) in g and one(g, imt, RDF.value) and one(g, imt, RDFS.label)
        [store] = [d for d in distributions if one(g, d, DCAT.accessURL) == ds]
        [rdf] = [d for d in distributions if d != store]
        media = str(one(g, store, DCAT.mediaType))
        version = int(media.rsplit("=", 1)[1])
        assert media == f"application/vnd.zarr; version={version}"
        assert one(g, store, DCTERMS.conformsTo) == ZARR_SPECS[version]
        assert str(one(g, one(g, store, DCTERMS["format"]), RDF.value)) == media
        assert one(g, rdf, DCAT.mediaType) == URIRef("https://www.iana.org/assignments/media-types/text/turtle")
        assert one(g, rdf, DCAT.downloadURL) == URIRef(f"{base}/export?graph={quote(str(ds), safe='')}&format=turtle")


def test_dataset_values_come_from_the_hierarchy(paged):
    g = turtle(paged, page_size=1000)
    sea = URIRef(next(d for d in paged.datasets if d.endswith("cf_sea_surface_v2.zarr")))
    assert str(one(g, sea, DCTERMS.title)).startswith("Monthly sea surface temperature")
    assert "sea ice" in {str(k) for k in g.objects(sea, DCAT.keyword)}
    publisher = one(g, sea, DCTERMS.publisher)
    assert (publisher, RDF.type, FOAF.Agent) in g and str(one(g, publisher, FOAF.name)).startswith("zarr-catalogue")
    store = next(d for d in g.objects(sea, DCAT.distribution) if one(g, d, DCAT.accessURL) == sea)
    assert str(one(g, store, DCAT.mediaType)) == "application/vnd.zarr; version=2"
    untitled = URIRef(next(d for d in paged.datasets if d.endswith("gen_05.zarr")))
    assert str(one(g, untitled, DCTERMS.title)) == "gen_05.zarr"  # no title attribute: the store name
    lone = URIRef(next(d for d in paged.datasets if d.endswith("zarr_v2_lone_array.zarr")))
    assert str(one(g, lone, DCTERMS.title)) == "zarr_v2_lone_array.zarr"
    assert str(one(g, lone, DCTERMS.description)).startswith("A Zarr v2 array catalogued from file://")


def test_issued_and_modified_follow_the_harvest_runs(paged):
    g = turtle(paged, page_size=1000)
    ds = URIRef(paged.runs["graph"])
    with catalogue.open(paged.server.db) as cat:
        runs = cat.harvests(limit=None)
    generating = sorted((r for r in runs if r["graph"] == str(ds)), key=lambda r: r["started"])
    assert len(generating) == 3
    assert generating[1]["added"] + generating[1]["changed"] + generating[1]["removed"] == 0
    issued = one(g, ds, DCTERMS.issued).toPython()
    modified = one(g, ds, DCTERMS.modified).toPython()
    assert issued == Literal(generating[0]["ended"], datatype=URIRef("http://www.w3.org/2001/XMLSchema#dateTime")).toPython()
    assert modified == timestamp(paged.runs["changed"].ended).toPython()
    assert modified != timestamp(paged.runs["unchanged"].ended).toPython()
    assert issued < modified
    assert one(g, ds, DCTERMS.description) == Literal("Changed.")
    [catalog] = list(g.subjects(RDF.type, DCAT.Catalog))
    assert one(g, catalog, DCTERMS.modified).toPython() >= modified


def ckan_next_page(graph: Graph) -> str | None:
    """ckanext-dcat's RDFParser.next_page: hydra:next, else hydra:nextPage, of a hydra:PagedCollection."""
    for node in graph.subjects(RDF.type, HYDRA.PagedCollection):
        for o in graph.objects(node, HYDRA.next):
            return str(o)
        for o in graph.objects(node, HYDRA.nextPage):
            return str(o)
    return None


@pytest.mark.parametrize(("accept", "fmt", "parse_as"), [
    ("text/turtle", None, "turtle"),
    ("application/rdf+xml", None, "xml"),
    (None, "rdfxml", "xml"),
    (None, "jsonld", "json-ld"),
])
def test_paging_is_complete_and_disjoint(paged, accept, fmt, parse_as):
    size = 4
    url = f"{paged.server.base}/catalog?page_size={size}" + (f"&format={fmt}" if fmt else "")
    pages: list[set[str]] = []
    seen_urls = []
    while url:
        assert url not in seen_urls and len(seen_urls) < 50
        seen_urls.append(url)
        r = httpx.get(url, headers={"Accept": accept} if accept else {})
        assert r.status_code == 200, r.text
        g = Graph().parse(data=r.text, format=parse_as)
        [catalog] = list(g.subjects(RDF.type, DCAT.Catalog))
        datasets = {str(d) for d in g.objects(catalog, DCAT.dataset)}
        assert {str(d) for d in g.subjects(RDF.type, DCAT.Dataset)} == datasets  # each page complete in itself
        assert all(len(list(g.objects(URIRef(d), DCAT.distribution))) == 2 for d in datasets)
        [view] = list(g.objects(catalog, HYDRA.view))
        assert (view, RDF.type, HYDRA.PartialCollectionView) in g and (view, RDF.type, HYDRA.PagedCollection) in g
        assert one(g, view, HYDRA.totalItems).toPython() == len(paged.datasets)
        assert one(g, view, HYDRA.itemsPerPage).toPython() == size
        assert one(g, view, HYDRA.first) == one(g, view, HYDRA.firstPage)
        number = int(parse_qs(urlsplit(str(view)).query)["page"][0])
        assert number == len(pages) + 1
        if number > 1:
            assert parse_qs(urlsplit(str(one(g, view, HYDRA.previous))).query)["page"] == [str(number - 1)]
        else:
            assert (view, HYDRA.previous, None) not in g
        if fmt:
            assert parse_qs(urlsplit(str(view)).query)["format"] == [fmt]  # kept in paging links
        pages.append(datasets)
        url = ckan_next_page(g)
        if url is None:
            assert one(g, view, HYDRA.last) == view
    expected = -(-len(paged.datasets) // size)
    assert len(pages) == expected > 5
    assert all(len(p) == size for p in pages[:-1])
    assert set().union(*pages) == paged.datasets
    assert sum(len(p) for p in pages) == len(paged.datasets)  # disjoint


def test_formats_are_isomorphic(paged):
    graphs = {}
    for accept, parse_as in (("text/turtle", "turtle"), ("application/ld+json", "json-ld"),
                             ("application/rdf+xml", "xml"), ("application/n-triples", "nt")):
        r = get(paged, accept, page_size=7, page=2)
        assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == accept
        assert r.headers["vary"] == "Accept"
        graphs[accept] = Graph().parse(data=r.text, format=parse_as)
    reference = graphs.pop("text/turtle")
    assert len(reference) > 200
    for accept, graph in graphs.items():
        assert isomorphic(graph, reference), accept
    doc = json.loads(get(paged, "application/ld+json", page_size=2).text)
    assert doc["@context"]["dcat"] == str(DCAT)  # compacted with the DCAT prefixes


@pytest.mark.parametrize(("accept", "expected"), [
    (None, "text/turtle"), ("*/*", "text/turtle"), ("application/*", "application/ld+json"),
    ("application/rdf+xml;q=0.9, text/turtle;q=0.5", "application/rdf+xml"),
    ("text/html", 406), ("application/json", 406),
])
def test_content_negotiation(paged, accept, expected):
    r = get(paged, accept, page_size=1)
    if expected == 406:
        assert r.status_code == 406 and r.json()["status"] == 406
    else:
        assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == expected
    assert r.headers["vary"] == "Accept"


def test_queries_do_not_grow_with_the_page(paged, monkeypatch):
    """Set-oriented: a page of 2 and a page of 30 datasets cost the same number of queries."""
    calls = []
    original = Catalogue.query

    def counting(self, sparql, **kwargs):
        calls.append(sparql)
        return original(self, sparql, **kwargs)

    monkeypatch.setattr(Catalogue, "query", counting)
    counts = []
    for size in (2, 30):
        calls.clear()
        assert get(paged, page_size=size).status_code == 200
        counts.append(len(calls))
    assert counts[0] == counts[1] <= 5, counts


@pytest.mark.parametrize(("query", "status"), [
    ("page=0", 400), ("page=-1", 400), ("page=abc", 400), ("page=1.5", 400), ("page=%ff", 400),
    ("page_size=0", 400), ("page_size=-5", 400), ("page_size=1001", 400), ("page_size=1000000000", 400),
    ("page_size=" + "9" * 400, 400), ("page=" + "9" * 30, 404), ("page=1000", 404),
    ("format=bogus", 400), ("format=../../etc/passwd", 400), ("format=%ff%fe", 400),
])
def test_hostile_parameters(paged, query, status):
    r = httpx.get(f"{paged.server.base}/catalog?{query}")
    assert r.status_code == status, r.text
    assert "\n" not in r.text.strip() and r.json() == {"error": r.json()["error"], "status": status}


def test_turtle_distribution_downloads_the_graph(paged):
    g = turtle(paged, page_size=1000)
    ds = URIRef(next(d for d in paged.datasets if d.endswith("ocean_model_v3.zarr")))
    rdf = next(d for d in g.objects(ds, DCAT.distribution) if (d, DCAT.downloadURL, None) in g)
    r = httpx.get(str(one(g, rdf, DCAT.downloadURL)))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle")
    with catalogue.open(paged.server.db) as cat:
        stored = sum(1 for _ in cat.quads(str(ds)))
    assert len(Graph().parse(data=r.text, format="turtle")) == stored


def test_blank_nodes_are_not_shared_between_datasets(paged):
    g = turtle(paged, page_size=1000)
    owners: dict[BNode, set] = {}
    for ds in g.subjects(RDF.type, DCAT.Dataset):
        for dist in g.objects(ds, DCAT.distribution):
            assert isinstance(dist, BNode)
            owners.setdefault(dist, set()).add(ds)
    assert all(len(o) == 1 for o in owners.values())


@pytest.mark.postgres
def test_postgres_smoke(postgres_url):
    with catalogue.open(postgres_url) as cat:
        for source in EXAMPLES:
            assert cat.harvest(str(source)).ok
    with serve(Settings(db=postgres_url)) as base:
        pages = []
        url = f"{base}/catalog?page_size=2"
        while url:
            r = httpx.get(url, headers={"Accept": "application/ld+json"})
            assert r.status_code == 200
            g = Graph().parse(data=r.text, format="json-ld")
            pages.append({str(d) for d in g.subjects(RDF.type, DCAT.Dataset)})
            url = ckan_next_page(g)
        assert [len(p) for p in pages] == [2, 1]
        assert {p.rsplit("/", 1)[1] for p in set().union(*pages)} == {e.name for e in EXAMPLES}
        assert len(Dataset().parse(data=httpx.get(f"{base}/catalog").text, format="turtle")) > 50
