"""CF time coordinates decoded with cftime: periods as xsd:date/xsd:dateTime texts and
regular steps as xsd:duration texts.

A CF time coordinate holds numbers in ``<unit> since <reference>`` (CF §4.4) counted in
its ``calendar`` (``standard``, ``proleptic_gregorian``, ``noleap``/``365_day``,
``all_leap``/``366_day``, ``360_day``, ``julian``). cftime does the calendar arithmetic;
this module only decides how a decoded date is *written*.

How dates are written: the period's texts are the date labels of the data's own
calendar (year, month, day, time of day), never converted to another calendar; the
:class:`~catalogue.model.extents.Period` keeps the calendar's name next to them. A
label the proleptic Gregorian calendar does not have (a ``360_day`` February 30th, an
``all_leap`` or ``julian`` February 29th of a common Gregorian year) is written as the
month's last valid Gregorian day, so the text is a valid ``xsd:date``, and the caller
says so in a finding (:attr:`TimeSpan.clamped`). Times carry ``Z``: CF says a reference
time without a time zone is UTC, and cftime turns one with an offset into UTC.
"""

from __future__ import annotations

import calendar as gregorian
import math
import re
from dataclasses import dataclass
from typing import Any, Final

import cftime
import numpy as np

from catalogue.errors import CatalogueError
from catalogue.model.extents import Period
from catalogue.model.json import short

__all__ = ["CALENDARS", "TimeAxis", "TimeError", "TimeSpan", "duration_seconds", "duration_text", "parse_time_axis"]

#: The CF calendars (CF §4.4.1), with the aliases cftime accepts; ``none`` has no dates.
CALENDARS: Final = frozenset({
    "standard", "gregorian", "proleptic_gregorian", "noleap", "365_day", "all_leap", "366_day",
    "360_day", "julian",
})

#: Decoding every value of a long irregular axis with cftime is slow (microseconds each);
#: month steps are checked on axes up to this length, longer ones on their first and
#: last values only.
MAX_DECODED: Final = 10_000

_SINCE = re.compile(r"^\s*(\w+)\s+since\s+\S", re.IGNORECASE)


class TimeError(CatalogueError):
    """Time units or a calendar cftime cannot decode (the message names the value received)."""


@dataclass(frozen=True)
class TimeSpan:
    """A decoded time extent: the period, its regular step where there is one, and the
    labels that had to be clamped to be valid Gregorian dates."""

    period: Period
    resolution: str | None
    clamped: tuple[str, ...] = ()


@dataclass(frozen=True)
class TimeAxis:
    """A CF time coordinate's ``units`` and ``calendar``, checked once."""

    units: str
    calendar: str

    def decode(self, numbers: np.ndarray) -> np.ndarray:
        """cftime datetimes (always cftime's, whatever the calendar) for ``numbers``."""
        try:
            return np.atleast_1d(cftime.num2date(numbers, self.units, calendar=self.calendar,
                                                 only_use_cftime_datetimes=True))
        except (ValueError, OverflowError, TypeError) as exc:
            raise TimeError(f"time values cannot be decoded with units {self.units!r}, "
                            f"calendar {self.calendar!r}: {exc}") from exc

    def span(self, numbers: np.ndarray, *, steps: np.ndarray | None = None, length: int | None = None,
             split: int | None = None) -> TimeSpan:
        """The period from the smallest to the largest of ``numbers`` (NaNs ignored), and
        the step of the axis values ``steps`` as ``xsd:duration`` when regular (see :meth:`step`)."""
        finite = numbers[np.isfinite(numbers)] if numbers.dtype.kind == "f" else numbers
        if finite.size == 0:
            raise TimeError("the time coordinate holds no finite value")
        ends = self.decode(np.array([finite.min(), finite.max()]))
        step = self.step(steps, length, split) if steps is not None else None
        # Dates when both ends fall at midnight and the step (if any) is whole days or months.
        dates_only = all(_is_midnight(d) for d in ends) and (step is None or "T" not in step)
        start, start_clamped = _text(ends[0], dates_only)
        end, end_clamped = _text(ends[1], dates_only)
        clamped = tuple(dict.fromkeys(f"{_label(d)} -> {t}" for d, t, c in
                                      ((ends[0], start, start_clamped), (ends[1], end, end_clamped)) if c))
        try:
            period = Period(start, end, calendar=self.calendar)
        except ValueError as exc:  # texts Period refuses (negative years compare as texts)
            raise TimeError(f"the time values give no period: {exc}") from None
        return TimeSpan(period, step, clamped)

    def step(self, values: np.ndarray, length: int | None = None, split: int | None = None) -> str | None:
        """The regular step of a monotonic axis as ``xsd:duration`` text, or None.

        Month steps come first (``P1M``: the same day and time each month, which in a
        ``360_day`` calendar are also 30-day steps); then equal steps in seconds
        (``P1D``, ``PT6H``). When only the first and last chunks of an axis of ``length``
        values were read, ``values`` is the two joined and ``split`` the index where the
        last chunk starts: each part must be regular, and the whole span ``length - 1`` steps.
        """
        values = np.asarray(values, dtype=np.float64)
        if values.size < 2 or not np.all(np.isfinite(values)):
            return None
        length = length or values.size
        keep = np.ones(values.size - 1, dtype=bool)
        if split is not None and 0 < split < values.size:
            keep[split - 1] = False  # the jump across the unread middle
        if values.size <= MAX_DECODED:
            dates = self.decode(values)
            months = _month_step(dates, keep, length)
            if months is not None:
                return _months_text(months)
        diffs = np.diff(values)[keep]
        if diffs.size == 0:
            return None
        step = float(diffs[0])
        if step <= 0 or not _regular(diffs, step) or not _regular(np.array([values[-1] - values[0]]), step * (length - 1)):
            return None
        first, second = self.decode(np.array([values[0], values[0] + step]))
        return duration_text((second - first).total_seconds())


def parse_time_axis(attributes: dict[str, Any]) -> TimeAxis:
    """The time axis of a coordinate variable's attributes; :class:`TimeError` when its
    ``units`` are not ``<unit> since <date>`` or its ``calendar`` is not a CF calendar
    cftime knows. A missing calendar is ``standard`` (CF §4.4.1)."""
    units = attributes.get("units")
    if not isinstance(units, str) or not _SINCE.match(units):
        raise TimeError(f"time units must be '<unit> since <date>', got {short(units)}")
    calendar = attributes.get("calendar", "standard")
    if not isinstance(calendar, str) or calendar.strip().lower() not in CALENDARS:
        raise TimeError(f"calendar must be one of {', '.join(sorted(CALENDARS))}, got {short(calendar)}")
    axis = TimeAxis(units.strip(), calendar.strip().lower())
    axis.decode(np.array([0]))  # raises on a reference date cftime cannot read
    return axis


def duration_text(seconds: float) -> str | None:
    """Whole seconds as ``xsd:duration``: days when a whole number of days (``P1D``,
    ``P7D``), else hours, minutes and seconds (``PT6H``, ``PT1H30M``, ``PT0.5S``)."""
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    rounded = round(seconds)
    if abs(seconds - rounded) < 1e-6:
        seconds = rounded
    if isinstance(seconds, int) and seconds % 86400 == 0:
        return f"P{seconds // 86400}D"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = "PT"
    if hours:
        text += f"{int(hours)}H"
    if minutes:
        text += f"{int(minutes)}M"
    if secs:
        text += f"{secs}S" if isinstance(secs, int) else f"{float(secs):g}S"
    return text


def duration_seconds(text: str) -> float | None:
    """Roughly how long an ``xsd:duration`` is (a month as 31 days, a year as 366): a
    tolerance when comparing periods, never a figure that is published."""
    match = re.fullmatch(r"P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?)?", text or "")
    if not match or text in ("P", "PT"):
        return None
    y, mo, d, h, mi, s = (float(g) if g else 0.0 for g in match.groups())
    return ((y * 366 + mo * 31 + d) * 24 + h) * 3600 + mi * 60 + s


# ---------------------------------------------------------------------- helpers
def _regular(diffs: np.ndarray, step: float) -> bool:
    return bool(np.all(np.abs(diffs - step) <= 1e-6 * max(abs(step), 1e-12)))


def _month_step(dates: np.ndarray, keep: np.ndarray, length: int) -> int | None:
    """The number of months between consecutive dates when all fall on the same day and
    time of their months and the span is ``length - 1`` such steps, else None."""
    first = dates[0]
    if any((d.day, d.hour, d.minute, d.second, d.microsecond) !=
           (first.day, first.hour, first.minute, first.second, first.microsecond) for d in dates):
        return None
    index = np.array([d.year * 12 + d.month - 1 for d in dates], dtype=np.int64)
    diffs = np.diff(index)[keep]
    if diffs.size == 0 or diffs[0] <= 0 or not np.all(diffs == diffs[0]):
        return None
    step = int(diffs[0])
    return step if index[-1] - index[0] == step * (length - 1) else None


def _months_text(months: int) -> str:
    return f"P{months // 12}Y" if months % 12 == 0 else f"P{months}M"


def _is_midnight(date: Any) -> bool:
    return (date.hour, date.minute, date.second, date.microsecond) == (0, 0, 0, 0)


def _label(date: Any) -> str:
    return f"{_year(date.year)}-{date.month:02d}-{date.day:02d} ({date.calendar})"


def _year(year: int) -> str:
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def _text(date: Any, dates_only: bool) -> tuple[str, bool]:
    """The xsd:date (or xsd:dateTime, UTC) text of a cftime date's labels, and whether
    its day had to be clamped to the month's last proleptic Gregorian day."""
    # calendar.monthrange knows proleptic Gregorian leap years; year 0 and negative years
    # follow astronomical numbering there, as xsd:date 1.1 does.
    last = gregorian.monthrange(date.year if date.year > 0 else 2000 + date.year % 400, date.month)[1]
    day = min(date.day, last)
    text = f"{_year(date.year)}-{date.month:02d}-{day:02d}"
    if not dates_only:
        seconds = f"{date.second:02d}" + (f".{date.microsecond:06d}".rstrip("0") if date.microsecond else "")
        text += f"T{date.hour:02d}:{date.minute:02d}:{seconds}Z"
    return text, day != date.day
