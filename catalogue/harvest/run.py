"""One source harvested end to end: locked, recorded, read, compared, validated, written.

:func:`harvest_source` is what ``Catalogue.harvest`` does (see its docstring for the
guarantees): it takes the source's harvest lock (:mod:`catalogue.graph.lock`), records
the run's start (:mod:`catalogue.harvest.records`), takes the source's state and stops
there when it is as last harvested (:mod:`catalogue.harvest.change`), else reads the
hierarchy (:class:`catalogue.harvest.SourceReader`), validates it and writes it in one
write transaction (:mod:`catalogue.harvest.writer`).
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rdflib import PROV, RDF, Graph, Literal, URIRef
from sqlalchemy.exc import DBAPIError

from catalogue.errors import Busy, CatalogueError, DocumentError
from catalogue.graph.database import is_deadlock
from catalogue.graph.lock import HarvestLocked, HarvestLockLost, harvest_lock
from catalogue.harvest import CHOICE_OPTIONS, SourceReader, chosen_state, node_choice
from catalogue.harvest.change import listing_state
from catalogue.harvest.fingerprints import canonical_fingerprint
from catalogue.harvest.heap import relaxed_collector
from catalogue.harvest.records import RunRecords
from catalogue.harvest.writer import (
    fingerprints,
    prepare_write,
    previous_versions,
    replace_graph,
    write_changes,
)
from catalogue.model.extents import HierarchyExtents
from catalogue.model.nodes import Node
from catalogue.rdf.convert import Triple
from catalogue.rdf.extents import hierarchy_extent_triples
from catalogue.rdf.provenance import Run, software_release
from catalogue.rdf.provenance import now as provenance_now
from catalogue.rdf.shacl import report_triples
from catalogue.rdf.vocabulary import ZARR
from catalogue.storage.access import DEFAULT_MAX_DOCUMENT_BYTES
from catalogue.validate import DEFAULT_PROFILE, Report, validate_hierarchy

__all__ = ["HarvestReport", "harvest_source", "node_fingerprint", "source_url"]

log = logging.getLogger(__name__)

#: Times a harvest's write transaction is tried when PostgreSQL breaks a deadlock with it.
DEADLOCK_ATTEMPTS = 4




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
    run: Run | None = None
    #: What could not be discovered (groups of unlistable stores without consolidated metadata).
    undiscovered: list[str] = field(default_factory=list)
    #: The source was found as it was last harvested: nothing was read beyond the check.
    unchanged: bool = False
    #: Invalid nodes as the graph records them (unchanged runs, which validate nothing).
    invalid_nodes: int = 0
    #: Where and when, as extracted (None for an unchanged run, which reads nothing).
    extents: HierarchyExtents | None = None

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

    def as_json(self) -> dict[str, Any]:
        """The run's record with the report's counts (``catalogue harvest --json``, one source)."""
        run = self.run.as_json() if self.run is not None else {}
        return {
            **run,
            "source": self.source, "graph": self.graph, "groups": self.groups,
            "arrays": self.arrays, "triples": self.triples,
            "errors": [str(e) for e in self.errors], "kept_previous": self.kept,
            "invalid_nodes": self.invalid,
            "validation": self.validation.counts() if self.validation else None,
        }

    def summary(self) -> str:
        if self.run is not None and self.run.outcome == "removed":
            return f"removed {self.source}: the store is gone; graph <{self.graph}> removed ({self.run.removed} nodes)"
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


def harvest_source(
    records: RunRecords,
    source: str,
    *,
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    validate: bool = True,
    profile: str = DEFAULT_PROFILE,
    name: str = "",
    full: bool = False,
    wait: bool = False,
    progress: Callable[[int], None] | None = None,
    seen_state: str | None = None,
    **load_options: Any,
) -> HarvestReport:
    """Harvest the hierarchy at ``source`` into its own named graph of ``records.store``
    (see :meth:`catalogue.api.Catalogue.harvest`). ``seen_state`` is the change token the
    batch's expansion saw (:attr:`.sources.Source.seen_state`), for the batch alone to pass:
    the public API does not take it."""
    url = source_url(source)
    try:
        with relaxed_collector(), harvest_lock(records.store.engine, url, wait=wait) as holder:
            run = Run(source=url, label=name, host=holder.host, pid=holder.pid, holder=holder.token)
            records.start(run)
            try:
                report = _harvest(records, run, source, max_document_bytes=max_document_bytes,
                                  validate=validate, profile=profile, full=full,
                                  progress=progress, load_options=load_options,
                                  still_held=holder.still_held, seen=seen_state)
                run.recorded = True  # every way out of _harvest that returns has recorded the end
                return report
            except BaseException as exc:
                # The run ends here, failed; unless the write lock could not be had, which
                # the record would wait for as long again (it then shows as interrupted).
                if not run.recorded and not isinstance(exc, Busy):
                    run.outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                    run.errors.append(str(exc) if isinstance(exc, CatalogueError) else f"{type(exc).__name__}: {exc}")
                    with contextlib.suppress(Exception):
                        records.record(run)
                raise
    except HarvestLocked as exc:
        raise HarvestLocked(url, records.running_description(url)) from exc


def _recorded(state: str, profile: str, validate: bool) -> str:
    """The state a run records: the source's, and what the harvest made of it (the
    validation profile, the software), so that either changing harvests the source again."""
    return f"{state}|{profile if validate else 'unvalidated'}|{software_release()}"


def _harvest(records: RunRecords, run: Run, source: str, *, max_document_bytes: int, validate: bool, profile: str,
             full: bool, progress: Callable[[int], None] | None, load_options: dict[str, Any],
             still_held: Callable[[], bool], seen: str | None = None) -> HarvestReport:
    """The harvest proper, under the source's lock, with the run's start recorded.

    ``still_held`` is asked before the graph is committed: a lock that went with its
    database connection means another harvest of the source may be writing too.
    """
    store = records.store
    try:
        if seen is not None and not full:
            # The expansion listed this version with its snapshot: unchanged, it costs
            # nothing more (the version is not opened: config, refs, ancestry, session).
            url = source_url(source)
            choice = node_choice(max_document_bytes=max_document_bytes,
                                 **{k: load_options[k] for k in CHOICE_OPTIONS if k in load_options})
            state = _recorded(chosen_state(listing_state({"": seen}), choice), profile, validate)
            if state == records.current_state(URIRef(url)):
                return _unchanged(records, source, url, run, state)
        reader = SourceReader(source, max_document_bytes=max_document_bytes, **load_options)
        previous = None if full else records.current_state(URIRef(reader.url))
        store.rollback()  # no snapshot held while the source is read (WAL checkpoints wait for it)
        state = None if full else reader.state(previous)
        if state is not None:
            state = _recorded(state, profile, validate)
            if state == previous:
                return _unchanged(records, source, reader.url, run, state)
        hierarchy = reader.load(progress)
    except CatalogueError as exc:
        run.outcome = "failed"
        run.errors.append(str(exc))
        with contextlib.suppress(Busy):  # the source's error is the one to report
            records.record(run)
        raise
    # The per-hierarchy guard: whatever goes wrong in extraction (a bug, a value nobody
    # foresaw) is one extent.failed finding, logged with its traceback; the hierarchy is
    # written without extents and the next source of the run is harvested all the same.
    extents = reader.extents(hierarchy)
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
    if validation is not None:
        validation.findings = sorted([*validation.findings, *extents.findings], key=lambda f: f.sort_key())
    report.extents = extents
    # Converted before the write lock is taken (conversion is most of a harvest's CPU, and
    # harvests of other sources wait for the lock), against the previous version as it is
    # now; used under the lock only if that version is still the one there.
    prepared = prepare_write(store, graph_id, hierarchy, new_fingerprints) if not hierarchy.failed else None
    # The run's own triples (provenance link, extents and pyramids, the validation report)
    # depend on nothing stored when no node failed: made before the lock too.
    about = reader.store_triples()
    extra = _extra(graph_id, run, hierarchy, extents, validation, set(hierarchy.nodes), about) if prepared else None
    # Everything the write depends on is read inside the write transaction: it is then
    # current, and stays so until the commit. On PostgreSQL the transaction shares the
    # write lock with other harvests (each holding its own graph's lock alone), so
    # harvests of different sources write side by side; two of them waiting for each
    # other's new terms is a deadlock PostgreSQL breaks by failing one, which is then
    # written again (everything it needs was made before).

    def write() -> bool:
        """The write transaction; False when nothing could be written."""
        nonlocal prepared, extra
        with store.write_transaction(shared=True, graph=graph_id):
            old_fingerprints = fingerprints(store, graph_id)
            if prepared is not None and prepared.old_fingerprints != old_fingerprints:
                prepared = None  # the graph changed meanwhile: converted again, under the lock
            kept_triples, kept_paths = previous_versions(store, graph_id, hierarchy)
            report.kept = sorted(kept_paths)
            catalogued = set(hierarchy.nodes) | kept_paths
            if not hierarchy.nodes and not kept_triples:
                run.outcome = "failed"
                run.ended = provenance_now()
                records.record_in_transaction(run)
                return False  # nothing readable, nothing to keep: the catalogue stays as it was
            kept_iris = {hierarchy.iri(p) for p in kept_paths}
            run.added = sum(1 for iri in new_fingerprints if iri not in old_fingerprints)
            run.changed = sum(1 for iri, fp in new_fingerprints.items() if old_fingerprints.get(iri, fp) != fp)
            run.unchanged = sum(1 for iri, fp in new_fingerprints.items() if old_fingerprints.get(iri) == fp)
            run.removed = sum(1 for iri in old_fingerprints if iri not in new_fingerprints and iri not in kept_iris)
            if hierarchy.failed:
                run.outcome = "partial"
            elif not kept_paths:
                run.state = state  # every node read: a later run may compare against this state
            report.validation = validation
            if prepared is None or extra is None:
                extra = _extra(graph_id, run, hierarchy, extents, validation, catalogued, about)
            # Incremental when the previous version can be diffed node by node; a harvest with
            # failed nodes (whose previous versions are spliced in) replaces the graph whole.
            converted = prepared.triples if prepared is not None else None
            if old_fingerprints and not hierarchy.failed and not kept_paths:
                report.triples = write_changes(store, graph_id, hierarchy, old_fingerprints, new_fingerprints, extra,
                                               converted=converted)
            else:
                report.triples = replace_graph(store, graph_id, hierarchy, catalogued, kept_triples, kept_paths,
                                               new_fingerprints, extra, converted=converted)
            run.ended = provenance_now()
            records.record_in_transaction(run)
            if not still_held():
                raise HarvestLockLost(f"the harvest lock of {run.source} was lost with its database "
                                      "connection before the harvest could write; nothing was written, "
                                      "harvest again")
        return True

    for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
        try:
            if not write():
                return report
            break
        except DBAPIError as exc:
            if not is_deadlock(exc) or attempt == DEADLOCK_ATTEMPTS:
                raise
            log.info("harvest of %s: deadlock with another writer, writing again (%d)", run.source, attempt)
    # The run's end committed with the write: an interrupt in what follows (an ANALYZE can
    # take seconds) must not record the harvest again as interrupted.
    run.recorded = True
    store.collect_queued()  # the terms the new version orphaned, if no other writer is busy
    store.analyze_grown()  # a catalogue filled by harvests from empty: plans from statistics
    for node in hierarchy.nodes.values():
        if node.kind == "array":
            report.arrays += 1
        else:
            report.groups += 1
    return report


def _extra(graph_id: URIRef, run: Run, hierarchy: Any, extents: HierarchyExtents, validation: Report | None,
           catalogued: set[str], about: list[Triple]) -> list[Triple]:
    """The triples of this run: provenance link, what the store says of itself (``about``:
    archive files, versions), extents and pyramids, validation report."""
    extra: list[Triple] = [(graph_id, PROV.wasGeneratedBy, run.iri)]
    extra += about
    extra += hierarchy_extent_triples(hierarchy, extents)
    if validation is not None:
        extra += report_triples(validation, hierarchy, catalogued)
    return extra


def _unchanged(records: RunRecords, source: str, graph: str, run: Run, state: str) -> HarvestReport:
    """Record a run that found the source as it was: counts from the graph, nothing rewritten."""
    graph_id = URIRef(graph)
    current = Graph(store=records.store, identifier=graph_id)
    run.graph = graph
    run.outcome = "unchanged"
    run.state = state
    run.unchanged = sum(1 for _ in current.subject_objects(ZARR.fingerprint))
    records.record(run)
    report = HarvestReport(source=source, graph=graph, run=run, unchanged=True)
    report.arrays = sum(1 for _ in current.subjects(RDF.type, ZARR.Array))
    report.groups = sum(1 for _ in current.subjects(RDF.type, ZARR.Group))
    report.invalid_nodes = sum(1 for _ in current.subjects(ZARR.valid, Literal(False)))
    return report


def withdraw_source(records: RunRecords, source: str, graph: str, *, still_gone: Callable[[], bool],
                    wait: bool = False) -> HarvestReport | None:
    """Remove ``graph``, harvested from ``source``, when the store is gone (a pruning
    discovery no longer finds it): under the source's lock, and only if ``still_gone()``
    says so once the lock is held (a store made or harvested meanwhile stays); recorded as a
    run whose outcome is ``removed``. None when the store was not gone after all."""
    url = source_url(source)
    store = records.store
    try:
        with harvest_lock(store.engine, url, wait=wait) as holder:
            if not still_gone():
                return None
            run = Run(source=url, label="", host=holder.host, pid=holder.pid, holder=holder.token)
            records.start(run)
            graph_id = URIRef(graph)
            run.graph = graph
            with store.write_transaction(shared=True, graph=graph_id):
                run.removed = len(fingerprints(store, graph_id))
                store.remove_graph(Graph(store=store, identifier=graph_id))
                run.outcome = "removed"
                run.ended = provenance_now()
                records.record_in_transaction(run)
            run.recorded = True
    except HarvestLocked as exc:
        raise HarvestLocked(url, records.running_description(url)) from exc
    store.collect_queued()
    return HarvestReport(source=url, graph=graph, run=run)
