"""Extent evidence from ACDD attributes (Attribute Convention for Data Discovery 1.3).

Read on the root and on every array, from the node's own attributes:

* ``geospatial_lat_min/max``, ``geospatial_lon_min/max`` (numbers, or numeric texts as
  netCDF converters write them): a CRS84 box. Longitudes given as 0..360 are folded to
  -180..180; ``lon_min > lon_max`` means the box crosses the antimeridian (ACDD 1.3:
  "the bounding box extends from geospatial_lon_max through the discontinuity to
  geospatial_lon_min" with ``170, -175`` as its example).
* ``geospatial_bounds``: a WKT geometry, in ``geospatial_bounds_crs`` (default
  ``EPSG:4326``, whose axis order is latitude, longitude, as ACDD's example
  ``POLYGON ((40.26 -111.29, ...))`` is written). It is parsed with shapely and
  transformed to CRS84 with pyproj honouring the CRS's own axis order.
* ``time_coverage_start``, ``time_coverage_end``, ``time_coverage_duration`` (gives the
  end from the start when there is no end) and ``time_coverage_resolution`` (the
  temporal resolution, as ``xsd:duration`` text). See ``iso8601.py`` for dates versus
  date-times and UTC.

Each group of attributes is one piece of evidence with its own :class:`Source`
(``acdd``; ``detail`` names the attributes used), so a conflict between, say,
``geospatial_bounds`` and the lat/lon figures stays visible. Values that cannot be read
are findings (``extent.acdd.unparseable``), never exceptions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import shapely
from pyproj import Transformer
from shapely.errors import GEOSException

from catalogue.extents.attribute_finding import attribute_finding
from catalogue.extents.crs import CRSError, longitude_range, parse_crs
from catalogue.extents.evidence import Evidence
from catalogue.extents.iso8601 import TimeError, add_duration, instant, period, xsd_duration
from catalogue.model.extents import Box, Source
from catalogue.model.json import short
from catalogue.model.nodes import Hierarchy
from catalogue.validate.findings import Finding

__all__ = ["evidence"]

RULE = "extent.acdd.unparseable"
BOX_KEYS = ("geospatial_lat_min", "geospatial_lat_max", "geospatial_lon_min", "geospatial_lon_max")
TIME_KEYS = ("time_coverage_start", "time_coverage_end", "time_coverage_duration")


class _Unreadable(ValueError):
    """A value that cannot be read: ``key`` names the attribute."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def evidence(hierarchy: Hierarchy) -> tuple[list[Evidence], list[Finding]]:
    """The ACDD evidence of the root and of every array."""
    found: list[Evidence] = []
    findings: list[Finding] = []
    for path in sorted(hierarchy.nodes):
        node = hierarchy.nodes[path]
        attributes = node.attributes
        if not attributes or (path and node.kind != "array"):
            continue
        for reader in (_box, _bounds, _time):
            try:
                item = reader(path, attributes)
            except _Unreadable as exc:
                findings.append(attribute_finding(hierarchy, path, RULE, (exc.key,), str(exc)))
            else:
                if item is not None:
                    found.append(item)
    return found, findings


def _box(path: str, attributes: dict[str, Any]) -> Evidence | None:
    present = [key for key in BOX_KEYS if key in attributes]
    if not present:
        return None
    if len(present) < 4:
        missing = [key for key in BOX_KEYS if key not in attributes]
        raise _Unreadable(present[0], f"{', '.join(present)} without {', '.join(missing)}: no box")
    south, north, west, east = (_number(key, attributes[key]) for key in BOX_KEYS)
    if not (-90 <= south <= north <= 90):
        raise _Unreadable("geospatial_lat_min", f"latitudes {south}, {north} are not -90 <= min <= max <= 90")
    west, east = longitude_range(west, east)  # west > east crosses the discontinuity (crs.py: one rule)
    box = Box(west, south, east, north)
    return Evidence(path, Source("acdd", path, ", ".join(BOX_KEYS)), bbox=box)


def _number(key: str, value: Any) -> float:
    if isinstance(value, list) and len(value) == 1:  # netCDF attributes are arrays of one
        value = value[0]
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise _Unreadable(key, f"{key} is not a number: {short(value)}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Unreadable(key, f"{key} is not a finite number: {short(value)}")
    return float(value)


def _bounds(path: str, attributes: dict[str, Any]) -> Evidence | None:
    wkt = attributes.get("geospatial_bounds")
    if wkt is None:
        return None
    key = "geospatial_bounds"
    if not isinstance(wkt, str) or not wkt.strip():
        raise _Unreadable(key, f"geospatial_bounds is not a WKT text: {short(wkt)}")
    try:
        geometry = shapely.from_wkt(wkt)
    except (GEOSException, ValueError):
        raise _Unreadable(key, f"geospatial_bounds is not WKT: {short(wkt)}") from None
    if geometry is None or geometry.is_empty:
        raise _Unreadable(key, f"geospatial_bounds is an empty geometry: {short(wkt)}")
    crs_value = attributes.get("geospatial_bounds_crs", "EPSG:4326")
    detail = "geospatial_bounds" + (", geospatial_bounds_crs" if "geospatial_bounds_crs" in attributes else "")
    try:
        crs = parse_crs(crs_value)
    except CRSError as exc:
        raise _Unreadable("geospatial_bounds_crs", str(exc)) from None
    horizontal = crs.sub_crs_list[0] if crs.is_compound and crs.sub_crs_list else crs
    try:
        transformer = Transformer.from_crs(horizontal, "OGC:CRS84")
        crs84 = shapely.transform(geometry, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))
        west, south, east, north = crs84.bounds
        box = Box(west, south, east, north)
    except Exception as exc:  # pyproj (ProjError), shapely and Box (ValueError) all say the same here
        raise _Unreadable(key, f"geospatial_bounds in {crs.name!r} gives no CRS84 footprint ({exc})") from None
    return Evidence(path, Source("acdd", path, detail), bbox=box, geometry=shapely.to_wkt(crs84, rounding_precision=-1))


def _time(path: str, attributes: dict[str, Any]) -> Evidence | None:
    resolution = None
    if "time_coverage_resolution" in attributes:
        try:
            resolution = xsd_duration(attributes["time_coverage_resolution"])
        except TimeError as exc:
            raise _Unreadable("time_coverage_resolution", f"time_coverage_resolution: {exc}") from None
    used = [key for key in TIME_KEYS if key in attributes]
    span = None
    if "time_coverage_start" in attributes:
        start = _instant(attributes, "time_coverage_start")
        if "time_coverage_end" in attributes:
            end = _instant(attributes, "time_coverage_end")
            used = [k for k in used if k != "time_coverage_duration"]
        elif "time_coverage_duration" in attributes:
            try:
                end = add_duration(start, attributes["time_coverage_duration"])
            except TimeError as exc:
                raise _Unreadable("time_coverage_duration", f"time_coverage_duration: {exc}") from None
        else:
            end = None
        if end is not None:
            try:
                span = period(start, end)
            except (TimeError, ValueError) as exc:
                raise _Unreadable("time_coverage_end", str(exc)) from None
    if span is None and resolution is None:
        return None
    detail = ", ".join(([k for k in used] if span else []) + (["time_coverage_resolution"] if resolution else []))
    return Evidence(path, Source("acdd", path, detail), period=span, temporal_resolution=resolution)


def _instant(attributes: dict[str, Any], key: str) -> Any:
    try:
        return instant(attributes[key])
    except TimeError as exc:
        raise _Unreadable(key, f"{key}: {exc}") from None
