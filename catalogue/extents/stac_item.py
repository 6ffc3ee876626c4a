"""Extent evidence from a STAC Item stored inside Zarr, in the root group's attributes.

Two placements are read, both seen in practice:

* ``stac_discovery``: Copernicus EOPF products write their STAC Item there (the root
  ``.zattrs`` of every Sentinel product of the EOPF Sample Service, with ``bbox``,
  ``geometry`` and ``properties``; ``other_metadata`` beside it);
* ``stac:item``: the zarr-conventions STAC convention (UUID
  ``b3703368-7e7e-4e8e-9e0e-6d0f0d5e8e8e``) with ``stac:encoding: "attribute"``; an
  item stored under another encoding (a key or an array) is a reference, not read here.

From the item: ``bbox`` (2-D ``[w, s, e, n]`` or 3-D ``[w, s, zmin, e, n, zmax]``, west >
east across the antimeridian, as STAC writes it), ``geometry`` (GeoJSON, CRS84 by
definition; written as WKT by shapely), ``properties.start_datetime``/``end_datetime``
or else ``properties.datetime`` (an instant: a period of zero length), and the native
CRS from ``properties["proj:code"]`` or ``properties["proj:epsg"]`` (the STAC
projection extension). Values that cannot be read are findings
(``extent.stac.unparseable``).
"""

from __future__ import annotations

import math
from typing import Any

import shapely
import shapely.geometry
from shapely.errors import GEOSException

from catalogue.extents.attribute_finding import attribute_finding
from catalogue.extents.crs import CRSError, native_crs, parse_crs
from catalogue.extents.evidence import Evidence
from catalogue.extents.iso8601 import TimeError, instant, period
from catalogue.model.extents import Box, NativeCRS, Period, Source
from catalogue.model.json import short
from catalogue.model.nodes import Hierarchy
from catalogue.validate.findings import Finding

__all__ = ["ATTRIBUTES", "evidence", "stac_item"]

RULE = "extent.stac.unparseable"
#: The attributes that may hold an item, in the order they are looked for.
ATTRIBUTES = ("stac_discovery", "stac:item")


class _Unreadable(ValueError):
    def __init__(self, tokens: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.tokens = tokens


def stac_item(attributes: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(attribute, item)`` of the STAC item a group's attributes hold, if any."""
    found = _placement(attributes)
    return found if found is not None and isinstance(found[1], dict) and found[1] else None


def _placement(attributes: dict[str, Any]) -> tuple[str, Any] | None:
    """``(attribute, value)`` of the first placement that holds an item (to be read), whatever its shape."""
    for key in ATTRIBUTES:
        if key not in attributes:
            continue
        if key == "stac:item" and attributes.get("stac:encoding", "attribute") != "attribute":
            continue  # a reference to an item stored elsewhere, not the item
        return key, attributes[key]
    return None


def evidence(hierarchy: Hierarchy) -> tuple[list[Evidence], list[Finding]]:
    """The evidence of the STAC item in the root's attributes (about the root)."""
    root = hierarchy.root
    found = _placement(root.attributes or {}) if root is not None else None
    if found is None:
        return [], []
    key, item = found
    if not isinstance(item, dict) or not item:
        return [], [attribute_finding(hierarchy, "", RULE, (key,), f"{key} is not a STAC Item (a non-empty JSON "
                                      f"object), got {short(item)}")]
    out: list[Evidence] = []
    findings: list[Finding] = []
    properties = item.get("properties", {})
    if not isinstance(properties, dict):
        findings.append(attribute_finding(hierarchy, "", RULE, (key, "properties"),
                                          f"properties must be a JSON object, got {short(properties)}"))
        properties = {}
    for reader in (_bbox, _geometry, _period, _crs):
        try:
            result = reader(item, properties)
        except _Unreadable as exc:
            findings.append(attribute_finding(hierarchy, "", RULE, (key, *exc.tokens), str(exc)))
            continue
        if result is None:
            continue
        detail, fields = result
        out.append(Evidence("", Source("stac", "", f"{key}: {detail}"), **fields))
    return out, findings


def _bbox(item: dict[str, Any], _properties: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    bbox = item.get("bbox")
    if bbox is None:
        return None
    if not (isinstance(bbox, list) and len(bbox) in (4, 6) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in bbox)):
        raise _Unreadable(("bbox",), f"bbox must be 4 or 6 finite numbers, got {short(bbox)}")
    west, south, east, north = (bbox[0], bbox[1], bbox[2], bbox[3]) if len(bbox) == 4 else (bbox[0], bbox[1], bbox[3], bbox[4])
    try:
        return "bbox", {"bbox": Box(west, south, east, north)}
    except ValueError as exc:
        raise _Unreadable(("bbox",), f"bbox {short(bbox)}: {exc}") from None


def _geometry(item: dict[str, Any], _properties: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    geometry = item.get("geometry")
    if geometry is None:
        return None
    try:
        shape = shapely.geometry.shape(geometry)
    except (GEOSException, ValueError, TypeError, KeyError, AttributeError, IndexError):
        raise _Unreadable(("geometry",), f"geometry is not GeoJSON: {short(geometry)}") from None
    if shape.is_empty:
        raise _Unreadable(("geometry",), f"geometry is empty: {short(geometry)}")
    west, south, east, north = shape.bounds
    if not (-180 <= west <= east <= 180 and -90 <= south <= north <= 90):
        raise _Unreadable(("geometry",), f"geometry lies outside longitude -180..180, latitude -90..90: {shape.bounds}")
    return "geometry", {"geometry": shapely.to_wkt(shape, rounding_precision=-1)}


def _period(_item: dict[str, Any], properties: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    start, end = properties.get("start_datetime"), properties.get("end_datetime")
    moment = properties.get("datetime")
    if start is not None and end is not None:
        return "properties.start_datetime, properties.end_datetime", {
            "period": _span(instant_or(start, "start_datetime"), instant_or(end, "end_datetime"), "end_datetime")}
    if start is not None or end is not None:  # STAC: start_datetime and end_datetime go together
        given, missing = ("start_datetime", "end_datetime") if start is not None else ("end_datetime", "start_datetime")
        raise _Unreadable(("properties", given), f"properties.{given} ({short(properties[given])}) without "
                          f"properties.{missing}: no period" + (" from them; datetime not used either"
                                                                 if moment is not None else ""))
    if moment is None:
        return None
    value = instant_or(moment, "datetime")
    return "properties.datetime", {"period": _span(value, value, "datetime")}


def instant_or(value: Any, key: str) -> Any:
    try:
        return instant(value)
    except TimeError as exc:
        raise _Unreadable(("properties", key), f"properties.{key}: {exc}") from None


def _span(start: Any, end: Any, key: str) -> Period:
    try:
        return period(start, end)
    except (TimeError, ValueError) as exc:
        raise _Unreadable(("properties", key), str(exc)) from None


def _crs(_item: dict[str, Any], properties: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    for key in ("proj:code", "proj:epsg"):
        value = properties.get(key)
        if value is None:
            continue
        try:
            crs: NativeCRS = native_crs(parse_crs(value))
        except CRSError as exc:
            raise _Unreadable(("properties", key), f"properties.{key}: {exc}") from None
        return f"properties.{key}", {"crs": crs}
    return None
