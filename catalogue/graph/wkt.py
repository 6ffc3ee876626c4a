"""GeoSPARQL ``geo:wktLiteral`` values as shapely geometries in CRS84 (lon/lat).

Both the spatial index (:mod:`.spatial`, which writes each literal's envelope) and the
GeoSPARQL functions (:mod:`.sparql.geo`) need the same reading of a literal, so it lives
here, once.  Every geometry comes out in CRS84 longitude/latitude, whatever CRS the
literal names, so that envelopes in the index and constants in a query are comparable:

* no CRS IRI, or OGC CRS84: taken as written (GeoSPARQL's default);
* ``http://www.opengis.net/def/crs/EPSG/0/4326``: EPSG:4326 orders axes latitude first,
  so the coordinates are swapped;
* any other CRS IRI pyproj knows: reprojected to CRS84 with pyproj, from the axis order
  the CRS declares (vertex by vertex:
  edges are not densified, which is exact for the catalogue's own CRS84 footprints and
  close enough for query constants);
* a CRS pyproj does not know, or text shapely cannot read: :class:`WktError`, which the
  GeoSPARQL functions turn into a SPARQL error (a FILTER is false, never a crash).

Geometries are planar on lon/lat, as GeoSPARQL's simple-features relations are: a shape
crossing the antimeridian must be written split at ±180° (a MULTIPOLYGON), which is
what the catalogue writes for dataset footprints (``model/extents.py``); the relations
glue the two sides of that seam back together (:func:`.sparql.geof.relate`).  Z and M
coordinates are dropped: the relations are two-dimensional.

The result must lie in lon/lat space: a longitude outside -180..180, a latitude outside
-90..90 or a coordinate that is not finite (after reprojection, if any) is a
:class:`WktError`, so such a literal matches nothing instead of matching by accident
(``<EPSG:4326> POINT(95 10)`` is latitude 95; it is not a point at all).

Parsing costs tens of microseconds while a query evaluates a function once per row on
the same few literals, so parsed geometries are kept in an LRU cache (shapely
geometries are immutable, so sharing them is safe).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # shapely (and numpy) load when a literal is first read, not with the store
    from shapely.geometry.base import BaseGeometry

__all__ = ["CRS84", "EPSG4326", "WKT_LITERAL", "WktError", "in_lon_lat", "parse_wkt"]

#: The datatype IRI of GeoSPARQL WKT literals.
WKT_LITERAL: Final = "http://www.opengis.net/ont/geosparql#wktLiteral"
CRS84: Final = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
EPSG4326: Final = "http://www.opengis.net/def/crs/EPSG/0/4326"
# CRS IRIs that mean CRS84 longitude/latitude as written.
_CRS84_IRIS: Final = frozenset(
    {CRS84, "http://www.opengis.net/def/crs/OGC/0/CRS84", "urn:ogc:def:crs:OGC:1.3:CRS84"}
)
_LAT_LON_IRIS: Final = frozenset({EPSG4326, "urn:ogc:def:crs:EPSG::4326"})
# Literals longer than this are parsed without the cache, which would otherwise pin
# megabytes of coordinates for shapes that are rarely read twice.
_CACHE_MAX_LENGTH: Final = 100_000


class WktError(ValueError):
    """The literal is not a geometry the catalogue can read (its text or its CRS)."""


def parse_wkt(text: str) -> BaseGeometry:
    """The CRS84 geometry of a ``geo:wktLiteral`` lexical form (raises :class:`WktError`)."""
    if len(text) > _CACHE_MAX_LENGTH:
        return _parse(text)
    return _parse_cached(text)


def _parse(text: str) -> BaseGeometry:
    import shapely

    body = text.strip()
    crs = None
    if body.startswith("<"):
        end = body.find(">")
        if end < 0:
            raise WktError(f"unterminated CRS IRI in WKT literal {text[:80]!r}")
        crs, body = body[1:end].strip(), body[end + 1 :].strip()
    try:
        geometry = shapely.from_wkt(body)
    except shapely.errors.ShapelyError as exc:
        raise WktError(f"not WKT: {text[:80]!r} ({exc})") from None
    if geometry is None:
        raise WktError(f"not WKT: {text[:80]!r}")
    if shapely.has_z(geometry):
        geometry = shapely.force_2d(geometry)
    if crs is None or crs in _CRS84_IRIS:
        return _in_range(geometry, text)
    if crs in _LAT_LON_IRIS:
        return _in_range(shapely.transform(geometry, lambda xy: xy[:, ::-1]), text)
    moved = shapely.transform(geometry, _transformer(crs), interleaved=False)
    if not moved.is_empty and not all(map(_finite, moved.bounds)):
        raise WktError(f"{text[:80]!r} lies outside the area where {crs} can be reprojected")
    return _in_range(moved, text)


def _finite(value: float) -> bool:
    return value == value and abs(value) != float("inf")


def in_lon_lat(geometry: BaseGeometry) -> bool:
    """Whether every coordinate of ``geometry`` is a finite CRS84 longitude/latitude."""
    import shapely

    xy = shapely.get_coordinates(geometry)
    # Comparisons with NaN are false, so NaN is out of range too (as are infinities).
    return bool(
        ((xy[:, 0] >= -180.0) & (xy[:, 0] <= 180.0) & (xy[:, 1] >= -90.0) & (xy[:, 1] <= 90.0)).all()
    )


def _in_range(geometry: BaseGeometry, text: str) -> BaseGeometry:
    if not in_lon_lat(geometry):
        raise WktError(
            f"{text[:80]!r} has coordinates outside CRS84 lon/lat "
            "(longitude -180..180, latitude -90..90)"
        )
    return geometry


_parse_cached = lru_cache(maxsize=4096)(_parse)


@lru_cache(maxsize=64)
def _transformer(crs: str):  # type: ignore[no-untyped-def]
    """A function reprojecting coordinate arrays from ``crs`` to CRS84."""
    from pyproj import CRS, Transformer
    from pyproj.exceptions import CRSError

    try:
        source = CRS.from_user_input(crs)
    except CRSError:
        raise WktError(f"unknown CRS {crs!r} in WKT literal") from None
    # The literal's coordinates are in its CRS's own axis order (GeoSPARQL 1.1), and
    # CRS84's order is longitude, latitude: no always_xy either way.
    transformer = Transformer.from_crs(source, CRS.from_user_input(CRS84))

    def transform(x, y):  # type: ignore[no-untyped-def]
        return transformer.transform(x, y, errcheck=False)

    return transform
