"""The "Extent" section of a dataset/node page: where and when, and where each figure came from.

Built from what the harvest stored (:class:`~catalogue.model.extents.Extent`,
:class:`~catalogue.model.extents.Multiscales`, read by ``rdf/extents.py``) and nothing
else: a store that declares no extent gets a sentence saying so, never a guessed box.
Each figure is shown with its sources (:meth:`Source.describe`), because "nothing
invented" is only checkable when a reader can see which attribute or coordinate array a
number was read from.
"""

from __future__ import annotations

import json
import posixpath
import re
import urllib.parse
from dataclasses import dataclass, field

from catalogue.model.extents import Extent, MultiscaleLevel, Multiscales, coordinate_text

from .graph_digest import GraphDigest
from .map import MapView, describe_box, extent_map

#: Calendars that are the ordinary one (nothing to say about them).
_DURATION = re.compile(r"^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
_DURATION_UNITS = ("year", "month", "week", "day", "hour", "minute", "second")


@dataclass
class Fact:
    """One figure: a label, its value as text, and where it was read."""

    label: str
    value: str
    sources: list[str] = field(default_factory=list)
    #: A machine-readable form for ``<time datetime>`` or a link, when there is one.
    href: str = ""
    mono: bool = False


@dataclass
class LevelRow:
    index: int
    asset: str
    #: The level's node page, when the level is a node of the hierarchy.
    href: str
    scale: str
    translation: str
    cell_size: str
    derived_from: str


@dataclass
class ExtentView:
    """What the section shows; ``extent`` is ``None`` when the node declares none."""

    extent: Extent | None
    map: MapView | None = None
    facts: list[Fact] = field(default_factory=list)
    #: The WKT2 of a CRS without an EPSG code (shown in a ``<details>``).
    crs_wkt: str = ""
    #: ``[west, south, east, north]`` (for a copyable line and the search link).
    bbox: list[float] = field(default_factory=list)
    #: The search page filtered on this box (and period).
    search_href: str = ""
    levels: list[LevelRow] = field(default_factory=list)
    pyramid: Multiscales | None = None
    #: The pyramid's axes as people read them: ``z (space, micrometer)``.
    axes: list[str] = field(default_factory=list)
    #: The harvest's ``extent.values-budget`` findings that concern this node: its extent
    #: was (partly) not read, rather than not declared (``rdf.extents.budget_stopped``).
    not_read: list[str] = field(default_factory=list)

    @property
    def shown(self) -> bool:
        return self.extent is not None or self.pyramid is not None or bool(self.not_read)


def extent_view(extent: Extent | None, pyramid: Multiscales | None, *, digest: GraphDigest, node_path: str,
                base: str, title: str) -> ExtentView:
    """The section's view model for one node (its extent, its pyramid if it is a group)."""
    view = ExtentView(extent=extent, pyramid=pyramid)
    if pyramid is not None:
        view.levels = [_level(level, digest, node_path, base) for level in pyramid.levels]
        view.axes = [_axis(i, name, pyramid) for i, name in enumerate(pyramid.axes)]
    if extent is None:
        return view
    sources = {figure: [s.describe() for s in extent.sources_of(figure)]
               for figure in ("bbox", "geometry", "crs", "native_bbox", "period", "spatial_resolution",
                              "temporal_resolution")}
    search: dict[str, str] = {}
    if extent.bbox is not None or extent.geometry is not None:
        view.map = extent_map(extent.bbox, extent.geometry, label=_map_label(title, extent))
    if extent.bbox is not None:
        box = extent.bbox
        view.bbox = box.as_list()
        view.facts.append(Fact("Bounding box", describe_box(box), sources["bbox"]))
        view.facts.append(Fact("West, south, east, north", ", ".join(coordinate_text(v) for v in view.bbox), mono=True))
        search["bbox"] = ",".join(coordinate_text(v) for v in view.bbox)
    if extent.geometry is not None:
        view.facts.append(Fact("Footprint", "drawn on the map (CRS84 WKT in the graph)", sources["geometry"]))
    if extent.period is not None:
        period = extent.period
        value = period.start if period.start == period.end else f"{period.start} – {period.end}"
        if not period.standard_calendar:
            value += f" ({period.calendar} calendar)"
        view.facts.append(Fact("Time span", value, sources["period"], mono=True))
        if period.instants() is not None:
            search["datetime"] = f"{period.start}/{period.end}"
    if extent.temporal_resolution is not None:
        view.facts.append(Fact("Time step", _duration(extent.temporal_resolution), sources["temporal_resolution"]))
    if extent.crs is not None:
        crs = extent.crs
        if crs.epsg is not None:
            label = f"EPSG:{crs.epsg}" + (f" · {crs.name}" if crs.name else "")
            view.facts.append(Fact("Native CRS", label, sources["crs"], href=crs.iri or ""))
        else:
            view.facts.append(Fact("Native CRS", crs.name or "given as WKT2 (below)", sources["crs"]))
            view.crs_wkt = crs.wkt2 or ""
    if extent.native_bbox is not None:
        view.facts.append(Fact("Box in the native CRS", ", ".join(coordinate_text(v) for v in extent.native_bbox),
                               sources["native_bbox"], mono=True))
    if extent.spatial_resolution is not None:
        view.facts.append(Fact("Cell size", _metres(extent.spatial_resolution), sources["spatial_resolution"]))
    if search:
        view.search_href = f"{base}/?" + urllib.parse.urlencode(search)
    return view


def _level(level: MultiscaleLevel, digest: GraphDigest, node_path: str, base: str) -> LevelRow:
    """A level's row; its asset is a path relative to the pyramid's group."""
    target = posixpath.normpath(posixpath.join(node_path, level.asset.strip("/"))) if level.asset.strip("/") else node_path
    target = "" if target == "." else target
    node = digest.by_path.get(target)
    href = f"{base}/browse?" + urllib.parse.urlencode({"iri": node.iri}) if node is not None else ""
    return LevelRow(index=level.index, asset=level.asset, href=href, scale=_vector(level.scale),
                    translation=_vector(level.translation), cell_size=_vector(level.cell_size),
                    derived_from=level.derived_from or "")


def _axis(i: int, name: str, pyramid: Multiscales) -> str:
    said = [values[i] for values in (pyramid.axis_types, pyramid.axis_units) if i < len(values) and values[i]]
    return f"{name} ({', '.join(said)})" if said else name


def _map_label(title: str, extent: Extent) -> str:
    where = f"the box {describe_box(extent.bbox)}" if extent.bbox is not None else "its footprint"
    return f"Map of where {title} lies: {where}"


def _vector(values: tuple[float, ...] | None) -> str:
    return "" if values is None else json.dumps([int(v) if float(v).is_integer() else v for v in values])


def _metres(value: float) -> str:
    """``27.8 km`` or ``250 m``: the cell size as people say it."""
    unit, amount = ("km", value / 1000) if value >= 1000 else ("m", value)
    return f"{amount:,.0f} {unit}" if amount >= 100 else f"{amount:.3g} {unit}"


def _duration(text: str) -> str:
    """``P1D`` becomes ``1 day (P1D)``; anything else stays as written."""
    match = _DURATION.match(text)
    if not match or not any(match.groups()):
        return text
    parts = []
    for unit, amount in zip(_DURATION_UNITS, match.groups(), strict=True):
        if amount is not None and float(amount) != 0:
            number = float(amount)
            shown = str(int(number)) if number.is_integer() else str(number)
            parts.append(f"{shown} {unit}{'' if number == 1 else 's'}")
    return f"{', '.join(parts)} ({text})" if parts else text
