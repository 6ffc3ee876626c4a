"""The ``bbox`` and ``datetime`` parameters, with one meaning everywhere they are accepted.

``/datasets``, the portal's search page and the STAC API's collection search all take
them as STAC API does (OGC API - Features, part 1):

* ``bbox=west,south,east,north`` in CRS84 degrees; ``west > east`` crosses the
  antimeridian; 6 numbers (with heights) are accepted and the heights ignored.
* ``datetime=`` an RFC 3339 instant, or an interval ``start/end`` where either end may be
  ``..`` or empty (open). A date alone (``2020-01-01``) is accepted as its whole day,
  which is what a user typing it in a form means.
* Instants at the ends of what a Python datetime holds are accepted and clamped there:
  ``9999-12-31`` as an end is its last microsecond, and an offset that puts an instant
  before ``0001-01-01T00:00:00Z`` or after ``9999-12-31T23:59:59.999999Z`` means that
  first or last instant (no catalogue period lies beyond them).

A dataset matches when its box intersects the query box and its period overlaps the
interval; a dataset without one matches no such filter (nothing invented).
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time

from catalogue.model.extents import Box

from .errors import HTTPError

__all__ = ["parse_bbox", "parse_datetime"]

#: Longest accepted parameter text: a bbox or an interval is short.
MAX_CHARS = 200
_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)


def parse_bbox(text: str, name: str = "bbox") -> Box:
    """``west,south,east,north`` (or with heights, 6 numbers) as a :class:`Box`; HTTP 400
    naming the parameter otherwise."""
    if len(text) > MAX_CHARS:
        raise HTTPError(400, f"{name} must be at most {MAX_CHARS} characters")
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (4, 6):
        raise HTTPError(400, f"{name} must be 4 numbers west,south,east,north (or 6 with heights), got {len(parts)}")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise HTTPError(400, f"{name} must be numbers west,south,east,north, got {text!r}") from None
    if not all(math.isfinite(v) for v in numbers):
        raise HTTPError(400, f"{name} must be finite numbers")
    west, south, east, north = numbers if len(numbers) == 4 else (numbers[0], numbers[1], numbers[3], numbers[4])
    try:
        return Box(west, south, east, north)
    except ValueError as exc:
        raise HTTPError(400, f"{name}: {exc}") from None


def parse_datetime(text: str, name: str = "datetime") -> tuple[datetime | None, datetime | None]:
    """An instant or interval as ``(start, end)`` aware UTC datetimes, ``None`` for an open
    end; HTTP 400 naming the parameter for anything else (both ends open, end before start)."""
    if len(text) > MAX_CHARS:
        raise HTTPError(400, f"{name} must be at most {MAX_CHARS} characters")
    text = text.strip()
    if "/" not in text:
        start, end = _moment(text, name, end=False), _moment(text, name, end=True)
        return start, end
    first, _, second = text.partition("/")
    start = None if first.strip() in ("", "..") else _moment(first, name, end=False)
    end = None if second.strip() in ("", "..") else _moment(second, name, end=True)
    if start is None and end is None:
        raise HTTPError(400, f"{name}: an interval needs at least one end, got {text!r}")
    if start is not None and end is not None and end < start:
        raise HTTPError(400, f"{name}: the interval ends before it starts: {text!r}")
    return start, end


def _moment(text: str, name: str, *, end: bool) -> datetime:
    """One end: an RFC 3339 date-time (UTC when no offset is given), or a date meaning its
    whole day (its first instant as a start, its last as an end)."""
    text = text.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time.max if end else time(), UTC)
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise HTTPError(400, f"{name} must be an RFC 3339 date-time or an interval start/end "
                             f"with '..' for an open end, got {text!r}") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        # An offset past the first or last instant a datetime holds: clamp to it.
        return _FIRST if moment.year == 1 else _LAST
