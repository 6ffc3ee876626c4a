"""The ZEP 6 Zarr Object Model of a hierarchy, as JSON.

A ZOM node is the node's metadata with its user attributes under
``attributes``; a ZOM group adds ``members``, mapping child names to ZOM
nodes. Following ZEP 6, a group metadata key that is itself called
``members`` is renamed by prefixing underscores until it is unique.

Deliberate choices (documented in docs/design.md):
- v2 nodes keep ``zarr_format`` (the key the v2 spec defines), not the
  ``zarr_version`` of ZEP 6's v2 schema, which no v2 document carries.
- The inline v3 ``consolidated_metadata`` block is left out: the ZOM's
  ``members`` already represent it.
- Dependent arrays are not members (they are not group children); they stay
  declared in the primary array's attributes.
"""

from __future__ import annotations

from typing import Any

from catalogue.model.nodes import Hierarchy, Node


def _rename_members(meta: dict[str, Any]) -> dict[str, Any]:
    if "members" not in meta:
        return meta
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if key.lstrip("_") == "members":
            key = "_" + key
        out[key] = value
    return out


def node_zom(h: Hierarchy, node: Node) -> dict[str, Any]:
    """The ZOM of one node and, for groups, everything below it."""
    if node.zarr_format == 3:
        zom = dict(node.metadata)
        zom.setdefault("attributes", {})
    else:
        zom = dict(node.metadata)
        zom["attributes"] = node.attributes if node.attributes is not None else {}
    if node.kind == "group":
        zom = _rename_members(zom)
        zom["members"] = {
            h.nodes[child].name: node_zom(h, h.nodes[child])
            for child in sorted(node.members)
            if child in h.nodes
        }
    return zom


def hierarchy_zom(h: Hierarchy) -> dict[str, Any]:
    """The ZOM of the whole hierarchy (its root node)."""
    if h.root is None:
        raise ValueError("the hierarchy root could not be read")
    return node_zom(h, h.root)
