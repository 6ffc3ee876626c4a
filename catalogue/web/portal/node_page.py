"""The dataset/node page (``/browse``) assembled from the catalogue: :func:`node_page`."""

from __future__ import annotations

import posixpath
import urllib.parse
from typing import Any

from rdflib import Graph, URIRef

from catalogue.api import Catalogue
from catalogue.rdf.dcat import iri_name
from catalogue.rdf.extents import BUDGET_RULE, budget_stopped, names_used
from catalogue.rdf.ome import read_ome

from ..http.errors import HTTPError
from .arrays import array_view, attribute_rows, attributes_of
from .extent_view import extent_view
from .graph_digest import (
    GraphDigest,
    NodeInfo,
    graph_digest,
    node_documents,
    node_extent,
    node_graph_iri,
)
from .harvest import harvest_view
from .node_views import MAX_LISTED, Link, NodePage
from .snippets import python_snippet, sparql_snippets, tensorstore_snippets
from .tree import build_tree
from .versions import versions_view

#: Arrays listed on a group page of a graph over FULL_LOAD_LIMIT (MAX_LISTED otherwise), whose
#: documents are rebuilt node by node (~5 ms each).
MAX_LISTED_LARGE = 50
#: Validation findings listed on one page.
MAX_FINDINGS = 500


def _children(digest: GraphDigest, info: NodeInfo) -> list[NodeInfo]:
    """The node's children, groups first, then by name (sorted once, by the digest)."""
    return digest.children.get(info.path, [])


def node_page(cat: Catalogue, iri: str, *, base: str, recheck: float | None = None) -> NodePage:
    """Everything the dataset/node page shows (:class:`HTTPError` 404 for an unknown IRI).

    ``base`` is the server's base URL (no trailing slash), used in the links and
    snippets; ``recheck`` the seconds a cached digest is trusted before the
    graph's size is checked again (see :func:`~catalogue.web.portal.graph_digest.graph_digest`).
    """
    graph_iri = node_graph_iri(cat, iri)
    if graph_iri is None:
        raise HTTPError(404, "no catalogued node has this IRI")
    digest = graph_digest(cat, graph_iri, recheck)
    info = digest.nodes.get(iri)
    if info is None:
        raise HTTPError(404, "no catalogued node has this IRI")
    tree = build_tree(digest, iri)
    root = tree.node
    breadcrumb = [info]
    path = info.path
    while path and path != root.path:
        path = posixpath.dirname(path)
        found = digest.by_path.get(path)
        if found is not None:
            breadcrumb.append(found)
    if breadcrumb[-1] is not root:
        breadcrumb.append(root)
    breadcrumb.reverse()
    dataset_title = digest.titles.get(root.iri) or root.label or iri_name(root.iri)
    title = dataset_title if info is root else info.name or iri_name(info.iri)
    docs = node_documents(cat, digest, iri)
    zarr_format = _format(docs)
    page = NodePage(
        iri=iri, info=info, root=root, title=title, dataset_title=dataset_title, breadcrumb=breadcrumb,
        tree=tree, tree_size=len(digest.nodes), zarr_format=zarr_format,
        summary=digest.descriptions.get(iri, ""), keywords=digest.keywords.get(iri, []),
        publisher=digest.publishers.get(iri, ""), store_url=iri,
        store_link=urllib.parse.urlsplit(iri).scheme.lower() in ("http", "https"),
    )
    page.counts = dict(digest.counts)
    extent, pyramid = node_extent(cat, digest, iri)
    view = extent_view(extent, pyramid, digest=digest, node_path=info.path, base=base, title=title)
    budget = [(f.node_path, f.message) for f in digest.findings if f.rule == BUDGET_RULE]
    if budget:
        uses = names_used(docs) if info.kind == "array" else set()
        view.not_read = budget_stopped(info.path, info.kind, uses, budget)
    # The dataset always says where and when (or that its store does not); other nodes only when they do.
    page.extent = view if view.shown or info is root else None
    if info.kind == "group":
        page.ome = read_ome(Graph(store=cat.store, identifier=URIRef(digest.graph)), iri)
        page.attributes = attribute_rows(attributes_of(docs))
        page.groups = [c for c in _children(digest, info) if c.kind == "group"]
        prefix = info.path + "/" if info.path else ""
        arrays = sorted((n for n in digest.nodes.values()
                         if n.kind == "array" and n.path.startswith(prefix) and n is not info),
                        key=lambda n: (n.path.count("/"), n.path.lower(), n.path))
        listed = MAX_LISTED if digest.full else MAX_LISTED_LARGE
        page.unlisted = max(0, len(arrays) - listed)
        page.arrays = []
        for node in arrays[:listed]:
            view = array_view(node, node_documents(cat, digest, node.iri))
            view.relative = node.path[len(prefix):]
            page.arrays.append(view)
        inside = [f for f in digest.findings if f.node_iri == iri or f.node_path.startswith(prefix)
                  or (not info.path and f.node_iri in digest.nodes)]
    else:
        page.array = array_view(info, docs)
        page.attributes = page.array.attributes
        primary_path = posixpath.dirname(info.path) if info.kind == "dependent" else None
        if primary_path is not None:
            page.array.primary = digest.by_path.get(primary_path)
        page.array.dependents = [c for c in _children(digest, info) if c.kind == "dependent"]
        inside = [f for f in digest.findings if f.node_iri == iri or f.node_path.startswith(info.path + "/")]
    page.findings_total = len(inside)
    page.findings_elsewhere = any(f.node_iri != iri for f in inside)
    page.findings = inside[:MAX_FINDINGS]
    page.harvest = harvest_view(cat, digest, root.iri)
    page.versions = versions_view(cat, root.iri, listing=info is root)
    parent = breadcrumb[-2] if len(breadcrumb) >= 2 else None
    snippets = sparql_snippets(page, base)
    py = python_snippet(page, parent)
    if py is not None:
        snippets.append(py)
    snippets += tensorstore_snippets(page, docs)
    page.snippets = snippets
    page.links = page_links(page, base)
    return page


def page_links(page: NodePage, base: str) -> list[Link]:
    q = urllib.parse.urlencode({"iri": page.iri})
    links = [
        Link("Turtle", f"{base}/node?{q}&format=turtle", "the node's triples"),
        Link("JSON-LD", f"{base}/node?{q}&format=jsonld", "compacted with the catalogue context"),
        Link("Zarr metadata (JSON)", f"{base}/node?{q}&format=json", "rebuilt from the graph"),
    ]
    if page.info.kind != "group":
        links.append(Link("Chunks", f"{base}/node/chunks?{q}", "where every chunk lives (JSON)"))
        links.append(Link("TensorStore spec", f"{base}/node/tensorstore?{q}", "JSON"))
    links.append(Link("SPARQL endpoint", f"{base}/sparql", "query the whole catalogue"))
    return links


def _format(docs: dict[str, Any] | None) -> int | None:
    if not docs:
        return None
    if "zarr.json" in docs:
        return 3
    return 2
