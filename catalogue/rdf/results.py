"""Writing SPARQL results: SELECT/ASK in json, xml, csv, tsv or a terminal table, and
the graphs of CONSTRUCT/DESCRIBE in an RDF format.

The one place results are serialised: ``catalogue query`` renders an rdflib
:class:`~rdflib.query.Result` as it streams (:func:`render`), the web endpoint
serialises an :class:`Answer` read whole under its limits (:func:`serialise`).
Format names and media types come from :mod:`catalogue.rdf.formats`.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import IO, Final

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import NamespaceManager
from rdflib.query import Result
from rdflib.term import Node, Variable

from catalogue.errors import UsageError
from catalogue.rdf import formats
from catalogue.rdf.export import bind_prefixes

__all__ = [
    "GRAPH_FORMATS",
    "SELECT_FORMATS",
    "Answer",
    "render",
    "render_table",
    "render_tsv",
    "serialise",
    "serialise_graph",
]

#: What ``catalogue query`` writes SELECT/ASK results as (every result format).
SELECT_FORMATS: Final[tuple[formats.ResultFormat, ...]] = formats.RESULT_FORMATS
#: What ``catalogue query`` writes CONSTRUCT/DESCRIBE graphs as.
GRAPH_FORMATS: Final[tuple[formats.RDFFormat, ...]] = (formats.TURTLE, formats.JSONLD, formats.NTRIPLES)


@dataclass
class Answer:
    """A query's whole result, read under the time limit, ready to serialise."""

    form: str  # SELECT, ASK, CONSTRUCT, DESCRIBE
    variables: list[Variable] = field(default_factory=list)
    rows: list[dict[Variable, Node]] = field(default_factory=list)
    boolean: bool = False
    graph: Graph | None = None


def _cell(term: object, ns: NamespaceManager) -> str:
    if term is None:
        return ""
    if isinstance(term, URIRef):
        try:
            return ns.normalizeUri(term)
        except Exception:
            return f"<{term}>"
    if isinstance(term, BNode):
        return f"_:{term}"
    if isinstance(term, Literal):
        return str(term)
    return str(term)


def render_table(result: Result, out: IO[str]) -> None:
    """A plain aligned table with prefixed names, like sqlite3's column mode."""
    graph = Graph()
    bind_prefixes(graph)
    ns = graph.namespace_manager
    variables = list(result.vars or [])
    names = [str(v) for v in variables]
    # From the bindings, not by iterating: rdflib's iteration leaves out a solution that
    # binds nothing (OPTIONAL of no match), which is a solution all the same.
    rows = [[_cell(b.get(v), ns).replace("\n", "\\n") for v in variables] for b in result.bindings]
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    out.write("  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)).rstrip() + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
    out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")


def _tsv_term(term: object) -> str:
    """A term in SPARQL 1.1 TSV: Turtle syntax, unbound as empty, tabs/newlines escaped."""
    if term is None:
        return ""
    text = term.n3() if isinstance(term, URIRef | BNode | Literal) else str(term)
    return text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def render_tsv(result: Result, out: IO[str]) -> None:
    """SPARQL 1.1 Query Results TSV (rdflib ships no serializer for it)."""
    variables = list(result.vars or [])
    out.write("\t".join(f"?{v}" for v in variables) + "\n")
    for b in result.bindings:  # not by iterating, which leaves out a solution binding nothing
        out.write("\t".join(_tsv_term(b.get(v)) for v in variables) + "\n")


def render(result: Result, out: IO[str], fmt: str | None) -> None:
    """Write a query result in ``fmt`` (defaults: table for SELECT, Turtle for graphs)."""
    if result.type == "ASK":
        if fmt in (None, "table"):
            out.write(("true" if result.askAnswer else "false") + "\n")
            return
        if fmt == "json":
            out.write(json.dumps({"head": {}, "boolean": bool(result.askAnswer)}) + "\n")
            return
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        try:
            target = formats.parse_rdf_format(fmt or "turtle", GRAPH_FORMATS).name
        except UsageError:
            raise UsageError(
                f"format {fmt!r} is for SELECT/ASK; CONSTRUCT and DESCRIBE give turtle, json-ld or nt"
            ) from None
        graph = result.graph
        bind_prefixes(graph)
        out.write(graph.serialize(format=target))
        return
    fmt = fmt or "table"
    names = sorted(name for f in SELECT_FORMATS for name in f.names)
    if fmt not in names:
        raise UsageError(f"format {fmt!r} is for CONSTRUCT/DESCRIBE; SELECT gives {', '.join(names)}")
    if fmt == "table":
        render_table(result, out)
        return
    if fmt == "tsv":
        render_tsv(result, out)
        return
    data = result.serialize(format=fmt)
    out.write(data.decode("utf-8") if isinstance(data, bytes) else data)
    if fmt in ("json", "xml"):
        out.write("\n")


def _ask_table(answer: bool, sep: str, header: str) -> bytes:
    """ASK in CSV/TSV, which the results formats do not define: one column, as Fuseki does."""
    line_end = "\r\n" if sep == "," else "\n"
    return f"{header}{line_end}{'true' if answer else 'false'}{line_end}".encode()


def serialise(answer: Answer, fmt: str) -> bytes:
    """The answer's body in format ``fmt``: a result format name (json, xml, csv, tsv) for
    SELECT/ASK, an rdflib RDF format name for CONSTRUCT/DESCRIBE."""
    if answer.form in ("SELECT", "ASK"):
        if answer.form == "ASK" and fmt in ("csv", "tsv"):
            return _ask_table(answer.boolean, "," if fmt == "csv" else "\t",
                              "_askResult" if fmt == "csv" else "?_askResult")
        result = Result(answer.form)
        if answer.form == "ASK":
            result.askAnswer = answer.boolean
        else:
            result.vars = answer.variables
            result.bindings = answer.rows  # type: ignore[assignment]
        if fmt == "tsv":
            out = io.StringIO()
            render_tsv(result, out)
            return out.getvalue().encode("utf-8")
        data = result.serialize(format=fmt)
        return data if isinstance(data, bytes) else str(data).encode("utf-8")
    graph = answer.graph if answer.graph is not None else Graph()
    return serialise_graph(graph, fmt)


def serialise_graph(graph: Graph, fmt: str) -> bytes:
    """``graph`` in the rdflib format ``fmt``, UTF-8, with the catalogue's prefixes bound."""
    bind_prefixes(graph)
    data = graph.serialize(format=fmt, encoding="utf-8")
    return data if isinstance(data, bytes) else data.encode("utf-8")
