"""Harvest: read a store's metadata into the model (no database involved)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from catalogue.harvest.reader import canonical_fingerprint, read_hierarchy
from catalogue.model.dependent import expand_dependent_arrays
from catalogue.model.nodes import Hierarchy
from catalogue.storage.store import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    open_store,
)


def load_hierarchy(
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
) -> Hierarchy:
    """Read the hierarchy at ``source`` (path, file://, http(s)://, s3://) and expand its dependent arrays.

    ``storage_options`` go to fsspec (s3fs credentials and endpoint, http
    client options). ``include``/``exclude``/``max_depth`` choose the nodes
    read; ``nodes`` names node paths to read where the store cannot be listed
    (see :mod:`catalogue.harvest.reader`). ``concurrency``, ``timeout`` and
    ``retries`` bound remote requests (see :func:`catalogue.storage.store.open_store`).
    Raises SourceUnavailable when a remote source cannot be reached.
    """
    store = open_store(
        source,
        max_document_bytes=max_document_bytes,
        storage_options=storage_options,
        timeout=timeout,
        retries=retries,
        concurrency=concurrency,
    )
    hierarchy = read_hierarchy(store, nodes=nodes, include=include, exclude=exclude, max_depth=max_depth)
    expand_dependent_arrays(hierarchy)
    for node in hierarchy.nodes.values():
        node.members.sort()
        if not node.fingerprint:  # dependent arrays: documents derived from their primary
            node.fingerprint = canonical_fingerprint(node)
    return hierarchy


__all__ = ["load_hierarchy"]
