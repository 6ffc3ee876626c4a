"""Harvest: read a store's metadata into the model (no database involved)."""

from __future__ import annotations

from catalogue.harvest.reader import read_hierarchy
from catalogue.model.dependent import expand_dependent_arrays
from catalogue.model.nodes import Hierarchy
from catalogue.storage.store import DEFAULT_MAX_DOCUMENT_BYTES, open_store


def load_hierarchy(source: str, *, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES) -> Hierarchy:
    """Read the hierarchy at ``source`` and expand its dependent arrays."""
    store = open_store(source, max_document_bytes=max_document_bytes)
    hierarchy = read_hierarchy(store)
    expand_dependent_arrays(hierarchy)
    for node in hierarchy.nodes.values():
        node.members.sort()
    return hierarchy


__all__ = ["load_hierarchy"]
