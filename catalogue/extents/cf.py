"""Extents from CF coordinate variables: where and when, read from the coordinates' values.

For every array, its coordinates are found as CF and xarray write them: a dimension
name (v3 ``dimension_names``, v2 ``_ARRAY_DIMENSIONS``) names a 1-D array of the same
name in the array's group or an ancestor (CF §1.3 coordinate variables), and the
``coordinates`` attribute names auxiliary ones (2-D latitude/longitude, CF §5.2).
Each is classified by ``standard_name``, then ``units`` (``degrees_north``...), then
``axis``; nothing is guessed from a name.

The spatial extent is made of cell edges where known (a ``bounds`` variable, CF §7.1;
else regular spacing, half a step beyond the outermost centres), else of the outermost
centres (evidence without ``edges``). Projected ``projection_x/y_coordinate`` axes use
the ``grid_mapping`` variable's CRS (pyproj's ``CRS.from_cf``) and are reprojected to
CRS84. Times are decoded by :mod:`catalogue.extents.times`. Longitudes are unwrapped
before their range is taken, so ``170 .. 180, -179 .. -170`` is one region across the
antimeridian, not the world.

Values are read through :class:`~catalogue.extents.values.ValueReader`, once per
coordinate however many arrays share it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
from pyproj import CRS

from catalogue.extents.attribute_finding import attribute_finding
from catalogue.extents.crs import (
    CRSError,
    crs_from_cf,
    native_crs,
    outside_area,
    resolution_in_metres,
    to_crs84,
)
from catalogue.extents.evidence import Evidence
from catalogue.extents.times import TimeError, parse_time_axis
from catalogue.extents.values import Axis, ValueReader
from catalogue.model.cf_axes import axis_kind, nearest_coordinate
from catalogue.model.extents import Source
from catalogue.model.json import short
from catalogue.model.nodes import Hierarchy, Node
from catalogue.validate.findings import Finding

__all__ = ["classify", "evidence"]

Kind = Literal["lat", "lon", "x", "y", "time"]

_CRS84: Final = CRS.from_user_input("OGC:CRS84")
#: Longitudes further than this from 0 are not longitudes however they are unwrapped
#: (two turns either way leaves room for 0..360 axes and unwrapped antimeridian grids).
MAX_LONGITUDE: Final = 720.0


def classify(attributes: dict[str, Any]) -> Kind | None:
    """What a coordinate variable measures for an extent: CF's axis identification
    (:func:`catalogue.model.cf_axes.axis_kind`, one rule for the whole catalogue), with
    vertical coordinates, which no extent uses, left out."""
    kind = axis_kind(attributes)
    return None if kind == "vertical" else kind


@dataclass(frozen=True)
class _Range:
    """One axis's extent: ``lo``..``hi`` (edges, or outermost centres), its regular step
    where there is one, and where the figures were read."""

    lo: float
    hi: float
    edges: bool
    step: float | None
    bounds: str | None = None


def evidence(hierarchy: Hierarchy, values: ValueReader) -> tuple[list[Evidence], list[Finding]]:
    """CF evidence for every array of ``hierarchy``, and findings about coordinates that
    could not be used. Coordinate values are read through ``values`` (its findings are
    left in ``values.findings`` for the caller)."""
    return _CF(hierarchy, values).run()


class _CF:
    def __init__(self, hierarchy: Hierarchy, values: ValueReader) -> None:
        self.h = hierarchy
        self.values = values
        self.findings: list[Finding] = []
        self._ranges: dict[tuple[str, str], _Range | None] = {}
        self._times: dict[str, Evidence | None] = {}
        self._crs: dict[str, CRS | None] = {}

    def run(self) -> tuple[list[Evidence], list[Finding]]:
        out: list[Evidence] = []
        for path in sorted(self.h.nodes):
            node = self.h.nodes[path]
            if node.kind == "array":
                out.extend(self.array(node))
        return out, self.findings

    # ------------------------------------------------------------ one array
    def array(self, node: Node) -> list[Evidence]:
        for key in ("coordinates", "grid_mapping"):
            value = (node.attributes or {}).get(key)
            if value is not None and not isinstance(value, str):
                self.attribute_finding(node, key, f"{key} of /{node.path} must be a string of variable names, got "
                                       f"{short(value)}; it is not used for the extent")
        coords: dict[str, Node] = {}
        for name in _dimension_names(node):
            found = self.lookup(node, name)
            if found is not None and len(_shape(found)) == 1:
                kind = self.classify(found)
                if kind is not None:
                    coords.setdefault(kind, found)
        aux: dict[str, Node] = {}
        for name in _names(node, "coordinates"):
            found = self.lookup(node, name)
            if found is not None:
                kind = self.classify(found)
                if kind is not None:
                    aux.setdefault(kind, found)
        out: list[Evidence] = []
        crs = self.grid_mapping(node)
        spatial = self.spatial(node, coords, aux, crs)
        if spatial is not None:
            out.append(spatial)
        elif crs is not None:
            out.append(Evidence(node.path, Source("cf:grid_mapping", node.path, _grid_mapping_name(node) or ""),
                                crs=native_crs(crs)))
        time = coords.get("time") or (aux.get("time") if aux.get("time") is not None and len(_shape(aux["time"])) <= 1
                                      else None)
        if time is not None:
            found = self.time(time)
            if found is not None:
                out.append(Evidence(node.path, found.source, period=found.period,
                                    temporal_resolution=found.temporal_resolution, edges=found.edges))
        return out

    def classify(self, coord: Node) -> Kind | None:
        """:func:`classify`, with a finding for each CF attribute of the wrong type."""
        attributes = coord.attributes or {}
        for key in ("standard_name", "units", "axis"):
            if key in attributes and not isinstance(attributes[key], str):
                self.attribute_finding(coord, key, f"{key} of /{coord.path} must be a string, got "
                                       f"{short(attributes[key])}; it is not used to classify the coordinate")
        return classify(attributes)

    def lookup(self, node: Node, name: str) -> Node | None:
        """The array called ``name`` in the node's group or the nearest ancestor holding one."""
        def array(path: str) -> Node | None:
            found = self.h.nodes.get(path)
            return found if found is not None and found.kind == "array" else None

        return nearest_coordinate(node.path, name, array)

    # ------------------------------------------------------------ where
    def spatial(self, node: Node, coords: dict[str, Node], aux: dict[str, Node], crs: CRS | None) -> Evidence | None:
        if "lat" in coords and "lon" in coords:
            lat, lon = self.range(coords["lat"], "lat"), self.range(coords["lon"], "lon")
            geographic = crs if crs is not None and crs.is_geographic else None
            return self.box(node, lat, lon, coords["lat"], coords["lon"], geographic, projected=False)
        if "x" in coords and "y" in coords and crs is not None and not crs.is_geographic:
            y, x = self.range(coords["y"], "y"), self.range(coords["x"], "x")
            return self.box(node, y, x, coords["y"], coords["x"], crs, projected=True)
        if "lat" in aux and "lon" in aux:
            return self.auxiliary(node, aux["lat"], aux["lon"])
        return None

    def box(self, node: Node, ny: _Range | None, nx: _Range | None, ynode: Node, xnode: Node,
            crs: CRS | None, *, projected: bool) -> Evidence | None:
        if ny is None or nx is None:
            return None
        west, east = nx.lo, nx.hi
        south, north = ny.lo, ny.hi
        if not projected:
            south, north = max(south, -90.0), min(north, 90.0)
            if east - west > 360:
                west, east = -180.0, 180.0
        outside = outside_area(crs, (west, south, east, north)) if projected and crs is not None else None
        try:
            if outside:
                raise ValueError(outside)
            box = to_crs84(crs or _CRS84, west, south, east, north)
        except ValueError as exc:
            self.finding(ynode, "extent.coordinate-values", f"coordinates /{ynode.path}, /{xnode.path} give no "
                         f"extent: {exc}", attributes=False)
            return None
        names = [ynode.path, xnode.path] + [b for b in (ny.bounds, nx.bounds) if b]
        kind = "cf:bounds" if ny.bounds or nx.bounds else "cf:grid_mapping" if projected else "cf:coordinates"
        return Evidence(
            node.path, Source(kind, ynode.path, ", ".join(names)), bbox=box,
            crs=native_crs(crs) if crs is not None else None,
            native_bbox=(west, south, east, north) if projected else None,
            edges=ny.edges and nx.edges, spatial_resolution=resolution_in_metres(crs, nx.step, ny.step),
        )

    def auxiliary(self, node: Node, lat_node: Node, lon_node: Node) -> Evidence | None:
        """2-D latitude and longitude (curvilinear grids): the outermost centres, read whole."""
        lat = self.values.whole(lat_node.path, "the auxiliary latitudes")
        lon = self.values.whole(lon_node.path, "the auxiliary longitudes") if lat is not None else None
        if lat is None or lon is None:
            return None
        lat, lon = lat[np.isfinite(lat)], lon[np.isfinite(lon)]
        if lat.size == 0 or lon.size == 0:
            return None
        south, north = float(lat.min()), float(lat.max())
        if south < -90 or north > 90:
            self.finding(lat_node, "extent.coordinate-values",
                         f"latitudes of /{lat_node.path} lie outside -90..90 ({south}..{north})", attributes=False)
            return None
        if np.abs(lon).max() > MAX_LONGITUDE:
            self.finding(lon_node, "extent.coordinate-values", _absurd(lon_node, lon), attributes=False)
            return None
        west, east = _circular_range(lon)
        return Evidence(node.path, Source("cf:coordinates", lat_node.path, f"{lat_node.path}, {lon_node.path}"),
                        bbox=to_crs84(_CRS84, west, south, east, north), edges=False)

    def range(self, coord: Node, kind: str) -> _Range | None:
        key = (coord.path, kind)
        if key not in self._ranges:
            self._ranges[key] = self._range(coord, kind)
        return self._ranges[key]

    def _range(self, coord: Node, kind: str) -> _Range | None:
        axis = self.values.axis(coord.path)
        if kind == "lon" and axis is not None and np.any(np.abs(axis.values) > MAX_LONGITUDE):
            self.finding(coord, "extent.coordinate-values", _absurd(coord, axis.values), attributes=False)
            return None
        values = None if axis is None else _unwrapped(axis) if kind == "lon" else axis.values
        step = None
        if axis is not None and values is not None:
            step = _regular_step(values, axis)
        bounds = self.bounds(coord)
        if bounds is not None:
            data = bounds.ravel()
            data = data[np.isfinite(data)]
            if kind == "lon" and data.size and np.abs(data).max() > MAX_LONGITUDE:
                self.finding(coord, "extent.coordinate-values", _absurd(coord, data, bounds=True), attributes=False)
                return None
            if data.size:
                if kind == "lon":
                    lo, hi = _circular_range(data, continuous=True)
                else:
                    lo, hi = float(data.min()), float(data.max())
                return self.checked(coord, kind, _Range(lo, hi, True, step, _bounds_path(self, coord)))
        if axis is None or values is None:
            return None
        if not np.all(np.isfinite(values)):
            self.finding(coord, "extent.coordinate-values",
                         f"coordinate /{coord.path} holds missing or non-finite values; its extent is not used",
                         attributes=False)
            return None
        if _monotonic(values) == 0:
            self.finding(coord, "extent.non-monotonic",
                         f"coordinate /{coord.path} is not monotonic"
                         + ("" if axis.complete else " in its first and last chunks"), attributes=False)
            if not axis.complete:
                whole = self.values.whole(coord.path, "the non-monotonic coordinate")
                if whole is None or not np.all(np.isfinite(whole)):
                    return None
                values = whole
            if kind == "lon":
                lo, hi = _circular_range(values)
            else:
                lo, hi = float(values.min()), float(values.max())
            return self.checked(coord, kind, _Range(lo, hi, False, None))
        if step is not None:
            half = abs(step) / 2
            lo, hi = float(min(values[0], values[-1])) - half, float(max(values[0], values[-1])) + half
            return self.checked(coord, kind, _Range(lo, hi, True, abs(step)))
        lo, hi = float(min(values[0], values[-1])), float(max(values[0], values[-1]))
        return self.checked(coord, kind, _Range(lo, hi, False, None))

    def checked(self, coord: Node, kind: str, found: _Range) -> _Range | None:
        if kind == "lat":
            lo, hi = found.lo, found.hi
            tolerance = (found.step or 0) / 2 if found.edges and not found.bounds else 0
            if lo < -90 - tolerance - 1e-9 or hi > 90 + tolerance + 1e-9:
                self.finding(coord, "extent.coordinate-values",
                             f"latitudes of /{coord.path} lie outside -90..90 ({lo}..{hi})", attributes=False)
                return None
        return found

    def bounds(self, coord: Node) -> np.ndarray | None:
        """The values of the coordinate's ``bounds`` variable (CF §7.1): shape ``(n, 2)`` for
        an axis of ``n``, ``(ny, nx, 4)`` for 2-D coordinates. A ``bounds`` attribute that
        is not a name of an array, or an array of another shape, is a finding and gives no edges."""
        attributes = coord.attributes or {}
        if "bounds" not in attributes:
            return None
        name = attributes["bounds"]
        if not isinstance(name, str) or not name.strip() or len(name.split()) != 1:
            self.attribute_finding(coord, "bounds", f"bounds of /{coord.path} must name one variable, got "
                                   f"{short(name)}; the coordinate values are used instead")
            return None
        found = self.lookup(coord, name)
        if found is None:
            self.attribute_finding(coord, "bounds", f"bounds {name!r} of /{coord.path} names no array; "
                                   "the coordinate values are used instead")
            return None
        shape = _shape(coord)
        expected = (*shape, 2) if len(shape) <= 1 else (*shape, 4) if len(shape) == 2 else None
        if _shape(found) != expected:
            self.attribute_finding(coord, "bounds", f"bounds /{found.path} of /{coord.path} has shape "
                                   f"{list(_shape(found))}, not {list(expected or ())} (CF §7.1: two vertices per "
                                   "cell of an axis, four of a 2-D cell); the coordinate values are used instead")
            return None
        return self.values.whole(found.path, f"the bounds of /{coord.path}")

    # ------------------------------------------------------------ CRS
    def grid_mapping(self, node: Node) -> CRS | None:
        name = _grid_mapping_name(node)
        if name is None:
            return None
        found = self.lookup(node, name)
        if found is None:
            return None  # cf.grid_mapping reports it
        if found.path not in self._crs:
            try:
                self._crs[found.path] = crs_from_cf(found.attributes or {})
            except CRSError as exc:
                self.finding(found, "extent.grid-mapping", f"grid mapping /{found.path}: {exc}")
                self._crs[found.path] = None
        return self._crs[found.path]

    # ------------------------------------------------------------ when
    def time(self, coord: Node) -> Evidence | None:
        if coord.path not in self._times:
            self._times[coord.path] = self._time(coord)
        return self._times[coord.path]

    def _time(self, coord: Node) -> Evidence | None:
        try:
            time_axis = parse_time_axis(coord.attributes or {})
        except TimeError as exc:
            self.finding(coord, "extent.time-units", f"time coordinate /{coord.path}: {exc}")
            return None
        axis: Axis | None
        if len(_shape(coord)) == 0:
            data = self.values.whole(coord.path, "the scalar time coordinate")
            axis = None if data is None else Axis(coord.path, data.ravel(), 1, True)
        else:
            axis = self.values.axis(coord.path)
        if axis is None:
            return None
        numbers, steps = axis.values, axis.values
        if axis.monotonic == 0:
            self.finding(coord, "extent.non-monotonic", f"time coordinate /{coord.path} is not monotonic"
                         + ("" if axis.complete else " in its first and last chunks"), attributes=False)
            steps = None
            if not axis.complete:
                whole = self.values.whole(coord.path, "the non-monotonic time coordinate")
                if whole is None:
                    return None
                numbers = whole
        bounds = self.bounds(coord)
        source = Source("cf:coordinates", coord.path, coord.path)
        if bounds is not None and np.isfinite(bounds).any():
            numbers = bounds.ravel()
            source = Source("cf:bounds", coord.path, f"{coord.path}, {_bounds_path(self, coord)}")
        if steps is not None and axis.monotonic < 0:
            steps = steps[::-1]
        try:
            span = time_axis.span(numbers, steps=steps, length=axis.length,
                                  split=None if axis.complete or steps is None or axis.monotonic < 0 else axis.split)
        except TimeError as exc:
            self.finding(coord, "extent.time-units", f"time coordinate /{coord.path}: {exc}", attributes=False)
            return None
        for clamped in span.clamped:
            self.finding(coord, "extent.calendar-date",
                         f"time coordinate /{coord.path}: {clamped}, the month's last day in the proleptic Gregorian "
                         f"calendar (the period keeps calendar {time_axis.calendar!r})", attributes=False)
        return Evidence(coord.path, source, period=span.period, temporal_resolution=span.resolution,
                        edges=source.kind == "cf:bounds")

    # ------------------------------------------------------------ findings
    def attribute_finding(self, node: Node, key: str, message: str, rule: str = "extent.coordinate-values") -> None:
        """A finding pointing at the attribute ``key`` of ``node``."""
        finding = attribute_finding(self.h, node.path, rule, (key,), message)
        if finding not in self.findings:
            self.findings.append(finding)

    def finding(self, node: Node, rule: str, message: str, *, attributes: bool = True) -> None:
        location = node.attributes_location if attributes else node.location
        finding = Finding(node.path, location.url, location.pointer, rule, message, "attributes" if attributes else "")
        if finding not in self.findings:
            self.findings.append(finding)


# ---------------------------------------------------------------------- helpers
def _shape(node: Node) -> tuple[int, ...]:
    shape = node.metadata.get("shape")
    return tuple(shape) if isinstance(shape, list) and all(isinstance(s, int) for s in shape) else (-1, -1, -1)


def _dimension_names(node: Node) -> list[str]:
    names = node.metadata.get("dimension_names") if node.zarr_format == 3 else None
    if names is None:
        names = (node.attributes or {}).get("_ARRAY_DIMENSIONS")
    if not isinstance(names, list) or len(names) != len(_shape(node)):
        return []
    return [n for n in names if isinstance(n, str)]


def _names(node: Node, attribute: str) -> list[str]:
    value = (node.attributes or {}).get(attribute)
    return value.split() if isinstance(value, str) else []


def _grid_mapping_name(node: Node) -> str | None:
    """The grid mapping variable's name: the attribute itself, or the first name of CF
    §5.6's extended form (``"crs: x y"``)."""
    value = (node.attributes or {}).get("grid_mapping")
    if not isinstance(value, str) or not value.strip():
        return None
    first = value.split()[0]
    return first[:-1] if first.endswith(":") else first


def _bounds_path(cf: _CF, coord: Node) -> str:
    found = cf.lookup(coord, str((coord.attributes or {}).get("bounds", "")))
    return found.path if found is not None else ""


def _unwrapped(axis: Axis) -> np.ndarray:
    """Longitudes without 360° jumps, so a region across the antimeridian stays one
    interval. The first and last chunks are unwrapped apart; the last is then shifted by
    whole turns to where the first chunk's spacing says it should start."""
    values = axis.values
    if not np.all(np.isfinite(values)):
        return values
    if axis.complete or axis.split is None:
        return np.unwrap(values, period=360)
    head, tail = np.unwrap(values[:axis.split], period=360), np.unwrap(values[axis.split:], period=360)
    step = float(np.mean(np.diff(head))) if head.size > 1 else 0.0
    expected = head[-1] + step * ((axis.length - tail.size) - (head.size - 1))
    tail = tail + 360 * round((expected - tail[0]) / 360)
    return np.concatenate([head, tail])


def _monotonic(values: np.ndarray) -> int:
    """+1 strictly increasing, -1 strictly decreasing, 0 neither: the signs of the steps
    of the float values (steps of 1e20 are steps like any other)."""
    with np.errstate(over="ignore"):  # a step of 2e308 is +inf: its sign is all that counts
        signs = np.sign(np.diff(np.asarray(values, dtype=np.float64)))
    if signs.size == 0 or np.all(signs > 0):
        return 1
    return -1 if np.all(signs < 0) else 0


def _absurd(coord: Node, values: np.ndarray, *, bounds: bool = False) -> str:
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (math.nan, math.nan)
    return (f"longitudes of /{coord.path}{' (its bounds)' if bounds else ''} reach beyond ±{MAX_LONGITUDE:g} "
            f"({low:g}..{high:g}): not longitudes; its extent is not used")


def _regular_step(values: np.ndarray, axis: Axis) -> float | None:
    """The constant spacing of a monotonic axis, checked on what was read and on its span."""
    if values.size < 2 or not np.all(np.isfinite(values)) or _monotonic(values) == 0:
        return None
    diffs = np.diff(values)
    if not axis.complete and axis.split is not None:
        diffs = np.delete(diffs, axis.split - 1)
    if diffs.size == 0:
        return None
    step = float(diffs[0])
    tolerance = 1e-5 * abs(step)
    if not np.all(np.abs(diffs - step) <= tolerance):
        return None
    if abs((values[-1] - values[0]) - step * (axis.length - 1)) > tolerance * axis.length:
        return None
    return step


def _circular_range(lon: np.ndarray, *, continuous: bool = False) -> tuple[float, float]:
    """The smallest longitude interval holding every value: the complement of the largest
    gap between the values on the circle. ``continuous`` values (bounds of adjacent
    cells) are unwrapped first, so their coverage counts, not only their points."""
    if continuous:
        unwrapped = np.unwrap(lon, period=360)
        if unwrapped.max() - unwrapped.min() >= 360:
            return -180.0, 180.0
    points = np.unique(np.mod(lon, 360.0))
    if points.size == 1:
        return float(points[0]), float(points[0])
    gaps = np.diff(np.concatenate([points, [points[0] + 360]]))
    widest = int(np.argmax(gaps))
    west = float(points[(widest + 1) % points.size])
    east = float(points[widest])
    if east < west:
        east += 360
    return west, east
