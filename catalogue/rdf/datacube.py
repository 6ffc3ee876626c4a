"""A hierarchy's arrays as STAC datacube fields (``cube:dimensions``, ``cube:variables``), from its graph.

The STAC Zarr best practice describes a store's arrays with the datacube extension
(v2.3.0, whose variables take ``unit``, ``nodata`` and ``data_type`` from STAC 1.1's
common metadata). Everything here is read from the graph the harvest wrote: array
paths, shapes, data types, dimension names, the CF attributes, and the extents
``rdf/extents.py`` stores for the root and for each array. Values are never read.

**Dimensions.** A dimension's *coordinate array* is a one-dimensional array named
like the dimension (CF's coordinate variable), found from the first array (by path)
that names the dimension in that array's group or the nearest ancestor (CF's search by
proximity). Its kind is CF's axis identification, kept once in ``model/cf_axes.py``:
``standard_name``, else ``units`` (``degrees_east``, ``... since ...``), else ``axis``,
else ``positive``. The extent comes from that array's own stored extent, else the
root's (a longitude or latitude from the CRS84 box, a projected x or y from the native
box, time from the period), else from the array's ``actual_range``, ``valid_range`` or
``valid_min``/``valid_max`` attributes.

A dimension without a coordinate array may still be an axis of a GeoZarr ``spatial:``
grid: ``spatial:dimensions`` (as it applies to the array, inherited from its group or a
pyramid's layout; :func:`catalogue.model.geozarr.effective_geo` on the rebuilt
documents) names its y and x dimensions, the array's stored extent (else the root's)
gives the native box and CRS (``reference_system`` the EPSG code, else WKT2), and an
axis-aligned ``spatial:transform`` the ``step`` (the cell size). The first array by path
that describes a name wins (a pyramid's finest level).

The datacube schema requires an extent for horizontal spatial and temporal dimensions
and an extent or values for the others, and the catalogue never invents one: **a
dimension whose extent the graph does not give is left out of** ``cube:dimensions`` (the
variables still name it), and so is a dimension that nothing identifies.

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
from dataclasses import dataclass, field, replace
from datetime import UTC
from typing import Any

from rdflib import RDF, RDFS, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Literal
from rdflib.term import Node as RDFNode

from catalogue.errors import CatalogueError
from catalogue.model.cf_axes import axis_kind, nearest_coordinate
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Extent, Period
from catalogue.model.geozarr import Spatial, effective_geo
from catalogue.model.nodes import Hierarchy, Node
from catalogue.rdf.extents import read_extent
from catalogue.rdf.rebuild import node_kind, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

__all__ = ["ArrayInfo", "cube_dimensions", "cube_variables", "hierarchy_arrays", "period_interval", "stac_data_type"]

#: STAC common metadata's data types (``data_type``), by Zarr v3 name where they differ.
_STAC_TYPES = {
    **{name: name for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                "float16", "float32", "float64")},
    "complex64": "cfloat32", "complex128": "cfloat64",
}
#: ``model/cf_axes.py``'s kinds as the datacube extension's axes.
_AXES = {"lon": "x", "x": "x", "lat": "y", "y": "y", "time": "t", "vertical": "z"}


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
    #: The GeoZarr ``spatial:`` values that apply to the array (its own and inherited,
    #: :func:`catalogue.model.geozarr.effective_geo`), when any do.
    spatial: Spatial | None = None

    @property
    def cf_attributes(self) -> dict[str, Any]:
        """The attributes CF identifies an axis by, with ``units`` as the graph holds it."""
        return {**self.attributes, "units": self.units} if self.units is not None else self.attributes

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
    spatial = _conventions(graph) if _mentions_spatial(graph) else {}
    out = [replace(a, spatial=spatial[a.path]) if a.path in spatial else a for a in out]
    return sorted(out, key=lambda a: a.path)


def _mentions_spatial(graph: Graph) -> bool:
    """Whether any node's attributes hold ``spatial:`` keys (or a pyramid that may give
    them to its levels): only then are the documents rebuilt for :func:`_conventions`."""
    return any('"spatial:' in str(value) or '"multiscales"' in str(value)
               for value in graph.objects(None, ZARR.attributes))


def _conventions(graph: Graph) -> dict[str, Spatial]:
    """Array path -> the ``spatial:`` values that apply to it, from the nodes' rebuilt
    documents (groups pass theirs to their arrays, a pyramid's layout to its levels).
    An array whose values do not parse (validation reports them) gets none."""
    h = Hierarchy(url="", zarr_format=3)
    for subject in set(graph.subjects(ZARR.path, None)):
        if not isinstance(subject, URIRef):
            continue
        try:
            docs = rebuild_documents(graph, str(subject))
        except (CatalogueError, ValueError, TypeError, RecursionError):
            continue
        path = str(graph.value(subject, ZARR.path))
        h.nodes[path] = Node(path, node_kind(graph, str(subject)), 3 if "zarr.json" in docs else 2,  # type: ignore[arg-type]
                             docs, {})
    out: dict[str, Spatial] = {}
    for path, node in h.nodes.items():
        if node.kind != "array":
            continue
        try:
            geo = effective_geo(h, path)
        except (CatalogueError, ValueError, TypeError):
            continue
        if geo.spatial is not None:
            out[path] = geo.spatial
    return out


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
    """Each dimension's coordinate array: for the first array (by path) that names the
    dimension, the 1-D array named like it in that array's group or the nearest ancestor
    (CF's search by proximity, :func:`catalogue.model.cf_axes.nearest_coordinate`)."""
    candidates = {a.path: a for a in arrays if _is_coordinate(a)}
    out: dict[str, ArrayInfo] = {}
    for array in sorted(arrays, key=lambda a: a.path):
        for name in array.dimensions or ():
            if name is None or name in out:
                continue
            found = nearest_coordinate(array.path, name, candidates.get)
            if found is not None and found.name == name:
                out[name] = found
    return out


def _is_coordinate(array: ArrayInfo) -> bool:
    """A CF coordinate variable: one-dimensional, named like its dimension."""
    return array.dimensions is not None and len(array.dimensions) == 1 and array.dimensions[0] == array.name


def _kind(coordinate: ArrayInfo) -> str:
    """``x``, ``y``, ``z``, ``t`` or ``other``: CF's identification (``model/cf_axes.py``)."""
    return _AXES.get(axis_kind(coordinate.cf_attributes) or "", "other")


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
    """A longitude or latitude (CRS84 box), rather than a coordinate in a native CRS."""
    return axis_kind(coordinate.cf_attributes) in ("lon", "lat")


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
    grids: dict[str, dict[str, Any]] = {}
    for array in arrays:
        for name, described in _grid_dimensions(array, root).items():
            grids.setdefault(name, described)
    out: dict[str, dict[str, Any]] = {}
    for name in _dimension_names(arrays):
        coordinate = coordinates.get(name)
        described = _dimension(_kind(coordinate), coordinate, root) if coordinate is not None else None
        if described is None:
            described = grids.get(name)
        if described is not None:
            out[name] = described
    return out


def _grid_dimensions(array: ArrayInfo, root: Extent | None) -> dict[str, dict[str, Any]]:
    """The x and y dimensions of an array on a GeoZarr ``spatial:`` grid: the names from
    ``spatial:dimensions`` (both among the array's dimension names), the extent from the
    array's stored native box (the root's when the array has no extent of its own) in
    its CRS, the step from an axis-aligned ``spatial:transform``."""
    spatial = array.spatial
    if spatial is None or spatial.dimensions is None or array.dimensions is None:
        return {}
    y_name, x_name = spatial.dimensions
    if y_name not in array.dimensions or x_name not in array.dimensions or x_name == y_name:
        return {}
    extent = array.extent if array.extent is not None else root
    if extent is None or extent.native_bbox is None or extent.crs is None:
        return {}
    minx, miny, maxx, maxy = extent.native_bbox
    system = extent.crs.epsg if extent.crs.epsg is not None else extent.crs.wkt2
    x: dict[str, Any] = {"type": "spatial", "axis": "x", "extent": [minx, maxx], "reference_system": system}
    y: dict[str, Any] = {"type": "spatial", "axis": "y", "extent": [miny, maxy], "reference_system": system}
    if spatial.affine and spatial.transform is not None:
        a, b, _c, d, e, _f = spatial.transform
        if b == 0 and d == 0 and a != 0 and e != 0:  # rotated or sheared grids have no per-axis step
            x["step"], y["step"] = abs(a), abs(e)
    return {x_name: x, y_name: y}


def dimension_axes(arrays: list[ArrayInfo]) -> dict[str, str]:
    """Dimension name -> ``x``, ``y``, ``z``, ``t`` or ``other``, for those with a coordinate
    array, and ``x``/``y`` for a GeoZarr grid's ``spatial:dimensions``."""
    out = {name: _kind(coordinate) for name, coordinate in _coordinates(arrays).items()}
    for array in arrays:
        if array.spatial is not None and array.spatial.dimensions is not None:
            y_name, x_name = array.spatial.dimensions
            out.setdefault(x_name, "x")
            out.setdefault(y_name, "y")
    return out


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
