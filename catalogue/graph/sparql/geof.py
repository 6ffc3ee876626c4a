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

A buffer is split at the antimeridian as stored footprints are (the parts beyond ±180
are moved by ∓360); one that is not a valid geometry or leaves lon/lat space anyway
(past a pole, a radius larger than the Earth, a non-finite result) is an error.

**The antimeridian seam.**  Literals are planar lon/lat, so a shape across the
antimeridian is split at ±180, and on the plane its two halves only touch the lines
x = 180 and x = -180, which are one meridian on the globe.  :func:`relate` therefore
evaluates a relation between two geometries that *both* reach ±180 on the cylinder
(the globe's lon/lat topology): both are cut at one meridian ``e`` instead, that is,
longitudes below ``e`` are moved by +360 and each geometry's pieces are unioned, which
glues the halves along ±180 and makes a point on the seam interior to a split box.
``e`` is the middle of the widest gap between the longitudes of all vertices of both
geometries and of their intersection, so no vertex and no crossing lies on it: the cut
only relabels interior points on ``e`` as boundary and repeats that meridian at
``e + 360``, which changes none of the eight Simple Features relations (each needs an
interior-interior witness that also exists off ``e``, or tests exterior membership,
which the cut does not change).  When at most one of the geometries reaches ±180,
the seam's false boundary only meets the other one's exterior, so the planar relation
is already the one on the globe and is used as it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from rdflib.plugins.sparql.sparql import SPARQLError
from rdflib.term import Literal, Node, URIRef

from ..terms import XSD_NUMERIC_DATATYPES, comparable_value
from ..wkt import CRS84, WKT_LITERAL, WktError, in_lon_lat, parse_wkt

if TYPE_CHECKING:  # shapely and NumPy load with the first geometry function evaluated, not with the compiler
    from shapely.geometry.base import BaseGeometry

__all__ = [
    "GEO",
    "GEOF",
    "RELATIONS",
    "UOM",
    "buffer",
    "distance",
    "envelope",
    "install",
    "on_seam",
    "relate",
    "relate_text",
    "seam_cut",
    "split_at_antimeridian",
]

GEO: Final = "http://www.opengis.net/ont/geosparql#"
GEOF: Final = "http://www.opengis.net/def/function/geosparql/"
UOM: Final = "http://www.opengis.net/def/uom/OGC/1.0/"

#: ``geof:`` relation name -> the name of shapely's predicate (GeoSPARQL's Simple Features
#: family); names, so that shapely loads with the first relation tested, not with the compiler.
RELATIONS: Final[dict[str, str]] = {
    "sfEquals": "equals",
    "sfDisjoint": "disjoint",
    "sfIntersects": "intersects",
    "sfTouches": "touches",
    "sfCrosses": "crosses",
    "sfWithin": "within",
    "sfContains": "contains",
    "sfOverlaps": "overlaps",
}

_METRE: Final = UOM + "metre"
_DEGREE: Final = UOM + "degree"
_RADIAN: Final = UOM + "radian"
_WKT: Final = URIRef(WKT_LITERAL)
# Larger buffers cover more than the globe (half the equator, half a turn): an error.
_MAX_RADIUS: Final = {_METRE: 20_037_509.0, _DEGREE: 180.0, _RADIAN: math.pi}
_DOUBLE: Final = URIRef("http://www.w3.org/2001/XMLSchema#double")


def relate(name: str, a: BaseGeometry, b: BaseGeometry) -> bool | None:
    """The relation ``name`` between two geometries on the globe's lon/lat cylinder
    (see "The antimeridian seam" above); None if GEOS cannot decide it (an invalid
    polygon, say), which is a SPARQL error."""
    import shapely

    try:
        if on_seam(a) and on_seam(b):
            a, b = seam_cut(a, b)
        return bool(getattr(shapely, RELATIONS[name])(a, b))
    except shapely.errors.GEOSException:
        return None


def on_seam(geometry: BaseGeometry) -> bool:
    """Whether ``geometry`` reaches longitude 180 or -180."""
    if geometry.is_empty:
        return False
    x0, _, x1, _ = geometry.bounds
    return x0 <= -180.0 or x1 >= 180.0


def seam_cut(a: BaseGeometry, b: BaseGeometry) -> tuple[BaseGeometry, BaseGeometry]:
    """``a`` and ``b`` cut at a meridian touching no vertex of theirs, instead of at ±180."""
    import numpy as np
    import shapely

    xs = np.concatenate(
        [
            shapely.get_coordinates(a)[:, 0],
            shapely.get_coordinates(b)[:, 0],
            shapely.get_coordinates(shapely.intersection(a, b))[:, 0],
            [-180.0, 180.0],
        ]
    )
    xs = np.unique(np.clip(xs, -180.0, 180.0))
    widest = int(np.argmax(np.diff(xs)))
    e = float((xs[widest] + xs[widest + 1]) / 2)
    east, west = shapely.box(e, -90.0, 180.0, 90.0), shapely.box(-180.0, -90.0, e, 90.0)

    def cut(g: BaseGeometry) -> BaseGeometry:
        import numpy as np
        import shapely

        moved = shapely.transform(shapely.intersection(g, west), lambda xy: xy + np.array([360.0, 0.0]))
        return shapely.union(shapely.intersection(g, east), moved)

    return cut(a), cut(b)


def split_at_antimeridian(geometry: BaseGeometry) -> BaseGeometry:
    """A lon/lat geometry reaching past ±180 (by less than a turn) split there, with the
    parts beyond moved by ∓360, as footprints are written; anything else unchanged."""
    import numpy as np
    import shapely

    if geometry.is_empty:
        return geometry
    x0, _, x1, _ = geometry.bounds
    if x0 >= -180.0 and x1 <= 180.0:
        return geometry
    if not (x0 >= -540.0 and x1 <= 540.0):
        raise ValueError("a geometry wider than the globe")
    pieces = [shapely.intersection(geometry, shapely.box(-180.0, -90.0, 180.0, 90.0))]
    for low, high, shift in ((180.0, 540.0, -360.0), (-540.0, -180.0, 360.0)):
        part = shapely.intersection(geometry, shapely.box(low, -90.0, high, 90.0))
        if not part.is_empty:
            pieces.append(shapely.transform(part, lambda xy, d=shift: xy + np.array([d, 0.0])))
    # Planar union merges what overlaps on each side; it never glues x = 180 to
    # x = -180, so the result stays split there.
    return shapely.unary_union(pieces)


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
    import shapely

    if a.is_empty or b.is_empty:
        raise ValueError("distance to an empty geometry")
    if unit == _DEGREE:
        return float(shapely.distance(a, b))
    if unit == _RADIAN:
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
    import shapely

    return shapely.envelope(a)


def buffer(a: BaseGeometry, radius: float, unit: str) -> BaseGeometry:
    """``geof:buffer`` in ``unit`` (see the module docstring); ValueError if the result
    is not a valid lon/lat geometry."""
    import shapely

    result = split_at_antimeridian(_buffer_plane(a, radius, unit))
    if not (in_lon_lat(result) and shapely.is_valid(result)):
        raise ValueError(f"geof:buffer by {radius} {unit} is no valid lon/lat geometry")
    return result


def _buffer_plane(a: BaseGeometry, radius: float, unit: str) -> BaseGeometry:
    import numpy as np
    import shapely

    if not math.isfinite(radius) or abs(radius) > _MAX_RADIUS.get(unit, math.inf):
        raise ValueError(f"geof:buffer by {radius} {unit} is wider than the globe")
    if unit == _DEGREE:
        return a.buffer(radius)
    if unit == _RADIAN:
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

    def home(x, y):  # type: ignore[no-untyped-def]
        # pyproj wraps longitudes into -180..180; keep them continuous around the
        # centre, so that a buffer across the antimeridian can be split there.

        lon, lat = back.transform(x, y, errcheck=False)
        return centre.x + (np.asarray(lon) - centre.x + 180.0) % 360.0 - 180.0, lat

    return shapely.transform(projected.buffer(radius), home, interleaved=False)


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
