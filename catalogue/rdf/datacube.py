"""A hierarchy's arrays as STAC datacube fields (``cube:dimensions``, ``cube:variables``), from its graph.

The STAC Zarr best practice describes a store's arrays with the datacube extension
(v2.3.0, whose variables take ``unit``, ``nodata`` and ``data_type`` from STAC 1.1's
common metadata). Everything here is read from the graph the harvest wrote: array
paths, shapes, data types, dimension names, the CF attributes, and the extents
``rdf/extents.py`` stores for the root and for each array. Values are never read.

**Dimensions.** A dimension's *coordinate array* is a one-dimensional array named
like the dimension (CF's coordinate variable; the shortest path wins when several
groups have one). Its attributes tell the dimension's kind: ``axis`` (``X``, ``Y``,
``Z``, ``T``), else ``standard_name`` (``longitude``, ``projection_x_coordinate``,
``time``, ...), else CF ``units`` (``degrees_east``, ``... since ...``), else
``positive`` (vertical). The extent comes from that array's own stored extent, else
the root's (longitude from the box's west and east, a projected x from the native box,
time from the period), else from the array's ``actual_range``, ``valid_range`` or
``valid_min``/``valid_max`` attributes. The datacube schema requires an extent for
horizontal spatial and temporal dimensions and an extent or values for the others, and
the catalogue never invents one: **a dimension whose extent the graph does not give is
left out of** ``cube:dimensions`` (the variables still name it), and so is a dimension
without a coordinate array, whose kind nothing declares.

**Variables.** Every array except the dimensions' coordinate arrays, keyed by its
path in the hierarchy (so ``href + "/" + key`` is the array, as the best practice asks),
with ``dimensions``, ``type`` (``auxiliary`` when another array names it in
``coordinates`` or ``bounds``, else ``data``), ``description`` (``long_name``),
``unit`` (``units``) and ``data_type`` (STAC's names: ``complex64`` is ``cfloat32``,
anything without a STAC name is ``other``). An array whose dimensions are not all
named cannot be described (``dimensions`` is required) and is left out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from rdflib import RDF, RDFS, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Literal
from rdflib.term import Node as RDFNode

from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Extent, Period
from catalogue.rdf.extents import read_extent
from catalogue.rdf.vocabulary import ZARR

__all__ = ["ArrayInfo", "cube_dimensions", "cube_variables", "hierarchy_arrays", "period_interval", "stac_data_type"]

#: STAC common metadata's data types (``data_type``), by Zarr v3 name where they differ.
_STAC_TYPES = {
    **{name: name for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                "float16", "float32", "float64")},
    "complex64": "cfloat32", "complex128": "cfloat64",
}
_X_NAMES = {"longitude", "projection_x_coordinate", "grid_longitude", "projection_x_angular_coordinate"}
_Y_NAMES = {"latitude", "projection_y_coordinate", "grid_latitude", "projection_y_angular_coordinate"}
_GEOGRAPHIC = {"longitude", "latitude", "grid_longitude", "grid_latitude"}
_Z_NAMES = {"depth", "height", "altitude", "air_pressure", "model_level_number", "atmosphere_sigma_coordinate",
            "ocean_sigma_coordinate", "ocean_s_coordinate"}


@dataclass(frozen=True)
class ArrayInfo:
    """What the datacube fields need of one array, read from the graph."""

    iri: URIRef
    path: str
    dimensions: tuple[str | None, ...] | None
    shape: tuple[int, ...] | None
    data_type: str | None
    attributes: dict[str, Any] = field(default_factory=dict)
    long_name: str | None = None
    units: str | None = None
    extent: Extent | None = None

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def _items(graph: Graph, head: RDFNode | None) -> list[Any] | None:
    if head is None:
        return None
    return [item.toPython() if isinstance(item, Literal) else item for item in Collection(graph, head)]


def hierarchy_arrays(graph: Graph) -> list[ArrayInfo]:
    """Every array of the graph (one hierarchy), sorted by path."""
    out = []
    for node in graph.subjects(RDF.type, ZARR.Array):
        if not isinstance(node, URIRef):
            continue
        dims = _items(graph, graph.value(node, ZARR.dimensionNames))
        shape = _items(graph, graph.value(node, ZARR.shape))
        attrs_literal = graph.value(node, ZARR.attributes)
        try:
            attributes = json.loads(str(attrs_literal)) if attrs_literal is not None else {}
        except ValueError:
            attributes = {}
        label, units, dtype = graph.value(node, RDFS.label), graph.value(node, ZARR.units), graph.value(node, ZARR.dataType)
        out.append(ArrayInfo(
            iri=node, path=str(graph.value(node, ZARR.path) or ""),
            dimensions=tuple(d if isinstance(d, str) and d else None for d in dims) if dims is not None else None,
            shape=tuple(int(n) for n in shape) if shape is not None and all(isinstance(n, int) for n in shape) else None,
            data_type=v3_vocabulary_name(str(dtype)) if dtype is not None else None,
            attributes=attributes if isinstance(attributes, dict) else {},
            long_name=str(label) if label is not None else None, units=str(units) if units is not None else None,
            extent=read_extent(graph, node),
        ))
    return sorted(out, key=lambda a: a.path)


def stac_data_type(zarr_type: str | None) -> str:
    """STAC's ``data_type`` for a Zarr v3 data type name (``other`` for those STAC has no name for)."""
    return _STAC_TYPES.get(zarr_type or "", "other")


def period_interval(period: Period) -> list[str] | None:
    """A period as STAC writes times: RFC 3339 in UTC with ``Z``, by :meth:`Period.instants`
    (a date covers its whole day; no offset is UTC), so a collection's interval is the one
    collection search filters on. ``None`` for years RFC 3339 cannot write."""
    span = period.instants()
    if span is None:
        return None
    return [moment.astimezone(UTC).isoformat().replace("+00:00", "Z") for moment in span]


def _coordinates(arrays: list[ArrayInfo]) -> dict[str, ArrayInfo]:
    """Each dimension's coordinate array: 1-D, named like the dimension, shortest path first."""
    out: dict[str, ArrayInfo] = {}
    for array in sorted(arrays, key=lambda a: (a.path.count("/"), a.path)):
        if array.dimensions is not None and len(array.dimensions) == 1 and array.dimensions[0] == array.name:
            out.setdefault(array.name, array)
    return out


def _kind(coordinate: ArrayInfo) -> str | None:
    """``x``, ``y``, ``z``, ``t`` or ``other``, from CF attributes (see the module docstring)."""
    attrs = coordinate.attributes
    axis = str(attrs.get("axis", "")).upper()
    if axis in ("X", "Y", "Z"):
        return axis.lower()
    if axis == "T":
        return "t"
    standard = str(attrs.get("standard_name", ""))
    units = coordinate.units or ""
    if standard in _X_NAMES or units in ("degrees_east", "degree_east", "degree_E", "degrees_E"):
        return "x"
    if standard in _Y_NAMES or units in ("degrees_north", "degree_north", "degree_N", "degrees_N"):
        return "y"
    if standard == "time" or " since " in units:
        return "t"
    if standard in _Z_NAMES or attrs.get("positive") in ("up", "down"):
        return "z"
    return "other"


def _attribute_range(attrs: dict[str, Any]) -> list[float] | None:
    """``actual_range``, ``valid_range`` or ``valid_min``/``valid_max``, when numeric."""
    for name in ("actual_range", "valid_range"):
        value = attrs.get(name)
        if isinstance(value, list) and len(value) == 2 and all(_number(v) for v in value):
            return [float(v) for v in value]
    low, high = attrs.get("valid_min"), attrs.get("valid_max")
    if _number(low) and _number(high):
        return [float(low), float(high)]
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _geographic(coordinate: ArrayInfo) -> bool:
    units = coordinate.units or ""
    return str(coordinate.attributes.get("standard_name", "")) in _GEOGRAPHIC or units.startswith("degree")


def _horizontal(kind: str, coordinate: ArrayInfo, root: Extent | None) -> dict[str, Any] | None:
    for extent in (coordinate.extent, root):
        if extent is None:
            continue
        if _geographic(coordinate) and extent.bbox is not None:
            box = extent.bbox
            bounds = [box.west, box.east] if kind == "x" else [box.south, box.north]
            return {"type": "spatial", "axis": kind, "extent": bounds, "reference_system": 4326}
        if not _geographic(coordinate) and extent.native_bbox is not None and extent.crs is not None:
            minx, miny, maxx, maxy = extent.native_bbox
            crs = extent.crs
            return {"type": "spatial", "axis": kind, "extent": [minx, maxx] if kind == "x" else [miny, maxy],
                    "reference_system": crs.epsg if crs.epsg is not None else crs.wkt2}
    return None


def _temporal(coordinate: ArrayInfo, root: Extent | None) -> dict[str, Any] | None:
    for extent in (coordinate.extent, root):
        if extent is not None and extent.period is not None:
            interval = period_interval(extent.period)
            if interval is None:
                continue
            out: dict[str, Any] = {"type": "temporal", "extent": interval}
            if extent.temporal_resolution:
                out["step"] = extent.temporal_resolution
            return out
    return None


def _dimension(kind: str, coordinate: ArrayInfo, root: Extent | None) -> dict[str, Any] | None:
    if kind in ("x", "y"):
        out = _horizontal(kind, coordinate, root)
    elif kind == "t":
        out = _temporal(coordinate, root)
    else:
        bounds = _attribute_range(coordinate.attributes)
        if bounds is None:
            return None
        out = {"type": "spatial", "axis": "z"} if kind == "z" else {"type": "other"}
        out["extent"] = bounds
        if coordinate.units:
            out["unit"] = coordinate.units
    if out is not None and coordinate.long_name:
        out["description"] = coordinate.long_name
    return out


def _dimension_names(arrays: list[ArrayInfo]) -> Iterator[str]:
    seen: set[str] = set()
    for array in arrays:
        for name in array.dimensions or ():
            if name is not None and name not in seen:
                seen.add(name)
                yield name


def cube_dimensions(arrays: list[ArrayInfo], root: Extent | None) -> dict[str, dict[str, Any]]:
    """``cube:dimensions``: the dimensions the graph can describe (see the module docstring)."""
    coordinates = _coordinates(arrays)
    out: dict[str, dict[str, Any]] = {}
    for name in _dimension_names(arrays):
        coordinate = coordinates.get(name)
        if coordinate is None:
            continue
        kind = _kind(coordinate)
        described = _dimension(kind, coordinate, root) if kind is not None else None
        if described is not None:
            out[name] = described
    return out


def dimension_axes(arrays: list[ArrayInfo]) -> dict[str, str]:
    """Dimension name -> ``x``, ``y``, ``z``, ``t`` or ``other``, for those with a coordinate array."""
    return {name: kind for name, coordinate in _coordinates(arrays).items()
            if (kind := _kind(coordinate)) is not None}


def cube_variables(arrays: list[ArrayInfo]) -> dict[str, dict[str, Any]]:
    """``cube:variables``: every array but the coordinate arrays, keyed by path."""
    coordinates = {id(a) for a in _coordinates(arrays).values()}
    referenced: set[str] = set()
    for array in arrays:
        for name in ("coordinates", "bounds"):
            value = array.attributes.get(name)
            if isinstance(value, str):
                referenced.update(value.split())
    out: dict[str, dict[str, Any]] = {}
    for array in arrays:
        if id(array) in coordinates or array.dimensions is None or None in array.dimensions:
            continue
        variable: dict[str, Any] = {
            "dimensions": list(array.dimensions),  # type: ignore[arg-type]  # None ruled out above
            "type": "auxiliary" if array.name in referenced or array.path in referenced else "data",
        }
        if array.long_name:
            variable["description"] = array.long_name
        if array.units:
            variable["unit"] = array.units
        if array.data_type is not None:
            variable["data_type"] = stac_data_type(array.data_type)
        out[array.path] = variable
    return out
