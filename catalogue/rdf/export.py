"""The one exporter of the catalogue's RDF: Turtle, N-Triples, N-Quads, TriG or JSON-LD, streamed.

``catalogue export`` (:meth:`catalogue.api.Catalogue.export`) and the web's ``/export``
both use :func:`stream`, in any profile (``catalogue``: the lossless catalogue triples;
``iliad``/``iliad-verbatim``: :mod:`catalogue.rdf.iliad`). It reads a
:class:`~catalogue.rdf.sources.QuadSource` graph by graph and produces text pieces:
N-Triples and N-Quads a batch of lines at a time, Turtle and TriG graph by graph,
JSON-LD as one document whose named graphs are compacted one at a time with the
catalogue context (inlined, so the output needs no network to be expanded again, and
each node reads like its Zarr metadata). So only one graph is ever held in memory.
Format names and aliases come from :mod:`catalogue.rdf.formats`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from rdflib import Dataset, Graph, URIRef
from rdflib.plugins.serializers.nt import _nt_row
from rdflib.term import Node as RDFNode

from catalogue.errors import UsageError
from catalogue.rdf.contexts import document_loader, export_context
from catalogue.rdf.formats import (
    JSONLD,
    NQUADS,
    NTRIPLES,
    TRIG,
    TURTLE,
    RDFFormat,
    parse_rdf_format,
)
from catalogue.rdf.iliad import IliadView
from catalogue.rdf.sources import QuadSource
from catalogue.rdf.vocabulary import PREFIXES

log = logging.getLogger(__name__)

Quad = tuple[RDFNode, RDFNode, RDFNode, URIRef]

#: The formats the exporter streams (RDF/XML cannot be written graph by graph).
STREAM_FORMATS: tuple[RDFFormat, ...] = (TURTLE, NTRIPLES, NQUADS, TRIG, JSONLD)
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
    return compact_nquads("".join(quad_line(*q) for q in quads))


def compact_nquads(nquads: str) -> dict:
    """N-Quads (or N-Triples) text as a JSON-LD document compacted with the export context."""
    from pyld import jsonld  # only JSON-LD exports need it (~0.14 s to import)

    expanded = jsonld.from_rdf(nquads, {"format": "application/n-quads", "documentLoader": document_loader})
    return jsonld.compact(expanded, {"@context": export_context()}, {"documentLoader": document_loader})


def stream(source: QuadSource, format: str | RDFFormat, graph: str | None = None, *, profile: str = "catalogue",
           batch_chars: int = 1 << 16) -> Iterator[str]:
    """The export of one graph (or every graph) as text pieces, never the whole of it at once.

    N-Triples and N-Quads come row by row, joined into pieces of about
    ``batch_chars`` characters (one piece per row would cost a thread hop per
    row in the server). Turtle and TriG are serialised graph by graph: Turtle
    pieces are each a complete document with its own prefixes, so their
    concatenation is the union of the graphs (graph names are lost, as Turtle
    has none); TriG pieces keep each graph's name. JSON-LD is one document
    ``{"@context": …, "@graph": [{"@id": g, "@graph": […]}, …]}`` whose named
    graphs are compacted one at a time with the export context, so it stays a
    single JSON document any JSON-LD processor reads while only one graph is
    in memory. Raises :class:`UsageError` for an unknown format, profile or graph
    before anything is produced.
    """
    fmt = format if isinstance(format, RDFFormat) else parse_rdf_format(format, STREAM_FORMATS, what="export format")
    if profile not in PROFILES:
        raise UsageError(f"unknown export profile {profile!r}; choose from {', '.join(PROFILES)}")
    ids: Sequence[RDFNode] = source.graph_ids()
    if graph is not None:
        if URIRef(graph) not in ids:
            raise UsageError(f"no graph <{graph}> in the catalogue")
        ids = [URIRef(graph)]
    if profile == "catalogue":
        return _pieces(source, fmt.name, ids, batch_chars)
    view = IliadView(source, verbatim=profile == "iliad-verbatim")
    return _reported(_pieces(view, fmt.name, ids, batch_chars), view)


def _reported(pieces: Iterator[str], view: IliadView) -> Iterator[str]:
    yield from pieces
    view.report()


def _pieces(source: QuadSource, fmt: str, ids: Sequence[RDFNode], batch_chars: int) -> Iterator[str]:
    if fmt in ("nt", "nquads"):
        batch: list[str] = []
        size = 0
        for g in ids:
            for s, p, o in source.graph_triples(g):
                line = triple_line(s, p, o) if fmt == "nt" else quad_line(s, p, o, g)  # type: ignore[arg-type]
                batch.append(line)
                size += len(line)
                if size >= batch_chars:
                    yield "".join(batch)
                    batch, size = [], 0
        if batch:
            yield "".join(batch)
        return
    if fmt == "json-ld":
        yield '{"@context": ' + json.dumps(export_context(), ensure_ascii=False) + ', "@graph": ['
        first = True
        for g in ids:
            doc = compact_nquads("".join(quad_line(s, p, o, g) for s, p, o in source.graph_triples(g)))  # type: ignore[arg-type]
            doc.pop("@context", None)
            members = doc.get("@graph", [doc]) if "@id" not in doc else [doc]
            for member in members:
                if not member:
                    continue
                yield ("" if first else ",") + "\n" + json.dumps(member, ensure_ascii=False)
                first = False
        yield "\n]}\n"
        return
    for g in ids:
        quads = ((s, p, o, g) for s, p, o in source.graph_triples(g))
        if fmt == "turtle":
            text = to_graph(quads).serialize(format="turtle")  # type: ignore[arg-type]
        else:
            text = to_dataset(quads).serialize(format="trig")  # type: ignore[arg-type]
        if text.strip():
            yield text if text.endswith("\n") else text + "\n"


def export(source: QuadSource, out: IO[str], *, format: str = "turtle", graph: str | None = None,
           profile: str = "catalogue") -> None:
    """Write one graph, or every graph, to ``out``: the pieces of :func:`stream`, as they come."""
    for piece in stream(source, format, graph, profile=profile):
        out.write(piece)
