"""The Python API: ``catalogue.open(db)`` and the Catalogue object.

The CLI is a thin layer over this module; everything a command does can be
done from Python with the same semantics (transactions, errors, outputs).

It is longer than 600 lines because it is the whole library's facade: one short method
per operation (harvest, search, query, chunks, previews, exports...), each delegating to
the package that owns the work, so that a user finds every operation on one object.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, TypeVar

from rdflib import PROV, Dataset, Graph, Namespace, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.query import Result
from rdflib.term import Node as RDFNode

from catalogue.discovery.indexer import ReindexReport, index_hook, reindex
from catalogue.discovery.query import SearchQuery, SearchResult, generation, search
from catalogue.discovery.stats import CatalogueStats, Totals, catalogue_stats, totals
from catalogue.errors import CatalogueError, DocumentError, NotFound, TooLarge, UsageError
from catalogue.graph.database import busy_error, database_url
from catalogue.graph.search_schema import SEARCH_ROW_TABLES
from catalogue.graph.store import SQLStore, install_sparql
from catalogue.rdf.dcat import DEFAULT_PAGE_SIZE, CatalogLinks, catalog_graph
from catalogue.rdf.rebuild import NodeNotFound, metadata_output, node_kind, rebuild_documents
from catalogue.rdf.vocabulary import PREFIXES, ZARR
from catalogue.storage.limits import DEFAULT_MAX_DOCUMENT_BYTES
from catalogue.validate.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    import numpy as np

    from catalogue.chunks.layout import ArrayLayout
    from catalogue.chunks.preview import PreviewJob
    from catalogue.graph.load.report import LoadReport
    from catalogue.graph.sparql.dataset import RDFDataset
    from catalogue.harvest.batch import BatchReport, OverallProgress, Progress, SourceResult
    from catalogue.harvest.records import RunRecords
    from catalogue.harvest.run import HarvestReport
    from catalogue.harvest.sources import Source
    from catalogue.harvest.status import SourceStatus
    from catalogue.model.extents import Extent, Multiscales
    from catalogue.rdf.results import Answer
    from catalogue.rdf.stac import StacLinks
    from catalogue.storage.access import StoreAccess
    from catalogue.validate.findings import Report

log = logging.getLogger(__name__)


@functools.cache
def _store_prefixes() -> dict[str, Namespace]:
    """The catalogue's prefixes that the store keeps bound: all but those whose namespace
    rdflib binds under another prefix (``dct``, rdflib's ``dcterms``). rdflib rebinds its
    own whenever it makes a namespace manager, so binding ours too would make every read
    that serialises and every open write, undoing each other. Queries get all of
    :data:`~catalogue.rdf.vocabulary.PREFIXES` all the same (:meth:`Catalogue.query`)."""
    rdflib_prefix = {str(ns): prefix for prefix, ns in Graph().namespaces()}
    return {prefix: ns for prefix, ns in PREFIXES.items() if rdflib_prefix.get(str(ns), prefix) == prefix}


#: The catalogue a harvest worker process opened (``harvest_sources(jobs=N)``).
_WORKER_CATALOGUE: list[Catalogue] = []


def _worker_records(url: str) -> RunRecords:
    """Open the catalogue in a harvest worker process (kept for the process's life)."""
    cat = Catalogue(url)
    _WORKER_CATALOGUE.append(cat)
    return cat._records


_T = TypeVar("_T")


class Catalogue:
    """A catalogue database: harvest into it, query it, rebuild metadata from it."""

    def __init__(self, db: str | os.PathLike[str] | None = None) -> None:
        self.url = database_url(db)
        # A connection of its own: the web server lends its catalogues to any worker thread.
        self.store = SQLStore(private=True)
        self.store.open(self.url, create=True)
        # The search index changes in the transaction of every write (catalogue.graph.derived).
        self.store.index_hooks.append(index_hook)
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

    @functools.cached_property
    def _records(self) -> RunRecords:
        """The harvest runs' records, made at the first harvest or listing: the harvest
        package (readers, validation, extents) loads then, not with every catalogue, so a
        server or a query starts without it."""
        from catalogue.harvest.records import RunRecords

        # The dataset's own query, with the prefixes bound: a bound method of the
        # catalogue would make it refer to itself (and keep its connection until a GC).
        return RunRecords(self.store, functools.partial(_query, self.dataset))

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
        source: str | os.PathLike[str],
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
        from catalogue.harvest.run import harvest_source

        _no_internal(load_options)
        return harvest_source(self._records, _text(source), max_document_bytes=max_document_bytes, validate=validate,
                              profile=profile, name=name, full=full, wait=wait, progress=progress, **load_options)

    def harvest_sources(
        self,
        sources: Iterable[str | os.PathLike[str] | Source] = (),
        *,
        config: str | os.PathLike[str] | None = None,
        strict: bool = False,
        progress: Callable[[Source, int, int], Progress | None] | None = None,
        on_result: Callable[[SourceResult], None] | None = None,
        jobs: int = 1,
        overall: Callable[[int], OverallProgress | None] | None = None,
        **options: Any,
    ) -> BatchReport:
        """Harvest several sources in turn, as ``catalogue harvest`` does: ``sources`` (URLs or
        :class:`~catalogue.harvest.sources.Source` entries), then the ``[[source]]`` entries of
        the ``config`` file (docs/harvesting.md).

        Each source is one :meth:`harvest` (its own graph, its own lock); one that fails does
        not stop the others. A source that is not itself a Zarr store (a folder, bucket prefix
        or HTTP index of stores) stands for the stores found below it, and with ``prune`` set
        on its :class:`~catalogue.harvest.sources.Source` the graphs of those that are gone
        are removed (:mod:`catalogue.harvest.discover`). ``options`` are :meth:`harvest`'s (a source's own settings win).
        ``on_result`` hears of each source as it is done; ``progress`` may give each source a
        progress display. The :class:`~catalogue.harvest.batch.BatchReport` has the exit
        code (``strict``: invalid nodes count as failures), the JSON and the summary line.
        With ``jobs`` > 1, that many worker processes harvest sources side by side, each
        with its own connection (:mod:`catalogue.harvest.parallel`); ``overall(total)``
        may give one progress display counting the sources done (a tqdm bar will do: its
        ``total`` is set again as folders of stores turn out to hold more than one).
        """
        from catalogue.harvest.batch import harvest_sources, plan_sources

        _no_internal(options)
        # A version's token is the expansion's to give (Source.seen_state): never taken from a caller.
        given = [_text(s) if isinstance(s, str | os.PathLike) else dataclasses.replace(s, seen_state=None)
                 for s in sources]
        return harvest_sources(self._records, plan_sources(given,
                                                           None if config is None else _text(config)), strict=strict, progress=progress,
                               on_result=on_result, jobs=jobs, overall=overall,
                               open_records=functools.partial(_worker_records, self.url), **options)

    def harvests(self, limit: int | None = 20, *, source: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
        """The most recent harvest runs, newest first (from the PROV records), of every
        source or of one.

        A run that has not ended (no ``zarr:outcome``) is ``running`` while the process
        holding its source's lock is alive, and ``interrupted`` once it is gone (killed,
        crashed, its machine rebooted): ``host`` and ``pid`` say which process it was.
        """
        return self._records.listing(limit, source=None if source is None else _text(source))

    def harvest_status(self, limit: int | None = None, *, failing: bool = False) -> list[SourceStatus]:
        """Every harvested source's latest outcome, times and error, the sources failing for
        longest first (one indexed table, kept by the harvests: :mod:`catalogue.harvest.status`);
        only the failing ones with ``failing``."""
        return self._records.sources(limit=limit, failing=failing)

    # -------------------------------------------------------------- search
    def _read(self, read: Callable[[Any], _T]) -> _T:
        """``read(connection)`` in a read transaction of its own, so that it sees what
        other processes have committed and holds no snapshot afterwards."""
        self.store.rollback()
        try:
            return read(self.store.connection)
        finally:
            self.store.rollback()

    def search(self, query: SearchQuery) -> SearchResult:
        """Search the datasets as ``/datasets`` does: free text, filters, facets, paging,
        sort (:mod:`catalogue.discovery.query`), answered from the search index in the
        database, as of now (what other processes committed included)."""
        return self._read(lambda conn: search(conn, query))

    def search_generation(self) -> int:
        """A number that changes whenever the search index does (answers can be cached by it)."""
        return self._read(lambda conn: generation(conn))

    def reindex(self, graph: str | None = None, *, full: bool = False,
                progress: Callable[[int], None] | None = None) -> ReindexReport:
        """Bring the search index up to date: the graphs queued by writers that could not
        index them (default), one graph (``graph``, an IRI), or everything from scratch
        (``full``). Harvests, loads and updates through the library index in their own
        transaction; this is for writes made without it and for repairs."""
        if graph is None:
            if not full:
                from catalogue.graph.derived import queued_graphs

                self.store.rollback()
                queued = queued_graphs(self.store.connection, 1)
                self.store.rollback()
                if not queued:  # nothing to do: no write lock taken
                    return ReindexReport(failed=[], datasets=self.totals().datasets)
            report = reindex(self.store.write_transaction, full=full, progress=progress)
            if full:  # every row of the search tables was rewritten (see SQLStore.vacuum)
                self.store.vacuum(SEARCH_ROW_TABLES)
            return report
        if "\x00" in graph:
            raise NotFound(f"no graph <{graph!r}> in the catalogue")
        self.store.rollback()
        gids = set(self.store.lookup_term_ids([URIRef(graph)]).values())
        from sqlalchemy import text

        gids |= set(self.store.connection.execute(
            text("SELECT gid FROM search_datasets WHERE iri = :iri"), {"iri": graph}).scalars())
        self.store.rollback()
        if not gids:
            raise NotFound(f"no graph <{graph}> in the catalogue")
        return reindex(self.store.write_transaction, graphs=gids, progress=progress)

    def totals(self) -> Totals:
        """Datasets, groups, arrays and triples as the search index keeps them (one row)."""
        return self._read(lambda conn: totals(conn))

    def stats(self, *, exact: bool = False) -> CatalogueStats:
        """Datasets, groups, arrays and triples (kept by the search index: no scan), the
        graphs waiting to be reindexed, and the sizes of the index and of the database;
        ``exact`` also counts every stored quad (a scan)."""
        return self._read(lambda conn: catalogue_stats(conn, exact=exact))

    # ---------------------------------------------------------------- load
    def load(self, path: str | os.PathLike[str], *, format: str | None = None, graph: str | None = None, replace: bool = False,
             name: str | None = None) -> LoadReport:
        """Bulk-load an RDF file (N-Triples, N-Quads, Turtle, TriG, JSON-LD, RDF/XML, N3).

        One transaction: every statement is added, or (bad input, raising
        :class:`~catalogue.graph.load.report.LoadError`) nothing is.  Statements without a
        graph go to ``graph`` (default: the dataset's default graph); ``replace``: the
        file replaces that graph's content (a triple format only); ``name``: how errors
        name the file. See :func:`catalogue.graph.load.bulk.load_file`.
        """
        from catalogue.graph.load.bulk import load_file

        return load_file(self.store, _text(path), format=format, graph=graph, replace=replace, name=name)

    def drop_graph(self, graph: str | None) -> bool:
        """Delete ``graph`` (default: the dataset's default graph) and commit; whether it
        existed. The search index forgets its dataset in the same transaction."""
        node = DATASET_DEFAULT_GRAPH_ID if graph is None else URIRef(graph)
        with self.store.write_transaction():
            existed = self.store.has_graph(node)
            if existed:
                self.store.remove_graph(node)
        return existed

    def graph(self, graph: str | None, *, limit: int | None = None) -> Graph | None:
        """The triples of ``graph`` (default: the dataset's default graph) as an rdflib
        graph, or None when there is no such graph. More than ``limit`` triples raise
        :class:`~catalogue.errors.TooLarge`."""
        node = DATASET_DEFAULT_GRAPH_ID if graph is None else URIRef(graph)
        if not self.store.has_graph(node):
            return None
        out = Graph()
        for n, triple in enumerate(self.store.graph_triples(node), start=1):
            if limit is not None and n > limit:
                raise TooLarge(f"the graph has more than {limit:,} triples")
            out.add(triple)
        return out

    # ---------------------------------------------------------------- read
    def query(self, sparql: str, **kwargs: Any) -> Result:
        """Run a SPARQL query over the union of all graphs (prefixes pre-bound).

        The query is compiled to SQL where possible (see :mod:`catalogue.graph.sparql`);
        rows stream from the database as the result is iterated.
        """
        return _query(self.dataset, sparql, **kwargs)

    def answer(
        self,
        sparql: str,
        *,
        dataset: RDFDataset | None = None,
        max_results: int | None = None,
        timeout: float | None = None,
        check_form: Callable[[str], Any] | None = None,
    ) -> Answer:
        """Run a query and read its whole answer under limits, as the SPARQL endpoint does.

        ``dataset`` names the default and named graphs (the SPARQL Protocol's
        ``default-graph-uri``/``named-graph-uri``; otherwise the query's ``FROM``/``FROM
        NAMED``, otherwise the union of all graphs); only catalogued graphs are ever read.
        ``max_results`` rows or triples (:class:`~catalogue.errors.TooLarge` beyond),
        ``timeout`` seconds (:class:`~catalogue.errors.QueryTimeout`); a bad query is a
        :class:`~catalogue.errors.QueryError`. Write the answer with
        :func:`catalogue.rdf.results.serialise`. See :mod:`catalogue.graph.sparql.answer`.
        """
        install_sparql()
        from catalogue.graph.sparql.answer import answer_query

        return answer_query(self.store, sparql, dataset=dataset, max_results=max_results,
                            timeout=timeout, check_form=check_form)

    def update(self, sparql: str, *, timeout: float | None = None) -> None:
        """Apply a SPARQL Update and commit it, or change nothing and raise.

        Operations without GRAPH or WITH address the store's own unnamed graph, never a
        harvested hierarchy; USING names graphs of the catalogue (never fetched); LOAD
        and SERVICE are refused (:class:`~catalogue.errors.QueryError`). See
        :mod:`catalogue.graph.sparql.update`.
        """
        install_sparql()
        from catalogue.graph.sparql.update import run_update

        run_update(self.store, sparql, timeout=timeout)

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
        from catalogue.validate import Report, validate_hierarchy

        graph = self.node_graph(iri)
        hierarchy = rebuild_hierarchy(graph, str(graph.identifier))
        full = validate_hierarchy(hierarchy, profile=profile, source=iri)
        # The extents' findings from the metadata (conventions, ACDD, STAC items); those
        # about coordinate values need the store: the harvest's stored report has them, as it
        # has the editors' copies found beside documents (document.backup).
        from catalogue.extents.extract import guarded_extents

        full.findings = sorted([*full.findings, *guarded_extents(hierarchy, None).findings],
                               key=lambda f: f.sort_key())
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
        """The store to read ``layout``'s chunks from. An Icechunk branch or tag is read at the
        snapshot the catalogue holds (the layout is that snapshot's), not at its head now."""
        from catalogue.model.paths import quote_path
        from catalogue.storage.icechunk import IcechunkAccess
        from catalogue.storage.opening import open_store

        store = open_store(layout.base_url, storage_options=storage_options)
        if isinstance(store, IcechunkAccess) and store.current is not None and store.current.kind != "snapshot":
            held = self.node_graph(layout.iri).value(URIRef(store.version_url), ZARR.snapshot)
            if held is not None and str(held) != store.current.snapshot:
                inner = f"/{quote_path(store.root)}" if store.root else ""
                store = open_store(f"{store.repository_url}@{held}{inner}", storage_options=storage_options)
        return store

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

    def preview_array(self, iri: str) -> str:
        """The array a quicklook of ``iri`` draws: where ``iri`` (an array, or a group with a
        pyramid) is a level of a multiscale pyramid, or inside one, the same node in its
        coarsest level; else ``iri`` itself."""
        from catalogue.rdf.pyramids import coarsest_counterpart

        return coarsest_counterpart(self.node_graph(iri), iri)

    def preview_job(self, iri: str, *, max_bytes: int | None = None,
                    storage_options: dict[str, Any] | None = None) -> PreviewJob:
        """What a quicklook of ``iri`` needs from the catalogue (the array, its layout, its
        store, its units, the key a cache keeps the picture under), without reading any chunk:
        :meth:`~catalogue.chunks.preview.PreviewJob.draw` reads and draws, with no database
        connection held. ``NodeNotFound`` when ``iri`` is not catalogued."""
        from catalogue.chunks.preview import DEFAULT_MAX_BYTES, PreviewJob

        target = self.preview_array(iri)
        graph = self.node_graph(target)
        node = URIRef(target)
        key = (target, str(graph.value(node, ZARR.fingerprint)), str(graph.value(graph.identifier, PROV.wasGeneratedBy)))
        name = target.rsplit("/", 1)[-1]
        job = PreviewJob(name=name, key=key, coarsest=target != iri, max_bytes=max_bytes or DEFAULT_MAX_BYTES)
        if node_kind(graph, target) != "array":
            job.refusal = f"{iri} is a group: only arrays (and pyramids) have a preview"
            return job
        units = graph.value(node, ZARR.units)
        job.units = str(units) if units else None
        try:
            job.layout = self.layout(target)
            job.store = self._chunk_store(job.layout, storage_options)
        except Exception as exc:  # a layout or store the reader cannot use: said in the picture
            job.refusal = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return job
        if len(job.layout.shape) >= 2:
            from catalogue.rdf.coordinates import latitude_coordinate

            latitude = latitude_coordinate(graph, target, -2)
            if latitude is not None:
                with contextlib.suppress(Exception):  # a latitude that cannot be read: drawn as stored
                    job.latitude = self.layout(latitude)
                    job.latitude_store = self._chunk_store(job.latitude, storage_options)
        return job

    def preview(self, iri: str, *, max_bytes: int | None = None,
                storage_options: dict[str, Any] | None = None) -> bytes:
        """A quicklook PNG of array ``iri`` (or of the coarsest level of its pyramid), read
        within ``max_bytes`` of decoded chunks (:mod:`catalogue.chunks.preview`). Never raises
        for what the store holds: an array that cannot be read or drawn gets a placeholder
        picture saying why. ``NodeNotFound`` when ``iri`` is not catalogued."""
        return self.preview_job(iri, max_bytes=max_bytes, storage_options=storage_options).draw().png

    def tensorstore_spec(self, iri: str, *, assume_metadata: bool = False) -> dict[str, Any]:
        """A TensorStore spec opening the array (``assume_metadata``: metadata from the catalogue)."""
        from catalogue.chunks.tensorstore import tensorstore_spec

        layout = self.layout(iri)
        dependent = layout.base_url != iri
        return tensorstore_spec(layout, assume_metadata=assume_metadata, dependent=dependent)

    def documents(self, iri: str) -> dict[str, Any]:
        """The node's metadata documents, rebuilt from the graph alone."""
        return rebuild_documents(self.node_graph(iri), iri)

    def extent(self, iri: str) -> Extent | None:
        """Where and when node ``iri`` covers, as its harvest stored it (box, period, CRS,
        resolutions, the source of each figure), or ``None`` when its store declares none.
        Raises ``NodeNotFound`` for an IRI the catalogue does not hold."""
        from catalogue.rdf.extents import read_extent

        return read_extent(self.node_graph(iri), URIRef(iri))

    def extent_not_read(self, iri: str) -> list[str]:
        """Why node ``iri`` has less extent than its store declares: the messages of the
        ``extent.values-budget`` findings its harvest stored for the coordinate arrays the
        node needs (for a group, any below it). Empty when the byte budget stopped nothing
        it needs; when it is not and :meth:`extent` is ``None``, the extent was **not
        read** rather than not declared (harvest again with a larger ``--coordinate-bytes``).
        Raises ``NodeNotFound`` for an IRI the catalogue does not hold."""
        from catalogue.rdf.extents import budget_findings, budget_stopped, names_used

        graph = self.node_graph(iri)
        findings = budget_findings(graph)
        if not findings:
            return []
        path = str(graph.value(URIRef(iri), ZARR.path) or "")
        kind = node_kind(graph, iri)
        uses = names_used(rebuild_documents(graph, iri)) if kind == "array" else set()
        return budget_stopped(path, kind, uses, findings)

    def multiscales(self, iri: str) -> Multiscales | None:
        """The multiscale pyramid group ``iri`` declares (levels from the finest), or ``None``."""
        from catalogue.rdf.extents import read_multiscales

        return read_multiscales(self.node_graph(iri), URIRef(iri))

    def metadata(self, iri: str) -> dict[str, Any]:
        """The node's metadata as ``catalogue metadata`` prints it (zarr.json, or the v2 documents)."""
        return metadata_output(self.documents(iri))

    def export(self, out: IO[str], *, format: str = "turtle", graph: str | None = None, profile: str = "catalogue") -> None:
        """Write the catalogue (or one graph) to ``out``; see ``catalogue.rdf.export``."""
        from catalogue.rdf.export import export

        export(self.store, out, format=format, graph=graph, profile=profile)

    def dcat_catalog(self, links: CatalogLinks, *, page: int = 1, page_size: int = DEFAULT_PAGE_SIZE) -> Graph:
        """Page ``page`` of the catalogue as DCAT 3 (datasets, distributions, the SPARQL
        service, Hydra paging), with URLs under ``links`` (where the catalogue is served);
        :class:`~catalogue.errors.NotFound` past the last page."""
        return catalog_graph(self.query, links, page=page, page_size=page_size)

    def stac_collection(self, cid: str, links: StacLinks) -> dict[str, Any]:
        """The STAC Collection (a dict, JSON-ready) whose id is ``cid``, with URLs under
        ``links``; :class:`~catalogue.errors.NotFound` when no dataset has that id.

        Ids are derived from dataset IRIs (:func:`catalogue.rdf.stac.collection_id`); the
        search index keeps them, so finding one is one indexed lookup.
        """
        from sqlalchemy import text

        from catalogue.rdf.stac import collection_id

        if "\x00" in cid:  # no id holds one (and PostgreSQL text cannot)
            raise NotFound(f"no STAC collection {cid!r} in the catalogue")
        self.store.rollback()
        found = [iri for iri in self.store.connection.execute(
            text("SELECT iri FROM search_datasets WHERE collection_id = :c"), {"c": cid}).scalars()
            if collection_id(iri) == cid]
        self.store.rollback()
        if not found:
            raise NotFound(f"no STAC collection {cid!r} in the catalogue")
        return self.stac_collections([found[0]], links)[0]

    def stac_collections(self, datasets: Iterable[str], links: StacLinks) -> list[dict[str, Any]]:
        """The STAC Collections of ``datasets`` (dataset IRIs, in that order; a search picks
        them), each built from its own graph read into memory once (one query per dataset:
        a page of collections is small)."""
        from catalogue.rdf.stac import dataset_collection

        out = []
        for dataset in datasets:
            graph = Graph()
            for triple in Graph(store=self.store, identifier=URIRef(dataset)):
                graph.add(triple)
            if (URIRef(dataset), ZARR.path, None) not in graph:
                raise NotFound(f"no dataset <{dataset}> in the catalogue")
            out.append(dataset_collection(graph, dataset, links))
        return out

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


def _no_internal(options: dict[str, Any]) -> None:
    """Refuse the harvest's internal keyword (the expansion's change token): passed by a
    caller, it would skip the check of whether the source changed."""
    if "seen_state" in options:
        raise TypeError("unexpected keyword argument 'seen_state' (set by the expansion of a source, not by callers)")


def _text(location: str | os.PathLike[str]) -> str:
    """A location as the layers below take it: a ``pathlib.Path`` is a local path."""
    return os.fspath(location)


def validate_store(
    source: str | os.PathLike[str], *, profile: str = DEFAULT_PROFILE, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
) -> Report:
    """Validate the hierarchy at ``source`` straight from the store, cataloguing nothing."""
    from catalogue.harvest import SourceReader
    from catalogue.validate import validate_hierarchy

    source = _text(source)
    reader = SourceReader(source, max_document_bytes=max_document_bytes)
    hierarchy = reader.load()
    report = validate_hierarchy(hierarchy, profile=profile, source=source)
    # reader.extents is guarded: an extraction failure is an extent.failed finding, not a crash
    report.findings = sorted([*report.findings, *reader.extents(hierarchy).findings], key=lambda f: f.sort_key())
    return report


def _query(dataset: Dataset, sparql: str, **kwargs: Any) -> Result:
    """``sparql`` on the union of all graphs; with ``FROM``/``FROM NAMED``, on the graphs
    they name among the catalogue's (rdflib on its own would fetch them from the web)."""
    init_ns = {**PREFIXES, **kwargs.pop("initNs", {})}
    if "FROM" in sparql.upper():  # cheap: the parse decides
        from rdflib.plugins.sparql.processor import prepareQuery

        from catalogue.graph.sparql.dataset import dataset_target

        parsed = prepareQuery(sparql, initNs=init_ns)
        if parsed.algebra.datasetClause:
            target, bare = dataset_target(dataset.store, parsed)  # type: ignore[arg-type]
            return target.query(bare, **kwargs)
    return dataset.query(sparql, initNs=init_ns, **kwargs)


def classify_error(exc: BaseException) -> CatalogueError | None:
    """The catalogue error ``exc`` is, or stands for, or ``None`` for anything unexpected.

    Catalogue errors are themselves (their class carries the exit code and category); a
    database driver's lock error (SQLite busy, PostgreSQL lock timeout, deadlock) becomes
    the :class:`~catalogue.errors.Busy` error that says which database and what to do.
    The CLI exits by it; anything else is a bug, shown with its traceback.
    """
    if isinstance(exc, CatalogueError):
        return exc
    return busy_error(exc)


def open(db: str | os.PathLike[str] | None = None) -> Catalogue:
    """Open (creating and migrating if needed) the catalogue database at ``db``.

    ``db`` is a SQLAlchemy URL (``sqlite:///file.db``, ``postgresql+psycopg://...``),
    a plain file path (a string or a ``pathlib.Path``), or None for ``$CATALOGUE_DB`` or ``./catalogue.db``.
    """
    return Catalogue(db)


def __getattr__(name: str) -> Any:
    """``HarvestReport`` and ``Report``, as before: the harvest and validation packages load
    when first asked for, not with every catalogue opened."""
    if name == "HarvestReport":
        from catalogue.harvest.run import HarvestReport

        return HarvestReport
    if name == "Report":
        from catalogue.validate.findings import Report

        return Report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Catalogue", "DocumentError", "HarvestReport", "Report", "classify_error", "open", "validate_store"]
