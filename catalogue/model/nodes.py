"""The in-memory model of a harvested hierarchy: nodes and their documents.

A node keeps its metadata documents exactly as parsed, keyed by document
name: ``{"zarr.json": {...}}`` for Zarr v3 and ``{".zarray" | ".zgroup": {...},
".zattrs": {...}}`` for Zarr v2. This is also the shape ``catalogue metadata``
prints, so "lossless" has one precise meaning: the rebuilt ``documents`` equal
the harvested ones as JSON values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from catalogue.errors import DocumentError
from catalogue.model.paths import quote_path

Kind = Literal["array", "group"]

V3_DOCUMENT = "zarr.json"
V2_ARRAY = ".zarray"
V2_GROUP = ".zgroup"
V2_ATTRS = ".zattrs"
V2_CONSOLIDATED = ".zmetadata"


@dataclass(frozen=True)
class Location:
    """Where a document came from: the URL of the file and the JSON pointer in it.

    The pointer is empty for a document that is a file of its own, and points
    into ``.zmetadata`` or the root ``zarr.json`` for consolidated metadata.
    """

    url: str
    pointer: str = ""


@dataclass
class Node:
    """One group or array of a hierarchy, with its metadata documents."""

    path: str
    kind: Kind
    zarr_format: Literal[2, 3]
    documents: dict[str, dict[str, Any]]
    locations: dict[str, Location]
    members: list[str] = field(default_factory=list)
    #: For dependent arrays: the path of the primary array that declares them.
    primary: str | None = None
    #: For primary arrays: names of the dependent arrays they declare.
    dependents: list[str] = field(default_factory=list)
    #: For dependent arrays: the keys their partial metadata declares (the rest is the primary's).
    declared_keys: tuple[str, ...] = ()
    #: A content hash of the node's metadata documents (blake2b-128, hex; an ETag where the
    #: store listed one), so a later harvest or provenance record can tell what changed.
    fingerprint: str = ""
    #: A group with no document of its own: the root of a store whose children have theirs
    #: (as some v3 writers leave it). Its ``documents`` are the least a group says
    #: (format and node type), so every layer above treats it as a group.
    implicit: bool = False
    #: URLs of files beside the node's documents that look like copies of them (editor
    #: backups: ``.zattrs~``, ``zarr.json.bak``). Never read; validation names each.
    strays: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def metadata(self) -> dict[str, Any]:
        """The main metadata document (zarr.json, .zarray or .zgroup)."""
        if self.zarr_format == 3:
            return self.documents[V3_DOCUMENT]
        return self.documents[V2_ARRAY if self.kind == "array" else V2_GROUP]

    @property
    def attributes(self) -> dict[str, Any] | None:
        """The user attributes, or None when the node has none at all."""
        if self.zarr_format == 3:
            attrs = self.metadata.get("attributes")
        else:
            attrs = self.documents.get(V2_ATTRS)
        return attrs if isinstance(attrs, dict) else None

    @property
    def location(self) -> Location:
        """Location of the main metadata document."""
        if self.zarr_format == 3:
            return self.locations[V3_DOCUMENT]
        return self.locations[V2_ARRAY if self.kind == "array" else V2_GROUP]

    @property
    def attributes_location(self) -> Location:
        """Where the attributes are: inside zarr.json (v3) or the .zattrs file (v2)."""
        if self.zarr_format == 3:
            loc = self.locations[V3_DOCUMENT]
            return Location(loc.url, loc.pointer + "/attributes")
        return self.locations.get(V2_ATTRS) or self.location


@dataclass
class Hierarchy:
    """A harvested hierarchy: its root URL, its nodes by path, and what failed.

    ``failed`` maps the path of every node whose documents could not be used to
    the error; such nodes are absent from ``nodes`` but the catalogue keeps
    their previously catalogued version.
    """

    url: str
    zarr_format: Literal[2, 3]
    nodes: dict[str, Node] = field(default_factory=dict)
    failed: dict[str, DocumentError] = field(default_factory=dict)
    consolidated: bool = False
    #: Warnings about nodes that may exist but could not be found: groups whose children
    #: an unlistable store (HTTP) could not enumerate, explicitly listed nodes not found.
    undiscovered: list[str] = field(default_factory=list)

    @property
    def root(self) -> Node | None:
        return self.nodes.get("")

    @property
    def errors(self) -> list[DocumentError]:
        return list(self.failed.values())

    def iri(self, path: str) -> str:
        return f"{self.url}/{quote_path(path)}" if path else self.url
