"""Coordinate reference systems: parsed with pyproj, boxes reprojected to CRS84.

Every source of a CRS (``proj:code``, ``proj:wkt2``, ``proj:projjson``, a CF grid
mapping, an EPSG code in a STAC item) ends in a ``pyproj.CRS`` here, and every box in
a native CRS reaches the catalogue as a CRS84 :class:`~catalogue.model.extents.Box`
through :func:`to_crs84`. pyproj's ``transform_bounds`` densifies the edges and handles
the antimeridian and the poles (a polar stereographic box that holds the pole becomes
``-180..180`` up to 90°); longitudes given as 0..360 are folded to -180..180 here.

One rule for geographic boxes, whoever gives them (``spatial:bbox`` in a geographic CRS,
ACDD's ``geospatial_lon_min/max``, a STAC item's ``bbox``): ``west > east`` means the box
crosses the antimeridian (:func:`longitude_range`). CF coordinate ranges are always
given ``west <= east`` (unwrapped, east possibly beyond 180), so they never cross by order.

:func:`outside_area` is the one plausibility check of a projected box against its CRS's
area of use (conventions and CF grid mappings alike), and :func:`resolution_in_metres`
the one definition of ``dcat:spatialResolutionInMeters`` for every source.
"""

from __future__ import annotations

import math
from typing import Any, Final

from pyproj import CRS, Geod, Transformer
from pyproj.exceptions import CRSError as ProjCRSError

from catalogue.errors import CatalogueError
from catalogue.model.extents import Box, NativeCRS
from catalogue.model.json import short

__all__ = ["CRSError", "crs_from_cf", "longitude_range", "native_crs", "outside_area", "parse_crs",
           "resolution_in_metres", "to_crs84"]

#: Points added along each edge of a box before it is reprojected: enough for the curved
#: edges of conic and polar projections to bound the footprint.
DENSIFY: Final = 21
_WGS84: Final = Geod(ellps="WGS84")


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
    """A longitude interval folded into -180..180. ``west <= east``: ``0..360`` is global,
    ``100..260`` crosses the antimeridian (folded to ``100..-100``), ``-180..180`` stays
    as it is. ``west > east`` *is* a box across the antimeridian (STAC, ACDD 1.3 and
    GeoJSON write it so): each end is folded on its own, ``170..-170`` stays ``170..-170``."""
    if not (math.isfinite(west) and math.isfinite(east)):
        raise ValueError(f"longitudes must be finite, got {west}, {east}")
    if west == east:
        return (folded := _fold(west, low=True)), folded
    if west > east:  # across the antimeridian: fold each end, never swap them
        return _fold(west, low=False), _fold(east, low=True)
    if east - west >= 360:
        return -180.0, 180.0
    fold_w, fold_e = _fold(west, low=False), _fold(east, low=True)
    if fold_e == -180 and east > west:
        fold_e = 180.0
    return fold_w, fold_e


def _fold(value: float, *, low: bool) -> float:
    """One longitude in -180..180; values already in range are kept as they are (folding
    4.43 gives 4.430000000000007). 180 as a west end is -180, -180 as an east end 180."""
    folded = value if -180 <= value <= 180 else (value + 180) % 360 - 180
    if not low and folded == 180:
        return -180.0
    return folded


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
        west, east = longitude_range(minx, maxx)
        south, north = max(south, -90.0), min(north, 90.0)
        if is_crs84_like(crs):
            return Box(west, south, east, north)
        # Another datum: longitudes folded first, then PROJ shifts the datum, each side
        # of the antimeridian on its own when the box crosses it.
        if west > east:
            left = _transformed(crs, (west, south, 180.0, north), values)
            right = _transformed(crs, (-180.0, south, east, north), values)
            return Box(left.west, min(left.south, right.south), right.east, max(left.north, right.north))
        return _transformed(crs, (west, south, east, north), values)
    return _transformed(crs, (minx, miny, maxx, maxy), values)


def _transformed(crs: CRS, box: tuple[float, float, float, float], given: tuple[float, ...]) -> Box:
    try:
        transformer = Transformer.from_crs(crs, "OGC:CRS84", always_xy=True)
        west, south, east, north = transformer.transform_bounds(*box, densify_pts=DENSIFY)
    except Exception as exc:  # pyproj raises ProjError, CRSError or ValueError by PROJ version
        raise ValueError(f"box {list(given)} cannot be reprojected from {crs.name} ({_reason(exc)})") from exc
    if not all(math.isfinite(v) for v in (west, south, east, north)):
        raise ValueError(f"box {list(given)} lies outside the area of {crs.name}")
    return Box(max(west, -180.0), max(south, -90.0), min(east, 180.0), min(north, 90.0))


def outside_area(crs: CRS, native: tuple[float, float, float, float]) -> str | None:
    """Why a projected box is absurd, if it is: it reaches further from the CRS's area of
    use than that area is wide or high, where PROJ's formulas still return numbers that
    mean nothing (a 10^12 m cell in UTM, ±1e300 m polar-stereographic coordinates).
    ``None`` for a plausible box, a geographic CRS, or a CRS without an area of use."""
    area = crs.area_of_use
    if crs.is_geographic:
        return None
    if area is None:  # a CRS built from parameters (a CF grid mapping): the Earth's size is the area
        return _beyond_the_earth(crs, native)
    try:
        to_native = Transformer.from_crs("OGC:CRS84", crs, always_xy=True)
        xmin, ymin, xmax, ymax = to_native.transform_bounds(*area.bounds, densify_pts=DENSIFY)
    except Exception:  # an area PROJ cannot project: nothing to compare with
        return None
    if not all(math.isfinite(v) for v in (xmin, ymin, xmax, ymax)):
        return None
    width, height = xmax - xmin, ymax - ymin
    if (native[0] < xmin - width or native[2] > xmax + width
            or native[1] < ymin - height or native[3] > ymax + height):
        return (f"the box {[float(f'{v:.6g}') for v in native]} lies far outside the area of use of "
                f"{crs.name!r} ({[round(v) for v in (xmin, ymin, xmax, ymax)]} in its units)")
    return None


def _beyond_the_earth(crs: CRS, native: tuple[float, float, float, float]) -> str | None:
    """Why a projected box without an area of use to compare with is absurd: a coordinate
    more than 100 Earth radii from the projection's origin, which no map projection puts
    a place at (Mercator reaches 16 radii a micro-degree from the pole)."""
    axis = crs.axis_info[0] if crs.axis_info else None
    factor = axis.unit_conversion_factor if axis is not None and axis.unit_conversion_factor else 1.0
    ellipsoid = crs.ellipsoid
    radius = ellipsoid.semi_major_metre if ellipsoid is not None else 6_378_137.0
    limit = 100 * radius
    if max(abs(v) for v in native) * factor > limit:
        return (f"the box {[float(f'{v:.6g}') for v in native]} reaches more than 100 Earth radii "
                f"({limit:.3g} m) from the origin of {crs.name!r}: not a place")
    return None


def resolution_in_metres(crs: CRS | None, step_x: float | None, step_y: float | None) -> float | None:
    """``dcat:spatialResolutionInMeters`` of a grid: the smaller of its X and Y steps, in metres.

    The one definition for every source (GeoZarr ``spatial:transform``, CF regular axes):

    * projected CRS: the step in the CRS's axis unit times its conversion factor (a grid
      distance, as the figure is commonly read, not a ground distance);
    * geographic CRS (``None`` is CRS84: CF latitude/longitude): the *nominal* cell size,
      geodesic lengths on the CRS's ellipsoid at the equator: the Y step along a
      meridian from 0°, the X step along the equator, where cells are widest. A property
      of the grid, not of where its box lies: a 0.25° grid is 27,644 m whether it covers
      the tropics or Svalbard, so grids compare and unions take the finer one fairly, and
      ``extract.py`` turns the figure back into degrees for its half-a-cell tolerance.

    Steps that are missing, zero, negative or not finite are left out; ``None`` without any.
    """
    steps = [abs(s) if s is not None and math.isfinite(s) and s != 0 else None for s in (step_x, step_y)]
    if all(s is None for s in steps):
        return None
    axis = crs.axis_info[0] if crs is not None and crs.axis_info else None
    factor = axis.unit_conversion_factor if axis is not None and axis.unit_conversion_factor else None
    if crs is not None and not crs.is_geographic:
        return min(s * (factor or 1.0) for s in steps if s is not None)
    to_degrees = math.degrees(factor) if crs is not None and factor else 1.0
    geod = (crs.get_geod() if crs is not None else None) or _WGS84
    sizes = []
    if steps[1] is not None:
        sizes.append(geod.inv(0.0, 0.0, 0.0, min(steps[1] * to_degrees, 90.0))[2])
    if steps[0] is not None:
        sizes.append(geod.inv(0.0, 0.0, min(steps[0] * to_degrees, 179.0), 0.0)[2])
    sizes = [m for m in sizes if math.isfinite(m) and m > 0]
    return min(sizes) if sizes else None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
