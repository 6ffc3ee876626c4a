"""Versions of a dataset: an Icechunk repository's branches, tags and snapshots, in DCAT 3
and PROV terms.

Each version is catalogued in its own graph (its root is the version's IRI, see
:mod:`catalogue.storage.icechunk`); these triples, written with it, say what it is a
version of (``dcat:isVersionOf``/``dcat:hasVersion``), its name (``dcat:version``: the
branch, tag or snapshot id), the snapshot it was read from (``zarr:snapshot``), its parent
(``prov:wasRevisionOf`` the parent snapshot's version IRI, catalogued or not), when it was
written (``prov:generatedAtTime``) and its commit message (``adms:versionNotes``), and the
storage its virtual chunks are read from (``dct:source``, the containers' URL prefixes),
each container described by what reading it takes: the kind of storage
(``zarr:storageKind``), its region and endpoint, that it is configured to be read without
credentials (``zarr:anonymousAccess``) and that the reader pays (``zarr:requesterPays``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from rdflib import DCTERMS, PROV, XSD, Graph, Literal, Namespace, URIRef

from catalogue.rdf.convert import Triple
from catalogue.rdf.vocabulary import ZARR

__all__ = ["ADMS", "CONTAINER_PREDICATES", "STORE_PREDICATES", "store_statements", "version_triples"]

ADMS = Namespace("http://www.w3.org/ns/adms#")
#: DCAT 3's versioning terms (rdflib's DCAT namespace is DCAT 2's, closed).
DCAT = Namespace("http://www.w3.org/ns/dcat#")
#: What the store says of a hierarchy's root (:func:`store_statements`).
STORE_PREDICATES = (DCTERMS.source, DCAT.isVersionOf, DCAT.version, ZARR.versionKind, ZARR.snapshot,
                    PROV.generatedAtTime, PROV.wasRevisionOf, ADMS.versionNotes)
#: What is said of a virtual chunk container (its URL prefix, a ``dct:source`` of the version).
CONTAINER_PREDICATES = (ZARR.storageKind, ZARR.region, ZARR.endpoint, ZARR.anonymousAccess, ZARR.requesterPays)


class Container(Protocol):
    """A virtual chunk container as the store layer describes it
    (:class:`catalogue.storage.icechunk.Container`; rdf/ does not import storage/)."""

    @property
    def prefix(self) -> str: ...
    @property
    def storage(self) -> str: ...
    @property
    def region(self) -> str | None: ...
    @property
    def endpoint(self) -> str | None: ...
    @property
    def anonymous(self) -> bool | None: ...
    @property
    def requester_pays(self) -> bool | None: ...


def store_statements(graph: Graph, root: URIRef) -> list[Triple]:
    """What a previous run said of the store (archive files, version, its containers), for a
    re-harvest to remove before it says it again: per-run triples, like the extents."""
    out = [(root, p, o) for p in STORE_PREDICATES for o in graph.objects(root, p)]
    out += [(s, DCAT.hasVersion, root) for s in graph.subjects(DCAT.hasVersion, root)]
    for source in list(graph.objects(root, DCTERMS.source)):
        out += [(source, p, o) for p in CONTAINER_PREDICATES for o in graph.objects(source, p)]
    return out


def version_triples(version: str, repository: str, *, name: str, kind: str, snapshot: str, parent: str | None,
                    written_at: datetime, message: str, containers: Sequence[Container]) -> list[Triple]:
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
    for container in containers:
        prefix = URIRef(container.prefix)
        out.append((v, DCTERMS.source, prefix))
        if container.storage:
            out.append((prefix, ZARR.storageKind, Literal(container.storage)))
        if container.region:
            out.append((prefix, ZARR.region, Literal(container.region)))
        if container.endpoint:
            out.append((prefix, ZARR.endpoint, Literal(container.endpoint, datatype=XSD.anyURI)))
        if container.anonymous:  # false is Icechunk's default, said of public buckets too
            out.append((prefix, ZARR.anonymousAccess, Literal(True)))
        if container.requester_pays:
            out.append((prefix, ZARR.requesterPays, Literal(True)))
    return out
