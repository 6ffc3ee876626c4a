"""ISO 8601 instants, periods and durations as the catalogue writes them.

ACDD's ``time_coverage_*`` and a STAC item's datetimes are ISO 8601 (RFC 3339) texts.
Here they become :class:`~catalogue.model.extents.Period` texts: a date stays a date
(``2020-01-01``); a date-time with a UTC offset is converted to UTC and written with
``Z``; a date-time without one keeps no offset (the source did not say its zone, and
inventing UTC would be a claim it did not make). Durations are parsed with ``isodate``
(months and years included, which ``timedelta`` cannot hold) and written back in the
``xsd:duration`` form (``P7D`` for ``P1W``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import isodate

from catalogue.model.extents import Period
from catalogue.model.json import short

__all__ = ["TimeError", "add_duration", "instant", "parse_duration", "period", "xsd_duration"]


class TimeError(ValueError):
    """A time text that is not ISO 8601 (the message names the value received)."""


Instant = dt.date | dt.datetime


def instant(value: Any) -> Instant:
    """A date or a date-time from an ISO 8601 text; aware date-times converted to UTC."""
    if not isinstance(value, str) or not value.strip():
        raise TimeError(f"not an ISO 8601 date or date-time: {short(value)}")
    text = value.strip()
    try:
        if "T" not in text and " " not in text and len(text) <= 10:
            return dt.date.fromisoformat(text)
        parsed = dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise TimeError(f"not an ISO 8601 date or date-time: {short(value)}") from None
    return parsed.astimezone(dt.UTC) if parsed.tzinfo is not None else parsed


def text(value: Instant) -> str:
    """The catalogue's text of an instant: ``2020-01-01``, ``2020-01-01T06:00:00Z`` or,
    without an offset, ``2020-01-01T06:00:00``."""
    if not isinstance(value, dt.datetime):
        return value.isoformat()
    naive = value.replace(tzinfo=None).isoformat()
    return naive + "Z" if value.tzinfo is not None else naive


def period(start: Instant, end: Instant) -> Period:
    """A period of two instants. A Period's ends are of one kind, so a date-time beside a
    date is cut to its (UTC) date: a date end covers its whole day, and midnight would cut
    that day off; the union of periods across arrays does the same (``extract.py``)."""
    if isinstance(start, dt.datetime) != isinstance(end, dt.datetime):
        start, end = _day(start), _day(end)
    try:
        backwards = start > end  # type: ignore[operator]
    except TypeError:  # one end with an offset, one without: not comparable, kept as given
        backwards = False
    if backwards:
        raise TimeError(f"the period ends before it starts: {text(start)} .. {text(end)}")
    return Period(text(start), text(end))


def _day(value: Instant) -> dt.date:
    if isinstance(value, dt.datetime):
        return (value.astimezone(dt.UTC) if value.tzinfo is not None else value).date()
    return value


def parse_duration(value: Any) -> dt.timedelta | isodate.Duration:
    """An ISO 8601 duration (``P1D``, ``PT6H``, ``P1M``)."""
    if not isinstance(value, str) or not value.strip():
        raise TimeError(f"not an ISO 8601 duration: {short(value)}")
    try:
        return isodate.parse_duration(value.strip())
    except (isodate.ISO8601Error, ValueError):
        raise TimeError(f"not an ISO 8601 duration: {short(value)}") from None


def xsd_duration(value: Any) -> str:
    """An ISO 8601 duration text in ``xsd:duration`` form."""
    return isodate.duration_isoformat(parse_duration(value))


def add_duration(start: Instant, value: Any) -> Instant:
    """``start`` plus an ISO 8601 duration (a date stays a date unless the duration has
    hours, minutes or seconds)."""
    duration = parse_duration(value)
    seconds = duration.tdelta.seconds if isinstance(duration, isodate.Duration) else duration.seconds
    if seconds and not isinstance(start, dt.datetime):
        start = dt.datetime(start.year, start.month, start.day)
    try:
        return start + duration
    except (OverflowError, ValueError):  # datetime's OverflowError; isodate's ValueError past year 9999
        raise TimeError(f"{text(start)} plus {short(value)} is out of range") from None
