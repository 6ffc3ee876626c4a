"""Expand dependent arrays (the Zarr dependent-arrays convention) into full nodes.

A primary array declares dependent arrays in an attribute whose value maps
names to *partial* array metadata. Completing one: every missing key except
``attributes`` is copied from the primary's metadata; a missing
``attributes`` becomes the primary's attributes without the declaration
itself (which would otherwise declare the same arrays forever).

Both spellings are accepted: ``dependent-arrays`` (the convention's text) and
``dependent_arrays`` (its example). A name declared under both is an error,
as is a declaration that is not an object of objects.

The convention is written for Zarr v3. For a v2 primary array the same rule
is applied to the ``.zarray`` keys, and the partial document's
``attributes`` key stands for ``.zattrs``.
"""

from __future__ import annotations

import copy
from typing import Any

from catalogue.errors import DocumentError, join_pointer
from catalogue.model.nodes import V2_ARRAY, V2_ATTRS, V3_DOCUMENT, Hierarchy, Location, Node
from catalogue.model.structure import check_format, check_v3

DECLARATION_KEYS = ("dependent-arrays", "dependent_arrays")


def declarations(node: Node) -> tuple[dict[str, tuple[Any, str]], dict[str, DocumentError]]:
    """Declared dependent arrays of ``node`` and the declarations that are wrong.

    Returns (name → (partial document, pointer), path → error); a wrong
    declaration fails only the dependent array it names.
    """
    attrs = node.attributes
    found: dict[str, tuple[Any, str]] = {}
    errors: dict[str, DocumentError] = {}
    if node.kind != "array" or not attrs:
        return found, errors
    loc = node.attributes_location
    for key in DECLARATION_KEYS:
        if key not in attrs:
            continue
        block = attrs[key]
        if not isinstance(block, dict):
            errors[_path(node, key)] = DocumentError(
                loc.url, "expected an object of dependent arrays", join_pointer(loc.pointer, key),
                rule="dependent.declaration",
            )
            continue
        for name, partial in block.items():
            pointer = join_pointer(loc.pointer, key, name)
            if name in found:
                message = f"dependent array {name!r} is declared under both {DECLARATION_KEYS[0]!r} and {DECLARATION_KEYS[1]!r}"
            elif not name or "/" in name or name in (".", "..") or name.startswith("__"):
                message = f"invalid dependent array name {name!r}"
            elif not isinstance(partial, dict):
                message = "expected a partial array metadata object"
            else:
                found[name] = (partial, pointer)
                continue
            found.pop(name, None)
            errors[_path(node, name)] = DocumentError(loc.url, message, pointer, rule="dependent.declaration")
    return found, errors


def _path(node: Node, name: str) -> str:
    return f"{node.path}/{name}" if node.path else name


def complete(primary: Node, name: str, partial: dict[str, Any], pointer: str) -> Node:
    """The full node for one dependent array of ``primary``."""
    loc = primary.attributes_location
    location = Location(loc.url, pointer)
    path = f"{primary.path}/{name}" if primary.path else name
    primary_attrs = {k: v for k, v in (primary.attributes or {}).items() if k not in DECLARATION_KEYS}
    if primary.zarr_format == 3:
        doc = copy.deepcopy({k: v for k, v in primary.metadata.items() if k != "attributes"})
        doc.update(copy.deepcopy({k: v for k, v in partial.items()}))
        if "attributes" not in partial:
            doc["attributes"] = copy.deepcopy(primary_attrs)
        if check_v3(doc, location.url, location.pointer) != "array":
            raise DocumentError(location.url, 'a dependent array must have node_type "array"',
                                join_pointer(location.pointer, "node_type"), rule="dependent.declaration")
        return Node(path=path, kind="array", zarr_format=3, documents={V3_DOCUMENT: doc},
                    locations={V3_DOCUMENT: location}, primary=primary.path, declared_keys=tuple(partial))
    zarray = copy.deepcopy(primary.metadata)
    zarray.update(copy.deepcopy({k: v for k, v in partial.items() if k != "attributes"}))
    attrs = copy.deepcopy(partial["attributes"]) if "attributes" in partial else copy.deepcopy(primary_attrs)
    check_format(zarray, 2, location.url, location.pointer)
    if not isinstance(attrs, dict):
        raise DocumentError(location.url, "expected an object", join_pointer(location.pointer, "attributes"),
                            rule="dependent.declaration")
    attrs_location = (Location(loc.url, join_pointer(pointer, "attributes")) if "attributes" in partial
                      else primary.attributes_location)
    return Node(path=path, kind="array", zarr_format=2, documents={V2_ARRAY: zarray, V2_ATTRS: attrs},
                locations={V2_ARRAY: location, V2_ATTRS: attrs_location}, primary=primary.path,
                declared_keys=tuple(partial))


def expand_dependent_arrays(h: Hierarchy) -> None:
    """Add a node for every dependent array declared in ``h`` (in place)."""
    for node in list(h.nodes.values()):
        declared, errors = declarations(node)
        h.failed.update(errors)
        for name, (partial, pointer) in declared.items():
            path = _path(node, name)
            try:
                h.nodes[path] = complete(node, name, partial, pointer)
                node.dependents.append(path)
            except DocumentError as exc:
                h.failed[path] = exc
