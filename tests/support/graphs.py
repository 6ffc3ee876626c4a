"""Comparing RDF graphs in tests."""

from __future__ import annotations

import json

from rdflib import RDF, Graph, Literal


def canonical_json_literals(graph: Graph) -> Graph:
    """rdf:JSON literals with a canonical lexical form: JSON-LD's @json round trip re-serialises them."""
    out = Graph()
    for s, p, o in graph:
        if isinstance(o, Literal) and o.datatype == RDF.JSON:
            o = Literal(json.dumps(json.loads(str(o)), sort_keys=True, separators=(",", ":")), datatype=RDF.JSON)
        out.add((s, p, o))
    return out
