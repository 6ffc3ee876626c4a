"""Versions of a dataset: an Icechunk repository's branches, tags and snapshots, in DCAT 3
and PROV terms.

Each version is catalogued in its own graph (its root is the version's IRI, see
:mod:`catalogue.storage.icechunk`); these triples, written with it, say what it is a
version of (``dcat:isVersionOf``/``dcat:hasVersion``), its name (``dcat:version``: the
branch, tag or snapshot id), the snapshot it was read from (``zarr:snapshot``), its parent
(``prov:wasRevisionOf`` the parent snapshot's version IRI, catalogued or not), when it was
written (``prov:generatedAtTime``) and its commit message (``adms:versionNotes``), and the
storage its virtual chunks are read from (``dct:source``, the containers' URL prefixes).
"""

from __future__ import annotations

from datetime import datetime

from rdflib import DCTERMS, PROV, XSD, Graph, Literal, Namespace, URIRef

from catalogue.rdf.convert import Triple
from catalogue.rdf.vocabulary import ZARR

__all__ = ["ADMS", "STORE_PREDICATES", "store_statements", "version_triples"]

ADMS = Namespace("http://www.w3.org/ns/adms#")
#: DCAT 3's versioning terms (rdflib's DCAT namespace is DCAT 2's, closed).
DCAT = Namespace("http://www.w3.org/ns/dcat#")
#: What the store says of a hierarchy's root (:func:`store_statements`).
STORE_PREDICATES = (DCTERMS.source, DCAT.isVersionOf, DCAT.version, ZARR.versionKind, ZARR.snapshot,
                    PROV.generatedAtTime, PROV.wasRevisionOf, ADMS.versionNotes)


def store_statements(graph: Graph, root: URIRef) -> list[Triple]:
    """What a previous run said of the store (archive files, version), for a re-harvest to
    remove before it says it again: per-run triples, like the extents."""
    out = [(root, p, o) for p in STORE_PREDICATES for o in graph.objects(root, p)]
    out += [(s, DCAT.hasVersion, root) for s in graph.subjects(DCAT.hasVersion, root)]
    return out


def version_triples(version: str, repository: str, *, name: str, kind: str, snapshot: str, parent: str | None,
                    written_at: datetime, message: str, containers: list[str]) -> list[Triple]:
    """The triples of one catalogued version (IRIs as strings; ``parent`` a snapshot id)."""
    v, repo = URIRef(version), URIRef(repository)
    out: list[Triple] = [
        (repo, DCAT.hasVersion, v),
        (v, DCAT.isVersionOf, repo),
        (v, DCAT.version, Literal(name)),
        (v, ZARR.versionKind, Literal(kind)),
        (v, ZARR.snapshot, Literal(snapshot)),
        (v, PROV.generatedAtTime, Literal(written_at.isoformat(), datatype=XSD.dateTime)),
    ]
    if parent:
        out.append((v, PROV.wasRevisionOf, URIRef(f"{repository}@{parent}")))
    if message:
        out.append((v, ADMS.versionNotes, Literal(message)))
    out += [(v, DCTERMS.source, URIRef(prefix)) for prefix in containers]
    return out
