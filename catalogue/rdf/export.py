"""Export the catalogue as RDF: Turtle, N-Triples, N-Quads, TriG or JSON-LD.

Line-based formats are streamed straight from the store. Turtle and TriG
group triples by subject, so they are built in memory first. JSON-LD is
compacted with the catalogue context (inlined, so the output needs no network
to be expanded again), which makes each node read like its Zarr metadata.

:func:`stream` is the streamed form the web server uses (``/export``): text
pieces produced graph by graph (Turtle, TriG, JSON-LD) or a batch of lines at
a time (N-Triples, N-Quads), so only one graph is ever held in memory.
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
    return compact_nquads("".join(quad_line(*q) for q in quads))


def compact_nquads(nquads: str) -> dict:
    """N-Quads (or N-Triples) text as a JSON-LD document compacted with the export context."""
    expanded = jsonld.from_rdf(nquads, {"format": "application/n-quads", "documentLoader": document_loader})
    return jsonld.compact(expanded, {"@context": export_context()}, {"documentLoader": document_loader})


#: Streamed formats: name -> (media type, file extension).
STREAM_FORMATS = {
    "turtle": ("text/turtle", "ttl"),
    "nt": ("application/n-triples", "nt"),
    "nquads": ("application/n-quads", "nq"),
    "trig": ("application/trig", "trig"),
    "json-ld": ("application/ld+json", "jsonld"),
}


def stream(cat: Catalogue, format: str, graph: str | None = None, *, batch_chars: int = 1 << 16) -> Iterator[str]:
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
    in memory. Raises :class:`UsageError` for an unknown format or graph
    before anything is produced.
    """
    fmt = FORMATS.get(format.lower())
    if fmt is None:
        raise UsageError(f"unknown export format {format!r}; choose from {', '.join(sorted(STREAM_FORMATS))}")
    ids = cat.store.graph_ids()
    if graph is not None:
        if URIRef(graph) not in ids:
            raise UsageError(f"no graph <{graph}> in the catalogue")
        ids = [URIRef(graph)]
    return _pieces(cat, fmt, ids, batch_chars)


def _pieces(cat: Catalogue, fmt: str, ids: list[RDFNode], batch_chars: int) -> Iterator[str]:
    if fmt in ("nt", "nquads"):
        batch: list[str] = []
        size = 0
        for g in ids:
            for s, p, o in cat.store.graph_triples(g):
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
            doc = compact_nquads("".join(quad_line(s, p, o, g) for s, p, o in cat.store.graph_triples(g)))  # type: ignore[arg-type]
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
        quads = ((s, p, o, g) for s, p, o in cat.store.graph_triples(g))
        if fmt == "turtle":
            text = to_graph(quads).serialize(format="turtle")  # type: ignore[arg-type]
        else:
            text = to_dataset(quads).serialize(format="trig")  # type: ignore[arg-type]
        if text.strip():
            yield text if text.endswith("\n") else text + "\n"


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
