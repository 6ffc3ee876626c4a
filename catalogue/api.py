"""The Python API: ``catalogue.open(db)`` and the Catalogue object.

The CLI is a thin layer over this module; everything a command does can be
done from Python with the same semantics (transactions, errors, outputs).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import pathlib
import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from rdflib import PROV, RDF, RDFS, SH, BNode, Dataset, Graph, Literal, Namespace, URIRef
from rdflib.query import Result
from rdflib.term import Node as RDFNode

from catalogue.errors import Busy, CatalogueError, DocumentError, UsageError
from catalogue.graph.database import database_url
from catalogue.graph.store import SQLStore
from catalogue.harvest import SourceReader, load_hierarchy
from catalogue.harvest.reader import canonical_fingerprint
from catalogue.model.nodes import Hierarchy, Node
from catalogue.rdf.convert import Triple, hierarchy_triples
from catalogue.rdf.provenance import now as provenance_now
from catalogue.rdf.provenance import software_release
from catalogue.rdf.rebuild import NodeNotFound, metadata_output, rebuild_documents
from catalogue.rdf.vocabulary import PREFIXES, ZARR
from catalogue.storage.store import DEFAULT_MAX_DOCUMENT_BYTES
from catalogue.validate import DEFAULT_PROFILE, Report, validate_hierarchy

if TYPE_CHECKING:
    import numpy as np

    from catalogue.chunks.layout import ArrayLayout
    from catalogue.graph.load.report import LoadReport
    from catalogue.storage.store import StoreAccess

log = logging.getLogger(__name__)


@dataclass
class HarvestReport:
    """What one harvest did: counts, the graph it wrote, and what failed."""

    source: str
    graph: str
    arrays: int = 0
    groups: int = 0
    triples: int = 0
    errors: list[DocumentError] = field(default_factory=list)
    #: Paths of failed nodes whose previously catalogued version was kept.
    kept: list[str] = field(default_factory=list)
    #: Paths of the nodes whose documents could not be read.
    failed_paths: list[str] = field(default_factory=list)
    #: The validation of every node (None when harvesting without validation).
    validation: Report | None = None
    #: The run as recorded in the provenance graph.
    run: Any = None
    #: What could not be discovered (groups of unlistable stores without consolidated metadata).
    undiscovered: list[str] = field(default_factory=list)
    #: The source was found as it was last harvested: nothing was read beyond the check.
    unchanged: bool = False
    #: Invalid nodes as the graph records them (unchanged runs, which validate nothing).
    invalid_nodes: int = 0

    @property
    def ok(self) -> bool:
        """No node failed to be read (validation findings do not count: those nodes are catalogued)."""
        return not self.errors

    @property
    def invalid(self) -> int:
        """Catalogued (readable) nodes with validation errors."""
        if self.validation is None:
            return self.invalid_nodes
        return len(self.validation.invalid_paths() - set(self.failed_paths))

    def summary(self) -> str:
        if self.unchanged:
            return (f"unchanged {self.source}: {self.groups} groups, {self.arrays} arrays in graph <{self.graph}> "
                    f"(source state as last harvested; use --full to read it all the same)")
        text = (
            f"harvested {self.source}: {self.groups} groups, {self.arrays} arrays, "
            f"{self.triples} triples into graph <{self.graph}>"
        )
        if self.validation is not None:
            counts = self.validation.counts()
            text += (f"; {self.invalid} invalid node(s): {counts['error']} errors, "
                     f"{counts['warning']} warnings, {counts['info']} infos")
        if self.errors:
            text += f"; {len(self.errors)} node(s) failed"
            if self.kept:
                text += f" ({len(self.kept)} kept their previous version)"
        return text


def source_url(source: str) -> str:
    """A harvest source as a URL (local paths become absolute ``file://`` URLs), for provenance."""
    if "://" in source:
        return source.rstrip("/")
    return pathlib.Path(source).expanduser().absolute().as_uri()


def node_fingerprint(node: Node) -> str:
    """What the node's metadata is: the fingerprint the reader gave it (ETags or a content hash),
    or, for a node built some other way, the same canonical content hash the reader uses."""
    return node.fingerprint or canonical_fingerprint(node)


def _own_subjects(graph: Graph, iri: URIRef) -> list[RDFNode]:
    """The node and the blank nodes it alone describes (its lists, codecs, configurations)."""
    out: list[RDFNode] = [iri]
    frontier: list[RDFNode] = [iri]
    seen: set[RDFNode] = {iri}
    while frontier:
        for o in graph.objects(frontier.pop(), None):
            if isinstance(o, BNode) and o not in seen:
                seen.add(o)
                out.append(o)
                frontier.append(o)
    return out


def node_closure(graph: Graph, iri: URIRef, *, skip: Iterable[URIRef] = ()) -> list[Triple]:
    """The triples describing one node: its own, those of its blank nodes and dependent arrays.

    ``skip`` lists predicates left out (the harvester drops old membership
    links, which it recomputes from the current walk).
    """
    skipped = set(skip)
    out: list[Triple] = []
    frontier: list[RDFNode] = [iri]
    seen: set[RDFNode] = {iri}
    while frontier:
        subject = frontier.pop()
        for s, p, o in graph.triples((subject, None, None)):
            if p in skipped:
                continue
            out.append((s, p, o))
            follow = isinstance(o, BNode) or p == ZARR.dependentArray
            if follow and o not in seen:
                seen.add(o)
                frontier.append(o)
    return out


@functools.cache
def _store_prefixes() -> dict[str, Namespace]:
    """The catalogue's prefixes that the store keeps bound: all but those whose namespace
    rdflib binds under another prefix (``dct``, rdflib's ``dcterms``). rdflib rebinds its
    own whenever it makes a namespace manager, so binding ours too would make every read
    that serialises and every open write, undoing each other. Queries get all of
    :data:`~catalogue.rdf.vocabulary.PREFIXES` all the same (:meth:`Catalogue.query`)."""
    rdflib_prefix = {str(ns): prefix for prefix, ns in Graph().namespaces()}
    return {prefix: ns for prefix, ns in PREFIXES.items() if rdflib_prefix.get(str(ns), prefix) == prefix}


class Catalogue:
    """A catalogue database: harvest into it, query it, rebuild metadata from it."""

    def __init__(self, db: str | None = None) -> None:
        self.url = database_url(db)
        # A connection of its own: the web server lends its catalogues to any worker thread.
        self.store = SQLStore(private=True)
        self.store.open(self.url, create=True)
        self.dataset = Dataset(store=self.store, default_union=True)
        # Every new rdflib namespace manager on the store (DESCRIBE and serialisations make
        # one) binds rdflib's default prefixes, overriding other prefixes of the same
        # namespaces. Bound here, with the catalogue's own that do not fight them, so that
        # opening an initialised catalogue and reading it never write: nothing needs binding.
        Graph(store=self.store).namespace_manager  # noqa: B018 - binding is the side effect
        for prefix, ns in _store_prefixes().items():
            if self.store.namespace(prefix) != URIRef(str(ns)):
                self.store.bind(prefix, ns, override=True)
        self.store.commit()

    # ----------------------------------------------------------- lifecycle
    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Catalogue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- harvest
    def harvest(
        self,
        source: str,
        *,
        max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
        validate: bool = True,
        profile: str = DEFAULT_PROFILE,
        name: str = "",
        full: bool = False,
        wait: bool = False,
        progress: Callable[[int], None] | None = None,
        **load_options: Any,
    ) -> HarvestReport:
        """Harvest the hierarchy at ``source`` into its own named graph, atomically.

        The graph (named by the hierarchy root IRI) is replaced in one
        transaction. Nodes whose documents failed keep their previously
        catalogued triples; the report lists them. Errors that make the
        whole hierarchy unusable raise, and leave the hierarchy's graph as it
        was; the failed run is still recorded.

        One harvest of a source at a time (:mod:`catalogue.graph.lock`): another
        harvest of the same source raises :class:`~catalogue.graph.lock.HarvestLocked`
        (exit code 3), or with ``wait`` is waited for. Harvests of other sources run
        alongside; only their write transactions take turns. The run is recorded as
        started (with host and process id) in a transaction of its own before
        anything is read, so a run whose process dies shows as ``interrupted``.

        Every node is validated (``catalogue.validate``); the findings are
        stored in the graph as a SHACL report and each node is flagged
        ``zarr:valid``. Invalid nodes are catalogued all the same. Each node's
        fingerprint is compared with the previous version's, and the run is
        recorded as PROV-O (``catalogue.rdf.provenance``) with the counts of
        nodes added, changed, unchanged, removed and failed. ``load_options``
        go to :class:`catalogue.harvest.SourceReader` (storage options,
        include/exclude globs, depth, explicit nodes, concurrency, timeouts).

        First the source's state is taken with one listing or one consolidated
        read (:mod:`catalogue.harvest.change`). When it equals the state the
        current graph was harvested from (same options, same software), nothing
        else is read or written: the run is recorded as ``unchanged``. ``full``
        skips that check. ``progress`` is called with the number of nodes read
        as the reading goes.
        """
        from catalogue.graph.lock import HarvestLocked, harvest_lock
        from catalogue.rdf.provenance import Run

        url = source_url(source)
        try:
            with harvest_lock(self.store.engine, url, wait=wait) as holder:
                run = Run(source=url, label=name, host=holder.host, pid=holder.pid, holder=holder.token)
                self._start(run)
                try:
                    report = self._harvest(run, source, max_document_bytes=max_document_bytes,
                                           validate=validate, profile=profile, full=full,
                                           progress=progress, load_options=load_options,
                                           still_held=holder.still_held)
                    run.recorded = True  # every way out of _harvest that returns has recorded the end
                    return report
                except BaseException as exc:
                    # The run ends here, failed; unless the write lock could not be had, which
                    # the record would wait for as long again (it then shows as interrupted).
                    if not run.recorded and not isinstance(exc, Busy):
                        run.outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                        run.errors.append(str(exc) if isinstance(exc, CatalogueError) else f"{type(exc).__name__}: {exc}")
                        with contextlib.suppress(Exception):
                            self._record(run)
                    raise
        except HarvestLocked as exc:
            raise HarvestLocked(url, self._running_description(url)) from exc

    def _harvest(self, run: Any, source: str, *, max_document_bytes: int, validate: bool, profile: str,
                 full: bool, progress: Callable[[int], None] | None, load_options: dict[str, Any],
                 still_held: Callable[[], bool]) -> HarvestReport:
        """The harvest proper, under the source's lock, with the run's start recorded.

        ``still_held`` is asked before the graph is committed: a lock that went with its
        database connection means another harvest of the source may be writing too.
        """
        from catalogue.graph.lock import HarvestLockLost
        from catalogue.rdf.provenance import HARVESTS_GRAPH

        try:
            reader = SourceReader(source, max_document_bytes=max_document_bytes, **load_options)
            previous = None if full else self._current_state(URIRef(reader.url))
            self.store.rollback()  # no snapshot held while the source is read (WAL checkpoints wait for it)
            state = None if full else reader.state(previous)
            if state is not None:
                state = f"{state}|{profile if validate else 'unvalidated'}|{software_release()}"
                if state == previous:
                    return self._unchanged(source, reader.url, run, state)
            hierarchy = reader.load(progress)
        except CatalogueError as exc:
            run.outcome = "failed"
            run.errors.append(str(exc))
            with contextlib.suppress(Busy):  # the source's error is the one to report
                self._record(run)
            raise
        graph_id = URIRef(hierarchy.url)
        run.graph = hierarchy.url
        report = HarvestReport(source=source, graph=hierarchy.url, run=run)
        report.errors = hierarchy.errors
        report.undiscovered = list(getattr(hierarchy, "undiscovered", []))
        report.failed_paths = sorted(hierarchy.failed)
        run.failed = len(hierarchy.failed)
        run.errors = [str(e) for e in hierarchy.errors]
        new_fingerprints = {hierarchy.iri(p): node_fingerprint(n) for p, n in hierarchy.nodes.items()}
        validation = validate_hierarchy(hierarchy, profile=profile, source=source) if validate else None
        # Everything the write depends on is read inside the write transaction: it is then
        # current, and stays so until the commit.
        with self.store.write_transaction():
            old_fingerprints = self._fingerprints(graph_id)
            kept_triples, kept_paths = self._previous_versions(graph_id, hierarchy)
            report.kept = sorted(kept_paths)
            catalogued = set(hierarchy.nodes) | kept_paths
            if not hierarchy.nodes and not kept_triples:
                run.outcome = "failed"
                run.ended = provenance_now()
                self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.end_triples())
                return report  # nothing readable, nothing to keep: the catalogue stays as it was
            kept_iris = {hierarchy.iri(p) for p in kept_paths}
            run.added = sum(1 for iri in new_fingerprints if iri not in old_fingerprints)
            run.changed = sum(1 for iri, fp in new_fingerprints.items() if old_fingerprints.get(iri, fp) != fp)
            run.unchanged = sum(1 for iri, fp in new_fingerprints.items() if old_fingerprints.get(iri) == fp)
            run.removed = sum(1 for iri in old_fingerprints if iri not in new_fingerprints and iri not in kept_iris)
            if hierarchy.failed:
                run.outcome = "partial"
            elif not kept_paths:
                run.state = state  # every node read: a later run may compare against this state
            extra: list[Triple] = [(graph_id, PROV.wasGeneratedBy, run.iri)]
            if validation is not None:
                from catalogue.rdf.shacl import report_triples

                report.validation = validation
                extra += report_triples(validation, hierarchy, catalogued)
            # Incremental when the previous version can be diffed node by node; a harvest with
            # failed nodes (whose previous versions are spliced in) replaces the graph whole.
            if old_fingerprints and not hierarchy.failed and not kept_paths:
                report.triples = self._write_changes(graph_id, hierarchy, old_fingerprints, new_fingerprints, extra)
            else:
                triples = list(hierarchy_triples(hierarchy, member_filter=catalogued))
                triples += kept_triples
                triples += self._kept_memberships(hierarchy, kept_paths, catalogued)
                triples += [(URIRef(iri), ZARR.fingerprint, Literal(fp)) for iri, fp in new_fingerprints.items()]
                report.triples = self.store.replace_graph(graph_id, triples + extra)
            run.ended = provenance_now()
            self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.end_triples())
            if not still_held():
                raise HarvestLockLost(f"the harvest lock of {run.source} was lost with its database "
                                      "connection before the harvest could write; nothing was written, "
                                      "harvest again")
        for node in hierarchy.nodes.values():
            if node.kind == "array":
                report.arrays += 1
            else:
                report.groups += 1
        return report

    def _write_changes(self, graph_id: URIRef, h: Hierarchy, old_fp: dict[str, str], new_fp: dict[str, str],
                       extra: list[Triple]) -> int:
        """Rewrite only what changed: the triples of changed, removed and added nodes, membership
        links of unchanged groups whose children changed, and the per-run triples (validation
        report, ``zarr:valid`` flags, ``prov:wasGeneratedBy``), which describe this run.

        Unchanged nodes are not even converted, so a re-harvest of an unchanged source costs
        the reading, validating and comparing only. Same result as replacing the graph whole
        (a test checks it). Runs in the current transaction; the caller commits.
        """
        from catalogue.rdf.shacl import report_iri

        old = Graph(store=self.store, identifier=graph_id)
        rewrite = {iri for iri, fp in new_fp.items() if old_fp.get(iri) != fp}
        removed = set(old_fp) - set(new_fp)
        for iri in sorted(rewrite | removed):
            for subject in _own_subjects(old, URIRef(iri)):
                self.store.remove((subject, None, None), old)
        # Links into and out of the nodes that stay: membership of unchanged groups, per-run triples.
        catalogued = set(h.nodes)
        for path, node in h.nodes.items():
            iri = h.iri(path)
            if iri in rewrite:
                continue
            children = {URIRef(h.iri(m)) for m in node.members if m in catalogued}
            linked = set(old.objects(URIRef(iri), ZARR.member))
            for child in linked - children:
                self.store.remove((URIRef(iri), ZARR.member, child), old)
            for child in children - linked:
                self.store.add((URIRef(iri), ZARR.member, child), old)
        report = report_iri(h)
        for result in list(old.objects(report, SH.result)):
            self.store.remove((result, None, None), old)
        self.store.remove((report, None, None), old)
        self.store.remove((None, ZARR.valid, None), old)
        self.store.remove((URIRef(h.url), ZARR.validationReport, None), old)
        self.store.remove((URIRef(h.url), PROV.wasGeneratedBy, None), old)
        new = list(hierarchy_triples(h, member_filter=catalogued, paths={p for p in h.nodes if h.iri(p) in rewrite}))
        new += [(URIRef(iri), ZARR.fingerprint, Literal(new_fp[iri])) for iri in sorted(rewrite)]
        self.store.addN((s, p, o, graph_id) for s, p, o in new + extra)
        return len(old)

    def _current_state(self, graph_id: URIRef) -> str | None:
        """The source state recorded by the run that generated the graph's current version."""
        from catalogue.rdf.provenance import HARVESTS_GRAPH

        generated_by = Graph(store=self.store, identifier=graph_id).value(graph_id, PROV.wasGeneratedBy)
        if generated_by is None:
            return None
        state = Graph(store=self.store, identifier=HARVESTS_GRAPH).value(generated_by, ZARR.sourceState)
        return str(state) if state is not None else None

    def _unchanged(self, source: str, graph: str, run: Any, state: str) -> HarvestReport:
        """Record a run that found the source as it was: counts from the graph, nothing rewritten."""
        graph_id = URIRef(graph)
        current = Graph(store=self.store, identifier=graph_id)
        run.graph = graph
        run.outcome = "unchanged"
        run.state = state
        run.unchanged = sum(1 for _ in current.subject_objects(ZARR.fingerprint))
        self._record(run)
        report = HarvestReport(source=source, graph=graph, run=run, unchanged=True)
        report.arrays = sum(1 for _ in current.subjects(RDF.type, ZARR.Array))
        report.groups = sum(1 for _ in current.subjects(RDF.type, ZARR.Group))
        report.invalid_nodes = sum(1 for _ in current.subjects(ZARR.valid, Literal(False)))
        return report

    def _start(self, run: Any) -> None:
        """Record the run's start in a transaction of its own, before anything is read.

        Runs of the same source that never ended and whose lock holder is gone are closed
        as ``interrupted`` first (one whose holder cannot be checked, or is alive because
        its lock was lost with its connection, is left as it is).
        """
        from catalogue.graph.lock import holder_alive
        from catalogue.rdf.provenance import HARVESTS_GRAPH

        with self.store.write_transaction():
            for earlier, holder in self._unended_runs(run.source):
                if holder is not None and holder_alive(self.store.engine, holder) is False:
                    self.store.add((earlier, ZARR.outcome, Literal("interrupted")), Graph(self.store, HARVESTS_GRAPH))
            self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.start_triples())

    def _record(self, run: Any) -> None:
        """Record the end of a run that changed no hierarchy graph, in a transaction of its own."""
        from catalogue.rdf.provenance import HARVESTS_GRAPH

        run.ended = provenance_now()
        with self.store.write_transaction():
            self.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in run.end_triples())
        run.recorded = True

    def _unended_runs(self, source: str) -> list[tuple[URIRef, str | None]]:
        """Runs of ``source`` that recorded a start and no outcome, with their lock holders."""
        from catalogue.rdf.provenance import HARVESTS_GRAPH

        found = self.query(
            f"SELECT ?run ?holder WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run a zarr:HarvestRun ; prov:used ?source "
            f"OPTIONAL {{ ?run zarr:lockHolder ?holder }} FILTER NOT EXISTS {{ ?run zarr:outcome ?o }} }} }}",
            initBindings={"source": URIRef(source)},
        )
        return [(URIRef(str(row.run)), str(row.holder) if row.holder is not None else None) for row in found]

    def _running_description(self, source: str) -> str:
        """``pid P on host H since T`` of the newest unended run of ``source`` (for HarvestLocked)."""
        self.store.rollback()
        runs = [r for r in self.harvests(limit=None, source=source) if r["outcome"] == "running"]
        if not runs:
            return ""
        newest = runs[0]
        return f"pid {newest['pid']} on host {newest['host']} since {newest['started']}"

    def _fingerprints(self, graph_id: URIRef) -> dict[str, str]:
        """Node IRI -> fingerprint of the graph's current version (empty if not catalogued)."""
        if graph_id not in set(self.store.graph_ids()):
            return {}
        old = Graph(store=self.store, identifier=graph_id)
        return {str(s): str(o) for s, o in old.subject_objects(ZARR.fingerprint)}

    def harvests(self, limit: int | None = 20, *, source: str | None = None) -> list[dict[str, Any]]:
        """The most recent harvest runs, newest first (from the PROV records), of every
        source or of one.

        A run that has not ended (no ``zarr:outcome``) is ``running`` while the process
        holding its source's lock is alive, and ``interrupted`` once it is gone (killed,
        crashed, its machine rebooted): ``host`` and ``pid`` say which process it was.
        """
        from catalogue.graph.lock import holder_alive
        from catalogue.rdf.provenance import HARVESTS_GRAPH

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

    # ---------------------------------------------------------------- load
    def load(self, path: str, *, format: str | None = None, graph: str | None = None) -> LoadReport:
        """Bulk-load an RDF file (N-Triples, N-Quads, Turtle, TriG, JSON-LD, RDF/XML, N3).

        One transaction: every statement is added, or (bad input, raising
        :class:`~catalogue.graph.load.report.LoadError`) nothing is.  Statements without a
        graph go to ``graph`` (default: the dataset's default graph); see
        :func:`catalogue.graph.load.bulk.load_file`.
        """
        from catalogue.graph.load.bulk import load_file

        return load_file(self.store, path, format=format, graph=graph)

    def _previous_versions(self, graph_id: URIRef, h: Hierarchy) -> tuple[list[Triple], set[str]]:
        if not h.failed or graph_id not in set(self.store.graph_ids()):
            return [], set()
        old = Graph(store=self.store, identifier=graph_id)
        triples: list[Triple] = []
        kept: set[str] = set()
        for path in h.failed:
            closure = node_closure(old, URIRef(h.iri(path)), skip=[ZARR.member, ZARR.valid, PROV.wasGeneratedBy])
            if closure:
                triples += closure
                kept.add(path)
        return triples, kept

    @staticmethod
    def _kept_memberships(h: Hierarchy, kept: set[str], catalogued: set[str]) -> list[Triple]:
        """Membership links from kept (failed) groups to their children found now."""
        return [
            (URIRef(h.iri(posixpath.dirname(path))), ZARR.member, URIRef(h.iri(path)))
            for path in catalogued
            if path and posixpath.dirname(path) in kept
        ]

    # ---------------------------------------------------------------- read
    def query(self, sparql: str, **kwargs: Any) -> Result:
        """Run a SPARQL query over the union of all graphs (prefixes pre-bound).

        The query is compiled to SQL where possible (see :mod:`catalogue.graph.sparql`);
        rows stream from the database as the result is iterated.
        """
        init_ns = {**PREFIXES, **kwargs.pop("initNs", {})}
        return self.dataset.query(sparql, initNs=init_ns, **kwargs)

    def explain(self, sparql: str, **kwargs: Any) -> tuple[Result, list[str]]:
        """Run a query to completion and return its result and the SQL that ran.

        Each entry is a SQL statement (with its parameters as comments) or a note naming
        an algebra node that rdflib evaluated because the compiler does not handle it.
        """
        store = self.store
        store.sql_log = log = []
        try:
            result = self.query(sparql, **kwargs)
            # Materialise while the log is attached: rows are produced lazily.
            if result.type in ("SELECT", "ASK"):
                result.bindings  # noqa: B018 - forces evaluation
            return result, [entry.render() for entry in log]
        finally:
            store.sql_log = None

    def graphs(self, *, provenance: bool = False) -> list[tuple[str, int]]:
        """Named graphs, one per harvested hierarchy, with their triple counts, sorted by IRI.

        The provenance graph of harvest runs is not one of them (see :meth:`harvests`)
        unless ``provenance`` is true (the SPARQL service description lists every
        graph). All graphs are counted by one ``GROUP BY`` query; empty graphs count 0.
        """
        from sqlalchemy import func, select

        from catalogue.graph.schema import quads
        from catalogue.rdf.provenance import HARVESTS_GRAPH

        names = self.store.graph_name_ids()
        counts = dict(self.store.connection.execute(select(quads.c.g, func.count()).group_by(quads.c.g)).all())
        sizes = [(str(name), int(counts.get(gid, 0))) for gid, name in names.items()
                 if provenance or name != HARVESTS_GRAPH]
        return sorted(sizes, key=lambda size: size[0])

    def has_node(self, iri: str) -> bool:
        """Whether a catalogued node has this IRI."""
        return (URIRef(iri), ZARR.path, None) in self.dataset

    def node_graph(self, iri: str) -> Graph:
        """The named graph holding node ``iri`` (the most specific one if several do), in one query.

        A graph holds the node when it has the node's ``zarr:path`` (as :meth:`has_node`
        asks). Among several, the one whose IRI is the longest prefix of ``iri`` wins,
        then the longest IRI, then the least. Raises ``NodeNotFound`` when none does.
        """
        holders = {
            context.identifier
            for _, contexts in self.store.triples((URIRef(iri), ZARR.path, None), None)
            for context in contexts
        }
        if not holders:
            raise NodeNotFound(f"no node {iri} in the catalogue")
        best = min(holders, key=lambda g: (not iri.startswith(str(g)), -len(str(g)), str(g)))
        return Graph(store=self.store, identifier=best)

    def validate(self, iri: str, *, profile: str = DEFAULT_PROFILE) -> Report:
        """Validate a catalogued node and everything below it, from the graph alone.

        The node's hierarchy is rebuilt from its graph (documents exactly as
        harvested, dependent arrays expanded again) so that rules needing
        neighbours (grid_mapping, chunk key collisions) see them; findings
        are then limited to the node's subtree.
        """
        from catalogue.rdf.rebuild import rebuild_hierarchy

        graph = self.node_graph(iri)
        hierarchy = rebuild_hierarchy(graph, str(graph.identifier))
        full = validate_hierarchy(hierarchy, profile=profile, source=iri)
        prefix = iri[len(hierarchy.url):].lstrip("/") if iri.startswith(hierarchy.url) else None
        path = next((p for p in hierarchy.nodes if hierarchy.iri(p) == iri), prefix)
        if not path:
            return full
        inside = [p for p in hierarchy.nodes if p == path or p.startswith(path + "/")]
        report = Report(source=iri, profile=profile, nodes=len(inside))
        report.findings = [f for f in full.findings if f.path == path or f.path.startswith(path + "/")]
        return report

    # -------------------------------------------------------------- chunks
    def layout(self, iri: str) -> ArrayLayout:
        """What the catalogue knows about an array's chunks, from the graph alone."""
        from catalogue.chunks.layout import layout_from_documents

        graph = self.node_graph(iri)
        primary = graph.value(URIRef(iri), ZARR.primaryArray)
        base_url = str(primary) if primary is not None else iri
        return layout_from_documents(rebuild_documents(graph, iri), iri, base_url)

    def _chunk_store(self, layout: ArrayLayout, storage_options: dict[str, Any] | None = None) -> StoreAccess:
        from catalogue.storage.store import open_store

        return open_store(layout.base_url, storage_options=storage_options)

    def resolve(self, iri: str, selection: str | None = None, *, stream: bool = False,
                storage_options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Where every chunk a selection touches lives: keys, URLs, shard byte ranges, fill chunks.

        ``selection`` is NumPy basic indexing as text (``"0:10, 5, ..."``). With
        ``stream``, ``chunks`` is an iterator and ``fill_chunks`` is left out.
        ``storage_options`` go to fsspec (s3 endpoint and credentials; the
        graph holds none: without them they come from the environment).
        """
        from catalogue.chunks.resolve import describe, describe_streaming, resolve_selection

        layout = self.layout(iri)
        resolution = resolve_selection(layout, selection)
        store = self._chunk_store(layout, storage_options)
        return describe_streaming(resolution, store, selection) if stream else describe(resolution, store, selection)

    def read(self, iri: str, selection: str | tuple[object, ...] | None = None, *,
             storage_options: dict[str, Any] | None = None) -> np.ndarray:
        """The selected data of a catalogued array, read from its store and decoded (see :meth:`resolve`)."""
        from catalogue.chunks.read import read_selection

        layout = self.layout(iri)
        return read_selection(layout, self._chunk_store(layout, storage_options), selection)

    def tensorstore_spec(self, iri: str, *, assume_metadata: bool = False) -> dict[str, Any]:
        """A TensorStore spec opening the array (``assume_metadata``: metadata from the catalogue)."""
        from catalogue.chunks.tensorstore import tensorstore_spec

        layout = self.layout(iri)
        dependent = layout.base_url != iri
        return tensorstore_spec(layout, assume_metadata=assume_metadata, dependent=dependent)

    def documents(self, iri: str) -> dict[str, Any]:
        """The node's metadata documents, rebuilt from the graph alone."""
        return rebuild_documents(self.node_graph(iri), iri)

    def metadata(self, iri: str) -> dict[str, Any]:
        """The node's metadata as ``catalogue metadata`` prints it (zarr.json, or the v2 documents)."""
        return metadata_output(self.documents(iri))

    def export(self, out: IO[str], *, format: str = "turtle", graph: str | None = None, profile: str = "catalogue") -> None:
        """Write the catalogue (or one graph) to ``out``; see ``catalogue.rdf.export``."""
        from catalogue.rdf.export import export

        export(self, out, format=format, graph=graph, profile=profile)

    def quads(self, graph: str | None = None) -> Iterator[tuple[RDFNode, RDFNode, RDFNode, URIRef]]:
        """Stream the stored quads of one graph or of all named graphs."""
        ids = self.store.graph_ids()
        if graph:
            if URIRef(graph) not in ids:
                raise UsageError(f"no graph <{graph}> in the catalogue")
            ids = [URIRef(graph)]
        for g in ids:
            for s, p, o in self.store.graph_triples(g):
                yield s, p, o, g


def validate_store(
    source: str, *, profile: str = DEFAULT_PROFILE, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
) -> Report:
    """Validate the hierarchy at ``source`` straight from the store, cataloguing nothing."""
    hierarchy = load_hierarchy(source, max_document_bytes=max_document_bytes)
    return validate_hierarchy(hierarchy, profile=profile, source=source)


def open(db: str | None = None) -> Catalogue:
    """Open (creating and migrating if needed) the catalogue database at ``db``.

    ``db`` is a SQLAlchemy URL (``sqlite:///file.db``, ``postgresql+psycopg://...``),
    a plain file path, or None for ``$CATALOGUE_DB`` or ``./catalogue.db``.
    """
    return Catalogue(db)


__all__ = ["Catalogue", "DocumentError", "HarvestReport", "Report", "open", "validate_store"]
