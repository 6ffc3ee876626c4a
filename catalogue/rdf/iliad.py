"""The building block's own view: v2 arrays as the ILIAD context turns them into RDF.

For clients of the OGC/ILIAD ``zarr_array_metadata`` vocabulary. Each v2
array's ``.zarray`` is rebuilt from the catalogue and expanded with the
building block's context, exactly as its JSON-LD example does. That view is
lossy by construction (see docs/iliad-profile.md): ``shape`` and ``chunks``
become unordered sets (``[100, 100]`` is one triple), keys the context does
not map vanish (``dimension_separator``, a filter's ``astype``, blosc's
``blocksize``), ``null`` compressors and filters vanish, attributes are not
exported, and Zarr v3 arrays are not covered at all.

The context's IRIs are written ``http:/w3id.org/...`` (one slash). Profile
``iliad`` repairs them to ``http://w3id.org/...``; ``iliad-verbatim`` keeps
them as the building block publishes them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rdflib import RDF, Graph
from rdflib.term import Node as RDFNode

from catalogue.model.nodes import V2_ARRAY
from catalogue.rdf.contexts import ILIAD_CONTEXT_FIXED_IRI, ILIAD_CONTEXT_IRI
from catalogue.rdf.convert import Triple, jsonld_triples
from catalogue.rdf.rebuild import rebuild_documents
from catalogue.rdf.sources import QuadSource
from catalogue.rdf.vocabulary import ZARR

log = logging.getLogger(__name__)


def zarray_triples(zarray: dict, iri: str, *, verbatim: bool = False) -> list[Triple]:
    """The building block's triples for one ``.zarray`` document."""
    doc = dict(zarray)
    doc["@context"] = ILIAD_CONTEXT_IRI if verbatim else ILIAD_CONTEXT_FIXED_IRI
    doc["@id"] = iri
    return jsonld_triples(doc)


@dataclass
class IliadView:
    """The catalogue's graphs as the ILIAD profile sees them: a :class:`QuadSource` whose
    graphs hold the building block's triples of their v2 arrays (v3 arrays are counted,
    not described; :meth:`report` logs how many were left out)."""

    source: QuadSource
    verbatim: bool = False
    #: v3 arrays left out so far.
    skipped: int = 0

    def graph_ids(self) -> Sequence[RDFNode]:
        return self.source.graph_ids()

    def graph_triples(self, graph_id: RDFNode) -> Iterator[Triple]:
        """ILIAD triples of every v2 array in one graph (the graph is read into memory first)."""
        named = Graph(identifier=graph_id)
        for triple in self.source.graph_triples(graph_id):
            named.add(triple)
        for array in sorted(named.subjects(RDF.type, ZARR.Array)):
            docs = rebuild_documents(named, str(array))
            if V2_ARRAY not in docs:
                self.skipped += 1
                continue
            yield from zarray_triples(docs[V2_ARRAY], str(array), verbatim=self.verbatim)

    def report(self) -> None:
        """Log the v3 arrays left out (once, after the export)."""
        if self.skipped:
            log.warning("ILIAD profile covers Zarr v2 arrays only: %d v3 array(s) left out", self.skipped)
