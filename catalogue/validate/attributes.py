"""Attribute rules: CF attributes, xarray's _ARRAY_DIMENSIONS, Zarr conventions.

Only the attributes that have a defined meaning are looked at; everything
else in attributes is user data and is never interpreted (a ``$ref`` or an
``@context`` there is just a string).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from catalogue.model.conventions import convention_problems
from catalogue.model.json import short
from catalogue.validate.context import ATTRS, NodeChecker

_STANDARD_NAME = re.compile(r"^[a-z][a-z0-9_]*( [a-z_]+)?$")
_SINCE = re.compile(r"^\s*\S+\s+since\s+(.+?)\s*$", re.IGNORECASE)
_CF_DATE = re.compile(
    r"^-?(\d{1,4})-(\d{1,2})-(\d{1,2})"
    r"(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.\d+)?)?)?"
    r"\s*(?:Z|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?)?$"
)
_GRID_MAPPING_EXTENDED = re.compile(r"(\S+):")


def check_attributes(c: NodeChecker, attrs: dict[str, Any], rank: int | None) -> None:
    node = c.node
    if "_ARRAY_DIMENSIONS" in attrs and node.kind == "array":
        dims = attrs["_ARRAY_DIMENSIONS"]
        if not (isinstance(dims, list) and all(isinstance(d, str) for d in dims)):
            c.add("cf.array-dimensions", ATTRS, ("_ARRAY_DIMENSIONS",), f"expected a list of strings, got {short(dims)}")
        elif rank is not None and len(dims) != rank:
            c.add("cf.array-dimensions", ATTRS, ("_ARRAY_DIMENSIONS",), f"{len(dims)} dimension names for {rank} dimensions")
    if "units" in attrs:
        _units(c, attrs["units"])
    if "standard_name" in attrs:
        name = attrs["standard_name"]
        if not (isinstance(name, str) and _STANDARD_NAME.match(name)):
            c.add("cf.standard_name", ATTRS, ("standard_name",),
                  f"expected a CF standard name (letters, digits, underscores; optional modifier), got {short(name)}")
    if "grid_mapping" in attrs and node.kind == "array":
        _grid_mapping(c, attrs["grid_mapping"])
    if "coordinates" in attrs and node.kind == "array":
        names = attrs["coordinates"]
        if not isinstance(names, str):
            c.add("cf.coordinates", ATTRS, ("coordinates",), f"expected a space-separated string, got {short(names)}")
        else:
            missing = [n for n in names.split() if not _sibling_exists(c, n)]
            if missing:
                c.add("cf.coordinates", ATTRS, ("coordinates",), f"no variable {missing[0]!r} next to this array")
    if "zarr_conventions" in attrs:
        _conventions(c, attrs["zarr_conventions"])


def _units(c: NodeChecker, units: Any) -> None:
    if not isinstance(units, str) or not units.strip():
        c.add("cf.units", ATTRS, ("units",), f"expected a non-empty string, got {short(units)}")
        return
    since = _SINCE.match(units)
    if since:
        m = _CF_DATE.match(since.group(1))
        ok = bool(m) and 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31
        if ok and m.group(4) is not None:
            ok = int(m.group(4)) <= 24 and int(m.group(5)) <= 59 and int(m.group(6) or 0) <= 60
        if not ok:
            c.add("cf.units", ATTRS, ("units",), f"the reference date in {short(units)} is not a valid date")


def _sibling_exists(c: NodeChecker, name: str) -> bool:
    node = c.node
    if node.primary is not None:
        node = c.h.nodes.get(node.primary, node)
    parent = posixpath.dirname(node.path) if node.path else None
    if parent is None:
        return False
    path = posixpath.join(parent, name) if parent else name
    return path in c.h.nodes or path in c.h.failed


def _grid_mapping(c: NodeChecker, value: Any) -> None:
    at = ("grid_mapping",)
    if not isinstance(value, str) or not value.strip():
        c.add("cf.grid_mapping", ATTRS, at, f"expected the name of a grid mapping variable, got {short(value)}")
        return
    names = _GRID_MAPPING_EXTENDED.findall(value) if ":" in value else value.split()
    if not names or (":" not in value and len(names) != 1):
        c.add("cf.grid_mapping", ATTRS, at, f"malformed grid_mapping {short(value)}")
        return
    for name in names:
        if not _sibling_exists(c, name):
            c.add("cf.grid_mapping", ATTRS, at, f"grid mapping variable {name!r} does not exist next to this array")
            return


def _conventions(c: NodeChecker, value: Any) -> None:
    rule, at = "conventions.zarr_conventions", ("zarr_conventions",)
    if not isinstance(value, list):
        c.add(rule, ATTRS, at, f"expected a list of convention objects, got {short(value)}")
        return
    for i, entry in enumerate(value):
        for tokens, message in convention_problems(entry):
            c.add(rule, ATTRS, (*at, i, *tokens), message)
