"""The harvest that wrote a dataset's current version, and the latest run of its source."""

from __future__ import annotations

from rdflib import PROV, RDFS, Graph, Literal, URIRef
from rdflib.term import Node as RDFNode

from catalogue.api import Catalogue
from catalogue.rdf.provenance import HARVESTS_GRAPH
from catalogue.rdf.rebuild import decode_literal
from catalogue.rdf.vocabulary import ZARR

from .graph_digest import GraphDigest
from .node_views import Harvest


def harvest_view(cat: Catalogue, digest: GraphDigest, root_iri: str) -> Harvest | None:
    if not digest.run:
        return None
    runs = Graph(store=cat.store, identifier=HARVESTS_GRAPH)
    run = URIRef(digest.run)
    values: dict[URIRef, list[RDFNode]] = {}
    for p, o in runs.predicate_objects(run):
        values.setdefault(p, []).append(o)  # type: ignore[arg-type]

    def one(p: URIRef) -> str:
        found = values.get(p)
        return str(found[0]) if found else ""

    def count(p: URIRef) -> int:
        found = values.get(p)
        return int(decode_literal(found[0])) if found and isinstance(found[0], Literal) else 0

    out = Harvest(
        run=digest.run, source=one(PROV.used), name=one(RDFS.label), started=one(PROV.startedAtTime),
        ended=one(PROV.endedAtTime), outcome=one(ZARR.outcome), software=one(PROV.wasAssociatedWith),
        counts={"added": count(ZARR.nodesAdded), "changed": count(ZARR.nodesChanged),
                "unchanged": count(ZARR.nodesUnchanged), "removed": count(ZARR.nodesRemoved),
                "failed": count(ZARR.nodesFailed)},
        errors=sorted(str(e) for e in values.get(ZARR.error, []))[:20],
    )
    latest = _latest_run(cat, root_iri)
    if latest is not None and latest[0] != digest.run and latest[1] > out.ended:
        out.last_checked, out.last_outcome = latest[1], latest[2]
    return out


_LATEST_RUN = (
    f"SELECT ?run ?ended ?outcome WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:used ?source ; "
    "prov:endedAtTime ?ended ; zarr:outcome ?outcome } } ORDER BY DESC(?ended) LIMIT 1"
)


def _latest_run(cat: Catalogue, source: str) -> tuple[str, str, str] | None:
    """The most recent run of ``source``: (run, ended, outcome).

    One fixed query text with ``?source`` bound, so it is parsed once per
    process (parsing SPARQL costs milliseconds; the lookup a fraction of one).
    """
    for row in cat.query(_LATEST_RUN, initBindings={"source": URIRef(source)}):
        return str(row[0]), str(row[1]), str(row[2])  # type: ignore[index]
    return None
