"""Rendering SPARQL results for the terminal and for files."""

from __future__ import annotations

import json
from typing import IO

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import NamespaceManager
from rdflib.query import Result

from catalogue.errors import UsageError
from catalogue.rdf.export import bind_prefixes

SELECT_FORMATS = {"table", "json", "csv", "tsv", "xml"}
GRAPH_FORMATS = {"turtle": "turtle", "ttl": "turtle", "json-ld": "json-ld", "jsonld": "json-ld", "nt": "nt", "ntriples": "nt"}


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
    names = [str(v) for v in (result.vars or [])]
    rows = [[_cell(row[i], ns).replace("\n", "\\n") for i in range(len(names))] for row in result]
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
    names = [str(v) for v in (result.vars or [])]
    out.write("\t".join(f"?{n}" for n in names) + "\n")
    for row in result:
        out.write("\t".join(_tsv_term(row[i]) for i in range(len(names))) + "\n")


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
        target = GRAPH_FORMATS.get(fmt or "turtle")
        if target is None:
            raise UsageError(f"format {fmt!r} is for SELECT/ASK; CONSTRUCT and DESCRIBE give turtle, json-ld or nt")
        graph = result.graph
        bind_prefixes(graph)
        out.write(graph.serialize(format=target))
        return
    fmt = fmt or "table"
    if fmt not in SELECT_FORMATS:
        raise UsageError(f"format {fmt!r} is for CONSTRUCT/DESCRIBE; SELECT gives {', '.join(sorted(SELECT_FORMATS))}")
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
