"""Where and when: the extents of a dataset and its arrays, as the harvest found them.

Small frozen types that every room above shares: ``extents/`` computes them at harvest
from conventions, CF coordinates, ACDD attributes and STAC items inside Zarr;
``rdf/extents.py`` writes them as DCAT/GeoSPARQL triples and reads them back; the
search index, the STAC API and the portal show them. Nothing here computes: the
geometry and calendar work (pyproj, cftime) belongs to ``extents/``.

Every figure carries its :class:`Source` (which attribute, convention or coordinate
array it came from), because "nothing invented" is only checkable when a user can see
where each number was read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final, Literal

from catalogue.model.ome import OmeImage

__all__ = [
    "CRS84",
    "Box",
    "Extent",
    "HierarchyExtents",
    "MultiscaleLevel",
    "Multiscales",
    "NativeCRS",
    "Period",
    "Source",
    "coordinate_text",
]

#: The CRS every published box is in: WGS 84 longitude, latitude (OGC CRS84 axis order).
CRS84: Final = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
EPSG_IRI: Final = "http://www.opengis.net/def/crs/EPSG/0/"

#: CF calendar names whose dates are the proleptic Gregorian dates xsd:date writes.
STANDARD_CALENDARS: Final = ("standard", "gregorian", "proleptic_gregorian")

#: What a figure is about (the keys of :attr:`Extent.sources`).
Figure = Literal["bbox", "crs", "native_bbox", "period", "spatial_resolution", "temporal_resolution", "geometry"]


@dataclass(frozen=True)
class Source:
    """Where one figure was read: ``kind`` names the family (``"convention:proj"``,
    ``"convention:spatial"``, ``"cf:coordinates"``, ``"cf:bounds"``, ``"cf:grid_mapping"``,
    ``"acdd"``, ``"stac"``), ``path`` the node whose metadata held it, and ``detail`` the
    attribute or array names (``"geospatial_lat_min, geospatial_lat_max"``, ``"lat, lon"``).
    """

    kind: str
    path: str
    detail: str = ""

    def describe(self) -> str:
        """One line for people and for the graph: ``cf:coordinates at /lat: lat, lon``."""
        where = f" at /{self.path}" if self.path else " at the root"
        return f"{self.kind}{where}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class Box:
    """A bounding box in CRS84 degrees: west, south, east, north.

    ``west > east`` means the box crosses the antimeridian (as STAC and GeoJSON write it);
    a global longitude range is ``-180, 180``.
    """

    west: float
    south: float
    east: float
    north: float

    def __post_init__(self) -> None:
        for name in ("west", "south", "east", "north"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"a box's {name} must be a finite number, got {value!r}")
        if not -180 <= self.west <= 180 or not -180 <= self.east <= 180:
            raise ValueError(f"longitudes must lie in -180..180, got west={self.west} east={self.east}")
        if not -90 <= self.south <= self.north <= 90:
            raise ValueError(f"latitudes must satisfy -90 <= south <= north <= 90, got {self.south}, {self.north}")

    @property
    def crosses_antimeridian(self) -> bool:
        return self.west > self.east

    def parts(self) -> tuple[tuple[float, float, float, float], ...]:
        """The box as one or two ``(minx, miny, maxx, maxy)`` rectangles that do not cross
        the antimeridian: what a spatial index and a map draw."""
        if self.crosses_antimeridian:
            return ((self.west, self.south, 180.0, self.north), (-180.0, self.south, self.east, self.north))
        return ((self.west, self.south, self.east, self.north),)

    def intersects(self, other: Box) -> bool:
        """Whether the boxes share a point (edges touching count), across the antimeridian."""
        return any(a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]
                   for a in self.parts() for b in other.parts())

    def wkt(self) -> str:
        """The box as a CRS84 ``POLYGON`` (``MULTIPOLYGON`` across the antimeridian), in
        GeoSPARQL's ``geo:wktLiteral`` form without a CRS prefix (CRS84 is its default)."""
        rings = [_ring(*part) for part in self.parts()]
        if len(rings) == 1:
            return f"POLYGON(({rings[0]}))"
        return "MULTIPOLYGON(" + ",".join(f"(({ring}))" for ring in rings) + ")"

    def centroid(self) -> tuple[float, float]:
        """The centre ``(lon, lat)``, taken across the antimeridian when the box crosses it."""
        east = self.east + 360 if self.crosses_antimeridian else self.east
        lon = (self.west + east) / 2
        if lon > 180:
            lon -= 360
        return lon, (self.south + self.north) / 2

    def as_list(self) -> list[float]:
        """``[west, south, east, north]``, as STAC's ``bbox`` writes it."""
        return [self.west, self.south, self.east, self.north]


def _ring(minx: float, miny: float, maxx: float, maxy: float) -> str:
    points = ((minx, miny), (maxx, miny), (maxx, maxy), (minx, maxy), (minx, miny))
    return ",".join(f"{coordinate_text(x)} {coordinate_text(y)}" for x, y in points)


def coordinate_text(value: float) -> str:
    """Shortest round-tripping text of a coordinate (``10`` rather than ``10.0``): the one
    way WKT literals, ``bbox`` parameters and the portal write a number."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class NativeCRS:
    """The CRS the data is on, as declared: an EPSG code where there is one, else WKT2
    (from ``proj:wkt2``, ``proj:projjson`` or a CF grid mapping, as pyproj writes it)."""

    epsg: int | None = None
    wkt2: str | None = None
    #: Human-readable name (``"WGS 84 / UTM zone 33N"``).
    name: str = ""

    def __post_init__(self) -> None:
        if self.epsg is None and not self.wkt2:
            raise ValueError("a native CRS needs an EPSG code or a WKT2 text")

    @property
    def iri(self) -> str | None:
        """``http://www.opengis.net/def/crs/EPSG/0/N`` for an EPSG CRS, else ``None``."""
        return f"{EPSG_IRI}{self.epsg}" if self.epsg is not None else None


@dataclass(frozen=True)
class Period:
    """A time span: ISO 8601 texts, either both dates (``2020-01-01``) or both date-times
    (``2020-01-01T00:00:00Z``; ``Z`` when the source gave or implies UTC, no offset when
    it gave none). ``calendar`` is the CF calendar the figures were decoded in; dates of
    calendars without a proleptic Gregorian equivalent (a ``360_day`` February 30th) are
    mapped as ``extents/`` documents and the mapping is said in a finding."""

    start: str
    end: str
    calendar: str = "standard"

    def __post_init__(self) -> None:
        if ("T" in self.start) != ("T" in self.end):
            raise ValueError(f"a period's ends must both be dates or both date-times, got {self.start!r}, {self.end!r}")
        if self.start > self.end and not _offsets_differ(self.start, self.end):
            raise ValueError(f"a period must not end before it starts, got {self.start!r} .. {self.end!r}")

    @property
    def dates_only(self) -> bool:
        return "T" not in self.start

    @property
    def standard_calendar(self) -> bool:
        """Whether the figures are Gregorian dates as everyone reads them (CF's ``standard``,
        ``gregorian`` and ``proleptic_gregorian`` agree from 1582 on); else the calendar is
        said wherever the period is shown or stored."""
        return self.calendar in STANDARD_CALENDARS

    def as_json(self) -> dict[str, str]:
        return {"start": self.start, "end": self.end, "calendar": self.calendar}

    def instants(self) -> tuple[datetime, datetime] | None:
        """The span as aware UTC datetimes, for comparing with a search interval: a date
        covers its whole day (UTC), a date-time without an offset is taken as UTC.
        ``None`` for years Python cannot represent (before 1 or after 9999)."""
        try:
            if self.dates_only:
                first, last = date.fromisoformat(self.start), date.fromisoformat(self.end)
                return (datetime.combine(first, time(), UTC),
                        datetime.combine(last, time(), UTC) + timedelta(days=1) - timedelta(microseconds=1))
            return _utc(self.start), _utc(self.end)
        except (ValueError, OverflowError):
            return None


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _offsets_differ(start: str, end: str) -> bool:
    """Texts with different UTC offsets do not compare as strings (the check is left to ``extents/``)."""
    return start[19:] != end[19:]


@dataclass(frozen=True)
class Extent:
    """What one node (the hierarchy root, or one array) covers, with the source of each figure.

    Every field is optional: a store that says nothing about where or when has an empty
    extent (:attr:`empty`), and the portal says so rather than inventing one.
    """

    #: The footprint's bounding box in CRS84, cell edges where known.
    bbox: Box | None = None
    #: A footprint more precise than the box (a CRS84 WKT polygon from ``geospatial_bounds``
    #: or a STAC geometry), when a source gave one.
    geometry: str | None = None
    crs: NativeCRS | None = None
    #: The box in the native CRS ``(minx, miny, maxx, maxy)``, when the data is not on CRS84.
    native_bbox: tuple[float, float, float, float] | None = None
    #: The smallest cell size, in metres (``dcat:spatialResolutionInMeters``).
    spatial_resolution: float | None = None
    period: Period | None = None
    #: The time step as an ``xsd:duration`` text (``P1D``, ``PT6H``), when regular.
    temporal_resolution: str | None = None
    #: Where each figure came from: ``(figure, source)`` pairs, in the order they were found.
    sources: tuple[tuple[str, Source], ...] = ()

    @property
    def empty(self) -> bool:
        return (self.bbox is None and self.geometry is None and self.crs is None and self.period is None
                and self.spatial_resolution is None and self.temporal_resolution is None)

    def sources_of(self, figure: str) -> tuple[Source, ...]:
        return tuple(source for name, source in self.sources if name == figure)

    def as_json(self) -> dict[str, Any]:
        """Every figure as JSON (``null`` where unknown), with the source of each: what
        ``catalogue extent --json`` prints."""
        return {
            "bbox": self.bbox.as_list() if self.bbox is not None else None,
            "geometry": self.geometry,
            "crs": None if self.crs is None else {"epsg": self.crs.epsg, "iri": self.crs.iri,
                                                  "wkt2": self.crs.wkt2, "name": self.crs.name},
            "native_bbox": list(self.native_bbox) if self.native_bbox is not None else None,
            "spatial_resolution_m": self.spatial_resolution,
            "period": self.period.as_json() if self.period is not None else None,
            "temporal_resolution": self.temporal_resolution,
            "sources": [{"figure": figure, "kind": source.kind, "path": source.path, "detail": source.detail}
                        for figure, source in self.sources],
        }


@dataclass(frozen=True)
class MultiscaleLevel:
    """One level of a multiscale pyramid: its array or group (a path relative to the
    pyramid's group, as declared), the level it was derived from, and its transform
    relative to the base level (``scale`` and ``translation`` per dimension, where declared)."""

    index: int
    asset: str
    derived_from: str | None = None
    scale: tuple[float, ...] | None = None
    translation: tuple[float, ...] | None = None
    #: Physical cell size per dimension where known (OME-Zarr's coordinateTransformations).
    cell_size: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Multiscales:
    """A group's multiscale pyramid, from the ``multiscales`` convention (GeoZarr) or
    OME-Zarr's ``multiscales``: levels ordered from the finest (index 0)."""

    path: str
    levels: tuple[MultiscaleLevel, ...]
    #: Which convention declared it: ``"zarr-conventions:multiscales"`` or ``"ome-zarr"``.
    convention: str = "zarr-conventions:multiscales"
    #: Axis names, where declared (OME-Zarr axes; the levels' dimension names otherwise).
    axes: tuple[str, ...] = ()
    #: The resampling method, where declared.
    resampling: str | None = None
    #: OME-Zarr: each axis's type ("space", "time", "channel"...) and unit, None where unsaid.
    axis_types: tuple[str | None, ...] = ()
    axis_units: tuple[str | None, ...] = ()
    #: OME-Zarr: the channels' labels (``omero``), in order.
    channels: tuple[str, ...] = ()
    #: The convention's version, where declared (OME-Zarr: "0.4", "0.5").
    version: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "convention": self.convention, "version": self.version, "axes": list(self.axes),
            "axis_types": list(self.axis_types), "axis_units": list(self.axis_units),
            "channels": list(self.channels), "resampling": self.resampling,
            "levels": [{"index": level.index, "asset": level.asset, "derived_from": level.derived_from,
                        "scale": _list(level.scale), "translation": _list(level.translation),
                        "cell_size": _list(level.cell_size)} for level in self.levels],
        }


def _list(values: tuple[float, ...] | None) -> list[float] | None:
    return list(values) if values is not None else None


@dataclass
class HierarchyExtents:
    """What ``extents/`` found for one hierarchy: extents by node path (``""`` is the root),
    multiscale pyramids by group path, the OME-Zarr structure (plates, wells, images and
    their labels) by group path, and findings (conflicts between sources, caps hit,
    values that could not be decoded) for the validation report."""

    nodes: dict[str, Extent] = field(default_factory=dict)
    multiscales: dict[str, Multiscales] = field(default_factory=dict)
    ome: dict[str, OmeImage] = field(default_factory=dict)
    #: ``catalogue.validate.findings.Finding`` objects (typed loosely: model/ is below validate/).
    findings: list[object] = field(default_factory=list)

    @property
    def root(self) -> Extent | None:
        return self.nodes.get("")
