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
  are parsed in a forked child process (:func:`_parse_in_worker`), so that parsing
  the next batch overlaps with writing this one.  Other formats (Turtle, TriG,
  JSON-LD, RDF/XML, N3) are parsed by rdflib, whose triples are streamed into the
  same :class:`.ntriples.TermTable` through a minimal rdflib store.
* :class:`_Writer` maps local ids to store ids in large batches: terms the database
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
  Which ones depends on the parser (see :class:`_Writer`).  Planner statistics are
  refreshed at the end (:meth:`SQLStore.analyze`).

Blank nodes: labels are scoped to the document (:func:`blank_node_prefix`), so two
files never share a blank node by accident, while loading the same file again
(into the same graph) finds the blank nodes of the first load, which makes loads
idempotent.
"""

from __future__ import annotations

import base64
import bz2
import gc
import gzip
import hashlib
import lzma
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

import numpy as np
import rdflib
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID, Graph
from rdflib.namespace import RDF
from rdflib.store import Store
from rdflib.term import BNode, Node
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex, DropIndex, Index

from catalogue.errors import DocumentError, UsageError

from .ntriples import (
    EncodedTerm,
    NQuadsParser,
    NTriplesSyntaxError,
    Term,
    TermTable,
    iter_chunks,
)
from .schema import quads as quads_table
from .schema import terms as terms_table
from .store import SQLStore
from .terms import BLANK, COMPARABLE_DATATYPES, IRI, TermCollisionError, comparable_value, encode

__all__ = [
    "FORMATS",
    "LoadError",
    "LoadReport",
    "blank_node_prefix",
    "load_file",
    "load_quads",
    "resolve_format",
]

#: Format names accepted by ``--format`` -> the canonical name (rdflib's plugin name).
FORMATS: Final[dict[str, str]] = {
    "nt": "nt",
    "ntriples": "nt",
    "n-triples": "nt",
    "nt11": "nt",
    "nquads": "nquads",
    "nq": "nquads",
    "n-quads": "nquads",
    "turtle": "turtle",
    "ttl": "turtle",
    "trig": "trig",
    "json-ld": "json-ld",
    "jsonld": "json-ld",
    "xml": "xml",
    "rdf": "xml",
    "rdf/xml": "xml",
    "rdfxml": "xml",
    "owl": "xml",
    "n3": "n3",
}
_EXTENSIONS: Final = {
    ".nt": "nt",
    ".nq": "nquads",
    ".ttl": "turtle",
    ".trig": "trig",
    ".jsonld": "json-ld",
    ".json": "json-ld",
    ".rdf": "xml",
    ".xml": "xml",
    ".owl": "xml",
    ".n3": "n3",
}
_COMPRESSIONS: Final = (".gz", ".bz2", ".xz")

#: Quads collected before they are written (a batch): large enough that sorting and
#: the multi-row statements are efficient, small enough to bound memory.
BATCH_QUADS: Final = 1 << 18
#: N-Triples and N-Quads files at least this large are parsed in a separate process.
PARALLEL_MIN_BYTES: Final = 8 << 20
#: Loads expected to bring at least this many quads, into a ``quads`` table holding
#: at most :data:`REBUILD_RATIO` times as many, drop and rebuild the secondary indexes.
REBUILD_MIN_QUADS: Final = 50_000
REBUILD_RATIO: Final = 0.25
# Indexes a large load drops and rebuilds (see _Writer._decide_rebuild): all of them
# when parsing and writing take turns, the two whose inserts land at random places when
# the parser runs in its own process (see _Writer.__init__).
_REBUILT_ALL: Final = frozenset(
    {"ix_quads_spog", "ix_quads_posg", "ix_quads_ospg", "ix_terms_hash"}
)
_REBUILT_OVERLAPPED: Final = frozenset({"ix_quads_posg", "ix_quads_ospg"})
#: SQLite page cache during a load (KiB): the quad indexes of a few million quads fit.
SQLITE_LOAD_CACHE_KIB: Final = 512 * 1024
# Typical bytes per statement of formats rdflib parses, to estimate a file's size in
# statements (the estimate only decides whether to rebuild the indexes).
_BYTES_PER_STATEMENT: Final = {"turtle": 60, "trig": 60, "n3": 60, "json-ld": 120, "xml": 150}
# Compressed RDF is typically about this many times smaller.
_COMPRESSION_FACTOR: Final = 8

_RDF_TYPE: Final = str(RDF.type)


# --------------------------------------------------------------------- reports


@dataclass
class LoadReport:
    """What one load did."""

    path: str
    format: str
    #: The graph statements without a graph went to.
    graph: str
    #: Statements read from the file (duplicates included).
    triples: int = 0
    #: Quads that were not in the store before.
    quads: int = 0
    #: Terms that were not in the store before.
    terms: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        """Statements read per second."""
        return self.triples / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        return (
            f"loaded {self.triples:,} triples ({self.quads:,} new quads, {self.terms:,} new "
            f"terms) in {self.seconds:.1f} s: {self.rate:,.0f} triples/s"
        )


class LoadError(DocumentError):
    """A file that cannot be loaded: prints as ``<file>:<line>: <reason>``.

    ``line`` is ``None`` where the parser does not say (or the problem is not one
    line's, such as a term hash collision).
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        super().__init__(path if line is None else f"{path}:{line}", reason)


# --------------------------------------------------------------------- formats


def resolve_format(path: str | Path, format: str | None = None) -> tuple[str, str | None]:
    """``(format, compression suffix)`` of ``path``: from ``format`` or the extension.

    Raises :class:`~catalogue.errors.UsageError` (exit code 2) if the format is unknown
    or cannot be guessed.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = suffixes[-1] if suffixes and suffixes[-1] in _COMPRESSIONS else None
    if format is not None:
        canonical = FORMATS.get(format.lower())
        if canonical is None:
            known = ", ".join(sorted(set(FORMATS.values())))
            raise UsageError(f"unknown format {format!r}: use one of {known}")
        return canonical, compression
    if compression is not None:
        suffixes = suffixes[:-1]
    guessed = _EXTENSIONS.get(suffixes[-1]) if suffixes else None
    if guessed is None:
        raise UsageError(f"{path}: cannot tell the RDF format from the file name; use --format")
    return guessed, compression


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
    store: SQLStore,
    path: str | Path,
    *,
    format: str | None = None,
    graph: str | None = None,
    base: str | None = None,
    parallel: bool | None = None,
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

    The store's current transaction is committed with the load (anything written in
    it before is committed too), or rolled back if the load fails, which raises
    :class:`LoadError` for bad input (exit code 1) and
    :class:`~catalogue.errors.UsageError` for an unknown format or a missing file.
    """
    started = time.perf_counter()
    shown = str(path)
    path = Path(path)
    fmt, compression = resolve_format(path, format)
    if not path.is_file():
        raise UsageError(f"{shown}: no such file")
    default_graph = _graph_iri(graph)
    report = LoadReport(path=shown, format=fmt, graph=default_graph)
    prefix = blank_node_prefix(path, default_graph, base)
    writer: _Writer | None = None
    try:
        with _collecting_garbage_later():
            if fmt in ("nt", "nquads"):
                worker = _use_worker(path, parallel)
                writer = _Writer(store, overlapped=worker)
                _load_ntriples(
                    writer, path, compression, fmt, default_graph, prefix, worker, report
                )
            else:
                writer = _Writer(store)
                with _open_input(path, compression) as (_raw, stream):
                    size = path.stat().st_size * (_COMPRESSION_FACTOR if compression else 1)
                    base_iri = base or path.resolve().as_uri()
                    _load_with_rdflib(
                        writer, stream, fmt, default_graph, prefix, base_iri, size, report
                    )
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
    return report


def load_quads(
    store: SQLStore,
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
    writer: _Writer | None = None
    try:
        with _collecting_garbage_later():
            writer = _Writer(store)
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
                if len(out) >= 4 * BATCH_QUADS:
                    writer.write(_take_batch(table, report.triples * 2, report.triples))
                    out = table.quads
            writer.write(_take_batch(table, report.triples, report.triples))
            writer.finish()
            report.quads, report.terms = writer.quads_added, writer.terms_added
        store.commit()
    except BaseException:
        store.rollback()
        raise
    finally:
        if writer is not None:
            writer.restore_settings()
    report.seconds = time.perf_counter() - started
    return report


@contextmanager
def _open_input(path: Path, compression: str | None) -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The file and the stream of its (decompressed) bytes; the file's position
    tells how much of it has been consumed."""
    with open(path, "rb") as raw:
        if compression is None:
            yield raw, raw
            return
        opener: Callable[..., IO[bytes]] = {
            ".gz": gzip.open,
            ".bz2": bz2.open,
            ".xz": lzma.open,
        }[compression]
        with opener(raw, "rb") as stream:
            yield raw, stream


def _graph_iri(graph: str | None) -> str:
    if graph is None:
        return str(DATASET_DEFAULT_GRAPH_ID)
    from .ntriples import _SCHEME

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


# ------------------------------------------------------------- N-Triples, N-Quads


class _Batch(NamedTuple):
    """What a parser hands the writer: the terms first seen since the last batch (their
    local ids continue the previous batch's), quads of local ids (columns g, s, p, o),
    and estimates for the writer's decisions."""

    new_terms: list[EncodedTerm]
    quads: np.ndarray
    #: Local id of ``rdf:type`` if it was seen (its objects are classes).
    rdf_type: int | None
    #: Estimated statements in the whole input.
    expected_quads: int
    #: Statements parsed so far.
    statements: int


def _take_batch(table: TermTable, expected_quads: int, statements: int) -> _Batch:
    rdf_type = table.lookup((IRI, _RDF_TYPE, None, None))
    new_terms, flat = table.take()
    quads = np.array(flat, dtype=np.int64).reshape(-1, 4)
    return _Batch(new_terms, quads, rdf_type, max(expected_quads, statements), statements)


def _parse_batches(
    path: Path, compression: str | None, fmt: str, default_graph: str, prefix: str
) -> Iterator[_Batch]:
    """Parse an N-Triples or N-Quads file into batches (raises
    :class:`.ntriples.NTriplesSyntaxError`)."""
    size = path.stat().st_size
    table = TermTable()
    parser = NQuadsParser(
        table,
        quads=fmt == "nquads",
        default_graph=(IRI, default_graph, None, None),
        blank_prefix=prefix,
    )
    line = 1
    with _open_input(path, compression) as (raw, stream):
        for chunk in iter_chunks(stream):
            if line == 1 and chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]  # a UTF-8 byte order mark, as some tools write
            line += parser.parse_chunk(chunk, line)
            if table.pending_quads >= BATCH_QUADS:
                # The share of the file read so far tells how many statements to expect.
                expected = parser.statements * size // max(raw.tell(), 1)
                yield _take_batch(table, expected, parser.statements)
    yield _take_batch(table, parser.statements, parser.statements)


def _parse_in_worker(
    path: Path, compression: str | None, fmt: str, default_graph: str, prefix: str
) -> Iterator[_Batch]:
    """:func:`_parse_batches` in a child process, so that parsing the next batch
    overlaps with writing this one (and, on PostgreSQL, with the server's work).

    The child is forked: it starts at once and shares the parent's imported modules;
    it never touches the parent's database connections and ends with ``os._exit``, as
    every multiprocessing child does.  Closing this generator (also on an error of the
    caller) stops the child.
    """
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    worker = context.Process(
        target=_parse_worker,
        args=(sender, receiver, path, compression, fmt, default_graph, prefix),
        name="catalogue-load-parser",
        daemon=True,
    )
    worker.start()
    sender.close()
    try:
        while True:
            try:
                message = receiver.recv()
                if message[0] == "batch":
                    _kind, new_terms, rdf_type, expected, statements = message
                    data = receiver.recv_bytes()
                    quads = np.frombuffer(data, dtype=np.int64).reshape(-1, 4)
                    yield _Batch(new_terms, quads, rdf_type, expected, statements)
                    continue
            except EOFError:
                worker.join()
                raise RuntimeError(
                    f"the parser process ended unexpectedly (exit code {worker.exitcode})"
                ) from None
            if message[0] == "done":
                return
            if message[0] == "syntax":
                raise NTriplesSyntaxError(message[1], message[2])
            if message[0] == "collision":
                raise TermCollisionError(*message[1:])
            raise RuntimeError(f"the parser process failed:\n{message[1]}")
    finally:
        receiver.close()
        if worker.is_alive():
            worker.terminate()
        worker.join()


def _parse_worker(
    sender: Any, receiver: Any, path: Path, compression: str | None, fmt: str,
    default_graph: str, prefix: str,
) -> None:
    """Body of the parser process: batches, then ``done`` or what went wrong.

    The fork gave the child the pipe's reading end too: closed first, so that when the
    parent dies (even by SIGKILL) the child's next send fails and it ends, instead of
    waiting for ever for a reader that is itself.
    """
    receiver.close()
    try:
        for batch in _parse_batches(path, compression, fmt, default_graph, prefix):
            sender.send(
                ("batch", batch.new_terms, batch.rdf_type, batch.expected_quads, batch.statements)
            )
            sender.send_bytes(batch.quads.tobytes())
        sender.send(("done",))
    except NTriplesSyntaxError as exc:
        sender.send(("syntax", exc.line, exc.reason))
    except TermCollisionError as exc:
        sender.send(("collision", exc.term_hash, exc.stored, exc.new))
    except BaseException:
        sender.send(("error", traceback.format_exc()))
    finally:
        sender.close()


def _use_worker(path: Path, parallel: bool | None) -> bool:
    """Whether to parse in a child process: asked for, or by default for large files
    on machines with more than one CPU, where ``fork`` exists and is safe (a process
    with other threads could fork while one of them holds a lock the child needs)."""
    if parallel is not None:
        return parallel
    return (
        path.stat().st_size >= PARALLEL_MIN_BYTES
        and (os.cpu_count() or 1) > 1
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _load_ntriples(
    writer: _Writer,
    path: Path,
    compression: str | None,
    fmt: str,
    default_graph: str,
    prefix: str,
    worker: bool,
    report: LoadReport,
) -> None:
    parse = _parse_in_worker if worker else _parse_batches
    with closing(parse(path, compression, fmt, default_graph, prefix)) as batches:
        try:
            for batch in batches:
                writer.write(batch)
                report.triples = batch.statements
        except NTriplesSyntaxError as exc:
            raise LoadError(report.path, exc.line, exc.reason) from None


# ------------------------------------------------------------------ rdflib formats


class _Sink(Store):
    """The minimal rdflib store that rdflib's parsers write into: every statement goes
    straight to a :class:`TermTable` (and from there to the writer), nothing is kept.

    Prefix bindings of the file are ignored (the catalogue binds its own).
    """

    context_aware = True
    graph_aware = True
    # N3's parser insists; a formula (quoted graph) still fails in add().
    formula_aware = True
    transaction_aware = False

    def __init__(self, add: Callable[[Node, Node, Node, Node], None], default: Node) -> None:
        super().__init__()
        self._add = add
        self._default = default

    def add(self, triple: Any, context: Any, quoted: bool = False) -> None:
        if quoted:
            raise ValueError("N3 formulae (quoted graphs) cannot be stored in the catalogue")
        s, p, o = triple
        g = self._default if context is None else context.identifier
        self._add(s, p, o, g)

    def addN(self, quads: Iterable[Any]) -> None:
        for s, p, o, c in quads:
            self.add((s, p, o), c)

    def add_graph(self, graph: Any) -> None:
        pass

    def remove_graph(self, graph: Any) -> None:
        pass

    def remove(self, triple: Any, context: Any = None) -> None:
        pass

    def triples(self, triple_pattern: Any, context: Any = None) -> Iterator[Any]:
        return iter(())

    def __len__(self, context: Any = None) -> int:
        return 0

    def contexts(self, triple: Any = None) -> Iterator[Any]:
        return iter(())

    def bind(self, prefix: str, namespace: Any, override: bool = True) -> None:
        pass

    def namespace(self, prefix: str) -> None:
        return None

    def prefix(self, namespace: Any) -> None:
        return None

    def namespaces(self) -> Iterator[Any]:
        return iter(())


@contextmanager
def _exact_literals() -> Iterator[None]:
    """Make rdflib keep lexical forms as written while it parses.

    By default rdflib normalises typed literals (``"01"^^xsd:integer`` becomes ``"1"``);
    the catalogue stores exact lexical forms.  The switch is process-wide, so parsing
    in other threads at the same time would see it too.
    """
    saved = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        yield
    finally:
        rdflib.NORMALIZE_LITERALS = saved


def _load_with_rdflib(
    writer: _Writer,
    stream: IO[bytes],
    fmt: str,
    default_graph: str,
    prefix: str,
    base: str,
    size: int,
    report: LoadReport,
) -> None:
    from rdflib.parser import Parser, create_input_source
    from rdflib.plugin import get as get_plugin

    table = TermTable()
    ids: dict[Node, int] = {}
    intern = table.intern
    blank_count = 0
    expected = max(size // _BYTES_PER_STATEMENT.get(fmt, 100), 1)

    def local_id(node: Node) -> int:
        nonlocal blank_count
        if isinstance(node, BNode):
            blank_count += 1
            term: Term = (BLANK, f"{prefix}{blank_count}", None, None)
            term_h = None
        else:
            term_h, *content = encode(node)
            term = (content[0], content[1], content[2], content[3])
        local = ids[node] = intern(term, term_h)
        return local

    out = table.quads

    def add(s: Node, p: Node, o: Node, g: Node) -> None:
        nonlocal out
        row = []
        for node in (g, s, p, o):
            local = ids.get(node)
            row.append(local_id(node) if local is None else local)
        out.extend(row)
        report.triples += 1
        if len(out) >= 4 * BATCH_QUADS:
            try:
                writer.write(_take_batch(table, expected, report.triples))
            except Exception as exc:  # a database error, not the file's: see below
                raise _WriteFailed from exc
            out = table.quads

    target = rdflib.URIRef(default_graph)
    sink = Graph(store=_Sink(add, target), identifier=target)
    source = create_input_source(file=stream, publicID=base, format=fmt)
    parser = get_plugin(fmt, Parser)()
    try:
        with _exact_literals():
            parser.parse(source, sink)
    except _WriteFailed as failed:
        raise failed.__cause__ from None  # type: ignore[misc]
    except TermCollisionError:
        raise
    except Exception as exc:
        line, reason = _rdflib_error(exc)
        raise LoadError(report.path, line, reason) from exc
    writer.write(_take_batch(table, report.triples, report.triples))


class _WriteFailed(Exception):
    """Carries an error of the writer through rdflib's parser, so that it is not
    mistaken for (and reported as) a syntax error of the file."""


def _rdflib_error(exc: Exception) -> tuple[int | None, str]:
    """Line number (if known) and a one-line reason for an rdflib parser exception."""
    from xml.sax import SAXParseException

    if isinstance(exc, SAXParseException):
        return exc.getLineNumber(), exc.getMessage()
    lines = getattr(exc, "lines", None)  # rdflib.plugins.parsers.notation3.BadSyntax
    if isinstance(lines, int) and hasattr(exc, "_why"):
        return lines + 1, f"bad syntax: {exc._why}"
    lineno = getattr(exc, "lineno", None)  # json.JSONDecodeError
    if isinstance(lineno, int) and hasattr(exc, "msg"):
        return lineno, f"invalid JSON: {exc.msg}"
    message = str(exc).strip().splitlines()
    return None, f"{type(exc).__name__}: {message[0] if message else 'cannot parse'}"


# ------------------------------------------------------------------------ writer

# Binary COPY framing (PostgreSQL "COPY ... FORMAT BINARY"): signature, flags, header
# extension length; each row: field count, then length and value of each field.
_PG_COPY_HEADER: Final = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
_PG_COPY_TRAILER: Final = b"\xff\xff"


def _pg_binary_int8_rows(columns: list[np.ndarray]) -> bytes:
    """Binary COPY data for rows of BIGINT columns, built by numpy in one go."""
    fields: list[tuple[str, str]] = [("count", ">i2")]
    for i in range(len(columns)):
        fields += [(f"len{i}", ">i4"), (f"val{i}", ">i8")]
    records = np.empty(len(columns[0]), dtype=np.dtype(fields))
    records["count"] = len(columns)
    for i, column in enumerate(columns):
        records[f"len{i}"] = 8
        records[f"val{i}"] = column
    return _PG_COPY_HEADER + records.tobytes() + _PG_COPY_TRAILER


class _GrowingIds:
    """Local id -> store id, an int64 array that grows by doubling."""

    def __init__(self) -> None:
        self._data = np.empty(1024, dtype=np.int64)
        self.size = 0

    def extend(self, ids: np.ndarray) -> None:
        needed = self.size + len(ids)
        if needed > len(self._data):
            grown = np.empty(max(needed, 2 * len(self._data)), dtype=np.int64)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : needed] = ids
        self.size = needed

    @property
    def array(self) -> np.ndarray:
        return self._data[: self.size]


class _Writer:
    """Writes batches of a :class:`TermTable` into the store's transaction.

    It goes through the store's methods for bulk writers: ``begin_write`` (the write
    lock), ``write_datatypes`` (datatype ids, cached by the store),
    ``reserve_term_ids`` (SQLite term numbering) and ``note_ids_written`` (so that a
    rollback makes the store forget ids of this transaction).
    """

    def __init__(self, store: SQLStore, *, overlapped: bool = False) -> None:
        """``overlapped``: batches come from a parser in another process, so the
        writer has time to spare while the next batch is parsed.  Then a large load
        keeps the indexes whose inserts are cheap appends for new terms (sequential
        ids: ``ix_quads_spog``; ``ix_terms_hash`` is random but only per new term) and
        maintains them while it waits, instead of rebuilding them in the serial tail.
        """
        self.store = store
        self._rebuilt = _REBUILT_OVERLAPPED if overlapped else _REBUILT_ALL
        # The write lock (see SQLStore._begin_write): our term numbering (SQLite) and
        # the terms our quads are about to use (both) rely on being the only writer.
        self.conn: Connection = store.begin_write()
        self.dialect = self.conn.dialect.name
        self.sqlite = self.dialect == "sqlite"
        self.raw: Any = self.conn.connection.driver_connection
        self.cursor: Any = self.raw.cursor()
        self.local_ids = _GrowingIds()
        self.quads_added = 0
        self.terms_added = 0
        self._graphs: set[int] = set()
        self._decided = False
        self._dropped: list[Index] = []
        self._temp_tables: set[str] = set()
        self._saved_pragmas: dict[str, Any] = {}
        self._copy_quads = True  # PostgreSQL: COPY straight into quads (see _pg_copy)
        self._pg_sequence: str | None = None  # PostgreSQL: the sequence of term ids
        # Whether terms new to this load may be stored already.  Not if the terms table
        # is empty on SQLite: nobody else can write until we commit.  (PostgreSQL's
        # concurrent writers can, unless a large load locks them out: _decide_rebuild.)
        self._lookup = not self.sqlite or self._scalar("SELECT 1 FROM terms LIMIT 1") is not None
        if self.sqlite:
            import sqlite3

            self._max_params = self.raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
            self._set_pragma("cache_size", -SQLITE_LOAD_CACHE_KIB)

    # -------------------------------------------------------------- helpers

    def _scalar(self, sql: str, params: Any = ()) -> Any:
        self.cursor.execute(sql, params)
        row = self.cursor.fetchone()
        return None if row is None else row[0]

    def _set_pragma(self, name: str, value: int) -> None:
        """Set a SQLite connection setting for the load; :meth:`restore_settings`
        puts the previous value back."""
        if name not in self._saved_pragmas:
            self._saved_pragmas[name] = self._scalar(f"PRAGMA {name}")
        self.cursor.execute(f"PRAGMA {name} = {int(value)}")

    def restore_settings(self) -> None:
        """Undo the connection settings of the load (after commit or rollback)."""
        for name, value in self._saved_pragmas.items():
            with suppress(Exception):
                self.raw.execute(f"PRAGMA {name} = {int(value)}")
        self._saved_pragmas.clear()

    def _temp_table(self, name: str, columns: str) -> None:
        if name in self._temp_tables:
            return
        if self.sqlite:
            self.cursor.execute(f"CREATE TEMP TABLE {name} ({columns})")
        else:
            self.cursor.execute(f"CREATE TEMP TABLE {name} ({columns}) ON COMMIT DROP")
        self._temp_tables.add(name)

    def _sqlite_insert(self, head: str, width: int, values: list[Any], tail: str = "") -> int:
        """Insert rows of ``width`` columns, given as one flat list of ``values``, with
        multi-row ``VALUES`` statements; return the number of rows inserted.

        Binding a few thousand rows per statement in one call is two to three times
        faster than ``executemany`` row by row.
        """
        per_statement = max(self._max_params // width, 1) * width
        placeholder = "(" + ",".join("?" * width) + ")"
        inserted = 0
        full_sql = None
        for start in range(0, len(values), per_statement):
            chunk = values[start : start + per_statement]
            if len(chunk) == per_statement:
                if full_sql is None:
                    full_sql = (
                        f"{head} VALUES {','.join([placeholder] * (per_statement // width))} {tail}"
                    )
                sql = full_sql
            else:
                sql = f"{head} VALUES {','.join([placeholder] * (len(chunk) // width))} {tail}"
            self.cursor.execute(sql, chunk)
            inserted += max(self.cursor.rowcount, 0)
        return inserted

    # --------------------------------------------------------------- batches

    def write(self, batch: _Batch) -> None:
        """Store a batch: its new terms, then its quads.

        The first batch's ``expected_quads`` (the whole load's, estimated) decides
        whether to rebuild indexes (see :meth:`_decide_rebuild`).
        """
        if not self._decided:
            self._decide_rebuild(batch.expected_quads)
        self._map_terms(batch.new_terms, batch.quads, batch.rdf_type)
        if len(batch.quads):
            self._write_quads(self.local_ids.array[batch.quads])

    def _decide_rebuild(self, expected_quads: int) -> None:
        """Drop the secondary quad indexes if rebuilding them will be cheaper (SQLite only).

        Keeping an index costs a b-tree insert at a random place per new quad;
        rebuilding costs one sort of the whole table.  Measured (see ``bench/load.py``),
        the rebuild wins while the table holds fewer quads than the load brings.  A
        load into an empty ``terms`` table also rebuilds ``ix_terms_hash``: nothing is
        looked up by hash then, and the load's terms are distinct.
        """
        self._decided = True
        if expected_quads < REBUILD_MIN_QUADS:
            return
        limit = int(expected_quads * REBUILD_RATIO) + 1
        existing = self._scalar(f"SELECT count(*) FROM (SELECT 1 FROM quads LIMIT {limit}) AS q")
        terms_empty = self._scalar("SELECT 1 FROM terms LIMIT 1") is None
        if not self.sqlite:
            # No index is dropped on PostgreSQL: DROP INDEX locks the table against
            # readers until the load commits, and readers must never wait. The write
            # lock (SQLStore._begin_write) keeps other writers out, so terms that were
            # absent stay absent: nothing needs to be looked up.
            self._lookup = not terms_empty
            return
        drop_hash = terms_empty and "ix_terms_hash" in self._rebuilt
        if existing < limit:
            self._dropped += [ix for ix in quads_table.indexes if ix.name in self._rebuilt]
        if terms_empty:
            self._lookup = False
            if drop_hash:
                self._dropped += terms_table.indexes
        for index in self._dropped:
            self.conn.execute(DropIndex(index))

    def finish(self) -> None:
        """Rebuild dropped indexes, drop temporary tables, refresh statistics."""
        if self._dropped:
            for index in sorted(self._dropped, key=lambda ix: ix.name):
                self.conn.execute(CreateIndex(index))
            self._dropped = []
        if self.sqlite:
            for name in self._temp_tables:
                self.cursor.execute(f"DROP TABLE temp.{name}")
        self._temp_tables.clear()
        if self.quads_added:
            # A full ANALYZE: SQLite's sampled one (PRAGMA analysis_limit) reads the first
            # entries of each index only, and took predicates for 16 times as selective
            # as they are in the benchmark data.
            self.store.analyze()

    # ----------------------------------------------------------------- terms

    def _map_terms(
        self, new_terms: list[EncodedTerm], local_quads: np.ndarray, rdf_type: int | None
    ) -> None:
        """Give the batch's new local ids their store ids, inserting the new terms."""
        count = len(new_terms)
        if not count:
            return
        first_local = self.local_ids.size
        store_ids = np.full(count, -1, dtype=np.int64)
        if self._lookup:
            for index, term_id in self._existing_terms(new_terms).items():
                store_ids[index] = term_id
        missing = np.flatnonzero(store_ids < 0)
        if len(missing):
            # Number new terms predicates first, then classes, then graph names, then
            # the rest (as SQLStore._add_quads does): the terms repeated in most quads
            # get the smallest ids, which SQLite stores in one or two bytes.  Within a
            # rank, terms with a datatype or language come last, so that SQLite can
            # insert the others with fewer columns (see _sqlite_insert_terms).
            base = np.full(count, 3, dtype=np.int8)
            columns = local_quads - first_local
            graphs, predicates = columns[:, 0], columns[:, 2]
            base[graphs[graphs >= 0]] = 2
            if rdf_type is not None:
                classes = columns[:, 3][local_quads[:, 2] == rdf_type]
                base[classes[classes >= 0]] = 1
            base[predicates[predicates >= 0]] = 0  # later assignments are smaller
            typed = np.fromiter(
                (term[3] is not None or term[4] is not None for term in new_terms),
                dtype=np.int8,
                count=count,
            )
            rank = 2 * base + typed
            order = missing[np.argsort(rank[missing], kind="stable")]
            ids = self._reserve_ids(len(order))
            store_ids[order] = ids
            for index, term_id in self._insert_terms(new_terms, order, ids).items():
                store_ids[index] = term_id
        self.local_ids.extend(store_ids)

    def _existing_terms(self, new_terms: list[EncodedTerm]) -> dict[int, int]:
        """Index in ``new_terms`` -> id, for the terms the store already holds.

        The batch's hashes go into a temporary table that is joined to ``terms``: one
        statement instead of hundreds of ``IN`` lists.  Stored content is compared, so
        a different term under the same hash raises :class:`TermCollisionError`.
        """
        index_of = {term[0]: i for i, term in enumerate(new_terms)}
        if self.sqlite:
            self._temp_table("bulk_hashes", "hash INTEGER PRIMARY KEY")
            # In key order, the temporary b-tree is built by appends.
            self._sqlite_insert("INSERT INTO temp.bulk_hashes (hash)", 1, sorted(index_of))
            table = "temp.bulk_hashes"
        else:
            self._temp_table("bulk_hashes", "hash bigint")
            hashes = np.fromiter(index_of, dtype=np.int64, count=len(index_of))
            with self.cursor.copy("COPY bulk_hashes (hash) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(_pg_binary_int8_rows([hashes]))
            table = "bulk_hashes"
        self.cursor.execute(
            "SELECT t.hash, t.id, t.kind, t.value, t.datatype, t.lang "
            f"FROM {table} AS h JOIN terms AS t ON t.hash = h.hash"
        )
        rows = self.cursor.fetchall()
        self.cursor.execute(f"DELETE FROM {table}")
        found: dict[int, int] = {}
        for term_h, term_id, kind, value, dt_id, lang in rows:
            index = index_of[term_h]
            self._check_same(term_h, (kind, value, dt_id, lang), new_terms[index])
            found[index] = term_id
        return found

    def _check_same(self, term_h: int, stored: tuple, term: EncodedTerm) -> None:
        """Raise :class:`TermCollisionError` unless a stored row (datatype as id) holds
        ``term``."""
        kind, value, dt_id, lang = stored
        content = (kind, value, None if dt_id is None else self.store.datatype_iri(dt_id), lang)
        wanted = term[1:]
        if not _same_content(content, wanted):
            raise TermCollisionError(term_h, content, wanted)

    def _reserve_ids(self, count: int) -> np.ndarray:
        """``count`` new term ids, ascending."""
        if self.sqlite:
            # SQLite: the store numbers terms itself while it holds the write lock.
            first = self.store.reserve_term_ids(count)
            return np.arange(first, first + count, dtype=np.int64)
        if self._pg_sequence is None:
            self._pg_sequence = self._scalar("SELECT pg_get_serial_sequence('terms', 'id')")
        # One statement takes all ids; unless concurrent writers took some in between,
        # they are consecutive, and only their range needs to come back.
        self.cursor.execute(
            "SELECT min(id), max(id) FROM "
            "(SELECT nextval(%s::regclass) AS id FROM generate_series(1, %s)) AS ids",
            (self._pg_sequence, count),
        )
        low, high = self.cursor.fetchone()
        if high - low + 1 == count:
            return np.arange(low, high + 1, dtype=np.int64)
        self.cursor.execute(
            "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", (self._pg_sequence, count)
        )
        return np.sort(np.array([row[0] for row in self.cursor.fetchall()], dtype=np.int64))

    def _insert_terms(
        self, new_terms: list[EncodedTerm], order: np.ndarray, ids: np.ndarray
    ) -> dict[int, int]:
        """Insert ``new_terms[order]`` with ``ids``; return index -> id for any term
        that turned out to be stored already (PostgreSQL: by a concurrent load)."""
        selected = [new_terms[i] for i in order.tolist()]
        hashes, kinds, values, datatypes, langs = zip(*selected, strict=True)
        dt_ids: dict[str | None, int | None] = {None: None}
        iris = {dt for dt in datatypes if dt is not None}
        if iris:
            dt_ids.update(self.store.write_datatypes(iris))
        nums = [
            comparable_value(value, dt) if dt in COMPARABLE_DATATYPES else None
            for value, dt in zip(values, datatypes, strict=True)
        ]
        self.store.note_ids_written()
        dts = list(map(dt_ids.__getitem__, datatypes))
        if self.sqlite:
            self._sqlite_insert_terms(int(ids[0]), hashes, kinds, values, dts, langs, nums)
            fixes: dict[int, int] = {}
        else:
            rows = list(zip(ids.tolist(), hashes, kinds, values, dts, langs, nums, strict=True))
            fixes = self._pg_insert_terms(rows, new_terms, order)
        self.terms_added += len(selected) - len(fixes)
        return fixes

    def _sqlite_insert_terms(
        self,
        first_id: int,
        hashes: tuple[int, ...],
        kinds: tuple[int, ...],
        values: tuple[str, ...],
        dts: list[int | None],
        langs: tuple[str | None, ...],
        nums: list[float | None],
    ) -> None:
        """Insert terms numbered ``first_id, first_id + 1, ...``, in that order.

        The ids are left to ``AUTOINCREMENT``, which hands out exactly these numbers
        while we hold the write lock (checked after every statement), and the rows
        without datatype and language (most of them, all sorted first within their rank
        by :meth:`_map_terms`) leave out the three columns that are NULL for them:
        binding values is most of the cost of an insert.
        """
        split = 0
        # Rows with a datatype or language form runs after the plain ones of each rank;
        # insert maximal runs of each shape, in id order.
        count = len(hashes)
        next_id = first_id
        while split < count:
            plain = dts[split] is None and langs[split] is None
            end = split
            while end < count and (dts[end] is None and langs[end] is None) == plain:
                end += 1
            if plain:
                flat = list(
                    chain.from_iterable(
                        zip(hashes[split:end], kinds[split:end], values[split:end], strict=True)
                    )
                )
                self._sqlite_insert("INSERT INTO terms (hash, kind, value)", 3, flat)
            else:
                flat = list(
                    chain.from_iterable(
                        zip(
                            hashes[split:end],
                            kinds[split:end],
                            values[split:end],
                            dts[split:end],
                            langs[split:end],
                            nums[split:end],
                            strict=True,
                        )
                    )
                )
                self._sqlite_insert(
                    "INSERT INTO terms (hash, kind, value, datatype, lang, num)", 6, flat
                )
            next_id += end - split
            if self.cursor.lastrowid != next_id - 1:  # pragma: no cover - needs a bug
                raise RuntimeError(
                    f"term ids out of step: expected {next_id - 1}, got {self.cursor.lastrowid}"
                )
            split = end

    def _pg_copy(self, statement: str, write: Callable[[Any], None]) -> bool:
        """Run a ``COPY ... FROM STDIN`` straight into a table, inside a savepoint;
        ``False`` (and nothing written) if a row violated a unique index.

        Straight into the table is two to three times faster than through a temporary
        table and ``INSERT ... ON CONFLICT``, and a conflict is rare: new terms were
        looked up first (a conflict means a concurrent load stored one meanwhile), and
        a file rarely repeats quads across batches or holds stored ones.
        """
        from psycopg.errors import UniqueViolation

        self.cursor.execute("SAVEPOINT bulk_copy")
        try:
            with self.cursor.copy(statement) as copy:
                write(copy)
        except UniqueViolation:
            self.cursor.execute("ROLLBACK TO SAVEPOINT bulk_copy")
            return False
        self.cursor.execute("RELEASE SAVEPOINT bulk_copy")
        return True

    def _pg_insert_terms(
        self, rows: list[tuple], new_terms: list[EncodedTerm], order: np.ndarray
    ) -> dict[int, int]:
        """COPY new terms into ``terms``; if another transaction stored one of them
        meanwhile, go through a temporary table and ``ON CONFLICT DO NOTHING`` instead,
        and let the quads use the other transaction's id."""
        columns = "id, hash, kind, value, datatype, lang, num"

        def write_rows(copy: Any) -> None:
            for row in rows:
                copy.write_row(row)

        if self._pg_copy(f"COPY terms ({columns}) FROM STDIN", write_rows):
            return {}
        self._temp_table(
            "bulk_terms",
            "id bigint, hash bigint, kind smallint, value text, datatype integer, lang text, "
            "num double precision",
        )
        with self.cursor.copy(f"COPY bulk_terms ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        self.cursor.execute(
            f"INSERT INTO terms ({columns}) SELECT {columns} FROM bulk_terms "
            "ON CONFLICT (hash) DO NOTHING"
        )
        fixes: dict[int, int] = {}
        if self.cursor.rowcount != len(rows):
            self.cursor.execute(
                "SELECT t.hash, t.id, t.kind, t.value, t.datatype, t.lang "
                "FROM bulk_terms AS b JOIN terms AS t ON t.hash = b.hash AND t.id <> b.id"
            )
            index_of = {new_terms[i][0]: i for i in order.tolist()}
            for term_h, theirs, *stored in self.cursor.fetchall():
                self._check_same(term_h, tuple(stored), new_terms[index_of[term_h]])
                fixes[index_of[term_h]] = theirs
        self.cursor.execute("TRUNCATE bulk_terms")
        return fixes

    # ----------------------------------------------------------------- quads

    def _write_quads(self, rows: np.ndarray) -> None:
        """Insert store-id quads (columns g, s, p, o), sorted and without duplicates."""
        order = np.lexsort((rows[:, 3], rows[:, 2], rows[:, 1], rows[:, 0]))
        rows = rows[order]
        if len(rows) > 1:
            keep = np.empty(len(rows), dtype=bool)
            keep[0] = True
            np.any(rows[1:] != rows[:-1], axis=1, out=keep[1:])
            rows = rows[keep]
        graphs = [g for g in np.unique(rows[:, 0]).tolist() if g not in self._graphs]
        if self.sqlite:
            if graphs:
                self._sqlite_insert("INSERT INTO graphs (id)", 1, graphs, "ON CONFLICT DO NOTHING")
            self.quads_added += self._sqlite_insert(
                "INSERT INTO quads (g, s, p, o)", 4, rows.ravel().tolist(), "ON CONFLICT DO NOTHING"
            )
        else:
            if graphs:
                self.cursor.execute(
                    "INSERT INTO graphs (id) SELECT unnest(%s::bigint[]) ON CONFLICT DO NOTHING",
                    (graphs,),
                )
            data = _pg_binary_int8_rows([rows[:, i] for i in range(4)])
            copy_into = "COPY {} (g, s, p, o) FROM STDIN (FORMAT BINARY)"
            if self._copy_quads and self._pg_copy(
                copy_into.format("quads"), lambda copy: copy.write(data)
            ):
                self.quads_added += len(rows)
            else:
                # Some quads are stored already: from now on, skip those that are.
                self._copy_quads = False
                self._temp_table("bulk_quads", "g bigint, s bigint, p bigint, o bigint")
                with self.cursor.copy(copy_into.format("bulk_quads")) as copy:
                    copy.write(data)
                self.cursor.execute(
                    "INSERT INTO quads (g, s, p, o) SELECT g, s, p, o FROM bulk_quads "
                    "ON CONFLICT DO NOTHING"
                )
                self.quads_added += max(self.cursor.rowcount, 0)
                self.cursor.execute("TRUNCATE bulk_quads")
        self._graphs.update(graphs)


def _same_content(a: tuple, b: tuple) -> bool:
    """Term content equality as the hash sees it (language tags ignore case)."""
    return a[:3] == b[:3] and (a[3] or "").lower() == (b[3] or "").lower()
