"""A dataset's versions on its page: which version it is, the other catalogued versions, and
the storage its chunks are read from.

An Icechunk repository is catalogued as one graph per version (branch and tag heads, and
with ``--history`` their ancestry), linked by :mod:`catalogue.rdf.versions`; without these
links on the page, a user who lands on ``…/repo@main`` cannot tell that ``…/repo@v1.0``
exists or what changed between them. Fixed query texts, each parsed once per process,
each bounded by its ``LIMIT`` (:data:`MAX_VERSIONS`, :data:`MAX_SOURCES`), the totals
counted apart only when a listing is full.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rdflib import URIRef
from rdflib.term import Node as RDFNode

from catalogue.api import Catalogue

from .graph_digest import node_graph_iri

#: Versions listed on one page (an ancestry harvested with --history may be long).
MAX_VERSIONS = 200
#: Storage locations (virtual chunk containers, referenced archive files) listed on one page.
MAX_SOURCES = 50

_ADMS_NOTES = "<http://www.w3.org/ns/adms#versionNotes>"
_THIS = f"""SELECT ?repo ?name ?kind ?snapshot ?written ?notes ?parent WHERE {{ GRAPH ?g {{
    ?g dcat:isVersionOf ?repo ; dcat:version ?name ; zarr:versionKind ?kind ; zarr:snapshot ?snapshot ;
       prov:generatedAtTime ?written .
    OPTIONAL {{ ?g {_ADMS_NOTES} ?notes }} OPTIONAL {{ ?g prov:wasRevisionOf ?parent }} }} }} LIMIT 1"""
#: Versions in the order they are listed: branches, then tags, then snapshots, each newest first.
_ALL = f"""SELECT ?v ?name ?kind ?snapshot ?written WHERE {{ GRAPH ?v {{
    ?v dcat:isVersionOf ?repo ; dcat:version ?name ; zarr:versionKind ?kind ; zarr:snapshot ?snapshot ;
       prov:generatedAtTime ?written }} }}
    ORDER BY (IF(?kind = "branch", 0, IF(?kind = "tag", 1, 2))) DESC(?written) ?name LIMIT {MAX_VERSIONS}"""
_VERSIONS = "SELECT (COUNT(?v) AS ?n) WHERE { GRAPH ?v { ?v dcat:isVersionOf ?repo } }"
_SOURCES = f"""SELECT ?source ?kind ?region ?endpoint ?anonymous ?pays WHERE {{ GRAPH ?g {{ ?g dct:source ?source
    OPTIONAL {{ ?source zarr:storageKind ?kind }} OPTIONAL {{ ?source zarr:region ?region }}
    OPTIONAL {{ ?source zarr:endpoint ?endpoint }} OPTIONAL {{ ?source zarr:anonymousAccess ?anonymous }}
    OPTIONAL {{ ?source zarr:requesterPays ?pays }} }} }} ORDER BY ?source LIMIT {MAX_SOURCES}"""
_SOURCE_COUNT = "SELECT (COUNT(?source) AS ?n) WHERE { GRAPH ?g { ?g dct:source ?source } }"


@dataclass
class Version:
    """One catalogued version: its IRI (the root of its graph), name and kind, snapshot, time."""

    iri: str
    name: str
    kind: str
    snapshot: str
    written: str
    current: bool = False


@dataclass
class Source:
    """Storage a dataset's chunks are read from: a virtual chunk container (with what reading it
    takes) or an archive file that references point into."""

    url: str
    kind: str = ""
    region: str = ""
    endpoint: str = ""
    anonymous: bool = False
    requester_pays: bool = False


@dataclass
class Versions:
    """What the page says of the dataset's versions (``repository`` empty when it has none)."""

    repository: str = ""
    this: Version | None = None
    notes: str = ""
    #: The version this one was written over (its parent snapshot's IRI) and whether it is catalogued.
    parent: str = ""
    parent_catalogued: bool = False
    versions: list[Version] = field(default_factory=list)
    unlisted: int = 0
    sources: list[Source] = field(default_factory=list)
    sources_total: int = 0

    @property
    def shown(self) -> bool:
        return bool(self.repository or self.sources)


def _text(value: RDFNode | None) -> str:
    return "" if value is None else str(value)


def versions_view(cat: Catalogue, root_iri: str, *, listing: bool = True) -> Versions:
    """The versions and storage of the dataset whose root is ``root_iri``; without ``listing``
    only which version it is (one query: a node page's code snippet needs it)."""
    root = URIRef(root_iri)
    out = Versions()
    for row in cat.query(_THIS, initBindings={"g": root}):
        repo, name, kind, snapshot, written, notes, parent = row  # type: ignore[misc]
        out.repository, out.notes, out.parent = str(repo), _text(notes), _text(parent)
        out.this = Version(root_iri, str(name), str(kind), str(snapshot), str(written), current=True)
    if not listing:
        return out
    if out.this is not None:
        repo = {"repo": URIRef(out.repository)}
        out.versions = [Version(str(v), str(name), str(kind), str(snapshot), str(written), current=str(v) == root_iri)
                        for v, name, kind, snapshot, written in cat.query(_ALL, initBindings=repo)]  # type: ignore[misc]
        if len(out.versions) == MAX_VERSIONS:  # more may be catalogued: counted apart
            out.unlisted = _count(cat, _VERSIONS, repo) - MAX_VERSIONS
        out.parent_catalogued = bool(out.parent) and node_graph_iri(cat, out.parent) == out.parent
    for source, kind, region, endpoint, anonymous, pays in cat.query(  # type: ignore[misc]
            _SOURCES, initBindings={"g": root}):
        out.sources.append(Source(str(source), _text(kind), _text(region), _text(endpoint),
                                  bool(anonymous is not None and anonymous.toPython() is True),  # type: ignore[union-attr]
                                  bool(pays is not None and pays.toPython() is True)))  # type: ignore[union-attr]
    out.sources_total = (_count(cat, _SOURCE_COUNT, {"g": root}) if len(out.sources) == MAX_SOURCES
                         else len(out.sources))
    return out


def _count(cat: Catalogue, query: str, bindings: dict[str, URIRef]) -> int:
    for (n,) in cat.query(query, initBindings=bindings):  # type: ignore[misc]
        return int(n)
    return 0
