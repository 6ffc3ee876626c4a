"""Harvest: a store's metadata read into the model, then into the catalogue.

This package's own :class:`SourceReader` reads a source (no database involved);
:mod:`~catalogue.harvest.run` harvests one source end to end (lock, run record, change
check, validation, write), :mod:`~catalogue.harvest.writer` writes its graph
incrementally, :mod:`~catalogue.harvest.records` keeps the runs' PROV records and
:mod:`~catalogue.harvest.batch` harvests several sources as ``catalogue harvest`` does.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from typing import Any

from rdflib import DCTERMS, URIRef

from catalogue.extents.values import DEFAULT_VALUE_BYTES
from catalogue.harvest.change import source_state
from catalogue.harvest.fingerprints import canonical_fingerprint
from catalogue.harvest.reader import Progress, read_hierarchy
from catalogue.model.dependent import expand_dependent_arrays
from catalogue.model.extents import HierarchyExtents
from catalogue.model.nodes import Hierarchy
from catalogue.rdf.convert import Triple
from catalogue.rdf.versions import version_triples
from catalogue.storage.access import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    StoreAccess,
)
from catalogue.storage.icechunk import IcechunkAccess
from catalogue.storage.opening import open_store
from catalogue.storage.references import ReferenceAccess

log = logging.getLogger(__name__)


#: The options of :class:`SourceReader` that choose what is read (and so enter its state).
CHOICE_OPTIONS = ("include", "exclude", "max_depth", "nodes", "coordinate_bytes", "implicit_root")


def node_choice(*, include: Iterable[str] = (), exclude: Iterable[str] = (), max_depth: int | None = None,
                nodes: Iterable[str] = (), max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
                coordinate_bytes: int = DEFAULT_VALUE_BYTES, implicit_root: bool | None = None) -> dict[str, Any]:
    """What a harvest reads of a source, as its state records it: the same source read
    with another choice is read again."""
    choice: dict[str, Any] = {"include": list(include), "exclude": list(exclude), "max_depth": max_depth,
                              "nodes": list(nodes), "max_document_bytes": max_document_bytes,
                              "coordinate_bytes": coordinate_bytes}
    if implicit_root:  # only then, so the states recorded before this option stay equal
        choice["implicit_root"] = True
    return choice


def chosen_state(token: str, choice: dict[str, Any]) -> str:
    """A source's state: its change token (:mod:`catalogue.harvest.change`) and its choice."""
    digest = hashlib.blake2b(json.dumps(choice, sort_keys=True).encode(), digest_size=8).hexdigest()
    return f"{token}|{digest}"


class SourceReader:
    """One source opened for harvesting: its state (the cheap change check), then its hierarchy.

    ``storage_options`` go to fsspec (s3fs credentials and endpoint, http
    client options). ``include``/``exclude``/``max_depth`` choose the nodes
    read; ``nodes`` names node paths to read where the store cannot be listed
    (see :mod:`catalogue.harvest.reader`); ``implicit_root`` reads a root without a document
    as an implicit group (:mod:`catalogue.harvest.discover`). ``concurrency``, ``timeout`` and
    ``retries`` bound remote requests (see :func:`catalogue.storage.opening.open_store`);
    ``coordinate_bytes`` bounds the coordinate values read for the extents (:meth:`extents`).
    Opening contacts nothing; the first request says whether the source can be reached.
    """

    def __init__(
        self,
        source: str,
        *,
        max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
        storage_options: dict[str, Any] | None = None,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        max_depth: int | None = None,
        nodes: Iterable[str] = (),
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        coordinate_bytes: int = DEFAULT_VALUE_BYTES,
        implicit_root: bool | None = None,
    ) -> None:
        self.store: StoreAccess = open_store(
            source,
            max_document_bytes=max_document_bytes,
            storage_options=storage_options,
            timeout=timeout,
            retries=retries,
            concurrency=concurrency,
        )
        self.choice = node_choice(include=include, exclude=exclude, max_depth=max_depth, nodes=nodes,
                                  max_document_bytes=max_document_bytes, coordinate_bytes=coordinate_bytes,
                                  implicit_root=implicit_root)
        self.implicit_root = implicit_root
        #: Coordinate values read per hierarchy for its extents (see catalogue.extents).
        self.coordinate_bytes = coordinate_bytes
        self._prefetched: dict[str, bytes | None] = {}

    @property
    def url(self) -> str:
        """The hierarchy's IRI (and its graph's name)."""
        return self.store.url

    def state(self, previous: str | None = None) -> str | None:
        """The source's state (see :mod:`catalogue.harvest.change`) with the node choice, or None.

        Costs one listing or one consolidated read; what was read is reused by
        :meth:`load`. ``previous`` (the state recorded last time) lets an
        unchanged v3 source cost a single request.
        """
        token, self._prefetched = source_state(self.store, previous)
        return None if token is None else chosen_state(token, self.choice)

    def load(self, progress: Progress | None = None) -> Hierarchy:
        """Read the hierarchy and expand its dependent arrays.

        Raises SourceUnavailable when a remote source cannot be reached.
        """
        prefetched, self._prefetched = self._prefetched, {}
        hierarchy = read_hierarchy(
            self.store,
            nodes=self.choice["nodes"],
            include=self.choice["include"],
            exclude=self.choice["exclude"],
            max_depth=self.choice["max_depth"],
            prefetched=prefetched,
            progress=progress,
            implicit_root=self.implicit_root,
        )
        expand_dependent_arrays(hierarchy)
        for node in hierarchy.nodes.values():
            node.members.sort()
            if not node.fingerprint:  # dependent arrays: documents derived from their primary
                node.fingerprint = canonical_fingerprint(node)
        return hierarchy

    def store_triples(self) -> list[Triple]:
        """What the store says of the hierarchy beyond its metadata: the archive files a
        reference set points into (``dct:source``), the version of an Icechunk repository
        (:mod:`catalogue.rdf.versions`); none for a plain store."""
        root = URIRef(self.store.url)
        if isinstance(self.store, ReferenceAccess):
            try:
                files = self.store.referenced_files()
            except Exception as exc:  # a reference record that cannot be read: the harvest goes on
                log.warning("%s: the archive files it refers to could not be listed (%s)", self.store.url, exc)
                return []
            return [(root, DCTERMS.source, URIRef(url)) for url in files]
        if isinstance(self.store, IcechunkAccess) and self.store.current is not None:
            v = self.store.current
            return version_triples(self.store.url, self.store.repository_url, name=v.ref, kind=v.kind,
                                   snapshot=v.snapshot, parent=v.parent, written_at=v.written_at,
                                   message=v.message, containers=self.store.virtual_chunk_containers())
        return []

    def extents(self, hierarchy: Hierarchy) -> HierarchyExtents:
        """Where and when for the hierarchy :meth:`load` read, reading its coordinate
        arrays from the same store within ``coordinate_bytes``. Guarded: an exception in
        the extraction is one ``extent.failed`` finding (traceback logged at WARNING), so
        the hierarchy is still catalogued or validated, without extents."""
        # Imported here: pyproj, shapely and cftime are a third of a second that a server,
        # which harvests nothing, need not spend starting.
        from catalogue.extents.extract import guarded_extents

        return guarded_extents(hierarchy, self.store, value_bytes=self.coordinate_bytes)


def load_hierarchy(source: str, *, progress: Progress | None = None, **options: Any) -> Hierarchy:
    """Read the hierarchy at ``source`` (path, file://, http(s)://, s3://); see :class:`SourceReader`."""
    return SourceReader(source, **options).load(progress)


__all__ = ["CHOICE_OPTIONS", "SourceReader", "chosen_state", "load_hierarchy", "node_choice"]
