"""Bulk loading into the store: N-Triples/N-Quads reading, batches, rdflib formats, the writer.

:mod:`.bulk` is the entry (``catalogue load``, :meth:`catalogue.api.Catalogue.load`);
:mod:`.ntriples` reads N-Triples and N-Quads without rdflib objects, :mod:`.batches`
cuts them into batches (in a child process for large files), :mod:`.rdflib_input`
streams every other format through rdflib's parsers, and :mod:`.writer` writes the
batches under the store's write lock.  Nothing here imports
the store: it is reached through the protocols :class:`.writer.WriteTarget` and
:class:`.bulk.LoadTarget`.  :mod:`.ids` holds the write primitives the store and the
bulk writer share (term and datatype ids over a store session).

Nothing is imported here, so that the store, which uses :mod:`.ids`, does not load
the whole bulk loader with it; import the modules themselves.
"""
