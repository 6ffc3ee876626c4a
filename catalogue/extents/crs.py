"""Coordinate reference systems: parsed with pyproj, boxes reprojected to CRS84.

Every source of a CRS (``proj:code``, ``proj:wkt2``, ``proj:projjson``, a CF grid
mapping, an EPSG code in a STAC item) ends in a ``pyproj.CRS`` here, and every box in
a native CRS reaches the catalogue as a CRS84 :class:`~catalogue.model.extents.Box`
through :func:`to_crs84`. pyproj's ``transform_bounds`` densifies the edges and handles
the antimeridian and the poles (a polar stereographic box that holds the pole becomes
``-180..180`` up to 90°); longitudes given as 0..360 are folded to -180..180 here.
"""

from __future__ import annotations

import math
from typing import Any, Final

from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError as ProjCRSError

from catalogue.errors import CatalogueError
from catalogue.model.extents import Box, NativeCRS
from catalogue.model.json import short

__all__ = ["CRSError", "crs_from_cf", "longitude_range", "native_crs", "parse_crs", "to_crs84"]

#: Points added along each edge of a box before it is reprojected: enough for the curved
#: edges of conic and polar projections to bound the footprint.
DENSIFY: Final = 21


class CRSError(CatalogueError):
    """A CRS declaration pyproj cannot resolve (the message names the value received)."""


def parse_crs(value: Any) -> CRS:
    """A CRS from what a convention or attribute declares: an authority code
    (``"EPSG:32633"``, ``32633``), a WKT (1 or 2) text, or a PROJJSON object."""
    if isinstance(value, bool) or value is None or value == "":
        raise CRSError(f"not a CRS: {short(value)}")
    try:
        if isinstance(value, int):
            return CRS.from_epsg(value)
        if isinstance(value, (str, dict)):
            return CRS.from_user_input(value)
    except (ProjCRSError, ValueError, TypeError) as exc:
        raise CRSError(f"not a CRS pyproj can resolve: {short(value)} ({_reason(exc)})") from exc
    raise CRSError(f"not a CRS: {short(value)}")


def crs_from_cf(attributes: dict[str, Any]) -> CRS:
    """The CRS of a CF grid-mapping variable's attributes (``grid_mapping_name``,
    ``crs_wkt``, projection parameters), as pyproj reads them."""
    try:
        crs = CRS.from_cf(attributes)
    except (ProjCRSError, ValueError, TypeError, KeyError) as exc:
        name = attributes.get("grid_mapping_name", attributes.get("crs_wkt", "?"))
        raise CRSError(f"CF grid mapping {short(name)} is not a CRS pyproj can resolve ({_reason(exc)})") from exc
    mapping = attributes.get("grid_mapping_name")
    if crs.name in ("undefined", "unknown", "unnamed") and isinstance(mapping, str) and mapping:
        # pyproj names a CRS built from projection parameters "undefined"; the grid
        # mapping's own name is what a reader recognises (shown in the portal and CLI).
        described = crs.to_json_dict()
        described["name"] = mapping.replace("_", " ")
        crs = CRS.from_json_dict(described)
    return crs


def native_crs(crs: CRS) -> NativeCRS:
    """The catalogue's record of a CRS: its EPSG code when pyproj identifies one exactly,
    else its WKT2 text."""
    epsg = crs.to_epsg(min_confidence=100)
    wkt = None if epsg is not None else crs.to_wkt("WKT2_2019")
    return NativeCRS(epsg=epsg, wkt2=wkt, name=crs.name)


def is_crs84_like(crs: CRS) -> bool:
    """A geographic CRS on the WGS 84 datum (CRS84, EPSG:4326): no reprojection needed
    beyond axis order and longitude folding."""
    return crs.is_geographic and crs.datum is not None and crs.datum.name in (
        "World Geodetic System 1984", "World Geodetic System 1984 ensemble")


def longitude_range(west: float, east: float) -> tuple[float, float]:
    """A longitude interval folded into -180..180: ``0..360`` is global, ``100..260``
    crosses the antimeridian (``west > east``), ``-180..180`` stays as it is."""
    if not (math.isfinite(west) and math.isfinite(east)):
        raise ValueError(f"longitudes must be finite, got {west}, {east}")
    if east < west:
        west, east = east, west
    if east - west >= 360:
        return -180.0, 180.0
    # values already in range are kept as they are: folding 4.43 gives 4.430000000000007
    fold_w = west if -180 <= west <= 180 else (west + 180) % 360 - 180
    fold_e = east if -180 <= east <= 180 else (east + 180) % 360 - 180
    if fold_e == -180 and east > west:
        fold_e = 180.0
    if fold_w == 180:
        fold_w = -180.0
    return fold_w, fold_e


def to_crs84(crs: CRS, minx: float, miny: float, maxx: float, maxy: float) -> Box:
    """A box given in ``crs`` (x = easting or longitude first, whatever the CRS's axis
    order) as a CRS84 :class:`Box`, densified, across the antimeridian and the poles."""
    values = (minx, miny, maxx, maxy)
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise ValueError(f"a box needs four finite numbers, got {list(values)}")
    if crs.is_geographic:
        south, north = (miny, maxy) if miny <= maxy else (maxy, miny)
        if not -90 - 1e-9 <= south <= north <= 90 + 1e-9:
            raise ValueError(f"latitudes outside -90..90: {south}, {north}")
        if is_crs84_like(crs):
            west, east = longitude_range(minx, maxx)
            return Box(west, max(south, -90.0), east, min(north, 90.0))
        # Another datum: fold the longitudes first, then let PROJ shift the datum.
        minx, maxx = longitude_range(minx, maxx)
        miny, maxy = south, north
    try:
        transformer = Transformer.from_crs(crs, "OGC:CRS84", always_xy=True)
        west, south, east, north = transformer.transform_bounds(minx, miny, maxx, maxy, densify_pts=DENSIFY)
    except Exception as exc:  # pyproj raises ProjError, CRSError or ValueError by PROJ version
        raise ValueError(f"box {list(values)} cannot be reprojected from {crs.name} ({_reason(exc)})") from exc
    if not all(math.isfinite(v) for v in (west, south, east, north)):
        raise ValueError(f"box {list(values)} lies outside the area of {crs.name}")
    return Box(max(west, -180.0), max(south, -90.0), min(east, 180.0), min(north, 90.0))


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
