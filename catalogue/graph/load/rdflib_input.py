"""RDF formats rdflib parses (Turtle, TriG, JSON-LD, RDF/XML, N3), streamed into the bulk writer.

rdflib's parsers write into a store; :class:`_Sink` is the minimal one that passes
every statement on to a :class:`.ntriples.TermTable` (and from there, batch by batch,
to the writer) and keeps nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, Final, Protocol

import rdflib
from rdflib.graph import Graph
from rdflib.store import Store
from rdflib.term import BNode, Node

from ..terms import BLANK, TermCollisionError, encode
from .batches import Batch, batch_full, take_batch
from .ntriples import Term, TermTable
from .report import LoadError, LoadReport

__all__ = ["BatchWriter", "exact_literals", "load_with_rdflib"]

# Typical bytes per statement of formats rdflib parses, to estimate a file's size in
# statements (the estimate only decides whether to rebuild the indexes).
_BYTES_PER_STATEMENT: Final = {"turtle": 60, "trig": 60, "n3": 60, "json-ld": 120, "xml": 150}


class BatchWriter(Protocol):
    """Where parsed batches go (:class:`.writer.Writer`)."""

    def write(self, batch: Batch) -> None: ...


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
def exact_literals() -> Iterator[None]:
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


def load_with_rdflib(
    writer: BatchWriter,
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
        if batch_full(out):
            try:
                writer.write(take_batch(table, expected, report.triples))
            except Exception as exc:  # a database error, not the file's: see below
                raise _WriteFailed from exc
            out = table.quads

    target = rdflib.URIRef(default_graph)
    sink = Graph(store=_Sink(add, target), identifier=target)
    source = create_input_source(file=stream, publicID=base, format=fmt)
    parser = get_plugin(fmt, Parser)()
    try:
        with exact_literals():
            parser.parse(source, sink)
    except _WriteFailed as failed:
        raise failed.__cause__ from None  # type: ignore[misc]
    except TermCollisionError:
        raise
    except Exception as exc:
        line, reason = _rdflib_error(exc)
        raise LoadError(report.path, line, reason) from exc
    writer.write(take_batch(table, report.triples, report.triples))


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
