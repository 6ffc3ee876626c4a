"""Bulk loading into the store: N-Triples/N-Quads reading, batches, rdflib formats, the writer.

:mod:`.bulk` is the entry (``catalogue load``, :meth:`catalogue.api.Catalogue.load`);
:mod:`.ntriples` reads N-Triples and N-Quads without rdflib objects, :mod:`.batches`
cuts them into batches (in a child process for large files), :mod:`.rdflib_input`
streams every other format through rdflib's parsers, and :mod:`.writer` writes the
batches through the store's public methods for bulk writers.  Nothing here imports
the store: it is reached through the protocols :class:`.writer.WriteTarget` and
:class:`.bulk.LoadTarget`.
"""

from .bulk import FORMATS, blank_node_prefix, load_file, load_quads, resolve_format
from .report import LoadError, LoadReport

__all__ = [
    "FORMATS",
    "LoadError",
    "LoadReport",
    "blank_node_prefix",
    "load_file",
    "load_quads",
    "resolve_format",
]
