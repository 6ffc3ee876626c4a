"""GeoSPARQL 1.1 filter functions evaluated in Python, with shapely and pyproj.

This is the one definition of what each ``geof:`` function means here.  The compiled
SQL (:mod:`.geo`) tests the spatial index's candidates with :func:`relate`, SQLite calls
it per row through a registered function, and rdflib's evaluator calls the functions
registered by :func:`install` (from :func:`.hooks.install`, at store open) for whatever
is not compiled, so a query gives the same answer whichever path evaluates it.

Arguments are ``geo:wktLiteral`` literals (:mod:`catalogue.graph.wkt` reads them, in
CRS84).  Anything else, an unreadable literal or an unknown unit is a SPARQL error
(:class:`SPARQLError`): FILTER drops the row, nothing crashes.

Units (``uom:`` is ``http://www.opengis.net/def/uom/OGC/1.0/``):

* ``geof:distance(a, b, uom:degree | uom:radian)``: the planar distance in lon/lat;
  ``uom:metre``: the geodesic distance (WGS 84 ellipsoid, pyproj ``Geod``) between the
  two geometries' nearest points, where "nearest" is found in lon/lat: exact for
  points, a close approximation for shapes; 0 when they intersect.
* ``geof:buffer(a, r, uom:degree | uom:radian)``: shapely's planar buffer in lon/lat;
  ``uom:metre``: the buffer computed in an azimuthal equidistant projection centred on
  the geometry (so distances from the centre are true metres) and projected back to
  CRS84; accurate for shapes up to a few thousand kilometres, not split at the
  antimeridian.
* ``geof:envelope(a)``: the lon/lat bounding box, as a ``geo:wktLiteral`` polygon.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Final

import shapely
from rdflib.plugins.sparql.sparql import SPARQLError
from rdflib.term import Literal, Node, URIRef
from shapely.geometry.base import BaseGeometry

from ..terms import XSD_NUMERIC_DATATYPES, comparable_value
from ..wkt import CRS84, WKT_LITERAL, WktError, parse_wkt

__all__ = [
    "GEO",
    "GEOF",
    "RELATIONS",
    "UOM",
    "buffer",
    "distance",
    "envelope",
    "install",
    "relate",
    "relate_text",
]

GEO: Final = "http://www.opengis.net/ont/geosparql#"
GEOF: Final = "http://www.opengis.net/def/function/geosparql/"
UOM: Final = "http://www.opengis.net/def/uom/OGC/1.0/"

#: ``geof:`` relation name -> shapely predicate (GeoSPARQL's Simple Features family).
RELATIONS: Final[dict[str, Callable[[BaseGeometry, BaseGeometry], bool]]] = {
    "sfEquals": shapely.equals,
    "sfDisjoint": shapely.disjoint,
    "sfIntersects": shapely.intersects,
    "sfTouches": shapely.touches,
    "sfCrosses": shapely.crosses,
    "sfWithin": shapely.within,
    "sfContains": shapely.contains,
    "sfOverlaps": shapely.overlaps,
}

_METRE: Final = UOM + "metre"
_DEGREE: Final = UOM + "degree"
_RADIAN: Final = UOM + "radian"
_WKT: Final = URIRef(WKT_LITERAL)
_DOUBLE: Final = URIRef("http://www.w3.org/2001/XMLSchema#double")


def relate(name: str, a: BaseGeometry, b: BaseGeometry) -> bool | None:
    """The relation ``name`` between two geometries; None if GEOS cannot decide it
    (an invalid polygon, say), which is a SPARQL error."""
    try:
        return bool(RELATIONS[name](a, b))
    except shapely.errors.GEOSException:
        return None


def relate_text(name: str, a: str | None, b: str | None) -> int | None:
    """SQLite's ``geo_relate(name, wkt, wkt)``: 1, 0 or NULL (an error)."""
    if a is None or b is None:
        return None
    try:
        result = relate(name, parse_wkt(a), parse_wkt(b))
    except WktError:
        return None
    return None if result is None else int(result)


def distance(a: BaseGeometry, b: BaseGeometry, unit: str) -> float:
    """``geof:distance`` in ``unit`` (see the module docstring)."""
    if a.is_empty or b.is_empty:
        raise ValueError("distance to an empty geometry")
    if unit == _DEGREE:
        return float(shapely.distance(a, b))
    if unit == _RADIAN:
        import math

        return math.radians(float(shapely.distance(a, b)))
    if unit != _METRE:
        raise ValueError(f"unsupported unit {unit}")
    if shapely.intersects(a, b):
        return 0.0
    from shapely.ops import nearest_points

    pa, pb = nearest_points(a, b)
    _, _, metres = _geod().inv(pa.x, pa.y, pb.x, pb.y)
    return float(metres)


def envelope(a: BaseGeometry) -> BaseGeometry:
    """``geof:envelope``: the bounding box (a point or line for degenerate shapes)."""
    return shapely.envelope(a)


def buffer(a: BaseGeometry, radius: float, unit: str) -> BaseGeometry:
    """``geof:buffer`` in ``unit`` (see the module docstring)."""
    if unit == _DEGREE:
        return a.buffer(radius)
    if unit == _RADIAN:
        import math

        return a.buffer(math.degrees(radius))
    if unit != _METRE:
        raise ValueError(f"unsupported unit {unit}")
    if a.is_empty:
        return a
    from pyproj import CRS, Transformer

    centre = a.centroid
    local = CRS.from_proj4(f"+proj=aeqd +lat_0={centre.y} +lon_0={centre.x} +datum=WGS84 +units=m")
    there = Transformer.from_crs(CRS.from_user_input(CRS84), local, always_xy=True)
    back = Transformer.from_crs(local, CRS.from_user_input(CRS84), always_xy=True)
    projected = shapely.transform(a, lambda x, y: there.transform(x, y), interleaved=False)
    return shapely.transform(
        projected.buffer(radius), lambda x, y: back.transform(x, y), interleaved=False
    )


@lru_cache(maxsize=1)
def _geod():  # type: ignore[no-untyped-def]
    from pyproj import Geod

    return Geod(ellps="WGS84")


# ------------------------------------------------------------- rdflib functions


def _geometry(term: Node) -> BaseGeometry:
    if not isinstance(term, Literal) or term.datatype != _WKT:
        raise SPARQLError(f"not a geo:wktLiteral: {term!r}")
    try:
        return parse_wkt(str(term))
    except WktError as exc:
        raise SPARQLError(str(exc)) from None


def _number(term: Node) -> float:
    number = (
        comparable_value(str(term), str(term.datatype))
        if isinstance(term, Literal) and str(term.datatype) in XSD_NUMERIC_DATATYPES
        else None
    )
    if number is None:
        raise SPARQLError(f"not a number: {term!r}")
    return number


def _unit(term: Node) -> str:
    if not isinstance(term, URIRef) or str(term) not in (_METRE, _DEGREE, _RADIAN):
        raise SPARQLError(f"unsupported unit {term!r}: use uom:metre, uom:degree or uom:radian")
    return str(term)


def _wkt_literal(geometry: BaseGeometry) -> Literal:
    return Literal(geometry.wkt, datatype=_WKT)


def _relation_function(name: str) -> Callable[[Node, Node], Literal]:
    def evaluate(a: Node, b: Node) -> Literal:
        result = relate(name, _geometry(a), _geometry(b))
        if result is None:
            raise SPARQLError(f"geof:{name} cannot relate these geometries")
        return Literal(result)

    evaluate.__name__ = name
    return evaluate


def _distance(a: Node, b: Node, unit: Node) -> Literal:
    try:
        return Literal(distance(_geometry(a), _geometry(b), _unit(unit)), datatype=_DOUBLE)
    except ValueError as exc:
        raise SPARQLError(str(exc)) from None


def _envelope(a: Node) -> Literal:
    return _wkt_literal(envelope(_geometry(a)))


def _buffer(a: Node, radius: Node, unit: Node) -> Literal:
    try:
        return _wkt_literal(buffer(_geometry(a), _number(radius), _unit(unit)))
    except ValueError as exc:
        raise SPARQLError(str(exc)) from None


_installed = False


def install() -> None:
    """Register the ``geof:`` functions with rdflib's evaluator (idempotent)."""
    global _installed
    if _installed:
        return
    from rdflib.plugins.sparql.operators import register_custom_function

    functions: dict[str, Callable[..., Literal]] = {
        name: _relation_function(name) for name in RELATIONS
    }
    functions |= {"distance": _distance, "envelope": _envelope, "buffer": _buffer}
    for name, function in functions.items():
        register_custom_function(URIRef(GEOF + name), function, override=True)
    _installed = True
