"""One hierarchy graph digested for the portal, and the cache of digests.

The dataset/node page (``/browse``) needs one hierarchy graph: its nodes (the
tree), the node's metadata documents (rebuilt from the graph, exactly as
harvested), the SHACL validation findings stored with the graph and the PROV
record of the harvest that wrote it. Everything is read through the store's
triple patterns, each bound to the named graph and one predicate, so a page
costs a handful of indexed SQL queries whatever the catalogue's size, and a
user-supplied IRI is only ever a bound parameter, never SPARQL text.

Each graph is digested once (its nodes, titles, findings, counts; the tree's
shape) and kept in a small cache keyed by the graph and its generating harvest
run, so a re-harvest is seen on the next request while repeated page views
cost a few sub-millisecond queries; the graph's triple count (a COUNT over the
graph) is checked again at most once per :data:`REFRESH_INTERVAL`, so a
load into an existing graph is seen within that time. Small graphs (up
to :data:`FULL_LOAD_LIMIT` triples, every ordinary dataset) are read whole in
one scan and every node's documents rebuilt at once; larger hierarchies are
scanned one predicate at a time and documents are rebuilt node by node when a
page needs them (then kept), so a group page of a huge hierarchy lists at most
:data:`~catalogue.web.portal.node_page.MAX_LISTED_LARGE` arrays in full and
the tree shows at most :data:`~catalogue.web.portal.tree.MAX_TREE` nodes
around the current one.
"""

from __future__ import annotations

import posixpath
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from rdflib import DCAT, PROV, RDF, RDFS, SH, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS
from rdflib.term import Node as RDFNode

from catalogue.api import Catalogue
from catalogue.errors import CatalogueError
from catalogue.model.extents import Extent, Multiscales
from catalogue.rdf.extents import read_extent, read_multiscales
from catalogue.rdf.provenance import HARVESTS_GRAPH
from catalogue.rdf.rebuild import decode_literal, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

#: Seconds between checks of a digested graph's triple count (a load into an existing graph).
REFRESH_INTERVAL = 2.0
#: Graphs up to this many triples are read whole in one scan (about 30 µs a triple, decoding
#: and rebuilding included: some 150 ms once for the largest, a few ms for a typical dataset).
FULL_LOAD_LIMIT = 5_000
#: Rebuilt documents kept per large graph.
MAX_CACHED_DOCUMENTS = 5_000
#: Digested graphs kept in memory (a typical dataset's digest is a few tens of KB).
CACHE_SIZE = 256


@dataclass
class NodeInfo:
    """A node as the tree and breadcrumbs need it."""

    iri: str
    path: str
    kind: str  # "group" | "array" | "dependent"
    label: str = ""
    valid: bool | None = None
    #: Last path segment ("" for the root).
    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.name = posixpath.basename(self.path) if self.path else ""


@dataclass
class Finding:
    node_iri: str
    node_path: str
    rule: str
    severity: str  # "error" | "warning" | "info"
    pointer: str
    message: str
    document: str


@dataclass
class GraphDigest:
    """What one hierarchy graph holds, decoded once (unchanged once cached, but for ``checked``
    and the documents of large graphs)."""

    graph: str
    nodes: dict[str, NodeInfo]
    titles: dict[str, str]
    descriptions: dict[str, str]
    keywords: dict[str, list[str]]
    publishers: dict[str, str]
    findings: list[Finding]
    run: str | None
    #: Rebuilt documents by node IRI: all of them for small graphs, filled as pages need them
    #: for large ones (a dict's item assignment is atomic, so threads may share it).
    documents: dict[str, dict[str, Any] | None]
    full: bool
    #: Triples in the graph when it was read, and when that was last confirmed (``time.monotonic()``).
    size: int = 0
    checked: float = 0.0
    by_path: dict[str, NodeInfo] = field(default_factory=dict)
    #: Path -> child nodes, groups first, then by name.
    children: dict[str, list[NodeInfo]] = field(default_factory=dict)
    root: NodeInfo | None = None
    #: Groups and arrays (dependent arrays included) in the hierarchy.
    counts: dict[str, int] = field(default_factory=dict)
    #: Extents and multiscale pyramids by node IRI: every one of a small graph, read as
    #: pages need them for large ones (``None`` kept too: "declares none" is an answer).
    extents: dict[str, Extent | None] = field(default_factory=dict)
    pyramids: dict[str, Multiscales | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_path = {n.path: n for n in self.nodes.values()}
        groups = sum(1 for n in self.nodes.values() if n.kind == "group")
        self.counts = {"groups": groups, "arrays": len(self.nodes) - groups}
        if not self.nodes:
            return
        self.root = self.by_path.get("") or min(self.nodes.values(), key=lambda n: (len(n.path), n.path))
        for node in self.nodes.values():
            if node is self.root:
                continue
            parent = posixpath.dirname(node.path)
            while parent not in self.by_path and parent:
                parent = posixpath.dirname(parent)
            if parent not in self.by_path:
                parent = self.root.path
            self.children.setdefault(parent, []).append(node)
        for kids in self.children.values():
            kids.sort(key=lambda n: (n.kind != "group", n.name.lower(), n.name))


#: (database, graph, generating run) -> digest.
_cache: OrderedDict[tuple[str, str, str], GraphDigest] = OrderedDict()
_cache_lock = threading.Lock()
_SEVERITY = {SH.Violation: "error", SH.Warning: "warning", SH.Info: "info"}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _by_subject(graph: Graph, predicate: URIRef) -> dict[RDFNode, list[RDFNode]]:
    out: dict[RDFNode, list[RDFNode]] = {}
    for s, o in graph.subject_objects(predicate):
        out.setdefault(s, []).append(o)
    return out


def _first(values: dict[RDFNode, list[RDFNode]], key: RDFNode) -> str:
    """One value of ``key`` as text (the least, so a node with several gets a stable one)."""
    found = values.get(key)
    return min(str(v) for v in found) if found else ""


def _texts(graph: Graph, predicate: URIRef) -> dict[str, str]:
    values = _by_subject(graph, predicate)
    return {str(s): _first(values, s) for s in values}


def node_graph_iri(cat: Catalogue, iri: str) -> str | None:
    """The named graph holding node ``iri`` (the most specific one if several do), or None."""
    node = URIRef(iri)
    holders = [str(g.identifier) for g in cat.store.contexts((node, ZARR.path, None))]
    holders = [g for g in holders if g != str(HARVESTS_GRAPH)]
    if not holders:
        return None
    holders.sort(key=lambda g: (not iri.startswith(g), -len(g)))
    return holders[0]


def graph_digest(cat: Catalogue, graph_iri: str, recheck: float | None = None) -> GraphDigest:
    """The digested graph, from the cache when the graph has not changed since.

    A new harvest run is seen at once (the run is part of the key); other
    changes (a ``catalogue load`` into the graph) when the graph's triple
    count, a COUNT over the whole graph, is checked again: at most once every
    ``recheck`` seconds (default :data:`REFRESH_INTERVAL`).
    """
    gid = URIRef(graph_iri)
    sql_graph = Graph(store=cat.store, identifier=gid)
    run = sql_graph.value(gid, PROV.wasGeneratedBy)
    key = (cat.url, graph_iri, str(run or ""))
    interval = REFRESH_INTERVAL if recheck is None else recheck
    now = time.monotonic()
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
    if cached is not None and now - cached.checked < interval:
        return cached
    size = len(sql_graph)
    if cached is not None and cached.size == size:
        cached.checked = now
        return cached
    full = size <= FULL_LOAD_LIMIT
    if full:
        source = Graph(store="SimpleMemory")
        source.addN((s, p, o, source) for s, p, o in cat.store.graph_triples(gid))
    else:
        source = sql_graph
    digest = _read_digest(source, graph_iri, run, full)
    digest.size, digest.checked = size, now
    with _cache_lock:
        _cache[key] = digest
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return digest


def _read_digest(graph: Graph, graph_iri: str, run: RDFNode | None, full: bool) -> GraphDigest:
    paths = _by_subject(graph, ZARR.path)
    types = _by_subject(graph, RDF.type)
    labels = _by_subject(graph, RDFS.label)
    valid = _by_subject(graph, ZARR.valid)
    nodes: dict[str, NodeInfo] = {}
    for subject, values in paths.items():
        if not isinstance(subject, URIRef):
            continue
        kinds = set(types.get(subject, ()))
        if ZARR.DependentArray in kinds:
            kind = "dependent"
        elif ZARR.Array in kinds:
            kind = "array"
        elif ZARR.Group in kinds:
            kind = "group"
        else:
            continue
        flags = valid.get(subject, [])
        nodes[str(subject)] = NodeInfo(
            iri=str(subject), path=str(values[0]), kind=kind, label=_first(labels, subject),
            valid=bool(decode_literal(flags[0])) if flags and isinstance(flags[0], Literal) else None,
        )
    titles = _texts(graph, DCTERMS.title)
    descriptions = _texts(graph, DCTERMS.description)
    publishers = _texts(graph, DCTERMS.publisher)
    keywords = {str(s): sorted(str(k) for k in v) for s, v in _by_subject(graph, DCAT.keyword).items()}
    findings = _read_findings(graph, nodes)
    documents: dict[str, dict[str, Any] | None] = {}
    extents: dict[str, Extent | None] = {}
    pyramids: dict[str, Multiscales | None] = {}
    if full:
        for iri in nodes:
            documents[iri] = read_documents(graph, iri)
            extents[iri] = _read_extent(graph, iri)
            pyramids[iri] = _read_pyramid(graph, iri)
    return GraphDigest(graph=graph_iri, nodes=nodes, titles=titles, descriptions=descriptions,
                   keywords=keywords, publishers=publishers, findings=findings,
                   run=str(run) if run is not None else None, documents=documents, full=full,
                   extents=extents, pyramids=pyramids)


def _read_findings(graph: Graph, nodes: dict[str, NodeInfo]) -> list[Finding]:
    focus = _by_subject(graph, SH.focusNode)
    if not focus:
        return []
    columns = {name: _by_subject(graph, prop) for name, prop in (
        ("rule", ZARR.rule), ("severity", SH.resultSeverity), ("pointer", ZARR.jsonPointer),
        ("message", SH.resultMessage), ("document", ZARR.document))}
    out = []
    for result, targets in focus.items():
        target = str(targets[0])
        severity = columns["severity"].get(result, [None])[0]
        info = nodes.get(target)
        out.append(Finding(
            node_iri=target, node_path=info.path if info else "",
            rule=_first(columns["rule"], result), severity=_SEVERITY.get(severity, "info"),  # type: ignore[arg-type]
            pointer=_first(columns["pointer"], result), message=_first(columns["message"], result),
            document=_first(columns["document"], result)))
    out.sort(key=lambda f: (f.node_path, _SEVERITY_ORDER[f.severity], f.pointer, f.rule, f.message))
    return out


def read_documents(graph: Graph, iri: str) -> dict[str, Any] | None:
    try:
        return rebuild_documents(graph, iri)
    except (CatalogueError, ValueError, TypeError, RecursionError):
        # An inconsistent graph (triples loaded by hand, a literal that is not what its
        # datatype says): the page shows what the tree knows instead of failing.
        return None


def _read_extent(graph: Graph, iri: str) -> Extent | None:
    try:
        return read_extent(graph, URIRef(iri))
    except (ValueError, TypeError, ArithmeticError):
        # Extent triples that do not read back (loaded by hand, or by an older harvest):
        # the page says the store declares none rather than failing.
        return None


def _read_pyramid(graph: Graph, iri: str) -> Multiscales | None:
    try:
        return read_multiscales(graph, URIRef(iri))
    except (ValueError, TypeError, ArithmeticError):
        return None


def node_extent(cat: Catalogue, digest: GraphDigest, iri: str) -> tuple[Extent | None, Multiscales | None]:
    """The node's extent and multiscale pyramid, from the digest (read once, for a large
    graph, through the store's triple patterns on the graph)."""
    if not digest.full and iri not in digest.extents:
        graph = Graph(store=cat.store, identifier=URIRef(digest.graph))
        if len(digest.extents) < MAX_CACHED_DOCUMENTS:
            digest.pyramids[iri] = _read_pyramid(graph, iri)
            digest.extents[iri] = _read_extent(graph, iri)
        else:
            return _read_extent(graph, iri), _read_pyramid(graph, iri)
    return digest.extents.get(iri), digest.pyramids.get(iri)


def node_documents(cat: Catalogue, digest: GraphDigest, iri: str) -> dict[str, Any] | None:
    if digest.full or iri in digest.documents:
        return digest.documents.get(iri)
    docs = read_documents(Graph(store=cat.store, identifier=URIRef(digest.graph)), iri)
    if len(digest.documents) < MAX_CACHED_DOCUMENTS:
        digest.documents[iri] = docs
    return docs
