"""The catalogue as a DCAT 3 catalogue, one page at a time.

Each catalogued hierarchy is a ``dcat:Dataset`` whose IRI is the hierarchy
root's (the graph name). A page of the catalogue is a graph holding:

* the ``dcat:Catalog`` (title, description, homepage, modified, the page's
  ``dcat:dataset`` links and its ``dcat:service``);
* each ``dcat:Dataset`` of the page: ``dct:title``, ``dct:description`` (the
  ACDD ``summary``), ``dcat:keyword``, ``dct:identifier``, ``dct:publisher``
  (a ``foaf:Agent`` named by the ``institution`` attribute), ``dct:issued`` /
  ``dct:modified`` (from the harvest runs' PROV records: the first run that
  generated the graph, and the last one that added, changed or removed a
  node), ``dcat:landingPage`` (the portal page) and two distributions;
* a version of a dataset (an Icechunk repository's branch, tag or snapshot, each its
  own graph) says so in DCAT 3's terms: ``dcat:isVersionOf`` the repository (and the
  repository ``dcat:hasVersion`` it), ``dcat:version`` its name, ``adms:versionNotes``
  the commit message, ``dcat:previousVersion`` the snapshot it was written over;
* the distributions: the Zarr store itself (``dcat:accessURL`` = the store
  URL) and the Turtle export of its graph (``dcat:downloadURL``);
* a ``dcat:DataService`` for the SPARQL endpoint serving the page's datasets;
* Hydra paging (``hydra:PagedCollection`` / ``hydra:PartialCollectionView``
  with first/next/previous/last and totals), both the current Hydra terms and
  the deprecated ``nextPage``-style ones, since ckanext-dcat's RDF harvester
  follows ``hydra:next`` and falls back on ``hydra:nextPage``.

**Media type for Zarr.** Zarr has no IANA registration (zarr-specs issue 123
is still open). ``application/vnd+zarr``, once used by STAC and pystac, is
malformed as a media type (``+`` introduces a structured-syntax suffix), and
the STAC best practices moved to ``application/vnd.zarr`` with a ``version``
parameter (pystac issue 1546, stac-best-practices PR 37). The catalogue
writes that, e.g. ``application/vnd.zarr; version=3``. As there is no IANA
IRI for it, ``dcat:mediaType`` carries it as a literal, which is the first
thing ckanext-dcat reads; ``dct:format`` carries it as a ``dct:IMT`` with
``rdf:value`` and ``rdfs:label`` (the form ckanext-dcat also understands),
and ``dct:conformsTo`` names the Zarr specification version. Registered
types (``text/turtle``) use IANA IRIs.

All data comes from four set-oriented SPARQL queries per page (count, page
properties, first and last harvest), never one query per dataset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

from rdflib import DCAT, DCTERMS, FOAF, RDF, RDFS, XSD, BNode, Graph, Literal, Namespace, URIRef
from rdflib.namespace import PROV
from rdflib.term import Node as RDFNode

from catalogue.errors import NotFound
from catalogue.rdf.formats import JSONLD, RDFXML, RDFFormat
from catalogue.rdf.provenance import HARVESTS_GRAPH
from catalogue.rdf.sources import QueryFunction
from catalogue.rdf.versions import ADMS
from catalogue.rdf.versions import DCAT as DCAT3
from catalogue.rdf.vocabulary import ZARR

HYDRA = Namespace("http://www.w3.org/ns/hydra/core#")
IANA_MEDIA_TYPES = "https://www.iana.org/assignments/media-types/"
#: The Zarr specification of each format version (``dct:conformsTo`` of store distributions).
ZARR_SPECS = {
    2: URIRef("https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html"),
    3: URIRef("https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html"),
}
SPARQL_PROTOCOL = URIRef("https://www.w3.org/TR/sparql11-protocol/")
#: Prefixes bound in DCAT output (and the JSON-LD context built from them).
DCAT_PREFIXES = {
    "dcat": DCAT, "dct": DCTERMS, "foaf": FOAF, "hydra": HYDRA, "rdf": RDF, "rdfs": RDFS, "xsd": XSD, "adms": ADMS,
}

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000

_DATASETS = "{ SELECT ?d WHERE { GRAPH ?d { ?d a dcat:Dataset } } ORDER BY ?d LIMIT %d OFFSET %d }"


def zarr_media_type(zarr_format: int | None) -> str:
    """``application/vnd.zarr`` with its ``version`` parameter when the format is known."""
    return f"application/vnd.zarr; version={zarr_format}" if zarr_format in (2, 3) else "application/vnd.zarr"


@dataclass
class DatasetRecord:
    """What the catalogue knows of one dataset for DCAT, from the graph and the PROV records."""

    iri: str
    title: str | None = None
    description: str | None = None
    keywords: list[str] = field(default_factory=list)
    publisher: str | None = None
    zarr_format: int | None = None
    kind: str = "group"
    issued: Literal | None = None
    modified: Literal | None = None
    #: A version of a dataset (an Icechunk branch, tag or snapshot): what it is a version of,
    #: its name, its notes (the commit message) and the version it was written over.
    version_of: str | None = None
    version: str | None = None
    version_notes: str | None = None
    previous_version: str | None = None


def count_datasets(query: QueryFunction) -> int:
    """How many datasets (harvested hierarchies) the catalogue has."""
    row = next(iter(query("SELECT (COUNT(?d) AS ?n) WHERE { GRAPH ?d { ?d a dcat:Dataset } }")))
    return int(row[0])


def last_harvest(query: QueryFunction) -> Literal | None:
    """When the last harvest that generated a graph ended (the catalogue's ``dct:modified``)."""
    rows = list(query(
        f"SELECT (MAX(?end) AS ?m) WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:generated ?g ; prov:endedAtTime ?end }} }}"
    ))
    value = rows[0][0] if rows else None
    return value if isinstance(value, Literal) else None


def dataset_records(query: QueryFunction, offset: int, limit: int) -> list[DatasetRecord]:
    """The datasets ``offset .. offset+limit`` in IRI order, with their DCAT properties (3 queries)."""
    page = _DATASETS % (int(limit), int(offset))
    records: dict[str, DatasetRecord] = {}
    props = f"""
    SELECT ?d ?p ?o WHERE {{ {page}
        GRAPH ?d {{ ?d ?p ?o }}
        VALUES ?p {{ rdf:type dct:title dct:description dcat:keyword dct:publisher zarr:zarrFormat
                     dcat:isVersionOf dcat:version prov:wasRevisionOf <{ADMS.versionNotes}> }} }}"""
    for d, p, o in query(props):
        rec = records.setdefault(str(d), DatasetRecord(str(d)))
        text = str(o)
        if p == DCTERMS.title and rec.title is None:
            rec.title = text
        elif p == DCTERMS.description and rec.description is None:
            rec.description = text
        elif p == DCAT.keyword:
            rec.keywords.append(text)
        elif p == DCTERMS.publisher and rec.publisher is None:
            rec.publisher = text
        elif p == ZARR.zarrFormat and isinstance(o, Literal) and isinstance(o.toPython(), int):
            rec.zarr_format = int(o.toPython())
        elif p == RDF.type and o == ZARR.Array:
            rec.kind = "array"
        elif p == DCAT3.isVersionOf and isinstance(o, URIRef):
            rec.version_of = text
        elif p == DCAT3.version:
            rec.version = text
        elif p == ADMS.versionNotes:
            rec.version_notes = text
        elif p == PROV.wasRevisionOf and isinstance(o, URIRef):
            rec.previous_version = text
    issued = f"""
    SELECT ?d (MIN(?end) AS ?t) WHERE {{ {page}
        GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:generated ?d ; prov:endedAtTime ?end }} }} GROUP BY ?d"""
    for d, t in query(issued):
        if str(d) in records and isinstance(t, Literal):
            records[str(d)].issued = t
    modified = f"""
    SELECT ?d (MAX(?end) AS ?t) WHERE {{ {page}
        GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:generated ?d ; prov:endedAtTime ?end ;
            zarr:nodesAdded ?a ; zarr:nodesChanged ?c ; zarr:nodesRemoved ?r }}
        FILTER(?a > 0 || ?c > 0 || ?r > 0) }} GROUP BY ?d"""
    for d, t in query(modified):
        if str(d) in records and isinstance(t, Literal):
            records[str(d)].modified = t
    for rec in records.values():
        rec.keywords.sort()
        if rec.modified is None:
            rec.modified = rec.issued
    return sorted(records.values(), key=lambda r: r.iri)


@dataclass(frozen=True)
class CatalogLinks:
    """Where the server publishes things (absolute URLs): the catalogue page builder needs them."""

    base: str
    #: Extra query parameters kept in page links (e.g. ``format=rdfxml``).
    page_query: str = ""
    title: str = "zarr-catalogue"

    @property
    def catalog(self) -> URIRef:
        return URIRef(f"{self.base}/catalog")

    def page(self, number: int, size: int) -> URIRef:
        extra = f"&{self.page_query}" if self.page_query else ""
        return URIRef(f"{self.base}/catalog?page={number}&page_size={size}{extra}")

    def landing(self, iri: str) -> URIRef:
        return URIRef(f"{self.base}/browse?iri={quote(iri, safe='')}")

    def export(self, iri: str) -> URIRef:
        return URIRef(f"{self.base}/export?graph={quote(iri, safe='')}&format=turtle")

    @property
    def sparql(self) -> URIRef:
        return URIRef(f"{self.base}/sparql")


def iri_name(iri: str) -> str:
    """The name of a dataset (or node) that has no title: its IRI's last path segment, percent-decoded.

    ``https://host/data/sea%20surface.zarr/`` is ``sea surface.zarr``; an IRI
    without a path gives its authority (``s3://bucket`` is ``bucket``), and one
    with neither is its own name. The one rule for ``/datasets``, the portal,
    ``/catalog`` and ``/export`` download names, so a dataset is called the same everywhere.
    """
    parts = urlsplit(iri)
    return unquote(parts.path.rstrip("/").rsplit("/", 1)[-1]) or parts.netloc or iri


def iri_stem(iri: str, default: str = "graph") -> str:
    """:func:`iri_name` made safe for file names and URL path segments (``[A-Za-z0-9._-]``,
    at most 100 characters): ``/export`` download names and STAC collection ids."""
    return (re.sub(r"[^A-Za-z0-9._-]+", "_", iri_name(iri)).strip("._") or default)[:100]


def _imt(graph: Graph, media_type: str, label: str) -> BNode:
    """A ``dct:IMT`` node (``rdf:value`` the media type): the ``dct:format`` form ckanext-dcat reads."""
    node = BNode()
    graph.add((node, RDF.type, DCTERMS.IMT))
    graph.add((node, RDF.value, Literal(media_type)))
    graph.add((node, RDFS.label, Literal(label)))
    return node


def add_dataset(graph: Graph, rec: DatasetRecord, links: CatalogLinks) -> URIRef:
    """The ``dcat:Dataset`` of one hierarchy and its two distributions."""
    ds = URIRef(rec.iri)
    version = f"Zarr v{rec.zarr_format}" if rec.zarr_format else "Zarr"
    graph.add((ds, RDF.type, DCAT.Dataset))
    graph.add((ds, DCTERMS.title, Literal(rec.title or iri_name(rec.iri))))
    graph.add((ds, DCTERMS.description, Literal(
        rec.description or f"A {version} {rec.kind} catalogued from {rec.iri}."
    )))
    graph.add((ds, DCTERMS.identifier, Literal(rec.iri)))
    for keyword in rec.keywords:
        graph.add((ds, DCAT.keyword, Literal(keyword)))
    if rec.publisher:
        agent = BNode()
        graph.add((agent, RDF.type, FOAF.Agent))
        graph.add((agent, FOAF.name, Literal(rec.publisher)))
        graph.add((ds, DCTERMS.publisher, agent))
    if rec.issued is not None:
        graph.add((ds, DCTERMS.issued, rec.issued))
    if rec.modified is not None:
        graph.add((ds, DCTERMS.modified, rec.modified))
    graph.add((ds, DCAT.landingPage, links.landing(rec.iri)))
    if rec.version_of:
        # DCAT 3's versioning: both directions, so a harvester that reads either finds the other
        graph.add((ds, DCAT3.isVersionOf, URIRef(rec.version_of)))
        graph.add((URIRef(rec.version_of), DCAT3.hasVersion, ds))
        said: list[tuple[URIRef, RDFNode | None]] = [
            (DCAT3.version, Literal(rec.version) if rec.version else None),
            (ADMS.versionNotes, Literal(rec.version_notes) if rec.version_notes else None),
            (DCAT3.previousVersion, URIRef(rec.previous_version) if rec.previous_version else None)]
        for p, o in said:
            if o is not None:
                graph.add((ds, p, o))

    store = BNode()
    zarr_type = zarr_media_type(rec.zarr_format)
    graph.add((ds, DCAT.distribution, store))
    graph.add((store, RDF.type, DCAT.Distribution))
    graph.add((store, DCTERMS.title, Literal(f"{version} store")))
    graph.add((store, DCTERMS.description, Literal(
        "The Zarr hierarchy itself: open this URL with a Zarr library (zarr-python, xarray, TensorStore)."
    )))
    graph.add((store, DCAT.accessURL, URIRef(rec.iri)))
    graph.add((store, DCAT.mediaType, Literal(zarr_type)))
    graph.add((store, DCTERMS["format"], _imt(graph, zarr_type, version)))
    if rec.zarr_format in ZARR_SPECS:
        graph.add((store, DCTERMS.conformsTo, ZARR_SPECS[rec.zarr_format]))  # type: ignore[index]

    rdf = BNode()
    graph.add((ds, DCAT.distribution, rdf))
    graph.add((rdf, RDF.type, DCAT.Distribution))
    graph.add((rdf, DCTERMS.title, Literal("Catalogue metadata (Turtle)")))
    graph.add((rdf, DCTERMS.description, Literal(
        "The hierarchy's metadata as harvested into the catalogue: every group and array, as RDF."
    )))
    graph.add((rdf, DCAT.accessURL, links.export(rec.iri)))
    graph.add((rdf, DCAT.downloadURL, links.export(rec.iri)))
    graph.add((rdf, DCAT.mediaType, URIRef(IANA_MEDIA_TYPES + "text/turtle")))
    graph.add((rdf, DCTERMS["format"], _imt(graph, "text/turtle", "Turtle")))
    return ds


def catalog_page(
    records: list[DatasetRecord],
    *,
    total: int,
    page: int,
    page_size: int,
    links: CatalogLinks,
    modified: Literal | None = None,
) -> Graph:
    """One page of the DCAT catalogue: catalogue, datasets, distributions, service, paging."""
    graph = Graph()
    for prefix, ns in DCAT_PREFIXES.items():
        graph.bind(prefix, ns, override=True, replace=True)
    catalog = links.catalog
    graph.add((catalog, RDF.type, DCAT.Catalog))
    graph.add((catalog, DCTERMS.title, Literal(links.title)))
    graph.add((catalog, DCTERMS.description, Literal(
        "Zarr hierarchies (groups and arrays) whose metadata was harvested from their stores, "
        "described in RDF and searchable with SPARQL."
    )))
    graph.add((catalog, FOAF.homepage, URIRef(links.base + "/")))
    if modified is not None:
        graph.add((catalog, DCTERMS.modified, modified))

    service = URIRef(f"{links.catalog}#sparql")
    graph.add((catalog, DCAT.service, service))
    graph.add((service, RDF.type, DCAT.DataService))
    graph.add((service, DCTERMS.title, Literal("SPARQL 1.1 endpoint")))
    graph.add((service, DCAT.endpointURL, links.sparql))
    graph.add((service, DCAT.endpointDescription, links.sparql))
    graph.add((service, DCTERMS.conformsTo, SPARQL_PROTOCOL))

    for rec in records:
        ds = add_dataset(graph, rec, links)
        graph.add((catalog, DCAT.dataset, ds))
        graph.add((service, DCAT.servesDataset, ds))

    last = page_count(total, page_size)
    view = links.page(page, page_size)
    graph.add((catalog, HYDRA.view, view))
    paging: list[tuple[URIRef, RDFNode]] = [
        (RDF.type, HYDRA.PagedCollection),
        (RDF.type, HYDRA.PartialCollectionView),
        (HYDRA.totalItems, Literal(total)),
        (HYDRA.itemsPerPage, Literal(page_size)),
        (HYDRA.first, links.page(1, page_size)),
        (HYDRA.firstPage, links.page(1, page_size)),
        (HYDRA.last, links.page(last, page_size)),
        (HYDRA.lastPage, links.page(last, page_size)),
    ]
    if page < last:
        paging += [(HYDRA.next, links.page(page + 1, page_size)), (HYDRA.nextPage, links.page(page + 1, page_size))]
    if page > 1:
        paging += [(HYDRA.previous, links.page(page - 1, page_size)),
                   (HYDRA.previousPage, links.page(page - 1, page_size))]
    for p, o in paging:
        graph.add((view, p, o))
    return graph


def page_count(total: int, page_size: int) -> int:
    """Pages of ``page_size`` datasets needed for ``total`` (at least one, even when empty)."""
    return max(1, -(-total // page_size))


def catalog_graph(query: QueryFunction, links: CatalogLinks, *, page: int = 1,
                  page_size: int = DEFAULT_PAGE_SIZE) -> Graph:
    """Page ``page`` of the catalogue as DCAT 3 with Hydra paging, read through ``query``.

    :class:`~catalogue.errors.NotFound` past the last page (the first page always
    exists, empty or not).
    """
    total = count_datasets(query)
    last = page_count(total, page_size)
    if page > last:
        raise NotFound(f"page {page} is past the last page ({last}, at page_size {page_size})")
    records = dataset_records(query, (page - 1) * page_size, page_size)
    return catalog_page(records, total=total, page=page, page_size=page_size, links=links,
                        modified=last_harvest(query))


def serialize_catalog(graph: Graph, fmt: RDFFormat) -> bytes:
    """A DCAT page as DCAT harvesters read it best: JSON-LD compacted with the DCAT
    prefixes, RDF/XML with nested descriptions (rdflib's pretty-xml)."""
    if fmt == JSONLD:
        context = {prefix: str(ns) for prefix, ns in DCAT_PREFIXES.items()}
        return graph.serialize(format="json-ld", context=context, auto_compact=True).encode()
    name = "pretty-xml" if fmt == RDFXML else fmt.name
    return graph.serialize(format=name, encoding="utf-8")
