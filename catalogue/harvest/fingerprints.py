"""Node fingerprints: a content hash of a node's metadata documents (or the ETags a listing
gave for them), so later harvests and provenance records can tell what changed."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from catalogue.model.nodes import Node

__all__ = ["canonical_fingerprint", "canonical_json", "fingerprint_documents"]


def canonical_json(value: Any) -> bytes:
    """One byte string per JSON value: sorted keys, no spaces, UTF-8 (NaN as Zarr writes it)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True).encode()


def fingerprint_documents(parts: dict[str, bytes]) -> str:
    """blake2b-128 over (document name, token) pairs in name order, hex.

    A token is the document's bytes, or ``etag:<value>`` when the store gave an
    ETag for it. Each piece is length-prefixed, so no two different inputs
    share a byte stream.
    """
    digest = hashlib.blake2b(digest_size=16)
    for name in sorted(parts):
        for piece in (name.encode(), parts[name]):
            digest.update(len(piece).to_bytes(8, "big"))
            digest.update(piece)
    return digest.hexdigest()


def canonical_fingerprint(node: Node) -> str:
    """The fingerprint of a node known only as parsed documents (consolidated, dependent arrays)."""
    return fingerprint_documents({name: canonical_json(doc) for name, doc in node.documents.items()})
