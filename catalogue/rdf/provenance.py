"""Harvest runs as PROV-O, in a graph of their own.

Each harvest of a source is one ``zarr:HarvestRun`` (a ``prov:Activity``)::

    <urn:uuid:…> a zarr:HarvestRun, prov:Activity ;
        prov:startedAtTime "…"^^xsd:dateTime ; prov:endedAtTime "…"^^xsd:dateTime ;
        prov:used <s3://bucket/store.zarr> ; prov:generated <s3://bucket/store.zarr> ;
        prov:wasAssociatedWith <https://w3id.org/zarr-catalogue/software/0.1.0> ;
        rdfs:label "ERA5" ; zarr:outcome "succeeded" ;
        zarr:nodesAdded 3 ; zarr:nodesChanged 1 ; zarr:nodesUnchanged 996 ;
        zarr:nodesRemoved 0 ; zarr:nodesFailed 0 ; zarr:error "…" ;
        zarr:sourceState "listing:…|…" .

A run that finds the source in the state its current graph was harvested from
(``zarr:sourceState``) reads and writes nothing: its outcome is ``unchanged``
and it generates no graph.

A run is recorded in two steps. Its start (type, start time, source, software, name,
and who runs it: ``zarr:host``, ``zarr:processId`` and ``zarr:lockHolder``) is
committed before anything is read, so a run whose process dies is still on record;
the rest (end time, outcome, counts, errors) is added when it ends, in the
transaction that writes its graph. A run with no ``zarr:outcome`` has not ended: it
is running while its lock holder is alive (:func:`catalogue.graph.lock.holder_alive`)
and ``interrupted`` after; the next run of the same source records
``zarr:outcome "interrupted"`` for it.

The records live in ``<urn:zarr-catalogue:harvests>``, which no harvest
replaces, so the history survives re-harvests and failed runs (which
generate nothing) are recorded too. The hierarchy graph itself carries
``<root> prov:wasGeneratedBy <run>`` for its current version.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

from rdflib import PROV, RDF, RDFS, XSD, Literal, URIRef

from catalogue.rdf.convert import Triple
from catalogue.rdf.vocabulary import ZARR

HARVESTS_GRAPH = URIRef("urn:zarr-catalogue:harvests")


def software_release() -> str:
    """This software's release (validation and conversion rules change with it)."""
    try:
        return version("zarr-catalogue")
    except PackageNotFoundError:
        return "unknown"


def _software() -> URIRef:
    return URIRef(f"https://w3id.org/zarr-catalogue/software/{software_release()}")


def now() -> datetime:
    return datetime.now(UTC)


def timestamp(moment: datetime) -> Literal:
    text = moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Literal(text, datatype=XSD.dateTime, normalize=False)


@dataclass
class Run:
    """What one harvest of one source did (filled in as the harvest goes)."""

    source: str
    label: str = ""
    graph: str | None = None
    started: datetime = field(default_factory=now)
    ended: datetime | None = None
    outcome: str = "succeeded"
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    #: The source's state (catalogue.harvest.change) when it can be recorded: the run read
    #: every node. A later run finding the same state is "unchanged" and reads nothing.
    state: str | None = None
    iri: URIRef = field(default_factory=lambda: URIRef(f"urn:uuid:{uuid.uuid4()}"))
    #: Who runs it (catalogue.graph.lock.Holder): host name, process id, lock holder token.
    host: str = ""
    pid: int = 0
    holder: str = ""
    #: The end is committed (by the transaction writing the graph, or on its own).
    recorded: bool = False

    def triples(self) -> list[Triple]:
        """The whole record: :meth:`start_triples` and :meth:`end_triples`."""
        return self.start_triples() + self.end_triples()

    def start_triples(self) -> list[Triple]:
        """What is known when the run starts, committed before it reads anything."""
        run = self.iri
        out: list[Triple] = [
            (run, RDF.type, ZARR.HarvestRun),
            (run, RDF.type, PROV.Activity),
            (run, PROV.startedAtTime, timestamp(self.started)),
            (run, PROV.used, URIRef(self.source)),
            (run, PROV.wasAssociatedWith, _software()),
        ]
        if self.label:
            out.append((run, RDFS.label, Literal(self.label)))
        if self.host:
            out.append((run, ZARR.host, Literal(self.host)))
        if self.pid:
            out.append((run, ZARR.processId, Literal(self.pid)))
        if self.holder:
            out.append((run, ZARR.lockHolder, Literal(self.holder)))
        return out

    def end_triples(self) -> list[Triple]:
        """What the run adds when it ends (in the transaction that writes its graph)."""
        run = self.iri
        out: list[Triple] = [
            (run, PROV.endedAtTime, timestamp(self.ended or now())),
            (run, ZARR.outcome, Literal(self.outcome)),
            (run, ZARR.nodesAdded, Literal(self.added)),
            (run, ZARR.nodesChanged, Literal(self.changed)),
            (run, ZARR.nodesUnchanged, Literal(self.unchanged)),
            (run, ZARR.nodesRemoved, Literal(self.removed)),
            (run, ZARR.nodesFailed, Literal(self.failed)),
        ]
        if self.graph is not None and self.outcome not in ("failed", "unchanged"):
            out.append((run, PROV.generated, URIRef(self.graph)))
        if self.state is not None:
            out.append((run, ZARR.sourceState, Literal(self.state)))
        out += [(run, ZARR.error, Literal(message)) for message in self.errors]
        return out

    def as_json(self) -> dict[str, object]:
        return {
            "run": str(self.iri), "source": self.source, "name": self.label, "graph": self.graph,
            "outcome": self.outcome, "started": timestamp(self.started).toPython().isoformat(),
            "ended": timestamp(self.ended or now()).toPython().isoformat(),
            "added": self.added, "changed": self.changed, "unchanged": self.unchanged,
            "removed": self.removed, "failed": self.failed, "errors": self.errors,
            "host": self.host, "pid": self.pid,
        }
