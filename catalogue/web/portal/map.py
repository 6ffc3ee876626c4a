"""Maps drawn on the server: the world's land and a box (and a footprint) as inline SVG.

The portal must work offline and without a tile server, so a map is an equirectangular
SVG in degrees (``x`` is longitude, ``y`` is minus latitude, so the ``viewBox`` *is* the
frame in CRS84) over the Natural Earth outline shipped in ``catalogue/web/world/``. The
outline is one path per page (:func:`land_path`, put in the page once and reused by every
map with ``<use>``), so a search page with twenty thumbnails carries it once.

This module computes view models only (numbers and labels); the templates write the
markup, so nothing from the catalogue is ever marked safe. A box across the antimeridian
(``west > east``) is drawn as :meth:`Box.parts` on a world map; zoomed in, the frame runs
on past 180° and the land is drawn again 360° further east, so the box stays one piece.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING

from catalogue.model.extents import Box

if TYPE_CHECKING:  # shapely loads with the first footprint drawn, not with the server
    from shapely.geometry.base import BaseGeometry

#: The whole world, ``(west, south, east, north)``.
WORLD = (-180.0, -90.0, 180.0, 90.0)
#: Smallest frame around a box, in degrees of latitude (the width is twice as much), so a
#: box of a few kilometres still shows the coastline around it.
MIN_FRAME_HEIGHT = 12.0
#: Margin around a box, as a share of its larger side.
MARGIN = 0.3


@dataclass(frozen=True)
class Rect:
    """A rectangle in map units (degrees; ``y`` is minus the northern latitude)."""

    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class MapView:
    """One map: its frame, where the land is drawn, the box's rectangles, a footprint."""

    #: ``(west, south, east, north)`` of the frame; ``east`` may pass 180 when zoomed across the antimeridian.
    frame: tuple[float, float, float, float]
    #: Longitude offsets at which to draw the land (``0``, and ``±360`` when the frame passes ±180).
    copies: tuple[int, ...]
    boxes: tuple[Rect, ...]
    #: SVG path data of a footprint finer than the box (``""`` when none).
    footprint: str
    #: What the map shows, in words (the SVG's title, for screen readers).
    label: str

    @property
    def view_box(self) -> str:
        west, south, east, north = self.frame
        return f"{_n(west)} {_n(-north)} {_n(east - west)} {_n(north - south)}"

    @property
    def world(self) -> bool:
        return self.frame == WORLD


@functools.cache
def land_path() -> str:
    """The land as SVG path data in map units, read once from the shipped outline."""
    data = json.loads(files("catalogue.web").joinpath("world").joinpath("land-110m.json").read_text())
    pieces = []
    for polygon in data["polygons"]:
        for ring in polygon:
            points = " ".join(f"{_n(ring[i])} {_n(-ring[i + 1])}" for i in range(0, len(ring), 2))
            pieces.append(f"M{points}Z")
    return "".join(pieces)


def describe_box(box: Box) -> str:
    """``10°W–30°E, 35°N–70°N`` (with "across the antimeridian" when it is)."""
    text = f"{_lon(box.west)}–{_lon(box.east)}, {_lat(box.south)}–{_lat(box.north)}"
    return text + (" (across the antimeridian)" if box.crosses_antimeridian else "")


def world_map(box: Box | None, label: str = "") -> MapView:
    """The whole world with ``box`` on it (two rectangles across the antimeridian): the
    search page's map and the hits' thumbnails."""
    boxes = tuple(_rect(part) for part in box.parts()) if box is not None else ()
    if not label:
        label = f"World map showing the box {describe_box(box)}" if box is not None else "World map"
    return MapView(frame=WORLD, copies=(0,), boxes=boxes, footprint="", label=label)


def extent_map(box: Box | None, geometry: str | None = None, label: str = "") -> MapView:
    """A map framed on ``box`` with a margin (twice as wide as high), the footprint
    ``geometry`` (CRS84 WKT) drawn inside it; the world when there is no box or the box is
    most of the world."""
    if box is None:
        return world_map(None, label)
    west, east = box.west, box.east + (360 if box.crosses_antimeridian else 0)
    south, north = box.south, box.north
    margin = MARGIN * max(east - west, north - south)
    height = max(north - south + 2 * margin, MIN_FRAME_HEIGHT)
    width = max(east - west + 2 * margin, 2 * height)
    height = max(height, width / 2)
    if width >= 360 or height >= 180:
        view = world_map(box, label or f"Map of the world showing the box {describe_box(box)}")
        footprint = _footprint(geometry, WORLD)
        return MapView(view.frame, view.copies, view.boxes, footprint, view.label)
    cx, cy = (west + east) / 2, (south + north) / 2
    bottom = min(max(cy - height / 2, -90.0), 90.0 - height)
    frame = (cx - width / 2, bottom, cx + width / 2, bottom + height)
    copies = tuple(k for k in (-360, 0, 360) if frame[0] < 180 + k and frame[2] > -180 + k)
    rects = (Rect(west, -north, east - west, north - south),)
    return MapView(frame=frame, copies=copies, boxes=rects, footprint=_footprint(geometry, frame),
                   label=label or f"Map of the box {describe_box(box)}")


def _rect(part: tuple[float, float, float, float]) -> Rect:
    minx, miny, maxx, maxy = part
    return Rect(minx, -maxy, maxx - minx, maxy - miny)


def _footprint(geometry: str | None, frame: tuple[float, float, float, float]) -> str:
    """The footprint's polygons as path data, each moved by 360° where that puts it in the
    frame; ``""`` for no geometry, one that does not parse, or one that is not areal."""
    if not geometry:
        return ""
    from shapely import wkt as shapely_wkt
    from shapely.errors import ShapelyError

    try:
        shape: BaseGeometry = shapely_wkt.loads(geometry)
    except (ShapelyError, ValueError, TypeError):
        return ""
    polygons = [shape] if shape.geom_type == "Polygon" else list(getattr(shape, "geoms", ()))
    pieces = []
    for polygon in polygons:
        if polygon.geom_type != "Polygon" or polygon.is_empty:
            continue
        minx, _, maxx, _ = polygon.bounds
        shift = next((k for k in (0, 360, -360) if minx + k < frame[2] and maxx + k > frame[0]), 0)
        for ring in (polygon.exterior, *polygon.interiors):
            points = " ".join(f"{_n(x + shift)} {_n(-y)}" for x, y, *_ in ring.coords[:-1])
            pieces.append(f"M{points}Z")
    return "".join(pieces)


def _n(value: float) -> str:
    """A coordinate in at most 4 decimals (a tenth of a metre at the equator is plenty for a drawing)."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _lon(value: float) -> str:
    return f"{_deg(value)}°{'W' if value < 0 else 'E' if value > 0 else ''}"


def _lat(value: float) -> str:
    return f"{_deg(value)}°{'S' if value < 0 else 'N' if value > 0 else ''}"


def _deg(value: float) -> str:
    magnitude = abs(value)
    text = f"{magnitude:.4f}".rstrip("0").rstrip(".") if not math.isclose(magnitude, round(magnitude)) else str(round(magnitude))
    return text
