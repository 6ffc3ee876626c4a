"""Engine-neutral results: canonical N-Triples strings, and blank nodes named by position.

Why not compare rdflib and pyoxigraph objects directly: they are different classes, and
their string forms escape differently.  Every term is written here from its parts
(kind, lexical value, datatype, language), so two engines agree exactly when they
return the same RDF terms.  Lexical forms are compared as they are: Oxigraph
canonicalises some typed literals (``"-999.0"^^xsd:decimal`` comes back as ``"-999"``,
``+00:00`` as ``Z``), and a query that projects such a literal will honestly report a
mismatch.

Graphs (CONSTRUCT, DESCRIBE) contain blank nodes with engine-specific labels.  The
catalogue's blank nodes hang off named nodes as trees (list cells, named
configurations), so each one is renamed by the smallest path that reaches it from a
named node (``<s>|<p>|...``); blank nodes no named node reaches are named by a digest
of what they contain.  Unlike rdflib's ``isomorphic`` this is linear, which matters:
rdflib's canonicalisation takes minutes on a graph with thousands of look-alike codec
nodes.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


def _quote(text: str) -> str:
    return (
        '"'
        + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        + '"'
    )


def literal(value: str, datatype: str | None, lang: str | None) -> str:
    """A literal in canonical N-Triples: plain strings and language strings without a datatype."""
    if lang:
        return f"{_quote(value)}@{lang.lower()}"
    if datatype is None or datatype in (XSD_STRING, RDF_LANG_STRING):
        return _quote(value)
    return f"{_quote(value)}^^<{datatype}>"


def from_rdflib(term: Any) -> str | None:
    """An rdflib term (or None for an unbound variable) as a canonical string."""
    from rdflib.term import BNode, Literal, URIRef

    if term is None:
        return None
    if isinstance(term, URIRef):
        return f"<{term}>"
    if isinstance(term, BNode):
        return f"_:{term}"
    if isinstance(term, Literal):
        return literal(str(term), str(term.datatype) if term.datatype else None, term.language)
    raise TypeError(f"unexpected rdflib term {term!r}")


def from_oxigraph(term: Any) -> str | None:
    """A pyoxigraph term (or None for an unbound variable) as a canonical string."""
    import pyoxigraph as ox

    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return f"<{term.value}>"
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Literal):
        return literal(term.value, term.datatype.value, term.language)
    raise TypeError(f"unexpected pyoxigraph term {term!r}")


def canonical_graph(triples: Iterable[tuple[str, str, str]]) -> list[str]:
    """Sorted canonical triples (``s p o`` strings) with blank nodes renamed structurally."""
    triples = list(triples)
    incoming: dict[str, list[tuple[str, str]]] = defaultdict(list)
    outgoing: dict[str, list[tuple[str, str]]] = defaultdict(list)
    bnodes: set[str] = set()
    for s, p, o in triples:
        if s.startswith("_:"):
            bnodes.add(s)
            outgoing[s].append((p, o))
        if o.startswith("_:"):
            bnodes.add(o)
            incoming[o].append((s, p))
    names: dict[str, str] = {}
    # Breadth-first from named subjects: a blank node's name is its smallest reaching path.
    frontier = sorted(
        {(f"{s}|{p}", o) for s, p, o in triples if not s.startswith("_:") and o.startswith("_:")}
    )
    while frontier:
        following: list[tuple[str, str]] = []
        for path, node in frontier:
            if node in names:
                continue
            names[node] = path
            following += [(f"{path}|{p}", o) for p, o in outgoing[node] if o.startswith("_:")]
        frontier = sorted(following)

    def digest(node: str, seen: frozenset[str]) -> str:
        if node in names:
            return names[node]
        if node in seen:
            return "_:cycle"
        inner = sorted(
            f"{p} {digest(o, seen | {node}) if o.startswith('_:') else o}"
            for p, o in outgoing[node]
        )
        return "_:" + hashlib.sha1("\n".join(inner).encode()).hexdigest()[:16]

    for node in sorted(bnodes - names.keys()):
        names[node] = digest(node, frozenset())

    def name(term: str) -> str:
        return names[term] if term.startswith("_:") else term

    return sorted(f"{name(s)} {p} {name(o)}" for s, p, o in triples)
