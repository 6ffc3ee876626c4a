"""Read a Zarr hierarchy's metadata documents from a store into a Hierarchy.

Only metadata is read, never chunk data. Consolidated metadata (v2
``.zmetadata``, v3 inline ``consolidated_metadata``) is used when present, as
Zarr clients do; on stores that cannot be listed (HTTP) it is the one way to
find every node. Otherwise the hierarchy is walked breadth-first, one level
at a time: the candidate documents of a whole level are fetched with one
concurrent ``read_many`` (a remote walk costs a round trip per level, not per
document), and only groups are listed (arrays are never descended into, so
chunk folders cost nothing).

Where a store cannot be listed, a group's children come from the operator's
explicit ``nodes`` list (node paths below the root) and from any
consolidated metadata the group itself carries; groups whose children could
not be found that way are named in ``Hierarchy.undiscovered``, because the
Zarr specifications give groups no list of their children.

``include``/``exclude`` (``fnmatch`` globs on node paths, case-sensitive,
``*`` crossing slashes) and ``max_depth`` (the root is depth 0) choose what
is catalogued: an excluded or too-deep node is not read and its subtree not
walked; a non-empty ``include`` keeps only matching nodes and their
ancestors (the tree stays connected). The root is always kept.

A node whose documents cannot be read, parsed or understood is recorded in
``Hierarchy.failed`` and the walk goes on. Problems that make the hierarchy
itself meaningless (no metadata at the root, a symlink loop, an unreachable
source) raise.

Every node gets a ``fingerprint``: a content hash of its metadata documents
(see :func:`fingerprint_documents`), so later harvests can tell what changed.
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from catalogue.errors import (
    CatalogueError,
    DocumentError,
    HierarchyError,
    SourceUnavailable,
    UsageError,
    display_location,
    join_pointer,
)
from catalogue.harvest.discover import zarr_suffixed
from catalogue.harvest.documents import parse_object, require_object
from catalogue.harvest.fingerprints import canonical_fingerprint, fingerprint_documents
from catalogue.harvest.selection import Selection, ancestors, depth, document_key, explicit_nodes
from catalogue.model.chunk_keys import KeyEncoding, UnsupportedEncoding
from catalogue.model.nodes import (
    V2_ARRAY,
    V2_ATTRS,
    V2_CONSOLIDATED,
    V2_GROUP,
    V3_DOCUMENT,
    Hierarchy,
    Location,
    Node,
)
from catalogue.model.strays import backup_of, probed_names
from catalogue.model.structure import check_format, check_v3
from catalogue.storage.access import StoreAccess

log = logging.getLogger(__name__)

V2_DOCUMENTS = (V2_ARRAY, V2_GROUP, V2_ATTRS)


# -------------------------------------------------------------------- entry
#: Called with the number of nodes read each time some are (a level of a walk, or all of
#: a consolidated hierarchy), so a progress bar can show nodes per second.
Progress = Callable[[int], None]


def read_hierarchy(
    store: StoreAccess,
    *,
    nodes: Iterable[str] = (),
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    max_depth: int | None = None,
    prefetched: dict[str, bytes | None] | None = None,
    progress: Progress | None = None,
    implicit_root: bool | None = None,
) -> Hierarchy:
    """Read every selected node's metadata below the store root (each document once).

    ``prefetched`` holds root documents already read (by the change check of
    :mod:`catalogue.harvest.change`), by key, None for absent ones: they are
    not read again. A root without a document is an implicit group (:attr:`Node.implicit`)
    when its child folders hold nodes and the store's name ends in a Zarr suffix (the rule
    of :mod:`catalogue.harvest.discover`); whatever its name with ``implicit_root`` True,
    never with False.
    """
    if max_depth is not None and max_depth < 0:
        raise UsageError(f"max_depth must be 0 or more, not {max_depth}")
    selection = Selection(tuple(include), tuple(exclude), max_depth)
    explicit = explicit_nodes(nodes)
    probe = _RootProbe(store, prefetched)
    root = probe.read(V3_DOCUMENT, consolidated=True)
    if root is not None and _V3_DRAFT_FORMAT.encode() in root[:4096]:
        _refuse_v3_draft(probe, store, json.loads(root).get("zarr_format") if _is_json(root) else None)
    if root is not None:
        if probe.has_v2_metadata():
            log.warning("%s holds both zarr.json and v2 metadata; reading it as Zarr v3", store.url)
        reader: _Walker = _V3Reader(store, selection, explicit, progress)
        return reader.read(root)
    consolidated = probe.read(V2_CONSOLIDATED, consolidated=True)
    if consolidated is not None:
        return _V2Reader(store, selection, explicit, progress).read_consolidated(consolidated)
    documents = probe.read_many(V2_DOCUMENTS)
    if documents[V2_ARRAY] is not None or documents[V2_GROUP] is not None:
        reader = _V2Reader(store, selection, explicit, progress)
        reader.cache.update(documents)
        reader.walk()
        return reader.finish()
    if probe.denied is not None:
        raise probe.denied
    _refuse_v3_draft(probe, store)
    if implicit_root or (implicit_root is None and zarr_suffixed(store.url)):
        walker = _implicit_walker(store, selection, explicit, progress)
        if walker is not None:
            walker.walk()
            return walker.finish()
    raise HierarchyError(
        f"{display_location(store.url)}: no Zarr metadata found (expected zarr.json, .zgroup, .zarray or .zmetadata)"
    )


#: The pre-release v3 layout (2020-2022 drafts, zarrita, early zarr-python 2 v3 support):
#: a root ``zarr.json`` whose ``zarr_format`` is the protocol URL, nodes under ``meta/root``.
_V3_DRAFT_FORMAT = "https://purl.org/zarr/spec/protocol/core/3.0"


def _is_json(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


def _refuse_v3_draft(probe: _RootProbe, store: StoreAccess, root_format: Any = None) -> None:
    """Raise, naming it, when the store has the pre-release v3 draft layout (it is not
    Zarr v3 as released: the metadata keys, paths and codecs all differ): its entry point
    ``zarr.json`` gives the protocol URL as ``zarr_format``, or ``meta/root.*.json`` exist."""
    if root_format == _V3_DRAFT_FORMAT:
        found: dict[str, Any] = {"zarr.json": b""}
    else:
        found = probe.read_many(["meta/root.group.json", "meta/root.array.json"])
    if any(isinstance(v, bytes) for v in found.values()):
        raise HierarchyError(
            f"{display_location(store.url)}: this is the pre-release Zarr v3 draft layout (meta/root.*.json, "
            f"zarr_format {_V3_DRAFT_FORMAT}), not Zarr v2 or v3 as released; convert it with a current Zarr library"
        )


def _implicit_walker(store: StoreAccess, selection: Selection, explicit: tuple[str, ...],
                     progress: Progress | None) -> _Walker | None:
    """A walker of a store whose root has no document, or None when no child folder
    holds a node either: the format is the children's (v3 when any has ``zarr.json``)."""
    children = [name for name in store.child_folders("") if not selection.skipped(name)]
    keys = [document_key(name, doc) for name in children for doc in (V3_DOCUMENT, V2_GROUP, V2_ARRAY)]
    found = dict(zip(keys, store.read_many(keys, return_errors=True), strict=True))
    present = {key.rsplit("/", 1)[1] for key, value in found.items() if value is not None}
    if not present:
        return None
    walker: _Walker
    if V3_DOCUMENT in present:
        walker = _V3Reader(store, selection, explicit, progress)
        document: dict[str, Any] = {"zarr_format": 3, "node_type": "group"}
        name = V3_DOCUMENT
    else:
        walker = _V2Reader(store, selection, explicit, progress)
        document, name = {"zarr_format": 2}, V2_GROUP
    walker.cache.update(found)
    walker.implicit = Node(path="", kind="group", zarr_format=walker.zarr_format,  # type: ignore[arg-type]
                           documents={name: document}, locations={name: Location(store.key_url(name))},
                           implicit=True)
    return walker


class _RootProbe:
    """Reads the root documents, remembering an access refusal instead of raising it.

    Stores that deny anonymous listing (public S3 buckets over https) answer
    403 rather than 404 for a missing key, so ``zarr.json`` can be refused
    on a v2 store that is otherwise readable. Only when no root document
    at all can be read is the refusal the answer.
    """

    def __init__(self, store: StoreAccess, prefetched: dict[str, bytes | None] | None = None) -> None:
        self.store = store
        self.denied: SourceUnavailable | None = None
        self.prefetched = dict(prefetched or {})

    def read(self, key: str, *, consolidated: bool = False) -> bytes | None:
        if key in self.prefetched:
            return self.prefetched.pop(key)
        try:
            return self.store.read(key, consolidated=consolidated)
        except SourceUnavailable as exc:
            if not exc.denied:
                raise
            self.denied = self.denied or exc
            return None

    def read_many(self, keys: Sequence[str]) -> dict[str, bytes | CatalogueError | None]:
        results = self.store.read_many(keys, return_errors=True)
        out: dict[str, bytes | CatalogueError | None] = {}
        for key, result in zip(keys, results, strict=True):
            if isinstance(result, SourceUnavailable):
                if not result.denied:
                    raise result
                self.denied = self.denied or result
                result = None
            out[key] = result
        return out

    def has_v2_metadata(self) -> bool:
        """Whether the root also has .zgroup/.zarray (only worth a warning, so failures say no).

        Asked of local stores only: remotely it would cost two round trips
        per harvest for a warning.
        """
        if self.store.remote:
            return False
        try:
            return any(self.store.exists(name) for name in (V2_GROUP, V2_ARRAY))
        except CatalogueError:
            return False


# ------------------------------------------------------------------ walker
class _Walker:
    """Shared walking logic: breadth-first, one concurrent read per level, loop-safe on local disks.

    Every child folder of a group (and every explicitly named node) is a
    candidate node: ``read_level`` reads the candidates' metadata documents
    once and says None for a folder that has none.
    """

    zarr_format: int

    def __init__(self, store: StoreAccess, selection: Selection, explicit: tuple[str, ...],
                 progress: Progress | None = None) -> None:
        self.store = store
        self.progress = progress
        self.selection = selection
        self.explicit = explicit
        self.h = Hierarchy(url=store.url, zarr_format=self.zarr_format)  # type: ignore[arg-type]
        #: Documents already read (the root's, from the probe), by key.
        self.cache: dict[str, bytes | CatalogueError | None] = {}
        #: Raw bytes of each walked node's documents, for fingerprints: path -> name -> bytes.
        self.raw: dict[str, dict[str, bytes]] = {}
        #: Child names given explicitly, by parent path (explicit nodes imply their ancestors).
        self.explicit_children: dict[str, set[str]] = {}
        for path in explicit:
            for parent, child in zip([*ancestors(path)], [*ancestors(path)[1:], path], strict=True):
                self.explicit_children.setdefault(parent, set()).add(posixpath.basename(child))
        #: Child names a group's own consolidated metadata names (v3 sub-groups), by path.
        self.hinted_children: dict[str, set[str]] = {}
        #: The root, when it is an implicit group (:func:`_implicit_walker`).
        self.implicit: Node | None = None
        #: Names of the copies of metadata documents found beside each node (:mod:`catalogue.model.strays`).
        self.strays: dict[str, list[str]] = {}

    # -- reading ------------------------------------------------------------
    def read_level(self, paths: list[str]) -> dict[str, Node | DocumentError | None]:  # pragma: no cover
        raise NotImplementedError

    def _fetch(self, keys: list[str]) -> dict[str, bytes | DocumentError | None]:
        """The documents at ``keys`` (from the cache or one concurrent read), errors in place.

        A document-level SourceUnavailable (time-outs, 5xx after retries)
        becomes a DocumentError of its node; an unreachable source raises. A
        refusal (403) after the root was read is taken as absence: stores that
        forbid listing answer 403 for missing keys (see _RootProbe).
        """
        wanted = [k for k in keys if k not in self.cache]
        if wanted:
            self.cache.update(zip(wanted, self.store.read_many(wanted, return_errors=True), strict=True))
        out: dict[str, bytes | DocumentError | None] = {}
        for key in keys:
            result = self.cache.pop(key)
            if isinstance(result, SourceUnavailable):
                if result.denied:
                    log.debug("%s: access refused; taken as absent", result.location)
                    result = None
                elif result.whole_source:
                    raise result
                else:
                    result = DocumentError(result.location, result.reason, rule="document.unreadable")
            elif isinstance(result, CatalogueError) and not isinstance(result, DocumentError):
                raise result
            out[key] = result
        return out

    # -- walking ------------------------------------------------------------
    def walk(self) -> None:
        """Walk from the root, a level at a time; failed groups are still descended into."""
        level: list[tuple[str, tuple[str, ...]]] = [("", ())]
        seen: set[str] = {""}
        while level:
            results = self.read_level([path for path, _ in level])
            arrays: list[str] = []
            if self.progress is not None:
                self.progress(sum(1 for r in results.values() if r is not None))
            descend: list[tuple[str, tuple[str, ...]]] = []
            for path, above in level:
                result = results[path]
                if not path and result is None and self.implicit is not None:
                    result = self.implicit
                if isinstance(result, DocumentError):
                    self.h.failed[path] = result
                elif result is not None:
                    self.h.nodes[path] = result
                    if result.kind == "array":
                        arrays.append(path)
                        continue
                else:
                    continue  # not a node (explicit nodes that are missing are reported in finish)
                if not self.selection.descends(path):
                    continue
                real = self.store.real_location(path)
                if real is not None and real in above:
                    raise HierarchyError(
                        f"{display_location(self.store.key_url(path))}: symlink loop (this folder is one of its own ancestors)"
                    )
                descend.append((path, (*above, real) if real is not None else above))
            listed = self.store.list_many([path for path, _ in descend]) if self.store.listable else None
            self._probe_strays(arrays)
            level = []
            for i, (path, chain) in enumerate(descend):
                if listed is not None and self.store.listable:
                    names = set(listed[i].folders)
                    self._note_strays(path, listed[i].files)
                else:
                    names = set()
                names |= self.explicit_children.get(path, set()) | self.hinted_children.get(path, set())
                undiscovered = path in self.h.nodes and not self.explicit and path not in self.hinted_children
                if not self.store.listable and undiscovered:
                    self.h.undiscovered.append(
                        f"{display_location(self.store.key_url(path))}: the store cannot be listed and has no "
                        "consolidated metadata; child nodes of this group were not discovered "
                        "(list them under nodes = [...] in the sources config)"
                    )
                for name in sorted(names):
                    child = document_key(path, name)
                    if child not in seen and not self.selection.skipped(child):
                        seen.add(child)
                        level.append((child, chain))
        for path in sorted(set(self.h.nodes) | set(self.h.failed), key=lambda p: (depth(p), p)):
            if path:
                parent = posixpath.dirname(path)
                if parent in self.h.nodes:
                    self.h.nodes[parent].members.append(path)

    def _note_strays(self, path: str, files: Iterable[str]) -> None:
        """Remember the copies of metadata documents among a folder's files (:mod:`catalogue.model.strays`)."""
        for name in files:
            if backup_of(name) is not None:
                self.strays.setdefault(path, []).append(name)

    def _probe_strays(self, arrays: list[str]) -> None:
        """Look for copies beside each array's documents, on local folders only (remotely a
        request per array is no price for a warning): a v3 array keeping its chunks below
        ``c/`` is listed (a few entries); other array folders hold their chunks, maybe a
        million, so the usual names are asked for one by one (:func:`probed_names`)."""
        if not arrays or self.store.remote:
            return
        documents = (V3_DOCUMENT,) if self.zarr_format == 3 else (V2_ARRAY, V2_ATTRS)
        probed: list[str] = []
        for path in arrays:
            if _chunks_in_subfolder(self.h.nodes[path]):
                # Its folder holds zarr.json and c/: one listing costs less than the stats
                self._note_strays(path, self.store.local_files(path))
            else:
                probed.append(path)
        keys = {document_key(path, name): (path, name) for path in probed for name in probed_names(documents)}
        for key in self.store.present(list(keys)):
            path, name = keys[key]
            self.strays.setdefault(path, []).append(name)

    def finish(self) -> Hierarchy:
        """Apply ``include``, drop dangling members, fingerprint, report missing explicit nodes."""
        if self.h.consolidated and self.progress is not None:
            self.progress(len(self.h.nodes) + len(self.h.failed))
        self.selection.prune(self.h)
        present = set(self.h.nodes) | set(self.h.failed)
        for node in self.h.nodes.values():
            node.members = [m for m in node.members if m in present]
        for path, node in self.h.nodes.items():
            # Not part of the fingerprint: a copy says nothing of the metadata (the validation
            # report, which names it, is the run's own and written every run).
            node.strays = tuple(self.store.key_url(document_key(path, name))
                                for name in sorted(set(self.strays.get(path, ()))))
            raw = self.raw.get(path)
            if raw is None:
                node.fingerprint = canonical_fingerprint(node)
            else:
                parts = {}
                for name, data in raw.items():
                    etag = self.store.etag(document_key(path, name))
                    parts[name] = f"etag:{etag}".encode() if etag else data
                node.fingerprint = fingerprint_documents(parts)
        for path in self.explicit:
            if path not in present and not self.selection.skipped(path):
                self.h.undiscovered.append(
                    f"{display_location(self.store.key_url(path))}: listed under nodes but not found "
                    "(no metadata there, or a parent is missing or is an array)"
                )
        return self.h


def _chunks_in_subfolder(node: Node) -> bool:
    """Whether a v3 array keeps its chunks below ``c/`` (the default chunk key encoding with
    its default separator ``/``; with ``.`` its keys are ``c.0.0`` beside zarr.json), so that
    its own folder lists in a few entries, however many chunks it has."""
    if node.zarr_format != 3:
        return False
    try:
        encoding = KeyEncoding.from_v3(node.metadata.get("chunk_key_encoding"))
    except UnsupportedEncoding:
        return False
    return encoding.base == "default" and encoding.separator == "/" and not encoding.prefix


class _V3Reader(_Walker):
    zarr_format = 3

    def read_level(self, paths: list[str]) -> dict[str, Node | DocumentError | None]:
        keys = [document_key(p, V3_DOCUMENT) for p in paths]
        fetched = self._fetch(keys)
        out: dict[str, Node | DocumentError | None] = {}
        for path, key in zip(paths, keys, strict=True):
            data = fetched[key]
            if data is None or isinstance(data, DocumentError):
                out[path] = data
                continue
            url = self.store.key_url(key)
            try:
                doc = parse_object(data, url)
                self._hint_children(path, doc)
                out[path] = self._node(path, doc, Location(url))
                self.raw[path] = {V3_DOCUMENT: data}
            except DocumentError as exc:
                out[path] = exc
        return out

    def _hint_children(self, path: str, doc: dict[str, Any]) -> None:
        """On an unlistable store, a group's own consolidated metadata names its whole subtree.

        Every node below ``path`` that it lists becomes a candidate (and is
        read like any other); every group in it counts as enumerated.
        """
        consolidated = doc.get("consolidated_metadata")
        if self.store.listable or not isinstance(consolidated, dict):
            return
        entries = consolidated.get("metadata")
        if not isinstance(entries, dict):
            return
        self.hinted_children.setdefault(path, set())
        for key in entries:
            relative = key.strip("/") if isinstance(key, str) else ""
            if not relative or any(part in ("", ".", "..") for part in relative.split("/")):
                continue
            full = document_key(path, relative)
            self.hinted_children.setdefault(full, set())
            self.hinted_children.setdefault(posixpath.dirname(full), set()).add(posixpath.basename(full))
            for ancestor in ancestors(full)[depth(path) + 1:]:
                self.hinted_children.setdefault(posixpath.dirname(ancestor), set()).add(posixpath.basename(ancestor))

    def _node(self, path: str, doc: dict[str, Any], loc: Location) -> Node:
        node_type = check_v3(doc, loc.url, loc.pointer)
        doc = {k: v for k, v in doc.items() if k != "consolidated_metadata"}
        return Node(
            path=path,
            kind=node_type,  # type: ignore[arg-type]
            zarr_format=3,
            documents={V3_DOCUMENT: doc},
            locations={V3_DOCUMENT: loc},
        )

    def read(self, data: bytes) -> Hierarchy:
        """Read the hierarchy whose root zarr.json holds ``data``."""
        self.cache[V3_DOCUMENT] = data
        url = self.store.key_url(V3_DOCUMENT)
        try:
            root_doc = parse_object(data, url)
            consolidated = root_doc.get("consolidated_metadata")
        except DocumentError:
            consolidated = None
        if isinstance(consolidated, dict) and isinstance(consolidated.get("metadata"), dict):
            self.cache.clear()
            self._read_consolidated(root_doc, url)
        else:
            self.walk()
        return self.finish()

    def _read_consolidated(self, root_doc: dict[str, Any], url: str) -> None:
        self.h.consolidated = True
        try:
            self.h.nodes[""] = self._node("", root_doc, Location(url))
        except DocumentError as exc:
            self.h.failed[""] = exc
        base = "/consolidated_metadata/metadata"
        entries = root_doc["consolidated_metadata"]["metadata"]
        for flat_path, doc in entries.items():
            pointer = join_pointer(base, flat_path)
            path = flat_path.strip("/")
            try:
                if not path or any(part in ("", ".", "..") for part in path.split("/")):
                    raise DocumentError(url, f"invalid node path {flat_path!r}", pointer, rule="hierarchy.path")
                if self.selection.skipped(path):
                    continue
                doc = require_object(doc, url, pointer)
                self.h.nodes[path] = self._node(path, doc, Location(url, pointer))
            except DocumentError as exc:
                self.h.failed[path or flat_path] = exc
        _link_members(self.h, url, base)


class _V2Reader(_Walker):
    zarr_format = 2

    def read_level(self, paths: list[str]) -> dict[str, Node | DocumentError | None]:
        keys = {p: [document_key(p, name) for name in V2_DOCUMENTS] for p in paths}
        fetched = self._fetch([k for ks in keys.values() for k in ks])
        out: dict[str, Node | DocumentError | None] = {}
        for path in paths:
            try:
                out[path] = self._node_from({name: fetched[document_key(path, name)] for name in V2_DOCUMENTS}, path)
            except DocumentError as exc:
                out[path] = exc
        return out

    def _node_from(self, fetched: dict[str, bytes | DocumentError | None], path: str) -> Node | None:
        docs: dict[str, dict[str, Any]] = {}
        locs: dict[str, Location] = {}
        raw: dict[str, bytes] = {}
        kind = None
        for name, node_kind in ((V2_ARRAY, "array"), (V2_GROUP, "group")):
            data = fetched[name]
            if isinstance(data, DocumentError):
                raise data
            if data is not None:
                url = self.store.key_url(document_key(path, name))
                if kind is not None:
                    raise DocumentError(url, "both .zarray and .zgroup present; the node is ambiguous", rule="hierarchy.ambiguous")
                docs[name] = parse_object(data, url)
                locs[name] = Location(url)
                raw[name] = data
                kind = node_kind
        if kind is None:
            return None
        data = fetched[V2_ATTRS]
        if isinstance(data, DocumentError):
            raise data
        if data is not None:
            url = self.store.key_url(document_key(path, V2_ATTRS))
            docs[V2_ATTRS] = parse_object(data, url)
            locs[V2_ATTRS] = Location(url)
            raw[V2_ATTRS] = data
        node = _v2_node(path, kind, docs, locs)
        self.raw[path] = raw
        return node

    def read_consolidated(self, data: bytes) -> Hierarchy:
        """Read the hierarchy described by ``.zmetadata`` (whose bytes are ``data``)."""
        url = self.store.key_url(V2_CONSOLIDATED)
        doc = parse_object(data, url)
        metadata = doc.get("metadata")
        if not isinstance(metadata, dict):
            raise DocumentError(url, "expected an object of metadata documents", "/metadata", rule="hierarchy.consolidated")
        self.h.consolidated = True
        self._read_consolidated(metadata, url)
        return self.finish()

    def _read_consolidated(self, metadata: dict[str, Any], url: str) -> None:
        base = "/metadata"
        by_path: dict[str, dict[str, tuple[Any, str]]] = {}
        for key, value in metadata.items():
            folder, name = posixpath.split(key)
            if name in (V2_ARRAY, V2_GROUP, V2_ATTRS):
                by_path.setdefault(folder.strip("/"), {})[name] = (value, join_pointer(base, key))
            else:
                log.warning("%s: ignoring unknown consolidated key %r", url, key)
        for path, entries in sorted(by_path.items()):
            if self.selection.skipped(path):
                continue
            try:
                kinds = [n for n in (V2_ARRAY, V2_GROUP) if n in entries]
                if not kinds:
                    value, pointer = entries[V2_ATTRS]
                    raise DocumentError(url, ".zattrs without .zarray or .zgroup", pointer, rule="hierarchy.consolidated")
                if len(kinds) == 2:
                    raise DocumentError(url, "both .zarray and .zgroup present", entries[V2_GROUP][1], rule="hierarchy.ambiguous")
                docs = {}
                locs = {}
                for name, (value, pointer) in entries.items():
                    docs[name] = require_object(value, url, pointer)
                    locs[name] = Location(url, pointer)
                kind = "array" if kinds[0] == V2_ARRAY else "group"
                self.h.nodes[path] = _v2_node(path, kind, docs, locs)
            except DocumentError as exc:
                self.h.failed[path] = exc
        if "" not in self.h.nodes and "" not in self.h.failed:
            raise HierarchyError(f"{display_location(url)}: consolidated metadata has no root .zgroup or .zarray")
        _link_members(self.h, url, base)


def _v2_node(path: str, kind: str, docs: dict[str, Any], locs: dict[str, Location]) -> Node:
    main = V2_ARRAY if kind == "array" else V2_GROUP
    check_format(docs[main], 2, locs[main].url, locs[main].pointer)
    return Node(
        path=path,
        kind=kind,  # type: ignore[arg-type]
        zarr_format=2,
        documents=docs,
        locations=locs,
    )


def _link_members(h: Hierarchy, url: str, base: str) -> None:
    """Attach consolidated nodes to their parents; orphans become failures."""
    for path in sorted(h.nodes, key=lambda p: (p.count("/"), p)):
        if not path:
            continue
        parent = posixpath.dirname(path)
        parent_node = h.nodes.get(parent)
        if parent_node is not None and parent_node.kind == "group":
            parent_node.members.append(path)
        elif parent not in h.failed:
            node = h.nodes.pop(path)
            what = "an array" if parent_node is not None else "missing"
            h.failed[path] = DocumentError(
                node.location.url,
                f"parent {parent or '(root)'!r} is {what}, so this node is not in the hierarchy",
                node.location.pointer,
                rule="hierarchy.orphan",
            )
    for path in h.failed:
        parent = posixpath.dirname(path)
        if path and parent in h.nodes and h.nodes[parent].kind == "group":
            h.nodes[parent].members.append(path)
