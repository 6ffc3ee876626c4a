"""CF times: periods in every CF calendar, clamped days, steps as xsd:duration, bad units.

Expected texts come from cftime directly (``num2date`` and ``strftime``), not from the
module under test.
"""

from __future__ import annotations

import calendar as gregorian

import cftime
import numpy as np
import pytest

from catalogue.extents.times import TimeError, duration_seconds, duration_text, parse_time_axis

CALENDARS = ["standard", "gregorian", "proleptic_gregorian", "noleap", "365_day", "all_leap", "366_day",
             "360_day", "julian"]


def axis(units: str, calendar: str | None = None):
    attributes = {"units": units} if calendar is None else {"units": units, "calendar": calendar}
    return parse_time_axis(attributes)


@pytest.mark.parametrize("calendar", CALENDARS)
def test_every_cf_calendar_gives_the_dates_cftime_decodes(calendar):
    numbers = np.array([400.0, 0.0, 1000.0])
    span = axis("days since 1999-12-01", calendar).span(numbers)
    first, last = cftime.num2date([0.0, 1000.0], "days since 1999-12-01", calendar=calendar)

    def text(d) -> str:
        day = min(d.day, gregorian.monthrange(d.year, d.month)[1])
        return f"{d.year:04d}-{d.month:02d}-{day:02d}"

    assert (span.period.start, span.period.end) == (text(first), text(last))
    assert span.period.calendar == calendar and span.period.dates_only


@pytest.mark.parametrize(("calendar", "value", "label", "written"), [
    ("360_day", 59.0, "2000-02-30", "2000-02-29"),    # 2000 is a Gregorian leap year
    ("360_day", 419.0, "2001-02-30", "2001-02-28"),
    ("all_leap", 425.0, "2001-02-29", "2001-02-28"),  # 366 + 31 + 28 days after 2000-01-01
    ("julian", 0.0, "1900-02-29", "1900-02-28"),      # a Julian leap day, not a Gregorian one
])
def test_days_the_gregorian_calendar_lacks_are_clamped_and_said(calendar, value, label, written):
    units = "days since 1900-02-29" if calendar == "julian" else "days since 2000-01-01"
    decoded = cftime.num2date(value, units, calendar=calendar)
    assert decoded.strftime("%Y-%m-%d") == label  # the fixture is what it claims
    span = axis(units, calendar).span(np.array([value]))
    assert span.period.start == span.period.end == written
    assert span.clamped == (f"{label} ({calendar}) -> {written}",)


def test_times_of_day_are_utc_date_times_and_offsets_are_applied():
    span = axis("hours since 2000-01-01 00:00:00 +05:00").span(np.array([0.0, 30.5]))
    expected = [d.strftime("%Y-%m-%dT%H:%M:%SZ") for d in
                cftime.num2date([0.0, 30.5], "hours since 2000-01-01 00:00:00 +05:00", calendar="standard")]
    assert [span.period.start, span.period.end] == expected == ["1999-12-31T19:00:00Z", "2000-01-02T01:30:00Z"]


def test_nans_are_ignored_and_all_nan_is_an_error():
    span = axis("days since 2000-01-01").span(np.array([np.nan, 1.0, 3.0]))
    assert (span.period.start, span.period.end) == ("2000-01-02", "2000-01-04")
    with pytest.raises(TimeError, match="no finite value"):
        axis("days since 2000-01-01").span(np.array([np.nan]))


@pytest.mark.parametrize(("units", "calendar", "values", "step"), [
    ("days since 2000-01-01", "standard", np.arange(10.0), "P1D"),
    ("hours since 2000-01-01", "standard", np.arange(0.0, 48, 6), "PT6H"),
    ("minutes since 2000-01-01", "standard", np.arange(0.0, 450, 90), "PT1H30M"),
    ("days since 2000-01-01", "standard", np.arange(0.0, 70, 7), "P7D"),
    ("days since 2000-01-01", "360_day", 15.0 + 30 * np.arange(24), "P1M"),
    # Gregorian months: unequal day counts, same day of each month
    ("days since 2000-01-01", "standard",
     cftime.date2num([cftime.datetime(2000, m, 1) for m in range(1, 13)], "days since 2000-01-01"), "P1M"),
    ("days since 2000-01-01", "noleap", 365.0 * np.arange(5), "P1Y"),
    ("days since 2000-01-01", "standard", np.array([0.0, 1.0, 3.0]), None),  # irregular
    ("days since 2000-01-01", "standard", np.array([5.0]), None),            # one value
])
def test_regular_steps_are_xsd_durations(units, calendar, values, step):
    assert axis(units, calendar).step(np.asarray(values, dtype=float)) == step


def test_steps_from_the_first_and_last_chunks_must_span_the_whole_axis():
    hours = axis("hours since 1900-01-01")
    head, tail = np.arange(0.0, 10), np.arange(90.0, 100)
    assert hours.step(np.concatenate([head, tail]), length=100, split=10) == "PT1H"
    # the same chunks claimed for a 120-value axis: the middle cannot be hourly
    assert hours.step(np.concatenate([head, tail]), length=120, split=10) is None


@pytest.mark.parametrize(("attributes", "message"), [
    ({"units": "days"}, "'<unit> since <date>', got \"days\""),
    ({"units": 5}, "got 5"),
    ({}, "got null"),
    ({"units": "fortnights since 2000-01-01"}, "cannot be decoded"),
    ({"units": "days since 2000-13-45"}, "cannot be decoded"),
    ({"units": "days since 2000-01-01", "calendar": "none"}, 'got "none"'),
    ({"units": "days since 2000-01-01", "calendar": "martian"}, 'got "martian"'),
])
def test_bad_units_and_calendars_raise_with_the_value(attributes, message):
    with pytest.raises(TimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_time_axis(attributes)


def test_values_beyond_what_cftime_can_hold_raise_a_time_error():
    with pytest.raises(TimeError, match="cannot be decoded"):
        axis("days since 2000-01-01").span(np.array([0.0, 1e300]))


@pytest.mark.parametrize(("seconds", "text"), [
    (86400, "P1D"), (3 * 86400, "P3D"), (3600, "PT1H"), (5400, "PT1H30M"), (90061, "PT25H1M1S"),
    (0.5, "PT0.5S"), (0, None), (-1, None), (float("nan"), None),
])
def test_duration_text(seconds, text):
    assert duration_text(seconds) == text
    if text is not None:
        assert duration_seconds(text) == pytest.approx(seconds)
