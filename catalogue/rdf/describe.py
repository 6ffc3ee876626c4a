"""A handful of triples (one node's description) as Turtle, N-Triples or compacted JSON-LD.

Small answers built in memory, unlike :func:`catalogue.rdf.export.stream`,
which streams whole graphs: N-Triples sorted (a stable body for a stable
ETag), JSON-LD compacted with the catalogue's export context (as ``catalogue
export --format json-ld``), Turtle grouped by subject.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from catalogue.rdf.convert import Triple
from catalogue.rdf.export import compact_nquads, to_graph, triple_line
from catalogue.rdf.formats import JSONLD, NTRIPLES, RDFFormat


def serialize_triples(triples: Sequence[Triple], fmt: RDFFormat, lines: Sequence[str] | None = None) -> bytes:
    """Turtle (anything but N-Triples and JSON-LD), N-Triples or compacted JSON-LD of ``triples``.

    ``lines`` are the triples' N-Triples lines in the same order, when the caller
    has them already (an ETag over the description needs them).
    """
    if fmt not in (NTRIPLES, JSONLD):  # Turtle groups by subject: built in memory
        return to_graph((s, p, o, None) for s, p, o in triples).serialize(format="turtle").encode()
    if lines is None:
        lines = [triple_line(*t) for t in triples]
    if fmt == NTRIPLES:
        return "".join(sorted(lines)).encode()
    doc = compact_nquads("".join(lines))
    return json.dumps(doc, ensure_ascii=False, indent=2).encode() + b"\n"
