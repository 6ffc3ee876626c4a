"""Bulk loading of RDF files into a :class:`~catalogue.graph.store.SQLStore`.

``catalogue load FILE`` (and :meth:`catalogue.api.Catalogue.load`) end here.  A load is
one transaction: it either adds every statement of the file or, on any error (a bad
line half-way, a term hash collision, an interrupt), leaves the database exactly as it
was.

Why a separate path from :meth:`SQLStore.addN`: ``addN`` turns every statement into
rdflib terms, encodes them one by one and asks the database which terms exist, batch
after batch.  For a file of a million statements that is minutes; this module gets
the same rows into the same tables in seconds:

* N-Triples and N-Quads are read by :mod:`.ntriples`, which never builds rdflib
  objects: raw tokens are looked up in dictionaries, each distinct term is decoded
  and hashed once, and statements become rows of four *local* term ids.  Large files
  are parsed in a forked child process (:func:`.batches.parse_in_worker`), so that parsing
  the next batch overlaps with writing this one.  Other formats (Turtle, TriG,
  JSON-LD, RDF/XML, N3) are parsed by rdflib, whose triples are streamed into the
  same :class:`.ntriples.TermTable` through a minimal rdflib store (:mod:`.rdflib_input`).
* :class:`.writer.Writer` maps local ids to store ids in large batches: terms the database
  may already hold are found by hash with one join against a temporary table, new
  terms get their ids in Python (SQLite: the transaction holds the write lock, so the
  next ids are ours; PostgreSQL: reserved from the sequence in bulk), and rows go in
  with multi-row ``INSERT`` statements (SQLite) or binary ``COPY`` straight into the
  tables (PostgreSQL; through a temporary table and ``ON CONFLICT DO NOTHING`` once
  a conflict shows up).  Quads are sorted and de-duplicated with numpy and inserted
  in primary-key order.
* A large load into an empty or small ``quads`` table drops secondary indexes first
  and builds them again at the end (inside the transaction): one sort is cheaper than
  inserting every row into a b-tree at a random place, and gives packed indexes.
  Which ones depends on the parser (see :class:`.writer.Writer`).  Planner statistics are
  refreshed at the end (:meth:`SQLStore.analyze`).

Blank nodes: labels are scoped to the document (:func:`blank_node_prefix`), so two
files never share a blank node by accident, while loading the same file again
(into the same graph) finds the blank nodes of the first load, which makes loads
idempotent.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Final, Protocol

from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.term import Node, URIRef

from catalogue.errors import UsageError
from catalogue.rdf.formats import parse_rdf_format, rdf_format_for_extension

from ..terms import IRI, TermCollisionError
from .batches import batch_full, open_input, parse_batches, parse_in_worker, take_batch, use_worker
from .ntriples import _SCHEME, NTriplesSyntaxError, Term, TermTable
from .rdflib_input import load_with_rdflib
from .report import LoadError, LoadReport
from .writer import Writer, WriteTarget

__all__ = [
    "LoadTarget",
    "blank_node_prefix",
    "load_file",
    "load_quads",
    "resolve_format",
]

_COMPRESSIONS: Final = (".gz", ".bz2", ".xz")

# Compressed RDF is typically about this many times smaller.
_COMPRESSION_FACTOR: Final = 8


class LoadTarget(WriteTarget, Protocol):
    """The store a load writes into: the bulk writer's methods, and the transaction
    the load commits or rolls back (:class:`~catalogue.graph.store.SQLStore`)."""

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def vacuum(self, tables: tuple[str, ...] | None = None) -> None: ...

    def has_graph(self, graph_id: Node) -> bool: ...

    def remove_graph(self, graph: Any) -> None: ...

    def add_graph(self, graph: Any) -> None: ...


#: Quads a load adds from which the store is vacuumed after the commit (:meth:`SQLStore.vacuum`).
VACUUM_AFTER: Final = 10_000


# --------------------------------------------------------------------- formats


def resolve_format(path: str | Path, format: str | None = None) -> tuple[str, str | None]:
    """``(format, compression suffix)`` of ``path``: from ``format`` or the extension.

    Raises :class:`~catalogue.errors.UsageError` (exit code 2) if the format is unknown
    or cannot be guessed.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = suffixes[-1] if suffixes and suffixes[-1] in _COMPRESSIONS else None
    if format is not None:
        return parse_rdf_format(format).name, compression
    if compression is not None:
        suffixes = suffixes[:-1]
    guessed = rdf_format_for_extension(suffixes[-1]) if suffixes else None
    if guessed is None:
        raise UsageError(f"{path}: cannot tell the RDF format from the file name; use --format")
    return guessed.name, compression


def blank_node_prefix(path: str | Path, graph: str, base: str | None = None) -> str:
    """The prefix that scopes the blank node labels of one load of ``path``.

    Made from a SHA-256 of the file's bytes (as stored, compressed or not), the target
    graph and the base IRI: the same file loaded the same way gets the same blank
    nodes (so a second load adds nothing), anything else gets different ones, as RDF
    wants (blank node labels are local to their document).  Twelve base-32 characters
    (60 bits) keep the stored labels short.
    """
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as raw:
        buffer = bytearray(1 << 20)
        view = memoryview(buffer)
        while n := raw.readinto(buffer):
            digest.update(view[:n])
    digest.update(b"\0" + graph.encode() + b"\0" + (base or "").encode())
    return base64.b32encode(digest.digest()).decode("ascii")[:12].lower() + "_"


# ---------------------------------------------------------------------- entry points


def load_file(
    store: LoadTarget,
    path: str | Path,
    *,
    format: str | None = None,
    graph: str | None = None,
    base: str | None = None,
    parallel: bool | None = None,
    replace: bool = False,
    name: str | None = None,
) -> LoadReport:
    """Load an RDF file into ``store`` in one transaction, and commit.

    ``format`` defaults to a guess from the extension (``.nt``, ``.nq``, ``.ttl``,
    ``.trig``, ``.jsonld``/``.json``, ``.rdf``/``.xml``/``.owl``, ``.n3``, each also
    compressed as ``.gz``, ``.bz2`` or ``.xz``).  ``graph`` is the IRI of the graph that
    statements without a graph go into (all of a triple format's, the default graph's
    of a quad format); by default the dataset's default graph
    (:data:`rdflib.graph.DATASET_DEFAULT_GRAPH_ID`).  ``base`` resolves relative IRIs
    (Turtle, TriG, JSON-LD, RDF/XML, N3; default: the file's URL).  ``parallel``
    parses N-Triples and N-Quads in a separate process while this one writes (by
    default for files of :data:`PARALLEL_MIN_BYTES` or more on machines with more than
    one CPU, where ``fork`` exists).

    ``replace``: the file (of a triple format) *replaces* the content of ``graph``, in
    the same transaction (the Graph Store Protocol's PUT); ``report.created`` says
    whether the graph is new. ``name`` is how messages name the file (default: its path).

    The store's current transaction is committed with the load (anything written in
    it before is committed too), or rolled back if the load fails, which raises
    :class:`LoadError` for bad input (exit code 1) and
    :class:`~catalogue.errors.UsageError` for an unknown format or a missing file.
    """
    started = time.perf_counter()
    shown = name or str(path)
    path = Path(path)
    fmt, compression = resolve_format(path, format)
    if not path.is_file():
        raise UsageError(f"{shown}: no such file")
    if replace and parse_rdf_format(fmt).quads:
        raise UsageError(f"{shown}: replacing a graph takes a triple format (Turtle, N-Triples, RDF/XML, N3), "
                         f"not {fmt}, whose statements may name other graphs")
    default_graph = _graph_iri(graph)
    report = LoadReport(path=shown, format=fmt, graph=default_graph)
    prefix = blank_node_prefix(path, default_graph, base)
    with _load_transaction(store, report, shown, started) as new_writer:
        report.created = not store.has_graph(URIRef(default_graph))
        if replace and not report.created:
            store.remove_graph(URIRef(default_graph))
        if fmt in ("nt", "nquads"):
            worker = use_worker(path, parallel)
            writer = new_writer(overlapped=worker)
            _load_ntriples(writer, path, compression, fmt, default_graph, prefix, worker, report)
        else:
            writer = new_writer()
            with open_input(path, compression) as (_raw, stream):
                size = path.stat().st_size * (_COMPRESSION_FACTOR if compression else 1)
                base_iri = base or path.resolve().as_uri()
                load_with_rdflib(writer, stream, fmt, default_graph, prefix, base_iri, size, report)
        if graph is not None and not report.triples:  # a named graph exists after its load, even an empty one
            store.add_graph(URIRef(default_graph))
    return report


def load_quads(
    store: LoadTarget,
    quads: Iterable[tuple[Term, Term, Term, Term | None]],
    *,
    graph: str | None = None,
) -> LoadReport:
    """Load ``(s, p, o, g)`` term tuples (``(kind, value, datatype, lang)`` each, ``g``
    ``None`` for ``graph``/the default graph) with the bulk writer, and commit.

    The shared writer of :func:`load_file`, for callers that produce terms themselves.
    Blank node values are stored as given.  Same transaction semantics as
    :func:`load_file`.
    """
    started = time.perf_counter()
    default_graph = _graph_iri(graph)
    report = LoadReport(path="<quads>", format="quads", graph=default_graph)
    table = TermTable()
    default = table.intern((IRI, default_graph, None, None))
    ids: dict[Term, int] = {}
    with _load_transaction(store, report, "<quads>", started) as new_writer:
        writer = new_writer()
        out = table.quads
        for s, p, o, g in quads:
            row = []
            for term in (g, s, p, o):
                if term is None:
                    row.append(default)
                    continue
                local = ids.get(term)
                if local is None:
                    local = ids[term] = table.intern(term)
                row.append(local)
            out.extend(row)
            report.triples += 1
            if batch_full(out):
                writer.write(take_batch(table, report.triples * 2, report.triples))
                out = table.quads
        writer.write(take_batch(table, report.triples, report.triples))
    return report


@contextmanager
def _load_transaction(
    store: LoadTarget, report: LoadReport, shown: str, started: float
) -> Iterator[Callable[..., Writer]]:
    """One load, committed whole or not at all.

    Yields the factory of the load's writer; when the body ends the writer is finished
    (its counts go to ``report``) and the store commits.  Any failure rolls back (a term
    hash collision as a :class:`LoadError` naming ``shown``), and the writer's database
    settings are restored either way.
    """
    writer: Writer | None = None

    def new_writer(**options: bool) -> Writer:
        nonlocal writer
        writer = Writer(store, **options)
        return writer

    try:
        with _collecting_garbage_later():
            yield new_writer
            if writer is not None:
                writer.finish()
                report.quads, report.terms = writer.quads_added, writer.terms_added
        store.commit()
    except TermCollisionError as exc:
        store.rollback()
        raise LoadError(shown, None, str(exc)) from exc
    except BaseException:
        store.rollback()
        raise
    finally:
        if writer is not None:
            writer.restore_settings()
    report.seconds = time.perf_counter() - started
    if report.quads >= VACUUM_AFTER:  # committed: best effort (SQLStore.vacuum)
        store.vacuum()


def _graph_iri(graph: str | None) -> str:
    if graph is None:
        return str(DATASET_DEFAULT_GRAPH_ID)
    if _SCHEME.match(graph) is None or any(c in graph for c in ' <>"{}|^`\\'):
        raise UsageError(f"--graph must be an absolute IRI, not {graph!r}")
    return graph


@contextmanager
def _collecting_garbage_later() -> Iterator[None]:
    """Pause the cyclic garbage collector during a load.

    Parsing allocates millions of short-lived lists and tuples; each allocation burst
    triggers a collection that walks every live container (including the ever-growing
    term dictionaries), which costs a quarter of the run time and frees nothing
    (none of these objects form cycles).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_ntriples(
    writer: Writer,
    path: Path,
    compression: str | None,
    fmt: str,
    default_graph: str,
    prefix: str,
    worker: bool,
    report: LoadReport,
) -> None:
    parse = parse_in_worker if worker else parse_batches
    with closing(parse(path, compression, fmt, default_graph, prefix)) as batches:
        try:
            for batch in batches:
                writer.write(batch)
                report.triples = batch.statements
        except NTriplesSyntaxError as exc:
            raise LoadError(report.path, exc.line, exc.reason) from None
