"""What the search page (``/``) shows: facet toggles, active filters, hits, paging (no HTML here)."""

from __future__ import annotations

import math
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

from catalogue.discovery.query import SearchQuery, SearchResult
from catalogue.discovery.stats import Totals
from catalogue.discovery.summary import DatasetSummary, Variable
from catalogue.model.extents import Box, coordinate_text

from ..search_params import MAX_OFFSET
from .map import MapView, describe_box, world_map
from .params import PAGE_SIZE, SEARCH_LISTS

#: Facet values shown before "more".
FACET_SHOWN = 8
#: Variables shown per result.
VARIABLES_SHOWN = 6
FACET_TITLES = {
    "dtype": "Data type", "dimension": "Dimension", "standard_name": "CF standard name",
    "units": "Units", "zarr_format": "Zarr format", "codec": "Codec", "valid": "Validity",
    "axis_type": "Axis type", "axis_unit": "Axis unit",
}
SORT_LABELS = {"relevance": "Relevance", "title": "Title", "-harvested": "Newest harvest",
               "harvested": "Oldest harvest", "start": "Earliest time span", "-start": "Latest time span"}
#: Parameters of the where-and-when filters, in the order links write them.
WHERE_WHEN = ("bbox", "datetime")


@dataclass
class FacetValue:
    value: str
    label: str
    count: int
    active: bool
    href: str


@dataclass
class FacetView:
    name: str
    title: str
    shown: list[FacetValue]
    more: list[FacetValue]
    mono: bool


@dataclass
class ActiveFilter:
    label: str
    href: str


@dataclass
class HitView:
    dataset: DatasetSummary
    href: str
    #: Data variables (most dimensions) first.
    variables: list[Variable]
    more_variables: int
    harvested_iso: str
    #: A thumbnail of the dataset's box on the world, and its time span in words ("" when none).
    map: MapView | None = None
    period: str = ""


@dataclass
class PageLink:
    label: str
    href: str = ""
    current: bool = False


@dataclass
class SearchView:
    total: int
    catalogue_size: int
    #: Groups, arrays and triples of the catalogue (kept by the index: no scan).
    totals: Totals
    hits: list[HitView]
    facets: list[FacetView]
    active: list[ActiveFilter]
    pages: list[PageLink]
    previous: str
    next: str
    first: int
    last: int
    clear_href: str
    #: Filters carried by the search form as hidden fields, so a new text keeps them.
    hidden: list[tuple[str, str]]
    sorts: list[tuple[str, str, bool]]
    #: The search map (the query's box on the world) and the where-and-when fields' values.
    map: MapView | None = None
    bbox: str = ""
    start: str = ""
    end: str = ""


def _state(query: SearchQuery) -> dict[str, Any]:
    return {
        "q": query.q, "dtype": list(query.dtype), "dimension": list(query.dimension),
        "standard_name": list(query.standard_name), "units": list(query.units),
        "zarr_format": [str(z) for z in query.zarr_format], "codec": list(query.codec),
        "axis_type": list(query.axis_type), "axis_unit": list(query.axis_unit),
        "valid": [] if query.valid is None else ["true" if query.valid else "false"],
        "harvested_since": [query.harvested_since.isoformat().replace("+00:00", "Z")]
        if query.harvested_since is not None else [],
        "bbox": [bbox_text(query.bbox)] if query.bbox is not None else [],
        "datetime": [interval_text(*query.datetime)] if query.datetime is not None else [],
        "sort": query.sort, "limit": query.limit, "offset": query.offset,
    }


def _href(base: str, state: dict[str, Any]) -> str:
    pairs: list[tuple[str, str]] = []
    if state["q"]:
        pairs.append(("q", state["q"]))
    for name in (*SEARCH_LISTS, "valid", "harvested_since", *WHERE_WHEN):
        pairs += [(name, v) for v in state[name]]
    if state["sort"] != "relevance":
        pairs.append(("sort", state["sort"]))
    if state["limit"] != PAGE_SIZE:
        pairs.append(("limit", str(state["limit"])))
    if state["offset"]:
        pairs.append(("offset", str(state["offset"])))
    return f"{base}/" + ("?" + urllib.parse.urlencode(pairs) if pairs else "")


def _facet_label(name: str, value: str) -> str:
    if name == "zarr_format":
        return f"Zarr v{value}"
    if name == "valid":
        return {"true": "Valid", "false": "Invalid"}.get(value, value)
    return value


def _toggled(state: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    new = {k: (list(v) if isinstance(v, list) else v) for k, v in state.items()}
    new["offset"] = 0
    values: list[str] = new[name]
    if value in values:
        values.remove(value)
    elif name == "valid":
        new[name] = [value]
    else:
        values.append(value)
    return new


def search_view(query: SearchQuery, result: SearchResult, *, base: str, totals: Totals) -> SearchView:
    """Links and labels of the search page: facet toggles, active filters, paging."""
    state = _state(query)
    facets = []
    for name in ("dtype", "dimension", "standard_name", "units", "codec", "zarr_format", "valid", "axis_type",
                 "axis_unit"):
        values = []
        for value, count in result.facets.get(name, []):
            active = value in state[name]
            values.append(FacetValue(value=value, label=_facet_label(name, value), count=count, active=active,
                                     href=_href(base, _toggled(state, name, value))))
        if not values:
            continue
        shown = values[:FACET_SHOWN] + [v for v in values[FACET_SHOWN:] if v.active]
        more = [v for v in values[FACET_SHOWN:] if not v.active]
        facets.append(FacetView(name=name, title=FACET_TITLES[name], shown=shown, more=more,
                                mono=name in ("dtype", "dimension", "standard_name", "units", "codec")))
    active = []
    for name in (*SEARCH_LISTS, "valid"):
        for value in state[name]:
            active.append(ActiveFilter(label=f"{FACET_TITLES[name]}: {_facet_label(name, value)}",
                                       href=_href(base, _toggled(state, name, value))))
    if state["harvested_since"]:
        without = dict(state, harvested_since=[], offset=0)
        active.append(ActiveFilter(label=f"Harvested since {state['harvested_since'][0]}",
                                   href=_href(base, without)))
    if query.bbox is not None:
        active.append(ActiveFilter(label=f"Where: {describe_box(query.bbox)}",
                                   href=_href(base, dict(state, bbox=[], offset=0))))
    if query.datetime is not None:
        active.append(ActiveFilter(label=f"When: {interval_label(*query.datetime)}",
                                   href=_href(base, dict(state, datetime=[], offset=0))))
    hits = []
    for d in (hit.summary() for hit in result.hits):
        ranked = sorted(d.variables, key=lambda v: (-len(v.dimensions or []), v.path))
        hits.append(HitView(
            dataset=d, href=f"{base}/browse?" + urllib.parse.urlencode({"iri": d.iri}),
            variables=ranked[:VARIABLES_SHOWN], more_variables=max(0, len(ranked) - VARIABLES_SHOWN),
            harvested_iso=d.harvested.isoformat().replace("+00:00", "Z") if d.harvested else "",
            map=world_map(d.extent.bbox, f"Where {d.title} lies: {describe_box(d.extent.bbox)}")
            if d.extent is not None and d.extent.bbox is not None else None,
            period=_period(d)))
    limit, offset, total = query.limit, query.offset, result.total
    pages: list[PageLink] = []
    count = max(1, math.ceil(total / limit))
    current = offset // limit
    wanted = sorted({0, count - 1, *range(max(0, current - 2), min(count, current + 3))})
    wanted = [n for n in wanted if n * limit <= MAX_OFFSET]
    previous_number = -1
    for number in wanted:
        if previous_number >= 0 and number > previous_number + 1:
            pages.append(PageLink(label="…"))
        pages.append(PageLink(label=str(number + 1), href=_href(base, dict(state, offset=number * limit)),
                              current=number == current and offset % limit == 0))
        previous_number = number
    hidden: list[tuple[str, str]] = []
    for name in (*SEARCH_LISTS, "valid", "harvested_since"):  # bbox and the dates are fields of the form
        hidden += [(name, v) for v in state[name]]
    if state["limit"] != PAGE_SIZE:
        hidden.append(("limit", str(state["limit"])))
    cleared = dict(_state(SearchQuery()), q=state["q"], sort=state["sort"], limit=state["limit"])
    return SearchView(
        total=total, catalogue_size=totals.datasets, totals=totals, hits=hits, facets=facets, active=active,
        pages=pages if count > 1 else [],
        previous=_href(base, dict(state, offset=max(0, offset - limit))) if offset > 0 else "",
        next=_href(base, dict(state, offset=offset + limit))
        if offset + limit < total and offset + limit <= MAX_OFFSET else "",
        first=offset + 1 if hits else 0, last=offset + len(hits), clear_href=_href(base, cleared),
        hidden=hidden,
        sorts=[(key, label, key == query.sort) for key, label in SORT_LABELS.items()],
        map=world_map(query.bbox, "World map: drag to draw the search box" + (
            f"; now {describe_box(query.bbox)}" if query.bbox is not None else "")),
        bbox=state["bbox"][0] if state["bbox"] else "",
        start=_day(query.datetime[0]) if query.datetime is not None else "",
        end=_day(query.datetime[1]) if query.datetime is not None else "",
    )


def bbox_text(box: Box) -> str:
    """``west,south,east,north`` as the ``bbox`` parameter writes it."""
    return ",".join(coordinate_text(v) for v in box.as_list())


_LAST = time(23, 59, 59, 999999)


def _end_text(moment: datetime, *, end: bool) -> str:
    """A date when the moment is a whole day's first (a start) or last (an end) instant."""
    moment = moment.astimezone(UTC)
    if moment.timetz().replace(tzinfo=None) == (_LAST if end else time()):
        return moment.date().isoformat()
    return moment.isoformat().replace("+00:00", "Z")


def interval_text(start: datetime | None, end: datetime | None) -> str:
    """The ``datetime`` parameter of an interval, dates where whole days were meant
    (``2021-07-01/2021-07-31``, ``2020-01-01/..``); parsing it again gives the same interval."""
    first = _end_text(start, end=False) if start is not None else ".."
    last = _end_text(end, end=True) if end is not None else ".."
    return f"{first}/{last}"


def interval_label(start: datetime | None, end: datetime | None) -> str:
    """``2021-07-01 to 2021-07-31``, ``from 2020-01-01``, ``until 2019-12-31``."""
    first = _end_text(start, end=False) if start is not None else ""
    last = _end_text(end, end=True) if end is not None else ""
    if first and last:
        return first if first == last else f"{first} to {last}"
    return f"from {first}" if first else f"until {last}"


def _day(moment: datetime | None) -> str:
    """The date of an interval end, for the form's date fields."""
    return moment.astimezone(UTC).date().isoformat() if moment is not None else ""


def _period(d: DatasetSummary) -> str:
    """A hit's time span, as stored (with its calendar when it is not the standard one)."""
    if d.extent is None or d.extent.period is None:
        return ""
    period = d.extent.period
    text = period.start if period.start == period.end else f"{period.start} – {period.end}"
    if not period.standard_calendar:
        text += f" ({period.calendar})"
    return text
