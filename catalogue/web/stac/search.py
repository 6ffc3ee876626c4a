"""Collection search's parameters as a search index query, and its paging links.

``q`` is the free-text extension's: comma-separated alternatives, any of which may match
(``q=EO,Earth Observation``), each matched as ``/datasets`` matches its ``q`` (every word,
the last also as a prefix; case and accents folded); ``bbox`` and ``datetime`` mean what
they mean for ``/datasets`` (the same index, the same parsers:
:mod:`catalogue.web.http.where_when`); ``limit`` is 1..100 (10 by
default: each collection is built from its graph); ``offset`` pages, in the ``next`` and
``prev`` links clients follow. ``sortby`` takes one field of the sort extension's
syntax (``+`` or no sign ascending, ``-`` descending; a ``+`` decoded from a URL as a
space counts as ``+``) among those the index can order by: ``title`` (ascending) and
``datetime`` / ``start_datetime`` (a collection's temporal extent's start, either way;
collections with no period come last). Anything else is a 400 saying what is sortable.
"""

from __future__ import annotations

from urllib.parse import urlencode

from catalogue.discovery.query import SearchQuery

from ..http.errors import HTTPError
from ..http.where_when import parse_bbox, parse_datetime
from ..search_params import MAX_OFFSET, MAX_Q_CHARS

DEFAULT_LIMIT = 10
MAX_LIMIT = 100
#: sortby field -> the index's sort for ascending, descending (None: not offered).
SORTABLE = {
    "title": ("title", None),
    "datetime": ("start", "-start"),
    "start_datetime": ("start", "-start"),
}


def _sort(sortby: str | None) -> str:
    if sortby is None or not sortby.strip():
        return "relevance"
    fields = [f.strip() for f in sortby.split(",") if f.strip()]
    if len(fields) != 1:
        raise HTTPError(400, "sortby takes one field")
    field = fields[0]
    descending = field.startswith("-")
    name = field.lstrip("+-").strip()
    orders = SORTABLE.get(name)
    chosen = None if orders is None else orders[1 if descending else 0]
    if chosen is None:
        offered = "title, datetime, -datetime, start_datetime, -start_datetime"
        raise HTTPError(400, f"sortby {field!r} is not sortable; sortable: {offered}")
    return chosen


def collection_query(*, q: str | None, bbox: str | None, datetime: str | None, limit: int, offset: int,
                     sortby: str | None) -> SearchQuery:
    """The index query of one collection search; HTTP 400 naming the bad parameter."""
    if q is not None and len(q) > MAX_Q_CHARS:
        raise HTTPError(400, f"q must be at most {MAX_Q_CHARS} characters")
    if not 1 <= limit <= MAX_LIMIT:
        raise HTTPError(400, f"limit must be between 1 and {MAX_LIMIT}")
    if not 0 <= offset <= MAX_OFFSET:
        raise HTTPError(400, f"offset must be between 0 and {MAX_OFFSET:,}")
    alternatives = [part.strip() for part in (q or "").split(",") if part.strip()]
    return SearchQuery(
        any_of=alternatives,
        bbox=parse_bbox(bbox) if bbox else None,
        datetime=parse_datetime(datetime) if datetime else None,
        limit=limit, offset=offset, sort=_sort(sortby),
    )


def page_links(url: str, params: dict[str, str], *, offset: int, limit: int, total: int) -> list[dict[str, str]]:
    """``next`` and ``prev`` links of a page: the same search at another offset."""
    out = []

    def at(start: int) -> str:
        kept = {k: v for k, v in params.items() if k != "offset"}
        return f"{url}?{urlencode({**kept, 'offset': str(start)})}" if start else f"{url}?{urlencode(kept)}".rstrip("?")

    if offset + limit < total and offset + limit <= MAX_OFFSET:
        out.append({"rel": "next", "href": at(offset + limit), "type": "application/json", "method": "GET"})
    if offset > 0:
        out.append({"rel": "prev", "href": at(max(0, offset - limit)), "type": "application/json", "method": "GET"})
    return out
