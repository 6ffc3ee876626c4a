"""The extents of a hierarchy: every source's evidence combined per node, conflicts as findings.

Sources, in the order their figures are preferred (:func:`rank`):

1. the GeoZarr conventions (``proj:``, ``spatial:``): declared on purpose, with a CRS;
2. CF coordinate values with cell edges (bounds variables, regular spacing);
3. a STAC item inside the store;
4. ACDD attributes (``geospatial_lat_min``..., ``time_coverage_start``...): hand-written
   and often stale, so below what the values say;
5. CF coordinate values without edges (the outermost centres, half a cell short).

Each figure of a node's :class:`~catalogue.model.extents.Extent` comes from the best
source that has it, and its :class:`~catalogue.model.extents.Source` is recorded.
Every other source giving the same figure is compared with the kept one, and a
disagreement beyond a tolerance is an ``extent.conflict`` finding, not a silent
choice: boxes by more than half a cell or 1% of the span, periods by more than a day
or one time step, CRSs that pyproj does not find equal.

Multiscale pyramids are the conventions module's (``conventions.multiscales``).

A group's figures follow the same preference: each is its own evidence's unless the
union of the arrays below it (boxes across the antimeridian included, periods from the
earliest start to the latest end) comes from sources that all rank above the group's
own (CF cell edges on every array beat a root ACDD box); the loser is an
``extent.conflict`` all the same. A union of periods in calendars that do not agree
gives the group no period (``extent.calendars-differ``). Only nodes with some figure are
in :attr:`HierarchyExtents.nodes`: nothing is invented for a store that says nothing.

Periods are checked before anything is combined: a year outside 1..9999 (what
``xsd:date`` texts, Python and the search index all hold) is an ``extent.period-range``
finding and no period. :func:`guarded_extents` is what the harvest and ``catalogue
validate`` call: an unexpected exception becomes one ``extent.failed`` finding, never
the end of the run.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import defaultdict
from typing import Final

import numpy as np
from pyproj import CRS, Geod
from pyproj.exceptions import CRSError as ProjCRSError

from catalogue.extents import acdd, cf, conventions, stac_item
from catalogue.extents.evidence import Evidence
from catalogue.extents.times import duration_seconds
from catalogue.extents.values import DEFAULT_VALUE_BYTES, ValueReader
from catalogue.model.extents import Box, Extent, HierarchyExtents, NativeCRS, Period, Source
from catalogue.model.nodes import Hierarchy
from catalogue.storage.access import StoreAccess
from catalogue.validate.findings import Finding

__all__ = ["DEFAULT_VALUE_BYTES", "combine", "extract_extents", "guarded_extents", "rank", "union"]

_log = logging.getLogger(__name__)

#: The attribute-only sources (another room each), run before the CF values are read.
ATTRIBUTE_SOURCES: Final = (conventions.evidence, acdd.evidence, stac_item.evidence)

#: The figures of an extent, in the order they are chosen.
FIGURES: Final = ("bbox", "geometry", "crs", "native_bbox", "spatial_resolution", "period", "temporal_resolution")

#: Metres in one degree along a meridian at the equator (WGS 84), to turn a cell size
#: back into degrees for the half-a-cell tolerance: ``cf.py`` measures degree cells the
#: same way, so a 0.25° grid's half cell is 0.125° again.
_METRES_PER_DEGREE: Final = Geod(ellps="WGS84").inv(0.0, 0.0, 0.0, 1.0)[2]
_OFFSET = re.compile(r"(Z|[+-]\d\d:\d\d)$")
_YEAR = re.compile(r"^(-?)(\d+)-")
#: Calendar names that are one calendar (CF §4.4.1 aliases).
_ALIASES: Final = {"gregorian": "standard", "365_day": "noleap", "366_day": "all_leap"}
#: The Gregorian family: the same dates from 1582-10-15 on (they differ only before).
_GREGORIAN: Final = frozenset({"standard", "proleptic_gregorian"})


def guarded_extents(hierarchy: Hierarchy, store: StoreAccess | None, *,
                    value_bytes: int = DEFAULT_VALUE_BYTES) -> HierarchyExtents:
    """:func:`extract_extents`, with any exception it raises turned into one
    ``extent.failed`` finding on the root (and the traceback logged at WARNING): the
    hierarchy is then catalogued or validated without extents, and a harvest of many
    sources goes on. Sources report unreadable values as findings themselves; reaching
    this is a bug or a value nobody foresaw, which is why the traceback is kept."""
    try:
        return extract_extents(hierarchy, store, value_bytes=value_bytes)
    except Exception as exc:  # the guard's whole purpose: no exception costs the run
        _log.warning("extents of %s could not be extracted; the hierarchy is kept without them",
                     hierarchy.url, exc_info=True)
        root = hierarchy.root
        where = root.attributes_location if root is not None else None
        message = (f"the extents could not be extracted ({type(exc).__name__}: {str(exc)[:300]}); "
                   "the hierarchy is catalogued without them")
        return HierarchyExtents(findings=[Finding("", where.url if where else hierarchy.url,
                                                  where.pointer if where else "", "extent.failed", message,
                                                  "attributes" if where else "")])


def extract_extents(hierarchy: Hierarchy, store: StoreAccess | None, *,
                    value_bytes: int = DEFAULT_VALUE_BYTES) -> HierarchyExtents:
    """Where and when for the root and every array of ``hierarchy`` (and every group
    with a figure), with the findings of every source and of their combination.

    ``store`` reads coordinate values (None: attributes only); ``value_bytes`` caps the
    decoded coordinate bytes read for the whole hierarchy.
    """
    found: list[Evidence] = []
    findings: list[Finding] = []
    for source in ATTRIBUTE_SOURCES:
        evidence, problems = source(hierarchy)
        found.extend(evidence)
        findings.extend(problems)
    reader = ValueReader(hierarchy, store, budget=value_bytes)
    evidence, problems = cf.evidence(hierarchy, reader)
    found.extend(evidence)
    findings.extend(reader.findings)
    findings.extend(problems)
    found = _checked_periods(hierarchy, found, findings)

    by_path: dict[str, list[Evidence]] = defaultdict(list)
    for item in found:
        by_path[item.path].append(item)
    result = HierarchyExtents()
    ranks: dict[str, dict[str, int]] = {}
    arrays = sorted(p for p, n in hierarchy.nodes.items() if n.kind == "array")
    for path in arrays:
        extent, conflicts, ranks[path] = _combine(hierarchy, path, by_path.get(path, []))
        findings.extend(conflicts)
        if not extent.empty:
            result.nodes[path] = extent
    groups = sorted((p for p, n in hierarchy.nodes.items() if n.kind == "group"), key=lambda p: (-p.count("/"), p))
    for path in groups:
        own, conflicts, own_ranks = _combine(hierarchy, path, by_path.get(path, []))
        findings.extend(conflicts)
        inside = [p for p in arrays if (not path or p.startswith(path + "/")) and p in result.nodes]
        below = [result.nodes[p] for p in inside]
        together = union(below)
        below_ranks = {figure: max(ranks[p][figure] for p in inside if figure in ranks[p])
                       for figure in FIGURES if any(figure in ranks[p] for p in inside)}
        extent, winners = _completed(own, together, own_ranks, below_ranks)
        findings.extend(_group_conflicts(hierarchy, path, own, together, winners))
        if extent.period is None:
            findings.extend(_mixed_calendars(hierarchy, path, below))
        if not extent.empty:
            result.nodes[path] = extent
    result.nodes = dict(sorted(result.nodes.items()))
    result.multiscales, problems = conventions.multiscales(hierarchy)
    findings.extend(problems)
    result.ome = conventions.ome_images(hierarchy)
    result.findings = list(findings)
    return result


def rank(evidence: Evidence) -> int:
    """Where a source stands in the order of preference (lower is preferred)."""
    kind = evidence.source.kind
    if kind.startswith("convention:"):
        return 0
    if kind.startswith("cf:") and evidence.edges:
        return 1
    if kind == "stac":
        return 2
    if kind == "acdd":
        return 3
    return 4


def combine(hierarchy: Hierarchy, path: str, evidence: list[Evidence]) -> tuple[Extent, list[Finding]]:
    """One node's extent from its evidence, and a finding per figure where sources disagree."""
    extent, findings, _ranks = _combine(hierarchy, path, evidence)
    return extent, findings


def _combine(hierarchy: Hierarchy, path: str,
             evidence: list[Evidence]) -> tuple[Extent, list[Finding], dict[str, int]]:
    """:func:`combine`, with the :func:`rank` of the source each kept figure came from."""
    ordered = sorted(evidence, key=rank)  # stable: a source's own order is kept within a rank
    kept: dict[str, tuple[object, Evidence]] = {}
    for figure in FIGURES:
        for item in ordered:
            value = getattr(item, figure)
            if value is None:
                continue
            if figure == "native_bbox" and "crs" in kept and item.crs is not None and item.crs != kept["crs"][0]:
                continue  # a native box only goes with the CRS that was kept
            kept[figure] = (value, item)
            break
    if "native_bbox" in kept and "crs" not in kept:
        del kept["native_bbox"]
    extent = Extent(
        **{figure: value for figure, (value, _) in kept.items()},  # type: ignore[arg-type]
        sources=tuple((figure, item.source) for figure, (_, item) in kept.items()),
    )
    return extent, _conflicts(hierarchy, path, ordered, kept), {f: rank(item) for f, (_, item) in kept.items()}


def union(extents: list[Extent]) -> Extent:
    """What a set of extents covers together: the smallest box holding theirs (across the
    antimeridian when that is smaller), the earliest start to the latest end, the finest
    resolution, the CRS and time step when all share one (and then the union of the
    native boxes: projected coordinates need no antimeridian care); the sources of every part."""
    if not extents:
        return Extent()
    sources: dict[str, list[Source]] = defaultdict(list)

    def gather(figure: str) -> list:
        values = []
        for extent in extents:
            value = getattr(extent, figure)
            if value is not None:
                values.append(value)
                for source in extent.sources_of(figure):
                    if source not in sources[figure]:
                        sources[figure].append(source)
        return values

    boxes, periods = gather("bbox"), gather("period")
    crss, resolutions, steps = gather("crs"), gather("spatial_resolution"), gather("temporal_resolution")
    figures: dict[str, object] = {}
    if boxes:
        figures["bbox"] = union_boxes(boxes)
    joined = union_periods(periods) if periods else None
    if joined is not None:
        figures["period"] = joined
    if crss and all(c == crss[0] for c in crss):
        figures["crs"] = crss[0]
        natives = gather("native_bbox")
        if natives and len(natives) == len(crss) and crss[0].epsg != 4326:
            figures["native_bbox"] = (min(b[0] for b in natives), min(b[1] for b in natives),
                                      max(b[2] for b in natives), max(b[3] for b in natives))
    if resolutions:
        figures["spatial_resolution"] = min(resolutions)
    if steps and all(s == steps[0] for s in steps) and len(steps) == len(periods) and joined is not None:
        figures["temporal_resolution"] = steps[0]
    return Extent(**figures,  # type: ignore[arg-type]
                  sources=tuple((f, s) for f in FIGURES if f in figures for s in sources[f]))


def union_boxes(boxes: list[Box]) -> Box:
    """The smallest CRS84 box holding every box: the circle of longitudes minus its
    widest uncovered gap (so two boxes either side of the antimeridian give a box across
    it, not one around the world)."""
    south, north = min(b.south for b in boxes), max(b.north for b in boxes)
    pieces = sorted(part[0::2] for b in boxes for part in b.parts())
    merged: list[list[float]] = []
    for west, east in pieces:
        if merged and west <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], east)
        else:
            merged.append([west, east])
    gaps = [(merged[i][1], merged[i + 1][0]) for i in range(len(merged) - 1)]
    wrap = (merged[-1][1], merged[0][0] + 360)
    widest = max([*gaps, wrap], key=lambda g: g[1] - g[0])
    if widest[1] - widest[0] <= 0:
        return Box(-180.0, south, 180.0, north)
    if widest == wrap:
        return Box(merged[0][0], south, merged[-1][1], north)
    return Box(widest[1], south, widest[0], north)


def union_periods(periods: list[Period]) -> Period | None:
    """From the earliest start to the latest end; dates when any period is given as
    dates (the date-times cut to their dates, which still covers them). ``None`` when
    the periods' calendars do not agree (:func:`common_calendar`): labels of a
    ``360_day`` and a ``standard`` calendar put in one period would be neither's dates."""
    dates = any(p.dates_only for p in periods)
    starts = [p.start[:_date_length(p.start)] if dates else p.start for p in periods]
    ends = [p.end[:_date_length(p.end)] if dates else p.end for p in periods]
    start, end = min(starts, key=_seconds), max(ends, key=_seconds)
    calendar = common_calendar([p.calendar for p in periods], start)
    return None if calendar is None else Period(start, end, calendar=calendar)


def common_calendar(calendars: list[str], start: str) -> str | None:
    """The calendar periods in ``calendars`` share, or ``None``: one calendar (aliases
    such as ``gregorian`` and ``standard``, ``365_day`` and ``noleap`` are one), or the
    Gregorian family (``standard``, ``proleptic_gregorian``) when the union starts after
    1582, where the two give the same dates; it is then ``standard``."""
    names = {_ALIASES.get(c, c) for c in calendars}
    if len(names) == 1:
        return calendars[0] if len(set(calendars)) == 1 else names.pop()
    if names <= _GREGORIAN and _year(start) > 1582:
        return "standard"
    return None


def _mixed_calendars(hierarchy: Hierarchy, path: str, below: list[Extent]) -> list[Finding]:
    """The info finding for a group left without a period because its arrays' calendars differ."""
    periods = [e.period for e in below if e.period is not None]
    if not periods or union_periods(periods) is not None:
        return []
    node = hierarchy.nodes.get(path)
    if node is None:
        return []
    calendars = sorted({p.calendar for p in periods})
    where = node.attributes_location
    text = (f"the arrays below {'the root' if not path else '/' + path} have periods in calendars "
            f"{', '.join(calendars)}: their dates are not one calendar's, so the group gets no period "
            "(each array keeps its own)")
    return [Finding(path, where.url, where.pointer, "extent.calendars-differ", text, "attributes")]


def _checked_periods(hierarchy: Hierarchy, found: list[Evidence], findings: list[Finding]) -> list[Evidence]:
    """The evidence with every period whose years lie outside 1..9999 taken out, each
    such period an ``extent.period-range`` finding at the metadata it was read from."""
    out = []
    for item in found:
        period = item.period
        if period is not None and not all(1 <= _year(t) <= 9999 for t in (period.start, period.end)):
            node = hierarchy.nodes.get(item.source.path) or hierarchy.nodes.get(item.path)
            if node is not None:
                values = item.source.kind.startswith("cf:")
                where = node.location if values else node.attributes_location
                text = (f"period {period.start}..{period.end} from {item.source.describe()} reaches beyond the "
                        "years 1..9999 that dates are written in; it is not used")
                finding = Finding(node.path, where.url, where.pointer, "extent.period-range", text,
                                  "" if values else "attributes")
                if finding not in findings:
                    findings.append(finding)
            item = dataclasses.replace(item, period=None)
        out.append(item)
    return out


def _year(text: str) -> int:
    match = _YEAR.match(text)
    if match is None:
        return 0
    return -int(match.group(2)) if match.group(1) else int(match.group(2))


# ---------------------------------------------------------------------- conflicts
def _conflicts(hierarchy: Hierarchy, path: str, ordered: list[Evidence],
               kept: dict[str, tuple[object, Evidence]]) -> list[Finding]:
    out: list[str] = []
    for figure, differs in (("bbox", _boxes_differ), ("period", _periods_differ), ("crs", _crs_differ)):
        if figure not in kept:
            continue
        value, chosen = kept[figure]
        for item in ordered:
            other = getattr(item, figure)
            if item is chosen or other is None or not differs(value, other, chosen, item):
                continue
            out.append(f"{figure} {_show(other)} from {item.source.describe()} differs from {_show(value)} "
                       f"from {chosen.source.describe()}, which is kept")
    node = hierarchy.nodes.get(path)
    if node is None:
        return []
    where = node.attributes_location
    return [Finding(path, where.url, where.pointer, "extent.conflict", text, "attributes") for text in out]


def _group_conflicts(hierarchy: Hierarchy, path: str, own: Extent, below: Extent,
                     winners: dict[str, str]) -> list[Finding]:
    """A group's own box or period against the union of its arrays': whichever the
    preference kept (``winners``: ``"own"`` or ``"below"``), a disagreement (a stale ACDD
    box on the root, say) is a conflict naming both."""
    def evidence(extent: Extent, figure: str, *, union: bool) -> Evidence:
        sources = extent.sources_of(figure)
        if union:
            where = "the root" if not path else f"/{path}"
            source = Source("union", path, f"the arrays below {where}: " + "; ".join(s.describe() for s in sources))
        else:
            source = sources[0] if len(sources) == 1 else Source(
                sources[0].kind if sources else "?", path, "; ".join(s.describe() for s in sources))
        return Evidence(path, source, **{figure: getattr(extent, figure)},
                        spatial_resolution=extent.spatial_resolution,
                        temporal_resolution=extent.temporal_resolution)

    found: list[Finding] = []
    for figure in ("bbox", "period"):
        if getattr(own, figure) is None or getattr(below, figure) is None:
            continue
        mine, theirs = evidence(own, figure, union=False), evidence(below, figure, union=True)
        kept, other = (theirs, mine) if winners.get(figure) == "below" else (mine, theirs)
        found.extend(_conflicts(hierarchy, path, [other], {figure: (getattr(kept, figure), kept)}))
    return found


def _boxes_differ(a: Box, b: Box, ea: Evidence, eb: Evidence) -> bool:
    cells = [r for r in (ea.spatial_resolution, eb.spatial_resolution) if r]
    half_cell = max(cells) / 2 / _METRES_PER_DEGREE * (1 + 1e-6) if cells else 0.0
    lon_span = (a.east - a.west) % 360 or 360.0
    lat_tolerance = max(half_cell, 0.01 * (a.north - a.south)) + 1e-9
    lon_tolerance = max(half_cell, 0.01 * lon_span) + 1e-9
    if abs(a.south - b.south) > lat_tolerance or abs(a.north - b.north) > lat_tolerance:
        return True
    if _global(a) and _global(b):
        return False
    return any(abs((x - y + 180) % 360 - 180) > lon_tolerance for x, y in ((a.west, b.west), (a.east, b.east)))


def _global(box: Box) -> bool:
    return box.west == -180 and box.east == 180


def _periods_differ(a: Period, b: Period, ea: Evidence, eb: Evidence) -> bool:
    steps = [duration_seconds(r) or 0.0 for r in (ea.temporal_resolution, eb.temporal_resolution) if r]
    tolerance = max([86400.0, *steps])
    return any(abs(_seconds(x) - _seconds(y)) > tolerance for x, y in ((a.start, b.start), (a.end, b.end)))


def _crs_differ(a: NativeCRS, b: NativeCRS, ea: Evidence, eb: Evidence) -> bool:
    if a == b:
        return False
    try:
        return not _crs(a).equals(_crs(b), ignore_axis_order=True)
    except (ProjCRSError, ValueError, TypeError):  # a CRS pyproj cannot rebuild: compared by its record alone
        return True


def _crs(record: NativeCRS) -> CRS:
    return CRS.from_epsg(record.epsg) if record.epsg is not None else CRS.from_wkt(record.wkt2 or "")


def _show(value: object) -> str:
    if isinstance(value, Box):
        return "[" + ", ".join(f"{v:g}" for v in value.as_list()) + "]"
    if isinstance(value, Period):
        return f"{value.start}..{value.end}"
    if isinstance(value, NativeCRS):
        return f"EPSG:{value.epsg}" if value.epsg is not None else repr(value.name or "a WKT CRS")
    return repr(value)


# ---------------------------------------------------------------------- times as numbers
def _date_length(text: str) -> int:
    return 11 if text.startswith("-") else 10


def _seconds(text: str) -> float:
    """Seconds since 1970 of an ISO date or date-time text (its offset applied): for
    ordering and tolerances only, whatever the calendar's labels."""
    offset = 0
    match = _OFFSET.search(text) if "T" in text else None
    if match:
        text = text[:match.start()]
        if match.group(1) != "Z":
            sign = 1 if match.group(1)[0] == "+" else -1
            offset = sign * (int(match.group(1)[1:3]) * 3600 + int(match.group(1)[4:6]) * 60)
    return float(np.datetime64(text, "ms").astype(np.int64)) / 1000 - offset


def _completed(own: Extent, below: Extent, own_ranks: dict[str, int],
               below_ranks: dict[str, int]) -> tuple[Extent, dict[str, str]]:
    """A group's figures, each from its own evidence or from the union of its arrays',
    by :func:`rank` (the union ranks as its weakest part; a tie keeps the group's own),
    and which side won each figure (``"own"`` or ``"below"``)."""
    winners: dict[str, str] = {}
    for figure in FIGURES:
        mine, theirs = getattr(own, figure), getattr(below, figure)
        if mine is not None and (theirs is None or own_ranks.get(figure, 4) <= below_ranks.get(figure, 4)):
            winners[figure] = "own"
        elif theirs is not None:
            winners[figure] = "below"
    if winners.get("geometry") == "own" and winners.get("bbox") == "below" and \
            own_ranks.get("geometry", 4) > below_ranks.get("bbox", 4):
        del winners["geometry"]  # a footprint from a source the arrays' box outranks goes with its box
    crs = own.crs if winners.get("crs") == "own" else below.crs if winners.get("crs") == "below" else None
    if "native_bbox" in winners and (own.crs if winners["native_bbox"] == "own" else below.crs) != crs:
        del winners["native_bbox"]  # a native box only goes with the CRS kept
    figures = {f: getattr(own if side == "own" else below, f) for f, side in winners.items()}
    sources = [(f, s) for f, s in own.sources if winners.get(f) == "own"]
    sources += [(f, s) for f, s in below.sources if winners.get(f) == "below"]
    return Extent(**figures, sources=tuple(sources)), winners  # type: ignore[arg-type]
