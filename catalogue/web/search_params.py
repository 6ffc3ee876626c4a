"""The search parameters of ``/datasets`` and the portal's search page, checked by one parser.

Both routes build their :class:`~catalogue.discovery.query.SearchQuery` with
:func:`search_query`, so they accept and refuse the same searches, each bad
value a 400 with one line saying which parameter and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

from catalogue.discovery.query import SORTS, SearchQuery

from .http.errors import HTTPError
from .http.where_when import parse_bbox, parse_datetime

#: Page size when none is asked for, and the largest page.
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
#: Deepest offset (deep paging is a crawler's job: use /catalog or /sparql).
MAX_OFFSET = 10_000
#: Characters of ``q``.
MAX_Q_CHARS = 500
#: Values one filter may repeat, and characters per value.
MAX_VALUES = 50
MAX_VALUE_CHARS = 200


def _values(name: str, values: Sequence[str]) -> list[str]:
    if len(values) > MAX_VALUES:
        raise HTTPError(400, f"{name}: at most {MAX_VALUES} values")
    for value in values:
        if len(value) > MAX_VALUE_CHARS:
            raise HTTPError(400, f"{name}: values must be at most {MAX_VALUE_CHARS} characters")
    return list(dict.fromkeys(values))


def _whole(name: str, value: int | str | None, default: int, high: int, low: int) -> int:
    if value is None:
        return default
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise HTTPError(400, f"{name} must be a whole number") from None
    if not low <= value <= high:
        raise HTTPError(400, f"{name} must be between {low:,} and {high:,}")
    return value


def search_query(
    *, q: str = "", dtype: Sequence[str] = (), dimension: Sequence[str] = (), standard_name: Sequence[str] = (),
    units: Sequence[str] = (), zarr_format: Sequence[int | str] = (), codec: Sequence[str] = (),
    valid: str | None = None, harvested_since: str | None = None, bbox: str | None = None,
    datetime: str | None = None, limit: int | str | None = None, offset: int | str | None = None,
    sort: str | None = None, sortby: str | None = None, axis_type: Sequence[str] = (), axis_unit: Sequence[str] = (),
) -> SearchQuery:
    """The :class:`SearchQuery` of ``/datasets`` and the portal's search page, checked.

    Takes the parameters as the query string gives them (None or empty
    sequences when absent; ``limit``, ``offset`` and ``zarr_format`` as text or
    already-converted integers) and raises :class:`HTTPError` 400 with one
    line saying which one is wrong and why. ``bbox`` and ``datetime`` are read by
    :mod:`catalogue.web.http.where_when`, as the STAC API reads them. The query string itself is
    checked by :func:`catalogue.web.http.params.check_query_string`.
    """
    if len(q) > MAX_Q_CHARS:
        raise HTTPError(400, f"q must be at most {MAX_Q_CHARS} characters")
    formats: list[int] = []
    for value in _values("zarr_format", [str(v).strip() for v in zarr_format]):
        if value not in ("2", "3"):
            raise HTTPError(400, "zarr_format must be 2 or 3")
        formats.append(int(value))
    if valid not in (None, "true", "false"):
        raise HTTPError(400, "valid must be true or false")
    try:
        since = parse_since(harvested_since) if harvested_since is not None else None
    except ValueError:
        raise HTTPError(400, "harvested_since must be an ISO 8601 date or date-time") from None
    box = parse_bbox(bbox) if bbox is not None else None
    interval = parse_datetime(datetime) if datetime is not None else None
    if sortby is not None and sortby.strip():
        if sort is not None:
            raise HTTPError(400, "give sort or sortby, not both")
        sort = parse_sortby(sortby)
    sort = "relevance" if sort is None else sort
    if sort not in SORTS:
        raise HTTPError(400, f"sort must be one of {', '.join(SORTS)}")
    return SearchQuery(
        q=q, dtype=_values("dtype", dtype), dimension=_values("dimension", dimension),
        standard_name=_values("standard_name", standard_name), units=_values("units", units),
        zarr_format=formats, codec=_values("codec", codec),
        axis_type=_values("axis_type", axis_type), axis_unit=_values("axis_unit", axis_unit),
        valid=None if valid is None else valid == "true", harvested_since=since, bbox=box, datetime=interval,
        limit=_whole("limit", limit, DEFAULT_LIMIT, MAX_LIMIT, 1), offset=_whole("offset", offset, 0, MAX_OFFSET, 0),
        sort=sort,
    )


#: ``sortby`` field -> the sort for ascending, descending (None: not offered).
SORTBY = {"title": ("title", None), "datetime": ("start", "-start"), "start_datetime": ("start", "-start"),
          "harvested": ("harvested", "-harvested")}


def parse_sortby(text: str) -> str:
    """One field in the STAC sort extension's syntax (``+`` or no sign ascending, ``-``
    descending; a ``+`` decoded from a URL as a space counts as ``+``) as a ``sort``."""
    fields = [f.strip() for f in text.split(",") if f.strip()]
    if len(fields) != 1:
        raise HTTPError(400, "sortby takes one field")
    field = fields[0]
    descending = field.startswith("-")
    orders = SORTBY.get(field.lstrip("+-").strip())
    chosen = None if orders is None else orders[1 if descending else 0]
    if chosen is None:
        offered = ", ".join(f"{s}{name}" for name, (up, down) in SORTBY.items()
                            for s, o in (("", up), ("-", down)) if o)
        raise HTTPError(400, f"sortby {field[:50]!r} is not sortable; sortable: {offered}")
    return chosen


def parse_since(text: str) -> datetime:
    """An ISO 8601 date (midnight UTC) or date-time (UTC when no offset is given)."""
    text = text.strip()
    if len(text) > 64:
        raise ValueError(text)
    if len(text) == 10:
        day = date.fromisoformat(text)
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
