"""The triples that describe one node: its own, those of its blank nodes, its dependent arrays.

A node's description in its hierarchy graph is not just the triples with the node as
subject: codecs, configurations and lists hang off blank nodes that only it refers to,
and a primary array carries its dependent arrays. The harvester keeps a failed node's
previous version by this closure and rewrites changed nodes by their own subjects; the
web's node pages show it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import SH, BNode, Graph, URIRef
from rdflib.term import Node as RDFNode

from catalogue.rdf.convert import Triple
from catalogue.rdf.vocabulary import ZARR

__all__ = ["node_closure", "node_description", "own_subjects"]


def own_subjects(graph: Graph, iri: URIRef) -> list[RDFNode]:
    """The node and the blank nodes it alone describes (its lists, codecs, configurations)."""
    out: list[RDFNode] = [iri]
    frontier: list[RDFNode] = [iri]
    seen: set[RDFNode] = {iri}
    while frontier:
        for o in graph.objects(frontier.pop(), None):
            if isinstance(o, BNode) and o not in seen:
                seen.add(o)
                out.append(o)
                frontier.append(o)
    return out


def node_closure(graph: Graph, iri: URIRef, *, skip: Iterable[URIRef] = ()) -> list[Triple]:
    """The triples describing one node: its own, those of its blank nodes and dependent arrays.

    ``skip`` lists predicates left out (the harvester drops old membership
    links, which it recomputes from the current walk).
    """
    skipped = set(skip)
    out: list[Triple] = []
    frontier: list[RDFNode] = [iri]
    seen: set[RDFNode] = {iri}
    while frontier:
        subject = frontier.pop()
        for s, p, o in graph.triples((subject, None, None)):
            if p in skipped:
                continue
            out.append((s, p, o))
            follow = isinstance(o, BNode) or p == ZARR.dependentArray
            if follow and o not in seen:
                seen.add(o)
                frontier.append(o)
    return out


def node_description(graph: Graph, iri: str) -> list[Triple]:
    """The node's closure plus the validation results about it (and the report's link to them).

    What ``/node`` answers for a node in RDF: :func:`node_closure` and the SHACL
    results whose focus is the node, linked from the hierarchy's validation report.
    """
    node = URIRef(iri)
    out = node_closure(graph, node)
    seen = set(out)

    def add(triple: Triple) -> None:
        if triple not in seen:
            seen.add(triple)
            out.append(triple)

    for result in list(graph.subjects(SH.focusNode, node)):
        for report in graph.subjects(SH.result, result):
            add((report, SH.result, result))  # type: ignore[arg-type]
        for triple in graph.triples((result, None, None)):
            add(triple)
    return out
