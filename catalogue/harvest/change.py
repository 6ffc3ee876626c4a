"""Has a source changed since its last harvest? Answered with one request where possible.

A cron harvest of a thousand unchanged stores should not re-read a million
documents. Before reading a hierarchy the harvester asks for the source's
*state*: a digest that changes whenever any metadata document of the
hierarchy may have changed, computed from

* **one recursive listing** on stores that list with version tokens (S3: each
  object's ETag; the digest covers the key and ETag of every metadata
  document, so additions, deletions and edits all show), or else
* **one read of the consolidated metadata** (a v3 root ``zarr.json`` with
  ``consolidated_metadata``, or v2 ``.zmetadata``): the digest of its bytes.
  That read is not wasted when the source did change: the documents are
  handed to the reader, which then reads nothing at the root again.

Stores with neither (HTTP servers without consolidated metadata, local
folders without it) have no state: they are always read, and the harvest
rewrites only the nodes whose fingerprints changed.

Caveat, documented for operators: a consolidated document that goes stale
(a writer updated an array but did not re-consolidate) hides that change
here exactly as it hides it from every Zarr client reading consolidated
metadata; ``catalogue harvest --full`` reads everything regardless.
"""

from __future__ import annotations

import json

from catalogue.errors import CatalogueError, SourceUnavailable
from catalogue.harvest.fingerprints import fingerprint_documents
from catalogue.model.nodes import V2_ARRAY, V2_ATTRS, V2_CONSOLIDATED, V2_GROUP, V3_DOCUMENT
from catalogue.storage.access import StoreAccess

METADATA_NAMES = (V3_DOCUMENT, V2_ARRAY, V2_GROUP, V2_ATTRS, V2_CONSOLIDATED)


def _digest(kind: str, data: bytes) -> str:
    """``kind:`` and the node fingerprints' digest of ``data`` (one hashing scheme for both)."""
    return f"{kind}:{fingerprint_documents({kind: data})}"


def _is_consolidated_v3(data: bytes) -> bool:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return False
    inline = doc.get("consolidated_metadata") if isinstance(doc, dict) else None
    return isinstance(inline, dict) and isinstance(inline.get("metadata"), dict)


def listing_state(listing: dict[str, str]) -> str:
    """The state digest of a listing of metadata keys and their version tokens."""
    lines = "\n".join(f"{key}\t{token}" for key, token in sorted(listing.items()))
    return _digest("listing", lines.encode())


def source_state(store: StoreAccess, previous: str | None = None) -> tuple[str | None, dict[str, bytes | None]]:
    """The source's state digest (None when it has none) and the root documents read for it.

    ``previous`` is the state recorded last time, if any: when it came from a
    v3 root ``zarr.json``, that one document is read first, so an unchanged v3
    source costs exactly one request. Otherwise ``zarr.json`` and
    ``.zmetadata`` are asked for together (one round trip; one of them is
    usually a 404), because a v3 ``zarr.json`` takes precedence over v2
    metadata the way Zarr clients read stores.

    Reading errors are not raised here: the harvest that follows meets them
    and reports them properly, so a failed check only means "no state".
    """
    try:
        listing = store.metadata_listing(METADATA_NAMES)
    except SourceUnavailable:
        listing = None
    if listing:
        return listing_state(listing), {}
    if previous is not None and previous.startswith(f"{V3_DOCUMENT}:"):
        try:
            v3 = store.read(V3_DOCUMENT, consolidated=True)
        except CatalogueError:
            v3 = False
        if isinstance(v3, bytes) and _is_consolidated_v3(v3):
            return _digest(V3_DOCUMENT, v3), {V3_DOCUMENT: v3}
    try:
        results = store.read_many([V3_DOCUMENT, V2_CONSOLIDATED], consolidated=True, return_errors=True)
    except SourceUnavailable:
        return None, {}
    v3, v2 = (r if isinstance(r, bytes) or r is None else False for r in results)
    prefetched: dict[str, bytes | None] = {}
    for key, value in ((V3_DOCUMENT, v3), (V2_CONSOLIDATED, v2)):
        if value is not False:
            prefetched[key] = value  # type: ignore[assignment]
    if isinstance(v3, bytes):
        return (_digest(V3_DOCUMENT, v3) if _is_consolidated_v3(v3) else None), prefetched
    if v3 is None and isinstance(v2, bytes):
        return _digest(V2_CONSOLIDATED, v2), prefetched
    return None, prefetched
