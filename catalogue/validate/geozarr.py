"""The GeoZarr conventions' rules: ``proj:``, ``spatial:`` and ``multiscales``.

For a node that declares one of the conventions (``model/conventions.py`` recognises
them by UUID or name), its document is checked against the convention's bundled,
corrected JSON Schema (``schemas/conventions/``; findings point into the document as
the other schema rules do). Convention attributes used without the declaration are a
warning: readers that go by the declaration will not see them.

Then what a schema cannot say, on every node that holds the attributes, declared or
not: each CRS representation is resolved by pyproj (called directly: ``extents.crs``
is a room above), the representations must agree, a geographic CRS's latitudes lie
within ±90, ``spatial:bbox`` is ordered, the transform is not degenerate and, with the
grid's shape, gives the same box as ``spatial:bbox``, ``spatial:dimensions`` name the
array's dimensions, and multiscales levels name nodes that exist. Values inherited from
a parent group are checked where they are written, once.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from catalogue.model.conventions import (
    GEOZARR_CONVENTIONS,
    MULTISCALES,
    KnownConvention,
    declares,
    uses,
)
from catalogue.model.geozarr import (
    PROJ_KEYS,
    GeoZarrError,
    dimension_names,
    effective_geo,
    grid_shape,
    parse_multiscales,
    parse_proj,
    parse_spatial,
)
from catalogue.model.json import short
from catalogue.resources import schema_text
from catalogue.validate.context import ATTRS, META, NodeChecker
from catalogue.validate.schemas import schema_errors

if TYPE_CHECKING:
    # imported where used: a process that never validates need not pay for them (~0.2 s)
    from jsonschema import Draft7Validator
    from pyproj import CRS

#: How far a box derived from the transform may lie from ``spatial:bbox``, in cells:
#: writers round coordinates, a disagreement of a cell or more is a real one.
BBOX_TOLERANCE_CELLS = 0.01


@cache
def convention_validator(known: KnownConvention) -> Draft7Validator:
    """The corrected schema of one convention, compiled once (no ``$ref`` is fetched)."""
    from jsonschema import Draft7Validator
    from referencing import Registry

    return Draft7Validator(json.loads(schema_text(known.schema)), registry=Registry())


def check_geozarr(c: NodeChecker) -> None:
    attributes = c.node.attributes
    if not attributes:
        return
    ome = isinstance(attributes.get("multiscales"), list)  # OME-Zarr 0.4's multiscales (validate/ome.py)
    for known in GEOZARR_CONVENTIONS:
        used = [key for key in uses(attributes, known) if not (ome and key == "multiscales")]
        if declares(attributes, known):
            _schema(c, known, attributes)
        elif used:
            c.add("geozarr.undeclared", ATTRS, (used[0],),
                  f"{', '.join(used[:3])} used without declaring the {known.key} convention "
                  f"(uuid {known.uuid}) in zarr_conventions")
    crs = _proj(c, attributes)
    _spatial(c, attributes, crs)
    if "multiscales" in attributes and not ome:
        _multiscales(c, attributes)


def _schema(c: NodeChecker, known: KnownConvention, attributes: dict[str, Any]) -> None:
    node = c.node
    document = {"zarr_format": node.zarr_format, "node_type": node.kind, "attributes": attributes}
    rule = f"geozarr.{known.key}.schema"
    for tokens, _keyword, message in schema_errors(convention_validator(known), document):
        if tokens and tokens[0] == "attributes":
            c.add(rule, ATTRS, tokens[1:], message)
        else:
            c.add(rule, META, tokens, message)


# ----------------------------------------------------------------------------- proj:
def _proj(c: NodeChecker, attributes: dict[str, Any]) -> CRS | None:
    """Check the node's own ``proj:`` values; the CRS that applies to the node (its own or
    inherited), for the spatial checks."""
    from pyproj import CRS

    try:
        own = parse_proj(attributes)
    except GeoZarrError as exc:
        key = next((k for k in PROJ_KEYS if k in str(exc)), PROJ_KEYS[0])
        c.add("geozarr.proj.malformed", ATTRS, (key,), str(exc))
        return None
    if own is not None:
        resolved: list[tuple[str, CRS]] = []
        for key, value in own.representations():
            try:
                resolved.append((key, CRS.from_user_input(value)))
            except Exception as exc:  # pyproj raises CRSError, or TypeError for odd PROJJSON
                c.add("geozarr.proj.crs-unresolvable", ATTRS, (key,),
                      f"{key} {short(value)} is not a CRS PROJ can resolve ({_first_line(exc)})")
        for key, crs in resolved[1:]:
            first_key, first = resolved[0]
            if not first.equals(crs, ignore_axis_order=True):
                c.add("geozarr.proj.crs-conflict", ATTRS, (key,),
                      f"{key} is {crs.name!r} but {first_key} is {first.name!r}")
        return resolved[0][1] if resolved else None
    try:
        inherited = effective_geo(c.h, c.node.path).proj
        return CRS.from_user_input(inherited.representations()[0][1]) if inherited else None
    except Exception:  # reported where it is written
        return None


# -------------------------------------------------------------------------- spatial:
def _spatial(c: NodeChecker, attributes: dict[str, Any], crs: CRS | None) -> None:
    try:
        own = parse_spatial(attributes)
    except GeoZarrError as exc:
        key = str(exc).split(" ", 1)[0]
        c.add("geozarr.spatial.malformed", ATTRS, (key if key in attributes else "spatial:bbox",), str(exc))
        return
    try:
        effective = effective_geo(c.h, c.node.path).spatial
    except GeoZarrError:
        effective = own
    if own is None or effective is None:
        return
    geographic = crs is not None and crs.is_geographic
    if own.bbox is not None:
        xmin, ymin, xmax, ymax = own.bbox
        if ymin > ymax or (xmin > xmax and not geographic):
            c.add("geozarr.spatial.bbox-order", ATTRS, ("spatial:bbox",), f"min > max in {list(own.bbox)}")
        if geographic and not (min(ymin, ymax) >= -90 and max(ymin, ymax) <= 90):
            c.add("geozarr.spatial.latitude", ATTRS, ("spatial:bbox",),
                  f"latitudes {ymin}, {ymax} outside -90..90 in the geographic CRS {crs.name!r}")
    if not own.affine:
        c.add("geozarr.spatial.transform-type", ATTRS, ("spatial:transform_type",),
              f"transform type {own.transform_type!r} is not interpreted (only affine is defined)")
        return
    if own.transform is not None and own.degenerate:
        c.add("geozarr.spatial.transform-degenerate", ATTRS, ("spatial:transform",),
              f"transform {list(own.transform)} has determinant 0")
        return
    _dimensions(c, effective)
    shape = grid_shape(c.node, effective)
    bounds = effective.transform_bounds(shape)
    if bounds is None or (own.transform is None and own.shape is None):
        return
    if geographic and not (bounds[1] >= -90 - 1e-9 and bounds[3] <= 90 + 1e-9):
        c.add("geozarr.spatial.latitude", ATTRS, ("spatial:transform",),
              f"the grid reaches latitudes {bounds[1]:g}..{bounds[3]:g}, outside -90..90 in {crs.name!r}")
    if effective.bbox is not None:
        steps = effective.cell_steps() or (0.0, 0.0)
        tolerance = BBOX_TOLERANCE_CELLS * max(steps) + 1e-9 * max(abs(v) for v in (*bounds, 1.0))
        if any(abs(a - b) > tolerance for a, b in zip(bounds, effective.bbox, strict=True)):
            c.add("geozarr.spatial.transform-bbox", ATTRS, ("spatial:transform",),
                  f"transform and shape {list(shape or ())} give the box {[round(v, 9) for v in bounds]}, "
                  f"spatial:bbox is {list(effective.bbox)} ({effective.registration} registration)")


def _dimensions(c: NodeChecker, effective: Any) -> None:
    node = c.node
    if node.kind != "array" or effective.dimensions is None:
        return
    names = dimension_names(node)
    if names is None:
        return
    missing = [d for d in effective.dimensions if d not in names]
    if missing:
        c.add("geozarr.spatial.dimensions", ATTRS, ("spatial:dimensions",) if "spatial:dimensions" in (node.attributes or {}) else (),
              f"spatial:dimensions {list(effective.dimensions)} name {missing[0]!r}, not one of {names}")
        return
    if effective.shape is not None and "spatial:shape" in (node.attributes or {}):
        shape = node.metadata.get("shape")
        sizes = [shape[names.index(d)] for d in effective.dimensions] if isinstance(shape, list) else None
        if sizes is not None and tuple(sizes) != effective.shape:
            c.add("geozarr.spatial.shape", ATTRS, ("spatial:shape",),
                  f"spatial:shape {list(effective.shape)} but the array's {list(effective.dimensions)} sizes are {sizes}")




# ----------------------------------------------------------------------- multiscales
def _multiscales(c: NodeChecker, attributes: dict[str, Any]) -> None:
    try:
        layout = parse_multiscales(attributes["multiscales"])
    except GeoZarrError as exc:
        if not declares(attributes, MULTISCALES):  # declared: the schema has said it, with its pointer
            c.add("geozarr.multiscales.malformed", ATTRS, ("multiscales",), str(exc))
        return
    base = c.node.path
    for i, level in enumerate(layout.layout):
        for key in ("asset", "derived_from"):
            relative = getattr(level, key)
            if relative is None:
                continue
            path = f"{base}/{relative}" if base else relative
            if path not in c.h.nodes and path not in c.h.failed:
                c.add("geozarr.multiscales.asset", ATTRS, ("multiscales", "layout", i, key),
                      f"{key} {relative!r} names no node of the hierarchy")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else type(exc).__name__


__all__ = ["check_geozarr", "convention_validator"]
