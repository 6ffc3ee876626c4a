"""The records of harvest runs: PROV-O in the provenance graph, written and listed.

A run is recorded as started (host, process id, lock holder) in a transaction of its
own before anything is read, and its end when it ends (:mod:`catalogue.rdf.provenance`
says which triples). Listing the runs tells a run still going from one whose process
died by asking whether its lock holder is alive (:func:`catalogue.graph.lock.holder_alive`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rdflib import PROV, RDFS, Graph, Literal, URIRef
from rdflib.term import Node as RDFNode

from catalogue.graph.lock import holder_alive
from catalogue.graph.store import SQLStore
from catalogue.harvest.status import (
    SourceStatus,
    note_end,
    note_interrupted,
    note_start,
    running,
    statuses,
)
from catalogue.rdf.provenance import HARVESTS_GRAPH, Run
from catalogue.rdf.provenance import now as provenance_now
from catalogue.rdf.vocabulary import ZARR

__all__ = ["Query", "RunRecords"]

#: A SPARQL query over the union of the graphs with the catalogue's prefixes bound and
#: keyword arguments as rdflib's ``Graph.query`` takes them (``Catalogue.query``).
Query = Callable[..., Iterable[Any]]


@dataclass(frozen=True)
class RunRecords:
    """The harvest runs of one catalogue: its store (to write) and its query function (to read)."""

    store: SQLStore
    query: Query

    def start(self, run: Run) -> None:
        """Record the run's start in a transaction of its own, before anything is read.

        Runs of the same source that never ended and whose lock holder is gone are closed
        as ``interrupted`` first (one whose holder cannot be checked, or is alive because
        its lock was lost with its connection, is left as it is).
        """
        # Read before the write lock is taken (the caller holds the source's harvest lock,
        # so no other run of the source can start or end meanwhile).
        gone = [earlier for earlier, holder in self.unended(run.source)
                if holder is not None and holder_alive(self.store.engine, holder) is False]
        self.store.rollback()
        # Shared with other harvests' writes: run records are appends of new subjects.
        with self.store.write_transaction(shared=True):
            self.store.exempt_from_index(HARVESTS_GRAPH)  # run records change no search row
            for earlier in gone:
                self.store.add((earlier, ZARR.outcome, Literal("interrupted")), Graph(self.store, HARVESTS_GRAPH))
                note_interrupted(self.store.connection, run.source, str(earlier))
            self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.start_triples())
            note_start(self.store.connection, run)

    def record(self, run: Run) -> None:
        """Record the end of a run that changed no hierarchy graph, in a transaction of its own."""
        run.ended = provenance_now()
        with self.store.write_transaction(shared=True):
            self.store.exempt_from_index(HARVESTS_GRAPH)  # no dataset's current run: no search row
            self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.end_triples())
            note_end(self.store.connection, run)
        run.recorded = True

    def record_in_transaction(self, run: Run) -> None:
        """Record the end of a run in the write transaction of its graph (which commits it).
        The run's end time is read by the search index of that graph, in this transaction;
        no other dataset's row depends on it."""
        self.store.exempt_from_index(HARVESTS_GRAPH)
        self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.end_triples())
        note_end(self.store.connection, run)

    def sources(self, *, limit: int | None = None, failing: bool = False) -> list[SourceStatus]:
        """Every source's latest outcome, those failing for longest first (:mod:`.status`)."""
        self.store.rollback()
        try:
            return statuses(self.store.connection, alive=lambda holder: holder_alive(self.store.engine, holder),
                            limit=limit, failing=failing)
        finally:
            self.store.rollback()

    def unended(self, source: str) -> list[tuple[URIRef, str | None]]:
        """The run of ``source`` that recorded a start and no end, with its lock holder: the
        latest run, when its status is still ``running`` (one indexed row of
        ``harvest_sources``, :mod:`.status`, whatever the number of runs recorded; a run
        before it was closed by the run after it, or is listed as ``interrupted``)."""
        return [(URIRef(run), holder) for run, holder in running(self.store.connection, source)]

    def current_state(self, graph_id: URIRef) -> str | None:
        """The source state recorded by the run that generated the graph's current version."""
        generated_by = Graph(store=self.store, identifier=graph_id).value(graph_id, PROV.wasGeneratedBy)
        if generated_by is None:
            return None
        state = Graph(store=self.store, identifier=HARVESTS_GRAPH).value(generated_by, ZARR.sourceState)
        return str(state) if state is not None else None

    def running_description(self, source: str) -> str:
        """``pid P on host H since T`` of the newest unended run of ``source`` (for HarvestLocked)."""
        self.store.rollback()
        runs = [r for r in self.listing(limit=None, source=source) if r["outcome"] == "running"]
        if not runs:
            return ""
        newest = runs[0]
        return f"pid {newest['pid']} on host {newest['host']} since {newest['started']}"

    def listing(self, limit: int | None = 20, *, source: str | None = None) -> list[dict[str, Any]]:
        """The most recent harvest runs, newest first (from the PROV records), of every
        source or of one.

        A run that has not ended (no ``zarr:outcome``) is ``running`` while the process
        holding its source's lock is alive, and ``interrupted`` once it is gone (killed,
        crashed, its machine rebooted): ``host`` and ``pid`` say which process it was.
        """
        # Two small queries, not one with a dozen OPTIONALs (a join order search that took
        # PostgreSQL's planner seconds): the runs to list, then every property of those runs.
        listed = f"""
        SELECT ?run ?source ?started WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{
            ?run a zarr:HarvestRun ; prov:used ?source ; prov:startedAtTime ?started }} }}
        ORDER BY DESC(?started) {f"LIMIT {int(limit)}" if limit else ""}
        """
        bindings = {"source": URIRef(source)} if source else {}
        found = [(str(r.run), str(r.source), str(r.started)) for r in self.query(listed, initBindings=bindings)]
        props: dict[str, dict[str, list[RDFNode]]] = {run: {} for run, _, _ in found}
        if props:
            values = " ".join(f"<{run}>" for run in props)
            for r in self.query(f"SELECT ?run ?p ?o WHERE {{ VALUES ?run {{ {values} }} "
                                f"GRAPH <{HARVESTS_GRAPH}> {{ ?run ?p ?o }} }}"):
                props[str(r.run)].setdefault(str(r.p), []).append(r.o)

        def one(run: str, predicate: URIRef) -> RDFNode | None:
            return next(iter(props[run].get(str(predicate), [])), None)

        rows = []
        for run, run_source, started in found:
            outcome = one(run, ZARR.outcome)
            if outcome is None:
                holder = one(run, ZARR.lockHolder)
                alive = holder_alive(self.store.engine, str(holder)) if holder is not None else False
                outcome = "interrupted" if alive is False else "running"
            label, graph, ended = one(run, RDFS.label), one(run, PROV.generated), one(run, PROV.endedAtTime)
            host, pid = one(run, ZARR.host), one(run, ZARR.processId)
            counts = {key: one(run, predicate) for key, predicate in (
                ("added", ZARR.nodesAdded), ("changed", ZARR.nodesChanged), ("unchanged", ZARR.nodesUnchanged),
                ("removed", ZARR.nodesRemoved), ("failed", ZARR.nodesFailed))}
            rows.append({
                "run": run, "source": run_source, "name": str(label) if label is not None else "",
                "graph": str(graph) if graph is not None else None, "outcome": str(outcome),
                "started": started, "ended": str(ended) if ended is not None else None,
                **{key: int(value) if value is not None else 0 for key, value in counts.items()},
                "errors": sorted(str(e) for e in props[run].get(str(ZARR.error), [])),
                "host": str(host) if host is not None else None,
                "pid": int(pid) if pid is not None else None,
            })
        return rows
