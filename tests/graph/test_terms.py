"""Term encoding helpers: comparable values of literals (``terms.num``)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from catalogue.graph.terms import (
    COMPARABLE_DATATYPES,
    XSD_NUMERIC_DATATYPES,
    comparable_value,
)

XSD = "http://www.w3.org/2001/XMLSchema#"
INF = math.inf


def epoch(text: str) -> float:
    """Seconds since the epoch, computed by :mod:`datetime` as an independent oracle."""
    return datetime.fromisoformat(text).astimezone(UTC).timestamp()


CASES: list[tuple[str, str | None, float | None]] = [
    # --- xsd:integer: optional sign, ASCII digits, leading zeros allowed
    ("integer", "0", 0.0),
    ("integer", "-0", 0.0),
    ("integer", "+42", 42.0),
    ("integer", "0010", 10.0),
    ("integer", "-123456789012345678901234567890", -1.2345678901234568e29),
    ("integer", " \t\n42\r\n", 42.0),  # XSD whitespace collapse
    ("integer", "4 2", None),
    ("integer", "1.0", None),
    ("integer", "1e3", None),
    ("integer", "", None),
    ("integer", "+", None),
    ("integer", "--1", None),
    ("integer", "ten", None),
    ("integer", "٣", None),  # an Arabic-Indic digit is not an XSD digit
    ("integer", "\u00a042", None),  # no-break space is not XSD whitespace
    ("integer", "1" * 400, None),  # valid, but beyond any double
    ("integer", "1" + "0" * 5000, None),  # no int() of huge strings
    # --- bounded integer types: lexical space and range
    ("long", "9223372036854775807", 9.223372036854776e18),
    ("long", "9223372036854775808", None),
    ("long", "-9223372036854775808", -9.223372036854776e18),
    ("long", "-9223372036854775809", None),
    ("long", "1" + "0" * 60, None),
    ("int", "2147483647", 2147483647.0),
    ("int", "2147483648", None),
    ("int", "-2147483648", -2147483648.0),
    ("short", "32767", 32767.0),
    ("short", "-32769", None),
    ("byte", "-128", -128.0),
    ("byte", "127", 127.0),
    ("byte", "128", None),
    ("byte", "00000000000000000000000000000000000000000000000001", 1.0),
    ("unsignedLong", "18446744073709551615", 1.8446744073709552e19),
    ("unsignedLong", "18446744073709551616", None),
    ("unsignedLong", "-1", None),
    ("unsignedLong", "-0", 0.0),
    ("unsignedInt", "4294967295", 4294967295.0),
    ("unsignedInt", "4294967296", None),
    ("unsignedShort", "65535", 65535.0),
    ("unsignedShort", "65536", None),
    ("unsignedByte", "255", 255.0),
    ("unsignedByte", "256", None),
    ("unsignedByte", "+7", 7.0),
    ("nonNegativeInteger", "0", 0.0),
    ("nonNegativeInteger", "-1", None),
    ("nonNegativeInteger", "9" * 60, 1e60),
    ("nonNegativeInteger", "-" + "9" * 60, None),
    ("positiveInteger", "1", 1.0),
    ("positiveInteger", "0", None),
    ("positiveInteger", "-0", None),
    ("nonPositiveInteger", "0", 0.0),
    ("nonPositiveInteger", "+0", 0.0),
    ("nonPositiveInteger", "1", None),
    ("nonPositiveInteger", "-" + "9" * 60, -1e60),
    ("negativeInteger", "-1", -1.0),
    ("negativeInteger", "0", None),
    ("negativeInteger", "9" * 60, None),
    ("int", "1.0", None),
    # --- xsd:decimal: no exponent, no INF
    ("decimal", "1.5", 1.5),
    ("decimal", "-.5", -0.5),
    ("decimal", "+1.", 1.0),
    ("decimal", "007.250", 7.25),
    ("decimal", "42", 42.0),
    ("decimal", ".", None),
    ("decimal", "1e3", None),
    ("decimal", "INF", None),
    ("decimal", "NaN", None),
    ("decimal", "1,5", None),
    ("decimal", "1" * 400 + ".0", None),
    # --- xsd:double and xsd:float
    ("double", "1.0", 1.0),
    ("double", "1E0", 1.0),
    ("double", "-1.5e-3", -0.0015),
    ("double", ".5E+2", 50.0),
    ("double", "5.", 5.0),
    ("double", "0.30000000000000004", 0.30000000000000004),
    ("double", "INF", INF),
    ("double", "+INF", INF),
    ("double", "-INF", -INF),
    ("double", "1e400", INF),  # XSD rounds values beyond the range to infinity
    ("double", "-1e400", -INF),
    ("double", "NaN", None),
    ("double", "nan", None),
    ("double", "inf", None),
    ("double", "Infinity", None),
    ("double", "-NaN", None),
    ("double", "1e", None),
    ("double", "e3", None),
    ("double", "0x10", None),
    ("double", "1_000", None),
    ("double", " 2.5 ", 2.5),
    ("float", "1.5", 1.5),
    ("float", "0.1", 0.1),  # compared in double precision, as rdflib does
    ("float", "-INF", -INF),
    ("float", "NaN", None),
    ("float", "abc", None),
    # --- xsd:boolean
    ("boolean", "true", 1.0),
    ("boolean", "1", 1.0),
    ("boolean", "false", 0.0),
    ("boolean", "0", 0.0),
    ("boolean", " true\n", 1.0),
    ("boolean", "True", None),
    ("boolean", "TRUE", None),
    ("boolean", "yes", None),
    ("boolean", "01", None),
    ("boolean", "", None),
    # --- xsd:dateTime with a time zone: seconds since the epoch
    ("dateTime", "1970-01-01T00:00:00Z", 0.0),
    ("dateTime", "1970-01-01T00:00:00+00:00", 0.0),
    ("dateTime", "1970-01-01T00:00:00-00:00", 0.0),
    ("dateTime", "1970-01-01T01:00:00+01:00", 0.0),
    ("dateTime", "1969-12-31T19:00:00-05:00", 0.0),
    ("dateTime", "2024-02-29T12:34:56Z", epoch("2024-02-29T12:34:56+00:00")),
    ("dateTime", "2024-02-29T12:34:56.789Z", epoch("2024-02-29T12:34:56+00:00") + 0.789),
    ("dateTime", "2024-01-01T00:00:00.000Z", epoch("2024-01-01T00:00:00+00:00")),
    ("dateTime", "2024-06-01T12:00:00+14:00", epoch("2024-06-01T12:00:00+14:00")),
    ("dateTime", "2024-06-01T12:00:00-14:00", epoch("2024-06-01T12:00:00-14:00")),
    ("dateTime", "2024-06-01T12:00:00+05:30", epoch("2024-06-01T12:00:00+05:30")),
    ("dateTime", "1900-03-01T00:00:00Z", epoch("1900-03-01T00:00:00+00:00")),
    ("dateTime", "0001-01-01T00:00:00Z", epoch("0001-01-01T00:00:00+00:00")),
    ("dateTime", "9999-12-31T23:59:59Z", epoch("9999-12-31T23:59:59+00:00")),
    ("dateTime", "1600-02-29T00:00:00Z", epoch("1600-02-29T00:00:00+00:00")),
    ("dateTime", "0000-01-01T00:00:00Z", epoch("0001-01-01T00:00:00+00:00") - 366 * 86400),
    ("dateTime", "-0001-01-01T00:00:00Z", epoch("0001-01-01T00:00:00+00:00") - 731 * 86400),
    ("dateTime", "10000-01-01T00:00:00Z", epoch("9999-12-31T00:00:00+00:00") + 86400),
    ("dateTime", "2023-12-31T24:00:00Z", epoch("2024-01-01T00:00:00+00:00")),
    ("dateTime", "2023-12-31T24:00:00.000Z", epoch("2024-01-01T00:00:00+00:00")),
    ("dateTime", " 1970-01-01T00:00:01Z\t", 1.0),
    ("dateTime", "2023-12-31T24:00:01Z", None),
    ("dateTime", "2023-12-31T24:00:00.5Z", None),
    ("dateTime", "2023-12-31T25:00:00Z", None),
    ("dateTime", "2023-02-29T00:00:00Z", None),  # not a leap year
    ("dateTime", "1900-02-29T00:00:00Z", None),  # nor is 1900
    ("dateTime", "2023-04-31T00:00:00Z", None),
    ("dateTime", "2023-13-01T00:00:00Z", None),
    ("dateTime", "2023-00-01T00:00:00Z", None),
    ("dateTime", "2023-01-00T00:00:00Z", None),
    ("dateTime", "2023-01-01T00:60:00Z", None),
    ("dateTime", "2023-01-01T00:00:60Z", None),  # XSD has no leap seconds
    ("dateTime", "2023-01-01T00:00:00+14:01", None),
    ("dateTime", "2023-01-01T00:00:00+15:00", None),
    ("dateTime", "2023-01-01T00:00:00+05:60", None),
    ("dateTime", "2023-01-01T00:00:00+0500", None),
    ("dateTime", "2023-01-01T00:00:00z", None),
    ("dateTime", "2023-01-01 00:00:00Z", None),
    ("dateTime", "2023-01-01T00:00Z", None),
    ("dateTime", "2023-01-01T00:00:00.Z", None),
    ("dateTime", "23-01-01T00:00:00Z", None),
    ("dateTime", "02023-01-01T00:00:00Z", None),  # leading zero only in 4-digit years
    ("dateTime", "2023-1-01T00:00:00Z", None),
    ("dateTime", "2023-01-01", None),
    # without a time zone: placed as if in UTC (SQL orders it against zoned values only
    # outside the 14-hour window where it may lie)
    ("dateTime", "2024-01-01T00:00:00", 1704067200.0),
    ("dateTime", "2024-01-01T00:00:00.5", 1704067200.5),
    ("dateTimeStamp", "1970-01-01T00:00:10Z", 10.0),
    ("dateTimeStamp", "1970-01-01T00:00:10.25-01:00", 3610.25),
    ("dateTimeStamp", "1970-01-01T00:00:10", None),
    # --- dates, times, years and year-months: their first instant
    ("date", "2024-01-01Z", 1704067200.0),
    ("date", "2024-01-01", 1704067200.0),
    ("date", "2024-01-01+14:00", 1704067200.0 - 14 * 3600),
    ("date", "2024-01-01+14:01", None),
    ("date", "2023-02-29", None),
    ("date", "2024-01-01T00:00:00Z", None),
    ("time", "12:00:00Z", 94651200.0),  # on XPath's reference date, 1972-12-31
    ("time", "12:00:00.5-01:00", 94651200.0 + 3600.5),
    ("time", "24:00:00", 94651200.0 - 12 * 3600),  # 24:00:00 is the day's 00:00:00
    ("time", "24:00:01", None),
    ("time", "12:00", None),
    ("gYear", "2024", 1704067200.0),
    ("gYear", "-0044Z", -63555753600.0),
    ("gYear", "24", None),
    ("gYearMonth", "2024-02", 1706745600.0),
    ("gYearMonth", "2024-13", None),
    # years too far for a double hold no comparable value (no OverflowError either)
    ("gYear", "1" + "0" * 400, None),
    ("date", "1" + "0" * 30 + "-01-01", None),
    ("dateTime", "1" + "0" * 30 + "-01-01T00:00:00", None),
    # --- datatypes without a comparable value, and no datatype at all
    ("string", "42", None),
    ("duration", "P1D", None),
    ("gMonth", "--01", None),
    ("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON", "42", None),
    ("http://example.org/dt", "42", None),
    (None, "42", None),
]


def _datatype(name: str | None) -> str | None:
    if name is None or "://" in name:
        return name
    return XSD + name


@pytest.mark.parametrize(("datatype", "value", "expected"), CASES)
def test_comparable_value(datatype, value, expected):
    got = comparable_value(value, _datatype(datatype))
    if expected is None:
        assert got is None
    else:
        assert isinstance(got, float)
        assert got == pytest.approx(expected, rel=1e-15, abs=1e-9)


def test_fractional_seconds_keep_microsecond_precision():
    got = comparable_value("2024-06-01T12:00:00.000001Z", XSD + "dateTime")
    base = comparable_value("2024-06-01T12:00:00Z", XSD + "dateTime")
    assert got is not None and base is not None
    assert got - base == pytest.approx(1e-6, abs=1e-7)


def test_dates_before_the_epoch_order_correctly():
    values = [
        "-0044-03-15T12:00:00Z",
        "0000-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "1969-12-31T23:59:59.5Z",
        "1970-01-01T00:00:00Z",
        "2000-01-01T00:00:00+14:00",
        "2000-01-01T00:00:00Z",
    ]
    nums = [comparable_value(v, XSD + "dateTime") for v in values]
    assert all(n is not None for n in nums)
    assert nums == sorted(nums)  # type: ignore[type-var]
    assert len(set(nums)) == len(nums)


def test_every_numeric_datatype_is_covered():
    names = {name for name, _value, _expected in CASES}
    numeric = {dt.removeprefix(XSD) for dt in XSD_NUMERIC_DATATYPES}
    assert numeric == {
        "integer",
        "decimal",
        "float",
        "double",
        "nonPositiveInteger",
        "negativeInteger",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
        "positiveInteger",
    }
    comparable = {dt.removeprefix(XSD) for dt in COMPARABLE_DATATYPES}
    assert comparable == numeric | {"boolean", "dateTime", "dateTimeStamp", "date", "time", "gYear", "gYearMonth"}
    assert comparable <= names
