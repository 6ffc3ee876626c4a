"""The GeoZarr conventions' attributes: ``proj:``, ``spatial:`` and ``multiscales``.

The December 2025 reset of the GeoZarr draft split it into Zarr conventions
(``zarr-conventions/proj``, ``/spatial``, ``/multiscales``; identities in
``model/conventions.py``). This module parses their attributes once, into small frozen
types, and says which values apply to a node:

* ``proj:`` (``proj:code``, ``proj:wkt2``, ``proj:projjson``): the CRS, at least one of
  the three; ``null`` means "no CRS" and is the same as leaving the key out.
* ``spatial:`` (``dimensions``, ``bbox``, ``transform_type``, ``transform``, ``shape``,
  ``registration``): how array indices map to X/Y coordinates. The transform is
  ``[a, b, c, d, e, f]`` with ``x = a*col + b*row + c``, ``y = d*col + e*row + f``, index
  ``(0, 0)`` being the top-left corner of the top-left cell (GDAL/Affine convention).
* ``multiscales`` (``layout`` of levels with ``asset``, ``derived_from``, ``transform``
  ``{scale, translation}``, ``resampling_method``, and per level ``spatial:shape`` and
  ``spatial:transform``).

Inheritance (:func:`effective_geo`), as the specs say it: a group's ``proj:`` applies
to its direct child arrays and an array's own ``proj:`` replaces it whole; a group's
``spatial:`` keys apply to its direct child arrays, which may override or supplement
them key by key. A multiscales group's ``proj:``/``spatial:`` apply to its levels, and a
layout entry's ``spatial:shape``/``spatial:transform`` to the level's asset (and through
it, when the asset is a group, to that group's arrays). Parsing raises
:class:`GeoZarrError` naming the value received; no geometry is computed here beyond
the corners of a grid (pyproj's work is in ``extents/``).
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from catalogue.errors import CatalogueError
from catalogue.model.extents import MultiscaleLevel, Multiscales
from catalogue.model.json import short
from catalogue.model.nodes import Hierarchy, Node

__all__ = [
    "EffectiveGeo",
    "GeoZarrError",
    "Level",
    "MultiscalesLayout",
    "Proj",
    "Spatial",
    "dimension_names",
    "effective_geo",
    "grid_shape",
    "multiscales_extent",
    "parse_multiscales",
    "parse_proj",
    "parse_spatial",
]

PROJ_KEYS: Final = ("proj:code", "proj:wkt2", "proj:projjson")
SPATIAL_KEYS: Final = ("spatial:dimensions", "spatial:bbox", "spatial:transform_type", "spatial:transform",
                       "spatial:shape", "spatial:registration")
#: The spatial: keys a multiscales layout entry may carry for its level.
LEVEL_SPATIAL_KEYS: Final = ("spatial:shape", "spatial:transform")


class GeoZarrError(CatalogueError):
    """A GeoZarr convention attribute that is not what its convention defines (the
    message names the key and the value received)."""


# ----------------------------------------------------------------------------- proj:
@dataclass(frozen=True)
class Proj:
    """A node's ``proj:`` CRS declaration: any of an authority code, WKT2 and PROJJSON."""

    code: str | None = None
    wkt2: str | None = None
    projjson: dict[str, Any] | None = None

    def representations(self) -> list[tuple[str, str | dict[str, Any]]]:
        """``(key, value)`` of each representation given, WKT2 first: the spec says WKT2
        takes precedence when the representations disagree."""
        out: list[tuple[str, str | dict[str, Any]]] = []
        if self.wkt2 is not None:
            out.append(("proj:wkt2", self.wkt2))
        if self.code is not None:
            out.append(("proj:code", self.code))
        if self.projjson is not None:
            out.append(("proj:projjson", self.projjson))
        return out


def parse_proj(attributes: dict[str, Any]) -> Proj | None:
    """The ``proj:`` declaration of a node's attributes; ``None`` when it has none (no
    key, or every key ``null``)."""
    values = {key: attributes.get(key) for key in PROJ_KEYS}
    if all(value is None for value in values.values()):
        return None
    code, wkt2, projjson = values["proj:code"], values["proj:wkt2"], values["proj:projjson"]
    if code is not None and not (isinstance(code, str) and code.strip()):
        raise GeoZarrError(f"proj:code must be an authority:code string, got {short(code)}")
    if wkt2 is not None and not (isinstance(wkt2, str) and wkt2.strip()):
        raise GeoZarrError(f"proj:wkt2 must be a WKT2 string, got {short(wkt2)}")
    if projjson is not None and not isinstance(projjson, dict):
        raise GeoZarrError(f"proj:projjson must be a PROJJSON object, got {short(projjson)}")
    return Proj(code=code, wkt2=wkt2, projjson=projjson)


# -------------------------------------------------------------------------- spatial:
Registration = Literal["pixel", "node"]


@dataclass(frozen=True)
class Spatial:
    """A node's ``spatial:`` attributes (after inheritance, see :func:`effective_geo`)."""

    #: ``[Y dimension name, X dimension name]`` (the spec orders them by axis role).
    dimensions: tuple[str, str] | None = None
    #: ``(xmin, ymin, xmax, ymax)`` in the CRS's units.
    bbox: tuple[float, float, float, float] | None = None
    transform_type: str = "affine"
    transform: tuple[float, float, float, float, float, float] | None = None
    #: ``(height, width)``: the sizes of the Y and X dimensions.
    shape: tuple[int, int] | None = None
    registration: Registration = "pixel"

    @property
    def affine(self) -> bool:
        return self.transform_type == "affine"

    @property
    def degenerate(self) -> bool:
        """A transform that maps the grid onto a line or a point (determinant 0)."""
        if self.transform is None:
            return False
        a, b, _c, d, e, _f = self.transform
        return a * e - b * d == 0

    def corners(self, shape: tuple[int, int] | None = None) -> list[tuple[float, float]] | None:
        """The grid's four corner points in coordinate space: cell edges for ``pixel``
        registration, the outermost cell centres for ``node`` registration (where the
        transform maps integer indices onto the grid's nodes). ``None`` without an affine
        transform and a shape."""
        shape = shape or self.shape
        if self.transform is None or shape is None or not self.affine:
            return None
        height, width = shape
        last_col, last_row = (width, height) if self.registration == "pixel" else (width - 1, height - 1)
        a, b, c, d, e, f = self.transform
        return [(a * col + b * row + c, d * col + e * row + f)
                for col, row in ((0, 0), (last_col, 0), (0, last_row), (last_col, last_row))]

    def transform_bounds(self, shape: tuple[int, int] | None = None) -> tuple[float, float, float, float] | None:
        """``(xmin, ymin, xmax, ymax)`` of :meth:`corners` (a rotated grid's envelope)."""
        corners = self.corners(shape)
        if corners is None:
            return None
        xs, ys = [x for x, _ in corners], [y for _, y in corners]
        return min(xs), min(ys), max(xs), max(ys)

    def cell_steps(self) -> tuple[float, float] | None:
        """The length of one step along a row (X) and along a column (Y), in CRS units."""
        if self.transform is None or not self.affine:
            return None
        a, b, _c, d, e, _f = self.transform
        return math.hypot(a, d), math.hypot(b, e)


def parse_spatial(attributes: dict[str, Any]) -> Spatial | None:
    """The ``spatial:`` attributes of a node (``None`` when it has none)."""
    if not any(key in attributes for key in SPATIAL_KEYS):
        return None
    dims = attributes.get("spatial:dimensions")
    if dims is not None:
        if not (isinstance(dims, list) and len(dims) == 2 and all(isinstance(d, str) for d in dims)):
            raise GeoZarrError(f"spatial:dimensions must be two dimension names, got {short(dims)}")
        dims = (dims[0], dims[1])
    bbox = _numbers(attributes, "spatial:bbox", 4)
    transform = _numbers(attributes, "spatial:transform", 6)
    shape = attributes.get("spatial:shape")
    if shape is not None:
        if not (isinstance(shape, list) and len(shape) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in shape)):
            raise GeoZarrError(f"spatial:shape must be two positive integers [height, width], got {short(shape)}")
        shape = (shape[0], shape[1])
    ttype = attributes.get("spatial:transform_type", "affine")
    if not isinstance(ttype, str) or not ttype:
        raise GeoZarrError(f"spatial:transform_type must be a string, got {short(ttype)}")
    registration = attributes.get("spatial:registration", "pixel")
    if registration not in ("pixel", "node"):
        raise GeoZarrError(f'spatial:registration must be "pixel" or "node", got {short(registration)}')
    return Spatial(dimensions=dims, bbox=bbox, transform_type=ttype, transform=transform,  # type: ignore[arg-type]
                   shape=shape, registration=registration)


def _numbers(attributes: dict[str, Any], key: str, count: int) -> tuple[float, ...] | None:
    value = attributes.get(key)
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == count
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        raise GeoZarrError(f"{key} must be {count} finite numbers, got {short(value)}")
    return tuple(float(v) for v in value)


def dimension_names(node: Node) -> list[Any] | None:
    """An array's dimension names: v3 ``dimension_names``, v2 xarray ``_ARRAY_DIMENSIONS``."""
    if node.kind != "array":
        return None
    if node.zarr_format == 3:
        names = node.metadata.get("dimension_names")
    else:
        names = (node.attributes or {}).get("_ARRAY_DIMENSIONS")
    return names if isinstance(names, list) else None


def grid_shape(node: Node, spatial: Spatial) -> tuple[int, int] | None:
    """``(height, width)`` of the grid ``spatial`` describes on ``node``: ``spatial:shape``
    when given; for an array, its sizes along ``spatial:dimensions`` (looked up in its
    dimension names), or its shape when it is 2-D and names no dimensions. ``None``
    when it cannot be told (a group without ``spatial:shape``)."""
    if spatial.shape is not None:
        return spatial.shape
    shape = node.metadata.get("shape") if node.kind == "array" else None
    if not (isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)):
        return None
    names = dimension_names(node)
    if spatial.dimensions is not None and names is not None and len(names) == len(shape):
        if all(d in names for d in spatial.dimensions):
            height, width = (shape[names.index(d)] for d in spatial.dimensions)
            return (height, width) if height > 0 and width > 0 else None
        return None
    if len(shape) == 2 and spatial.dimensions is None and shape[0] > 0 and shape[1] > 0:
        return shape[0], shape[1]
    return None


# ----------------------------------------------------------------------- multiscales
@dataclass(frozen=True)
class Level:
    """One entry of a ``multiscales`` layout, as written (paths relative to the group)."""

    asset: str
    derived_from: str | None = None
    scale: tuple[float, ...] | None = None
    translation: tuple[float, ...] | None = None
    resampling_method: str | None = None
    #: The level's own ``spatial:shape``/``spatial:transform`` (the spatial convention's
    #: per-level values), as raw attribute values.
    spatial: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MultiscalesLayout:
    """A group's ``multiscales`` attribute."""

    layout: tuple[Level, ...]
    resampling_method: str | None = None

    def level(self, asset: str) -> Level | None:
        return next((level for level in self.layout if level.asset == asset), None)


def parse_multiscales(value: Any) -> MultiscalesLayout:
    """A ``multiscales`` attribute value (the object holding ``layout``)."""
    if not isinstance(value, dict):
        raise GeoZarrError(f"multiscales must be an object with a layout, got {short(value)}")
    layout = value.get("layout")
    if not isinstance(layout, list) or not layout:
        raise GeoZarrError(f"multiscales.layout must be a non-empty list of levels, got {short(layout)}")
    default = value.get("resampling_method")
    if default is not None and not isinstance(default, str):
        raise GeoZarrError(f"multiscales.resampling_method must be a string, got {short(default)}")
    levels = tuple(_level(i, entry) for i, entry in enumerate(layout))
    return MultiscalesLayout(levels, default)


def _level(i: int, entry: Any) -> Level:
    where = f"multiscales.layout[{i}]"
    if not isinstance(entry, dict):
        raise GeoZarrError(f"{where} must be an object, got {short(entry)}")
    asset, derived = entry.get("asset"), entry.get("derived_from")
    for key, path in (("asset", asset), ("derived_from", derived)):
        if key == "derived_from" and path is None:
            continue
        if not _relative_path(path):
            raise GeoZarrError(f"{where}.{key} must be a relative path without '..', got {short(path)}")
    transform = entry.get("transform")
    if transform is None and derived is not None:
        raise GeoZarrError(f"{where} has derived_from {derived!r} but no transform")
    if transform is not None and not isinstance(transform, dict):
        raise GeoZarrError(f"{where}.transform must be an object, got {short(transform)}")
    scale = _vector(transform, "scale", where)
    translation = _vector(transform, "translation", where)
    method = entry.get("resampling_method")
    if method is not None and not isinstance(method, str):
        raise GeoZarrError(f"{where}.resampling_method must be a string, got {short(method)}")
    spatial = {key: entry[key] for key in LEVEL_SPATIAL_KEYS if key in entry}
    if spatial:
        try:
            parse_spatial(spatial)
        except GeoZarrError as exc:
            raise GeoZarrError(f"{where}: {exc}") from None
    return Level(asset, derived, scale, translation, method, spatial)


def _relative_path(path: Any) -> bool:
    return (isinstance(path, str) and bool(path) and not path.startswith("/")
            and all(part and part != ".." for part in path.split("/")))


def _vector(transform: dict[str, Any] | None, key: str, where: str) -> tuple[float, ...] | None:
    value = (transform or {}).get(key)
    if value is None:
        return None
    if not (isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                            and math.isfinite(v) for v in value)):
        raise GeoZarrError(f"{where}.transform.{key} must be a list of finite numbers, got {short(value)}")
    return tuple(float(v) for v in value)


def multiscales_extent(group_path: str, layout: MultiscalesLayout) -> Multiscales:
    """The catalogue's :class:`~catalogue.model.extents.Multiscales` of a parsed layout:
    asset paths as declared (relative to the group), levels ordered from the finest.

    The order is by each level's scale relative to the layout's root level (the product
    of the ``scale`` factors along its ``derived_from`` chain, averaged over the axes):
    the spec allows upsampled levels (scale < 1), so layout order is not resolution order.
    Levels whose scale cannot be followed keep their layout position after the others.
    """
    by_asset = {level.asset: level for level in layout.layout}

    def cumulative(level: Level, seen: frozenset[str] = frozenset()) -> float | None:
        if level.derived_from is None:
            return 1.0
        parent = by_asset.get(level.derived_from)
        if parent is None or level.asset in seen or not level.scale:
            return None
        base = cumulative(parent, seen | {level.asset})
        return None if base is None else base * (sum(level.scale) / len(level.scale))

    keyed = [(cumulative(level), i, level) for i, level in enumerate(layout.layout)]
    keyed.sort(key=lambda item: (item[0] is None, item[0] if item[0] is not None else 0.0, item[1]))
    levels = []
    for index, (_scale, _i, level) in enumerate(keyed):
        cell = None
        transform = level.spatial.get("spatial:transform")
        if isinstance(transform, list) and len(transform) == 6:
            a, b, _c, d, e, _f = transform
            cell = (math.hypot(b, e), math.hypot(a, d))  # (Y, X), as spatial:dimensions orders them
        levels.append(MultiscaleLevel(
            index=index, asset=level.asset, derived_from=level.derived_from,
            scale=level.scale, translation=level.translation, cell_size=cell))
    return Multiscales(path=group_path, levels=tuple(levels), resampling=layout.resampling_method)


# ------------------------------------------------------------------------ inheritance
@dataclass(frozen=True)
class EffectiveGeo:
    """The ``proj:`` and ``spatial:`` values that apply to one node, and where each was read."""

    proj: Proj | None = None
    #: The node whose attributes held the ``proj:`` declaration.
    proj_path: str | None = None
    spatial: Spatial | None = None
    #: ``spatial:`` key -> the node whose attributes held it (a multiscales group's path
    #: for a value read from its layout entry).
    spatial_paths: dict[str, str] = field(default_factory=dict)


def effective_geo(h: Hierarchy, path: str) -> EffectiveGeo:
    """The ``proj:`` and ``spatial:`` values that apply to the node at ``path`` (see the
    module docstring for the rules); :class:`GeoZarrError` when a value that applies is
    malformed."""
    layers = _layers(h, path)
    proj, proj_path = None, None
    for layer_path, attributes in layers:
        if any(attributes.get(key) is not None for key in PROJ_KEYS):
            proj, proj_path = parse_proj(attributes), layer_path
    merged: dict[str, Any] = {}
    where: dict[str, str] = {}
    for layer_path, attributes in layers:
        for key in SPATIAL_KEYS:
            if key in attributes:
                merged[key] = attributes[key]
                where[key] = layer_path
    spatial = parse_spatial(merged) if merged else None
    return EffectiveGeo(proj, proj_path, spatial, where)


def _layers(h: Hierarchy, path: str) -> list[tuple[str, dict[str, Any]]]:
    """The attribute sets that apply to a node, lowest priority first."""
    node = h.nodes.get(path)
    if node is None:
        return []
    layers: list[tuple[str, dict[str, Any]]] = []
    if node.kind == "array" and path:
        parent = posixpath.dirname(path)
        layers += _as_level(h, parent)
        parent_node = h.nodes.get(parent)
        if parent_node is not None and parent_node.attributes:
            layers.append((parent, parent_node.attributes))
    layers += _as_level(h, path)
    if node.attributes:
        layers.append((path, node.attributes))
    return layers


def _as_level(h: Hierarchy, path: str) -> list[tuple[str, dict[str, Any]]]:
    """When ``path`` is a level of a multiscales group: that group's attributes, then the
    level's layout entry (its ``spatial:shape``/``spatial:transform``)."""
    for group_path, group in _ancestors(h, path):
        attributes = group.attributes or {}
        if "multiscales" not in attributes:
            continue
        relative = path[len(group_path) + 1:] if group_path else path
        try:
            level = parse_multiscales(attributes["multiscales"]).level(relative)
        except GeoZarrError:
            continue  # validation reports it; a malformed layout assigns no level values
        if level is not None:
            return [(group_path, attributes), (group_path, level.spatial)]
    return []


def _ancestors(h: Hierarchy, path: str) -> list[tuple[str, Any]]:
    out = []
    while path:
        path = posixpath.dirname(path)
        node = h.nodes.get(path)
        if node is not None and node.kind == "group":
            out.append((path, node))
    return out
