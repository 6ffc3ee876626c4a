"""N-Triples and N-Quads parsed into batches for the bulk writer, in this process or a child.

A :class:`Batch` is what every parser hands the writer (:mod:`.writer`): the terms
first seen since the last batch and quads of local term ids.  :func:`parse_batches`
reads a file with :mod:`.ntriples`; :func:`parse_in_worker` does the same in a forked
child process, so that parsing the next batch overlaps with writing this one.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import multiprocessing
import os
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

import numpy as np
from rdflib.namespace import RDF

from ..terms import IRI, TermCollisionError
from .ntriples import EncodedTerm, NQuadsParser, NTriplesSyntaxError, TermTable, iter_chunks

__all__ = [
    "BATCH_QUADS",
    "PARALLEL_MIN_BYTES",
    "Batch",
    "batch_full",
    "open_input",
    "parse_batches",
    "parse_in_worker",
    "take_batch",
    "use_worker",
]

#: Quads collected before they are written (a batch): large enough that sorting and
#: the multi-row statements are efficient, small enough to bound memory.
BATCH_QUADS: Final = 1 << 18
#: N-Triples and N-Quads files at least this large are parsed in a separate process.
PARALLEL_MIN_BYTES: Final = 8 << 20

_RDF_TYPE: Final = str(RDF.type)


@contextmanager
def open_input(path: Path, compression: str | None) -> Iterator[tuple[IO[bytes], IO[bytes]]]:
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


class Batch(NamedTuple):
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


def batch_full(flat_quads: list[int]) -> bool:
    """Whether a loader's flat list of local quad ids (four per quad) holds a batch."""
    return len(flat_quads) >= 4 * BATCH_QUADS


def take_batch(table: TermTable, expected_quads: int, statements: int) -> Batch:
    rdf_type = table.lookup((IRI, _RDF_TYPE, None, None))
    new_terms, flat = table.take()
    quads = np.array(flat, dtype=np.int64).reshape(-1, 4)
    return Batch(new_terms, quads, rdf_type, max(expected_quads, statements), statements)


def parse_batches(
    path: Path, compression: str | None, fmt: str, default_graph: str, prefix: str
) -> Iterator[Batch]:
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
    with open_input(path, compression) as (raw, stream):
        for chunk in iter_chunks(stream):
            if line == 1 and chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]  # a UTF-8 byte order mark, as some tools write
            line += parser.parse_chunk(chunk, line)
            if table.pending_quads >= BATCH_QUADS:
                # The share of the file read so far tells how many statements to expect.
                expected = parser.statements * size // max(raw.tell(), 1)
                yield take_batch(table, expected, parser.statements)
    yield take_batch(table, parser.statements, parser.statements)


def parse_in_worker(
    path: Path, compression: str | None, fmt: str, default_graph: str, prefix: str
) -> Iterator[Batch]:
    """:func:`parse_batches` in a child process, so that parsing the next batch
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
                    yield Batch(new_terms, quads, rdf_type, expected, statements)
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
        for batch in parse_batches(path, compression, fmt, default_graph, prefix):
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


def use_worker(path: Path, parallel: bool | None) -> bool:
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
