"""Finding the Zarr hierarchies below a folder, bucket prefix or HTTP index that is not one.

Data centres keep thousands of stores under one directory or prefix. A SOURCE whose root
holds no metadata document is searched breadth-first, one concurrent listing per level
(:func:`catalogue.storage.listing.list_folders`): a folder holding ``zarr.json``,
``.zgroup``, ``.zarray`` or ``.zmetadata`` is a store root, and is not descended into
(its nodes are its own harvest's business, and its chunk folders cost nothing). A
``.json`` file in a folder that is not a store is a kerchunk reference set when its
first 64 KB name a Zarr document as a key (:func:`looks_like_references`); parquet
reference folders hold ``.zmetadata`` and are found as stores.

**Implicit roots.** Some v3 writers leave the root of a store without a document while
its children have theirs. A folder whose name ends in a Zarr suffix (:data:`SUFFIXES`:
``x.zarr``) and holds no document is such a root when any folder below it holds one:
the whole folder is one store (its nodes under their own IRIs), not a folder of stores.
A folder without the suffix is searched on; that is the one rule, and it is
documented (docs/harvesting.md), because the two layouts cannot otherwise be told apart.

**Bounds.** ``max_depth`` (a store directly below the SOURCE is at depth 1),
``include``/``exclude`` globs on store paths relative to the SOURCE (``fnmatch``,
case-sensitive, ``*`` crossing slashes; an excluded folder is not listed) and
``max_listings`` (folders listed at most). What was left unseen (the limit reached, a
listing refused or failing) is reported, and makes the discovery incomplete: a prune
(:mod:`catalogue.harvest.batch`) removes nothing after an incomplete discovery.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any, Final
from urllib.parse import unquote

from catalogue.errors import CatalogueError, SourceNotFound, UsageError, display_location
from catalogue.harvest.sources import Source
from catalogue.model.nodes import V2_ARRAY, V2_CONSOLIDATED, V2_GROUP, V3_DOCUMENT
from catalogue.model.paths import quote_path
from catalogue.storage.access import DEFAULT_MAX_DOCUMENT_BYTES, StoreAccess
from catalogue.storage.icechunk import IcechunkAccess, split_icechunk, version_token
from catalogue.storage.listing import Listing, list_folders
from catalogue.storage.opening import open_store

__all__ = ["DEFAULT_MAX_LISTINGS", "METADATA_NAMES", "SUFFIXES", "Discovery", "Expanded", "discover",
           "expand_sources", "is_gone", "is_store_root", "iter_expanded", "looks_like_references",
           "reference_candidates", "vanished", "vanished_versions", "zarr_suffixed"]

log = logging.getLogger(__name__)

#: Documents whose presence makes a folder a Zarr node.
METADATA_NAMES: Final = (V3_DOCUMENT, V2_GROUP, V2_ARRAY, V2_CONSOLIDATED)
#: Folder name endings that mark a store (and make a folder without a document an implicit root).
SUFFIXES: Final = (".zarr", ".zr3", ".zarr3", ".zarr2")
#: Folders listed at most by one discovery (a bucket of 10,000 stores in a few folders
#: costs a few listings; a tree of millions of folders is not a catalogue's to walk).
DEFAULT_MAX_LISTINGS: Final = 10_000


def zarr_suffixed(path: str) -> bool:
    """Whether the last part of ``path`` ends in a Zarr suffix (``.ome.zarr`` included)."""
    return posixpath.basename(path.rstrip("/")).lower().endswith(SUFFIXES)


#: What is read of each ``.json`` file met, to tell a kerchunk reference set from other JSON.
REFERENCE_HEAD: Final = 65_536
#: Keys only a reference set's mapping holds at its top (version 0) or in its ``refs`` (1).
_REFERENCE_KEYS: Final = tuple(f'"{name}"'.encode() for name in (V2_GROUP, V2_ARRAY, V3_DOCUMENT, ".zattrs"))


def reference_candidates(path: str, listing: Listing) -> list[str]:
    """The ``.json`` files of a folder that is not a store (``zarr.json`` excepted): what a
    kerchunk reference set is named (:mod:`catalogue.storage.references`)."""
    return [f"{path}/{name}" if path else name for name in listing.files
            if name.lower().endswith(".json") and name != V3_DOCUMENT]


def looks_like_references(head: bytes | None) -> bool:
    """Whether the start of a JSON file is a kerchunk reference set's: an object whose
    first :data:`REFERENCE_HEAD` bytes name a Zarr metadata document as a key (a GeoJSON,
    a STAC item or a notebook never does). The harvest then reads it whole, and refuses
    it in one line if it is not one after all."""
    if not head or not head.lstrip().startswith(b"{"):
        return False
    return any(key + b":" in head or key + b" :" in head for key in _REFERENCE_KEYS)


def is_store_root(listing: Listing) -> bool:
    """Whether a folder's listing holds a Zarr metadata document."""
    return any(name in listing.files for name in METADATA_NAMES)


@dataclass
class Discovery:
    """The stores found below a SOURCE, by path relative to it (sorted)."""

    url: str
    stores: list[str] = field(default_factory=list)
    #: Those of ``stores`` that are implicit roots (a Zarr-suffixed folder without a document).
    implicit: set[str] = field(default_factory=set)
    #: Folders listed.
    listings: int = 0
    #: What was not seen, one line each (a refused or failing listing, the listing limit).
    unseen: list[str] = field(default_factory=list)
    #: Found stores left out by ``include``/``exclude`` (counted, for the summary).
    excluded: int = 0
    #: The IRI each found store's harvest gives its graph, by path (set by :func:`expand_sources`).
    iris: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether every folder in scope was listed: only then may vanished stores be pruned."""
        return not self.unseen

    def source_of(self, path: str, store: StoreAccess) -> str:
        """The store at ``path`` as a harvest SOURCE, written as an operator would name it
        (a local path; an ``s3://`` or ``http(s)://`` URL with the path as listed), so that
        :func:`~catalogue.storage.opening.open_store` gives it the IRI, and the run the
        source, that naming it on the command line gives."""
        if store.url.startswith("file:"):
            return posixpath.join(store.root, path)
        if store.url.startswith("s3://"):
            return f"s3://{store.root}/{path}"
        return f"{store.url}/{path}"


def _inside(real: str, root: str | None) -> bool:
    """Whether a local folder's real location is below the source's own, ``root`` (links
    out of the source are not followed: what is there is another source's)."""
    return root is None or real == root or real.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class _Scope:
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    max_depth: int | None

    def excluded(self, path: str) -> bool:
        parts = path.split("/")
        return any(fnmatchcase("/".join(parts[:n]), pattern)
                   for n in range(1, len(parts) + 1) for pattern in self.exclude)

    def included(self, path: str) -> bool:
        return not self.include or any(fnmatchcase(path, pattern) for pattern in self.include)

    def descends(self, path: str) -> bool:
        """Whether the folders inside ``path`` are within the depth limit."""
        return self.max_depth is None or (path.count("/") + 1 if path else 0) < self.max_depth


def discover(store: StoreAccess, *, include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
             max_depth: int | None = None, max_listings: int = DEFAULT_MAX_LISTINGS) -> Discovery:
    """The stores below the root of ``store`` (which is not one itself), breadth-first."""
    if max_depth is not None and max_depth < 1:
        raise UsageError(f"max_depth must be 1 or more to find stores below a folder, not {max_depth}")
    if max_listings < 1:
        raise UsageError(f"max_listings must be 1 or more, not {max_listings}")
    scope = _Scope(tuple(include), tuple(exclude), max_depth)
    found = Discovery(url=store.url)
    #: Zarr-suffixed folders without a document, waiting to learn whether a store is in them.
    pending: set[str] = set()
    stores: set[str] = set()
    #: Each folder to list. On local disks the real location of every folder met is kept:
    #: a symlink to one already met (a loop, or a second name of a folder) is not followed,
    #: so that no store is found twice under two names.
    level: list[str] = [""]
    #: ``.json`` files met in folders that are not stores: reference sets, perhaps.
    candidates: list[str] = []
    root = store.real_location("")
    met: set[str] = {root} if root is not None else set()
    while level:
        room = max_listings - found.listings
        last = len(level) > room
        if last:
            found.unseen.append(f"{display_location(store.url)}: stopped after {max_listings:,} listings "
                                f"({len(level) - room:,} folders not listed; raise --max-listings)")
            level = level[:room]
            if not level:
                break
        listed = list_folders(store, level)
        found.listings += len(level)
        below: list[str] = []
        for path, listing in zip(level, listed, strict=True):
            if not isinstance(listing, Listing):
                found.unseen.append(str(listing))
                continue
            if path and is_store_root(listing):
                stores.add(path)
                continue
            if path and zarr_suffixed(path):
                pending.add(path)
            elif scope.descends(path):
                candidates += [c for c in reference_candidates(path, listing) if not scope.excluded(c)]
            # A pending folder's own folders are listed even past the depth limit: whether
            # it is an implicit root is decided by them, as the reader decides it.
            if not scope.descends(path) and path not in pending:
                continue
            for name in listing.folders:
                child = f"{path}/{name}" if path else name
                if scope.excluded(child):
                    continue
                real = store.real_location(child)
                if real is not None:
                    if real in met or not _inside(real, root):
                        log.info("%s: a link to a folder met already or outside the source; not followed",
                                 store.key_url(child))
                        continue
                    met.add(real)
                below.append(child)
        if last:
            if below:
                found.unseen[-1] = found.unseen[-1].replace(" folders not listed", " folders and those below "
                                                            "the listed ones not listed", 1)
            break
        level = below
    stores.update(_reference_sets(store, candidates, found))
    # A store directly in a pending folder makes that folder an implicit root (the reader
    # reads such a root's own folders, as here); deeper stores stay stores of their own.
    for path in sorted(stores):
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        if parent in pending:
            stores.discard(path)
            stores.add(parent)
            found.implicit.add(parent)
    for path in sorted(stores):
        if scope.included(path):
            found.stores.append(path)
        else:
            found.excluded += 1
    found.implicit &= set(found.stores)
    return found


#: ``.json`` heads read at once (64 KB each: a folder of 100,000 STAC items is read in
#: batches, each judged and let go).
_HEADS_PER_READ: Final = 256


def _reference_sets(store: StoreAccess, candidates: list[str], found: Discovery) -> list[str]:
    """Those of ``candidates`` whose start looks like a reference set's. A file that cannot
    be read makes the discovery incomplete, so that nothing is pruned on its account."""
    out = []
    for start in range(0, len(candidates), _HEADS_PER_READ):
        batch = candidates[start:start + _HEADS_PER_READ]
        try:
            heads: list[bytes | CatalogueError | None] = list(
                store.read_ranges(batch, [0] * len(batch), [REFERENCE_HEAD] * len(batch)))
        except CatalogueError:  # one failed: each on its own, to tell which
            heads = []
            for key in batch:
                try:
                    heads.append(store.read_ranges([key], [0], [REFERENCE_HEAD])[0])
                except CatalogueError as exc:
                    heads.append(exc)
        for key, head in zip(batch, heads, strict=True):
            if isinstance(head, CatalogueError):
                found.unseen.append(str(head))
            elif looks_like_references(head):
                out.append(key)
    return out


# ------------------------------------------------------------------ sources
@dataclass
class Expanded:
    """The sources of a harvest with every folder of stores replaced by its stores."""

    entries: list[Source] = field(default_factory=list)
    #: Each discovering source with what its discovery found (for pruning and the summary).
    discoveries: list[tuple[Source, Discovery]] = field(default_factory=list)
    #: Sources whose discovery found nothing to harvest, with the error to report.
    failed: list[tuple[Source, CatalogueError]] = field(default_factory=list)
    #: Each pruning Icechunk repository source: its URL and the IRIs of the versions found.
    versioned: list[tuple[Source, str, set[str]]] = field(default_factory=list)
    #: How many of the sources given have been expanded (:func:`iter_expanded`).
    expanded: int = 0


def _versions(source: Source, repository: IcechunkAccess, out: Expanded) -> list[Source]:
    """An Icechunk repository's versions as sources (:mod:`catalogue.storage.icechunk`);
    for a pruning source, what a prune compares with goes to ``out.versioned``."""
    entries = []
    containers = repository.virtual_chunk_containers()
    for version in repository.versions(source.history):
        url = f"{repository.repository_url}@{quote_path(version.ref)}"
        entries.append(replace(source, url=url, name=f"{source.name}@{version.ref}" if source.name else "",
                               discover=False, prune=False, history=0,
                               seen_state=version_token(version.snapshot, containers)))
    if source.prune:
        out.versioned.append((source, repository.repository_url, {e.url for e in entries}))
    return entries


def expand_sources(sources: list[Source], *, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
                   catalogued: set[str] | frozenset[str] = frozenset(), **limits: Any) -> Expanded:
    """Each source as it is when its root is a Zarr node (or discovery is off), else the
    stores below it (:func:`discover`), each a source of its own with the entry's storage
    options and limits. A Zarr-suffixed source without a document is one store with an
    implicit root. ``limits`` are the command line's ``concurrency``/``timeout``/``retries``
    (a source's own win).

    Kept as they are, so that their harvest fails, records its run and keeps their graph as
    it always has: a source that cannot be opened or listed, one that is already a
    catalogued graph (``catalogued``: a store whose root document is missing for a while
    is not a folder of stores), and one below which nothing is found."""
    out = Expanded()
    for _ in iter_expanded(sources, out, max_document_bytes=max_document_bytes, catalogued=catalogued, **limits):
        pass
    return out


def iter_expanded(sources: Iterable[Source], out: Expanded, *,
                  max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
                  catalogued: set[str] | frozenset[str] = frozenset(), **limits: Any) -> Iterator[Source]:
    """:func:`expand_sources` one source at a time: yields each source's entries as soon as
    it is expanded (``out`` gathers them with the rest), so that a harvest with several
    jobs starts on the first stores while the others are still looked at. Telling a store
    from a folder of stores costs a few reads per source: for 10^5 sources over a network,
    minutes that would otherwise pass before the first harvest."""
    for source in sources:
        before = len(out.entries)
        _expand_one(source, out, max_document_bytes, catalogued, limits)
        out.expanded += 1
        yield from out.entries[before:]


def _expand_one(source: Source, out: Expanded, max_document_bytes: int, catalogued: set[str] | frozenset[str],
                limits: dict[str, Any]) -> None:
    """One source of :func:`iter_expanded`, its outcome added to ``out``."""
    if source.discover is False or source.implicit_root:
        out.entries.append(source)
        return
    options = {k: getattr(source, k) if getattr(source, k) is not None else limits.get(k)
               for k in ("concurrency", "timeout", "retries")}
    options = {k: v for k, v in options.items() if v is not None}
    try:
        store = open_store(source.url, max_document_bytes=max_document_bytes,
                           storage_options=source.storage_options or None, **options)
        if isinstance(store, IcechunkAccess):
            # the repository named (not one of its versions): every branch and tag head
            named = split_icechunk(source.url)
            out.entries += _versions(source, store, out) if named and named[2] is None and not store.root \
                else [source]
            return
        root_is_node = None if store.url in catalogued else _root_is_node(store)
        if root_is_node is False and store.url.startswith("s3://") \
                and {"refs", "snapshots"} <= set(store.child_folders("")):
            out.entries += _versions(source, open_store(
                f"{store.url}@main", storage_options=source.storage_options or None, **options), out)
            return
    except CatalogueError:
        out.entries.append(source)
        return
    if root_is_node is not False:  # a store, or it cannot be told: harvested as named
        out.entries.append(source)
        return
    if zarr_suffixed(store.url):
        out.entries.append(replace(source, implicit_root=True))
        return
    try:
        found = discover(store, include=source.include, exclude=source.exclude, max_depth=source.max_depth,
                         max_listings=source.max_listings or DEFAULT_MAX_LISTINGS)
    except CatalogueError as exc:
        out.failed.append((source, exc))
        return
    for line in found.unseen:
        log.warning("%s (discovery of %s is incomplete)", line, source.label)
    if not found.stores:
        log.warning("%s: not a Zarr store, and no store found below it (%s)", display_location(store.url),
                    f"{found.listings:,} folders listed" + (f", {found.excluded} stores excluded"
                                                             if found.excluded else ""))
        out.entries.append(replace(source, discover=False))
        return
    out.discoveries.append((source, found))
    for path in found.stores:
        url = found.source_of(path, store)
        try:
            found.iris[path] = open_store(url, storage_options=source.storage_options or None).url
        except CatalogueError:
            found.iris[path] = url
        out.entries.append(replace(
            source, url=url, name=f"{source.name}/{path}" if source.name else "",
            include=(), exclude=(), max_depth=None, discover=False, prune=False,
            implicit_root=path in found.implicit))


def _root_is_node(store: StoreAccess) -> bool | None:
    """Whether the store root holds a metadata document; None when that cannot be told
    (an HTTP server without folder listings answers the documents themselves)."""
    if store.url.startswith(("http://", "https://")):
        # A group's document first (nearly every store's root: v3, or v2 with .zgroup), the
        # others only without one: half the requests per store, each a GET a server
        # answers (and a bucket bills) for every source of every harvest.
        errors = False
        for names in (METADATA_NAMES[:2], METADATA_NAMES[2:]):
            found = store.read_many(list(names), return_errors=True)
            if any(isinstance(v, bytes) for v in found):
                return True
            errors = errors or any(isinstance(v, CatalogueError) for v in found)
        return None if errors else False
    listing = list_folders(store, [""])[0]
    if not isinstance(listing, Listing):
        return None
    return is_store_root(listing)


def vanished(source: Source, found: Discovery, harvested: list[str]) -> list[str]:
    """The graphs of ``harvested`` (hierarchy IRIs) below the source that its discovery no
    longer finds, within its bounds: the candidates of a prune, each still to be checked
    gone (:func:`is_gone`).

    Never a candidate: anything when the discovery was incomplete or found no store at all
    (an unmounted disk lists as an empty folder); a graph in, or holding, a found store
    (a store nested in a store, a group harvested on its own); anything outside the bounds."""
    if not found.complete or not found.stores:
        return []
    scope = _Scope(tuple(source.include), tuple(source.exclude), source.max_depth)
    prefix = found.url + "/"
    present = {found.iris.get(p, prefix + p) for p in found.stores}
    # Every IRI above a found store, for "holds a found store" in one lookup.
    holding = {iri[:n] for iri in present for n in range(len(prefix), len(iri)) if iri[n] == "/"}
    gone = []
    for iri in harvested:
        if not iri.startswith(prefix) or iri in present or iri in holding:
            continue
        inside = (iri[:n] for n in range(len(prefix), len(iri)) if iri[n] == "/")
        if any(above in present for above in inside):
            continue
        path = unquote(iri[len(prefix):])
        if scope.max_depth is not None and path.count("/") + 1 > scope.max_depth:
            continue
        if scope.excluded(path) or not scope.included(path):
            continue
        gone.append(iri)
    return sorted(gone)


def vanished_versions(repository_url: str, present: set[str], harvested: list[str]) -> list[str]:
    """The graphs of ``harvested`` that are versions of the Icechunk repository
    (``REPOSITORY@REF``) and not among the versions found now (``present``): a deleted
    branch or tag, a snapshot no longer in the history asked for. Candidates of a prune,
    each still to be checked gone (:func:`is_gone`: a snapshot that still exists stays)."""
    prefix = repository_url + "@"
    return sorted(iri for iri in harvested if iri.startswith(prefix) and iri not in present)


def is_gone(source: str, storage_options: dict[str, Any] | None = None) -> bool:
    """Whether the store at ``source`` is gone: its folder missing, or (S3, an HTTP index)
    listing as empty. Asked again just before a prune removes a graph, under the store's
    lock, so that a store made since the discovery began is never removed; when in doubt
    (an error, a server that cannot list), it is not gone."""
    try:
        store = open_store(source, storage_options=storage_options or None)
    except SourceNotFound:
        return True
    except CatalogueError:
        return False
    listing = list_folders(store, [""])[0]
    return isinstance(listing, Listing) and not listing.files and not listing.folders
