"""The harvest's write phase: a hierarchy into its named graph, incrementally where it can.

Everything the write depends on (the graph's current fingerprints, the previous
versions of failed nodes) is read inside the write transaction, so it is current and
stays so until the commit. A graph whose previous version can be diffed node by node
gets only what changed rewritten (:func:`write_changes`); a harvest with failed nodes,
whose previous versions are spliced in, replaces the graph whole.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from rdflib import PROV, SH, Graph, Literal, URIRef

from catalogue.graph.store import SQLStore
from catalogue.model.nodes import Hierarchy
from catalogue.rdf.closure import node_closure, own_subjects
from catalogue.rdf.convert import Triple, hierarchy_triples
from catalogue.rdf.extents import extent_statements
from catalogue.rdf.shacl import report_iri
from catalogue.rdf.versions import store_statements
from catalogue.rdf.vocabulary import ZARR

__all__ = ["Prepared", "fingerprints", "kept_memberships", "prepare_write", "previous_versions", "replace_graph",
           "write_changes"]


def fingerprints(store: SQLStore, graph_id: URIRef) -> dict[str, str]:
    """Node IRI -> fingerprint of the graph's current version (empty if not catalogued)."""
    if not store.has_graph(graph_id):
        return {}
    old = Graph(store=store, identifier=graph_id)
    return {str(s): str(o) for s, o in old.subject_objects(ZARR.fingerprint)}


@dataclass
class Prepared:
    """The converted triples of a harvest, made before its write transaction, and the
    previous version's fingerprints they were made against."""

    old_fingerprints: dict[str, str]
    triples: list[Triple]


def prepare_write(store: SQLStore, graph_id: URIRef, h: Hierarchy, new_fp: dict[str, str]) -> Prepared:
    """Convert what the write will need (the nodes that changed since the graph's current
    version, or all of them for a new graph) outside the write lock, in a read
    transaction that ends here. For a hierarchy with no failed node: the write checks that
    the previous version is the one this was made against (:func:`write_changes`,
    :func:`replace_graph`'s ``converted``)."""
    old_fp = fingerprints(store, graph_id)
    store.rollback()
    catalogued = set(h.nodes)
    if old_fp:
        rewrite = {iri for iri, fp in new_fp.items() if old_fp.get(iri) != fp}
        triples = list(hierarchy_triples(h, member_filter=catalogued, paths={p for p in h.nodes if h.iri(p) in rewrite}))
    else:
        triples = list(hierarchy_triples(h, member_filter=catalogued))
    return Prepared(old_fp, triples)


def previous_versions(store: SQLStore, graph_id: URIRef, h: Hierarchy) -> tuple[list[Triple], set[str]]:
    """The catalogued triples of the nodes that failed now, and the paths of those that had any."""
    if not h.failed or not store.has_graph(graph_id):
        return [], set()
    old = Graph(store=store, identifier=graph_id)
    triples: list[Triple] = []
    kept: set[str] = set()
    for path in h.failed:
        closure = node_closure(old, URIRef(h.iri(path)), skip=[ZARR.member, ZARR.valid, PROV.wasGeneratedBy])
        if closure:
            triples += closure
            kept.add(path)
    return triples, kept


def kept_memberships(h: Hierarchy, kept: set[str], catalogued: set[str]) -> list[Triple]:
    """Membership links from kept (failed) groups to their children found now."""
    return [
        (URIRef(h.iri(posixpath.dirname(path))), ZARR.member, URIRef(h.iri(path)))
        for path in catalogued
        if path and posixpath.dirname(path) in kept
    ]


def replace_graph(store: SQLStore, graph_id: URIRef, h: Hierarchy, catalogued: set[str], kept_triples: list[Triple],
                  kept_paths: set[str], new_fp: dict[str, str], extra: list[Triple], *,
                  converted: list[Triple] | None = None) -> int:
    """Replace the graph whole: the hierarchy (``converted`` when :func:`prepare_write` made
    it), the kept previous versions, fingerprints and ``extra``."""
    triples = list(converted) if converted is not None else list(hierarchy_triples(h, member_filter=catalogued))
    triples += kept_triples
    triples += kept_memberships(h, kept_paths, catalogued)
    triples += [(URIRef(iri), ZARR.fingerprint, Literal(fp)) for iri, fp in new_fp.items()]
    return store.replace_graph(graph_id, triples + extra)


def write_changes(store: SQLStore, graph_id: URIRef, h: Hierarchy, old_fp: dict[str, str], new_fp: dict[str, str],
                  extra: list[Triple], *, converted: list[Triple] | None = None) -> int:
    """Rewrite only what changed: the triples of changed, removed and added nodes, membership
    links of unchanged groups whose children changed, and the per-run triples (validation
    report, ``zarr:valid`` flags, ``prov:wasGeneratedBy``, extents and pyramids), which
    describe this run.

    Unchanged nodes are not even converted, so a re-harvest of an unchanged source costs
    the reading, validating and comparing only. Same result as replacing the graph whole
    (a test checks it). Runs in the current transaction; the caller commits.
    """
    old = Graph(store=store, identifier=graph_id)
    # Extents are per-run triples too: an unchanged node's can change with its neighbours'.
    for triple in list(extent_statements(old)):
        store.remove(triple, old)
    # So are what the store says of itself (archive files, version): they change with the data.
    for triple in store_statements(old, URIRef(h.url)):
        store.remove(triple, old)
    rewrite = {iri for iri, fp in new_fp.items() if old_fp.get(iri) != fp}
    removed = set(old_fp) - set(new_fp)
    for iri in sorted(rewrite | removed):
        for subject in own_subjects(old, URIRef(iri)):
            store.remove((subject, None, None), old)
    # Links into and out of the nodes that stay: membership of unchanged groups, per-run triples.
    catalogued = set(h.nodes)
    for path, node in h.nodes.items():
        iri = h.iri(path)
        if iri in rewrite:
            continue
        children = {URIRef(h.iri(m)) for m in node.members if m in catalogued}
        linked = set(old.objects(URIRef(iri), ZARR.member))
        for child in linked - children:
            store.remove((URIRef(iri), ZARR.member, child), old)
        for child in children - linked:
            store.add((URIRef(iri), ZARR.member, child), old)
    report = report_iri(h)
    for result in list(old.objects(report, SH.result)):
        store.remove((result, None, None), old)
    store.remove((report, None, None), old)
    store.remove((None, ZARR.valid, None), old)
    store.remove((URIRef(h.url), ZARR.validationReport, None), old)
    store.remove((URIRef(h.url), PROV.wasGeneratedBy, None), old)
    new = (list(converted) if converted is not None else
           list(hierarchy_triples(h, member_filter=catalogued, paths={p for p in h.nodes if h.iri(p) in rewrite})))
    new += [(URIRef(iri), ZARR.fingerprint, Literal(new_fp[iri])) for iri in sorted(rewrite)]
    store.addN((s, p, o, graph_id) for s, p, o in new + extra)
    return len(old)
