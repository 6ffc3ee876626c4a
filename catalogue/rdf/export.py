"""Export the catalogue as RDF: Turtle, N-Triples, N-Quads, TriG or JSON-LD.

Line-based formats are streamed straight from the store. Turtle and TriG
group triples by subject, so they are built in memory first. JSON-LD is
compacted with the catalogue context (inlined, so the output needs no network
to be expanded again), which makes each node read like its Zarr metadata.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING

from pyld import jsonld
from rdflib import Dataset, Graph, URIRef
from rdflib.plugins.serializers.nt import _nt_row
from rdflib.term import Node as RDFNode

from catalogue.errors import UsageError
from catalogue.rdf.contexts import document_loader, export_context
from catalogue.rdf.vocabulary import PREFIXES

if TYPE_CHECKING:
    from catalogue.api import Catalogue

log = logging.getLogger(__name__)

Quad = tuple[RDFNode, RDFNode, RDFNode, URIRef]

FORMATS = {
    "turtle": "turtle", "ttl": "turtle",
    "nt": "nt", "ntriples": "nt", "n-triples": "nt",
    "nquads": "nquads", "nq": "nquads", "n-quads": "nquads",
    "trig": "trig",
    "json-ld": "json-ld", "jsonld": "json-ld",
}
PROFILES = ("catalogue", "iliad", "iliad-verbatim")


def triple_line(s: RDFNode, p: RDFNode, o: RDFNode) -> str:
    """One N-Triples line (with its newline)."""
    return _nt_row((s, p, o))


def quad_line(s: RDFNode, p: RDFNode, o: RDFNode, g: URIRef) -> str:
    """One N-Quads line (with its newline)."""
    return triple_line(s, p, o)[: -len(" .\n")] + f" {g.n3()} .\n"


def bind_prefixes(graph: Graph | Dataset) -> None:
    for prefix, ns in PREFIXES.items():
        graph.bind(prefix, ns, override=True, replace=True)


def to_graph(quads: Iterable[Quad]) -> Graph:
    graph = Graph()
    bind_prefixes(graph)
    for s, p, o, _ in quads:
        graph.add((s, p, o))
    return graph


def to_dataset(quads: Iterable[Quad]) -> Dataset:
    ds = Dataset()
    bind_prefixes(ds)
    for s, p, o, g in quads:
        ds.add((s, p, o, g))
    return ds


def compact_jsonld(quads: Iterable[Quad]) -> dict:
    """The quads as a JSON-LD document compacted with the export context (inlined)."""
    nquads = "".join(quad_line(*q) for q in quads)
    expanded = jsonld.from_rdf(nquads, {"format": "application/n-quads", "documentLoader": document_loader})
    return jsonld.compact(expanded, {"@context": export_context()}, {"documentLoader": document_loader})


def export(cat: Catalogue, out: IO[str], *, format: str = "turtle", graph: str | None = None, profile: str = "catalogue") -> None:
    """Write one graph, or every harvested graph, to ``out``."""
    fmt = FORMATS.get(format.lower())
    if fmt is None:
        raise UsageError(f"unknown export format {format!r}; choose from {', '.join(sorted(set(FORMATS.values())))}")
    if profile not in PROFILES:
        raise UsageError(f"unknown export profile {profile!r}; choose from {', '.join(PROFILES)}")
    quads: Iterator[Quad]
    if profile == "catalogue":
        quads = cat.quads(graph)
    else:
        from catalogue.rdf.iliad import iliad_quads

        quads = iliad_quads(cat, graph, verbatim=(profile == "iliad-verbatim"))
    if fmt == "nt":
        for s, p, o, _ in quads:
            out.write(triple_line(s, p, o))
    elif fmt == "nquads":
        for q in quads:
            out.write(quad_line(*q))
    elif fmt == "turtle":
        out.write(to_graph(quads).serialize(format="turtle"))
    elif fmt == "trig":
        out.write(to_dataset(quads).serialize(format="trig"))
    else:
        json.dump(compact_jsonld(quads), out, ensure_ascii=False, indent=2)
        out.write("\n")
