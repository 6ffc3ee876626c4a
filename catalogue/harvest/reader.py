"""Read a Zarr hierarchy's metadata documents from a store into a Hierarchy.

Only metadata is read, never chunk data. Consolidated metadata (v2
``.zmetadata``, v3 inline ``consolidated_metadata``) is used when present, as
Zarr clients do; otherwise the hierarchy is walked folder by folder, looking
only one level below each group (arrays are never descended into, so chunk
folders cost nothing).

A node whose documents cannot be read, parsed or understood is recorded in
``Hierarchy.failed`` and the walk goes on. Problems that make the hierarchy
itself meaningless (no metadata at the root, a symlink loop) raise.
"""

from __future__ import annotations

import logging
import posixpath
from collections import deque
from typing import Any

from catalogue.errors import DocumentError, HierarchyError, display_location, join_pointer
from catalogue.harvest.documents import parse_object, require_object
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
from catalogue.model.structure import check_format, check_v3
from catalogue.storage.store import StoreAccess

log = logging.getLogger(__name__)


def _key(path: str, name: str) -> str:
    return posixpath.join(path, name) if path else name


def read_hierarchy(store: StoreAccess) -> Hierarchy:
    """Read every node's metadata below the store root (each document once)."""
    root = store.read(V3_DOCUMENT, consolidated=True)
    if root is not None:
        if any(store.exists(n) for n in (V2_GROUP, V2_ARRAY)):
            log.warning("%s holds both zarr.json and v2 metadata; reading it as Zarr v3", store.url)
        return _V3Reader(store).read(root)
    consolidated = store.read(V2_CONSOLIDATED, consolidated=True)
    if consolidated is not None:
        return _V2Reader(store).read_consolidated(consolidated)
    if any(store.exists(n) for n in (V2_GROUP, V2_ARRAY)):
        reader = _V2Reader(store)
        reader.walk()
        return reader.h
    raise HierarchyError(
        f"{display_location(store.url)}: no Zarr metadata found (expected zarr.json, .zgroup, .zarray or .zmetadata)"
    )


class _Walker:
    """Shared walking logic: breadth-first over groups, loop-safe on local disks.

    Every child folder of a group is a candidate node: ``read_node`` reads its
    metadata documents once and returns None for a folder that has none.
    """

    zarr_format: int

    def __init__(self, store: StoreAccess) -> None:
        self.store = store
        self.h = Hierarchy(url=store.url, zarr_format=self.zarr_format)  # type: ignore[arg-type]

    def read_node(self, path: str) -> Node | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def walk(self) -> None:
        """Walk from the root; failed nodes are still descended into by listing."""
        queue: deque[tuple[str, tuple[str, ...]]] = deque([("", ())])
        while queue:
            path, ancestors = queue.popleft()
            try:
                node = self.read_node(path)
            except DocumentError as exc:
                self.h.failed[path] = exc
                node = None
            if node is not None:
                self.h.nodes[path] = node
                if node.kind == "array":
                    continue
            elif path not in self.h.failed:
                continue
            real = self.store.real_location(path)
            if real is not None and real in ancestors:
                raise HierarchyError(
                    f"{display_location(self.store.key_url(path))}: symlink loop (this folder is one of its own ancestors)"
                )
            chain = (*ancestors, real) if real is not None else ancestors
            queue.extend((_key(path, name), chain) for name in self.store.child_folders(path))
        for path in list(self.h.nodes) + list(self.h.failed):
            if path:
                parent = posixpath.dirname(path)
                if parent in self.h.nodes:
                    self.h.nodes[parent].members.append(path)


class _V3Reader(_Walker):
    zarr_format = 3
    _root: bytes = b""

    def read_node(self, path: str) -> Node | None:
        key = _key(path, V3_DOCUMENT)
        url = self.store.key_url(key)
        data = self._root if path == "" else self.store.read(key)
        if data is None:
            return None
        doc = parse_object(data, url)
        return self._node(path, doc, Location(url))

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
        self._root = data
        url = self.store.key_url(V3_DOCUMENT)
        try:
            root_doc = parse_object(data, url)
            consolidated = root_doc.get("consolidated_metadata")
        except DocumentError:
            consolidated = None
        if isinstance(consolidated, dict) and isinstance(consolidated.get("metadata"), dict):
            self._read_consolidated(root_doc, url)
        else:
            self.walk()
        return self.h

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
                doc = require_object(doc, url, pointer)
                self.h.nodes[path] = self._node(path, doc, Location(url, pointer))
            except DocumentError as exc:
                self.h.failed[path or flat_path] = exc
        _link_members(self.h, url, base)


class _V2Reader(_Walker):
    zarr_format = 2

    def read_node(self, path: str) -> Node | None:
        docs: dict[str, dict[str, Any]] = {}
        locs: dict[str, Location] = {}
        kind = None
        for name, node_kind in ((V2_ARRAY, "array"), (V2_GROUP, "group")):
            key = _key(path, name)
            data = self.store.read(key)
            if data is not None:
                url = self.store.key_url(key)
                if kind is not None:
                    raise DocumentError(url, "both .zarray and .zgroup present; the node is ambiguous", rule="hierarchy.ambiguous")
                docs[name] = parse_object(data, url)
                locs[name] = Location(url)
                kind = node_kind
        if kind is None:
            return None
        attrs_key = _key(path, V2_ATTRS)
        data = self.store.read(attrs_key)
        if data is not None:
            url = self.store.key_url(attrs_key)
            docs[V2_ATTRS] = parse_object(data, url)
            locs[V2_ATTRS] = Location(url)
        return _v2_node(path, kind, docs, locs)

    def read_consolidated(self, data: bytes) -> Hierarchy:
        """Read the hierarchy described by ``.zmetadata`` (whose bytes are ``data``)."""
        url = self.store.key_url(V2_CONSOLIDATED)
        doc = parse_object(data, url)
        metadata = doc.get("metadata")
        if not isinstance(metadata, dict):
            raise DocumentError(url, "expected an object of metadata documents", "/metadata", rule="hierarchy.consolidated")
        self.h.consolidated = True
        self._read_consolidated(metadata, url)
        return self.h

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
