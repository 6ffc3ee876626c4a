"""Dictionary encoding of RDF terms.

Every RDF term is stored once in the ``terms`` table and referenced from ``quads`` by a
small sequential integer id (see :mod:`.schema`).  Small ids are what keeps the four
quad indexes compact: SQLite stores an integer in as few bytes as it needs, so the
first hundred terms (predicates and classes, which appear early) take one byte each.

To find a term's id without a value comparison on the (possibly huge) lexical form,
each row also carries a 64-bit *hash* of the term's content (:func:`term_hash`),
computed in Python and indexed uniquely.  The same term always gets the same hash, in
every process and on every database, so a writer can look a whole batch of terms up
by hash in one query.  The price is the (tiny) risk of a hash collision, which the
store detects by comparing the stored content (see :class:`TermCollisionError`).

The stored ``value`` is the exact lexical form.  Nothing is normalised, because the
catalogue must give back what the harvested metadata said: ``"1.0"^^xsd:double`` stays
``"1.0"``, ``"01"^^xsd:integer`` stays ``"01"``, and an ``rdf:JSON`` document keeps its
spacing and key order.  For comparisons in SQL (``FILTER(?n > 5)``) each literal of a
numeric, boolean or time-zoned date-time datatype also gets a *comparable value*
(:func:`comparable_value`), stored next to the lexical form.

Language tags are the one exception in what the *hash* covers: RDF (and rdflib's
``Literal.__eq__``) compares language tags case-insensitively, so the hash is computed
from the lower-cased tag.  ``"chat"@EN`` and ``"chat"@en`` are therefore the same term
and the tag is stored as it was first written.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

from rdflib.term import BNode, Literal, Node, URIRef

__all__ = [
    "BLANK",
    "COMPARABLE_DATATYPES",
    "FLOATING_WINDOW",
    "IRI",
    "LITERAL",
    "TEMPORAL_CLASSES",
    "XSD_NUMERIC_DATATYPES",
    "EncodedTerm",
    "TermCollisionError",
    "comparable_value",
    "content",
    "decode",
    "encode",
    "is_zoned",
    "same_content",
    "term_hash",
    "term_id",
]

IRI: Final = 1
BLANK: Final = 2
LITERAL: Final = 3

#: ``(hash, kind, value, datatype IRI, lang)``: a term as the store writes it.
EncodedTerm = tuple[int, int, str, str | None, str | None]

# Values longer than this are decoded without the cache: caching them would pin
# megabytes of text in memory for terms that are rarely read twice in a row.
_CACHE_MAX_VALUE_LENGTH: Final = 2048


class TermCollisionError(RuntimeError):
    """Two different terms hashed to the same 64-bit value.

    This is very unlikely (about 3 in a million for ten million distinct terms),
    but silently merging two terms would corrupt data, so the store checks and refuses.
    """

    def __init__(self, term_hash: int, stored: tuple, new: tuple) -> None:
        super().__init__(
            f"term hash collision for hash {term_hash}: stored term {stored!r} and new "
            f"term {new!r} hash to the same 64-bit value; the data cannot be stored with "
            "this hash scheme"
        )
        self.term_hash = term_hash
        self.stored = stored
        self.new = new

    @property
    def term_id(self) -> int:
        """The colliding hash (the name it had when hashes were the term ids)."""
        return self.term_hash


def same_content(a: tuple, b: tuple) -> bool:
    """Whether two ``(kind, value, datatype IRI, lang)`` contents are one term as the
    hash sees it (language tags compare case-insensitively): how the store, the
    N-Triples reader and the bulk writer tell a hash collision from the same term."""
    return a[:3] == b[:3] and (a[3] or "").lower() == (b[3] or "").lower()


def term_hash(kind: int, value: str, datatype: str | None, lang: str | None) -> int:
    """Return the signed 64-bit content hash of a term from its parts.

    The hashed text is ``kind|len:datatype|len:lang|value``, with ``-1`` standing for
    a missing datatype or tag.  The length prefixes make the encoding unambiguous
    whatever characters the parts contain, and keep "no datatype" distinct from an
    empty datatype IRI.  ``surrogatepass`` lets lone surrogates (which can come out of
    JSON) be hashed instead of crashing the encoder.

    Schema revision 0001 used this value as the term id itself, and revision 0002
    keeps it in ``terms.hash``, so it must never change.
    """
    dt_part = "-1" if datatype is None else f"{len(datatype)}:{datatype}"
    if lang is None:
        lang_part = "-1"
    else:
        lang = lang.lower()
        lang_part = f"{len(lang)}:{lang}"
    text = f"{kind}|{dt_part}|{lang_part}|{value}"
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


#: Former name of :func:`term_hash`, from when the hash was the term id.
term_id = term_hash


def content(term: Node) -> tuple[int, str, str | None, str | None]:
    """An rdflib term as the store writes it: ``(kind, value, datatype IRI, lang)``.

    Raises :class:`TypeError` for anything that is not an IRI, blank node or literal
    (variables, quoted graphs, paths), which cannot be stored.
    """
    # URIRef first: it is by far the most common term type.
    if isinstance(term, URIRef):
        return IRI, str(term), None, None
    if isinstance(term, Literal):
        dt = term.datatype
        return LITERAL, str(term), None if dt is None else str(dt), term.language
    if isinstance(term, BNode):
        return BLANK, str(term), None, None
    raise TypeError(f"cannot store {type(term).__name__} {term!r} as an RDF term")


_blake2b: Final = hashlib.blake2b
# The kinds :func:`encode` hashes the short way, looked up by exact type: a subclass (such
# as rdflib's RDFLibGenid, an IRI) goes through content()'s isinstance checks instead, to
# the same hash.
_PLAIN_KINDS: Final[dict[type, int]] = {URIRef: IRI, BNode: BLANK}


def encode(term: Node) -> EncodedTerm:
    """Encode an rdflib term as ``(hash, kind, value, datatype, lang)`` (:func:`content`
    and its :func:`term_hash`); :class:`TypeError` for what cannot be stored.

    IRIs and blank nodes, most of the terms a harvest writes (a 1,000-array one: 15,000
    blank nodes of 20,000 new terms), take a shorter way to the same hash."""
    kind = _PLAIN_KINDS.get(type(term))
    if kind is not None:
        value = str(term)
        text = f"{kind}|-1|-1|{value}"
        digest = _blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True), kind, value, None, None
    kind, value, datatype, lang = content(term)
    return term_hash(kind, value, datatype, lang), kind, value, datatype, lang



def decode(kind: int, value: str, datatype: str | None, lang: str | None) -> Node:
    """Rebuild the rdflib term from its parts (``datatype`` is the IRI).

    Literals are built with ``normalize=False`` so the lexical form comes back exactly
    as it was stored; a literal with neither datatype nor language stays a plain
    literal (rdflib distinguishes it from ``xsd:string``).
    """
    if len(value) > _CACHE_MAX_VALUE_LENGTH:
        return _decode(kind, value, datatype, lang)
    return _decode_cached(kind, value, datatype, lang)


def _decode(kind: int, value: str, datatype: str | None, lang: str | None) -> Node:
    if kind == IRI:
        return URIRef(value)
    if kind == LITERAL:
        return Literal(
            value,
            datatype=None if datatype is None else URIRef(datatype),
            lang=lang,
            normalize=False,
        )
    if kind == BLANK:
        return BNode(value)
    raise ValueError(f"unknown term kind {kind!r}")


# Terms are immutable and rdflib treats equal terms as interchangeable, so sharing one
# instance between results is safe and saves re-parsing literal values.
_decode_cached = lru_cache(maxsize=65536)(_decode)


# ------------------------------------------------------------- comparable values
#
# The comparable value ("num") lets SQL compare literals by value: numbers as numbers,
# booleans as 0/1, dates and times as seconds since the Unix epoch.  It is only
# computed for lexical forms that are valid for their datatype (XSD 1.1 lexical spaces,
# after the whitespace collapse XSD prescribes for these types); anything else gets
# ``None``, so an ill-typed literal such as ``"ten"^^xsd:integer`` never compares equal
# to a number.  Only the ASCII digits of the XSD grammar are accepted (``re.ASCII``
# keeps ``[0-9]`` from meaning more), and only XSD whitespace (space, tab, CR, LF) is
# stripped.

_XSD: Final = "http://www.w3.org/2001/XMLSchema#"
_XSD_WHITESPACE: Final = " \t\r\n"

_INTEGER_RE: Final = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL_RE: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", re.ASCII)
_FLOAT_RE: Final = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN", re.ASCII
)
_YEAR: Final = r"(?P<year>-?(?:[1-9][0-9]{3,}|0[0-9]{3}))"
_CLOCK: Final = r"(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?P<fraction>\.[0-9]+)?"
_TZ: Final = r"(?P<tz>Z|[+-][0-9]{2}:[0-9]{2})?"
_DATETIME_RE: Final = re.compile(_YEAR + r"-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})T" + _CLOCK + _TZ, re.ASCII)
_DATE_RE: Final = re.compile(_YEAR + r"-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})" + _TZ, re.ASCII)
_TIME_RE: Final = re.compile(_CLOCK + _TZ, re.ASCII)
_G_YEAR_RE: Final = re.compile(_YEAR + _TZ, re.ASCII)
_G_YEAR_MONTH_RE: Final = re.compile(_YEAR + r"-(?P<month>[0-9]{2})" + _TZ, re.ASCII)

# (minimum, maximum) of XSD's built-in integer types; None where unbounded.
_INTEGER_BOUNDS: Final[dict[str, tuple[int | None, int | None]]] = {
    "integer": (None, None),
    "nonPositiveInteger": (None, 0),
    "negativeInteger": (None, -1),
    "long": (-(2**63), 2**63 - 1),
    "int": (-(2**31), 2**31 - 1),
    "short": (-(2**15), 2**15 - 1),
    "byte": (-(2**7), 2**7 - 1),
    "nonNegativeInteger": (0, None),
    "unsignedLong": (0, 2**64 - 1),
    "unsignedInt": (0, 2**32 - 1),
    "unsignedShort": (0, 2**16 - 1),
    "unsignedByte": (0, 2**8 - 1),
    "positiveInteger": (1, None),
}

#: Every XSD datatype whose literals get a numeric comparable value.
XSD_NUMERIC_DATATYPES: Final = frozenset(
    [_XSD + name for name in _INTEGER_BOUNDS] + [_XSD + "decimal", _XSD + "float", _XSD + "double"]
)


def _finite(value: float) -> float | None:
    # A valid integer or decimal too large for a double has no faithful float; leaving
    # it out is better than pretending it equals every other huge number (inf).
    return value if math.isfinite(value) else None


def _integer_parser(low: int | None, high: int | None) -> Callable[[str], float | None]:
    def parse(text: str) -> float | None:
        if _INTEGER_RE.fullmatch(text) is None:
            return None
        if low is not None or high is not None:
            # int() of a huge digit string is slow (and limited since Python 3.11);
            # with the leading zeros gone the length alone decides for long strings.
            digits = text.lstrip("+-").lstrip("0")
            if len(digits) > 40:
                negative = text.startswith("-")
                if (negative and low is not None) or (not negative and high is not None):
                    return None
                return _finite(float(text))
            number = int(text)
            if (low is not None and number < low) or (high is not None and number > high):
                return None
        return _finite(float(text))

    return parse


def _decimal(text: str) -> float | None:
    if _DECIMAL_RE.fullmatch(text) is None:
        return None
    return _finite(float(text))


def _float(text: str) -> float | None:
    # XSD float and double map too-large values to ±INF, which float() does too.  An
    # xsd:float is compared in double precision, as rdflib does, not rounded to 32 bits.
    if _FLOAT_RE.fullmatch(text) is None or text == "NaN":
        return None
    return float(text)


def _boolean(text: str) -> float | None:
    if text in ("true", "1"):
        return 1.0
    if text in ("false", "0"):
        return 0.0
    return None


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date, for any year.

    XSD 1.1 numbers years astronomically (year 0 is 1 BCE), which is what this
    arithmetic (Howard Hinnant's ``days_from_civil``) uses; :mod:`datetime` only
    covers years 1 to 9999.
    """
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


#: Seconds beyond which a date/time has no comparable value (about 285 million years:
#: whole seconds still exact in a double).
_MAX_SECONDS: Final = 2**53


def _offset(tz: str | None) -> int | None:
    """Seconds east of UTC of a time zone (``Z``, ``+hh:mm``, ``-hh:mm``); 0 for none
    (a value without a time zone is placed as if in UTC: see :data:`FLOATING_WINDOW`);
    ``None`` when out of XSD's range (-14:00 to +14:00)."""
    if tz is None or tz == "Z":
        return 0
    hours, minutes = int(tz[1:3]), int(tz[4:6])
    if minutes > 59 or hours > 14 or (hours == 14 and minutes):
        return None
    return (hours * 60 + minutes) * 60 * (-1 if tz[0] == "-" else 1)


def _instant(match: re.Match[str], *, month: int = 1, day: int = 1, clock: bool = False) -> float | None:
    """Seconds since 1970-01-01T00:00:00Z of the first instant of a matched date/time
    value (absent fields at their start: January, the 1st, midnight), or ``None`` when a
    field is out of range. ``clock``: the match has hour, minute, second and fraction."""
    fields = match.groupdict()
    year = int(fields["year"]) if fields.get("year") else 1972
    month = int(fields["month"]) if fields.get("month") else month
    day = int(fields["day"]) if fields.get("day") else day
    offset = _offset(fields["tz"])
    if offset is None or not 1 <= month <= 12:
        return None
    days_in_month = 29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1]
    if not 1 <= day <= days_in_month:
        return None
    seconds = _days_from_civil(year, month, day) * 86400 - offset
    if abs(seconds) > _MAX_SECONDS:
        return None  # a year too far for a double: no faithful value, as for huge integers
    if not clock:
        return float(seconds)
    hour, minute, second = int(fields["hour"]), int(fields["minute"]), int(fields["second"])
    fraction = fields["fraction"]
    if minute > 59 or second > 59:
        return None
    if hour == 24:
        # 24:00:00 is the first instant of the next day; the arithmetic gets there by itself.
        if minute or second or (fraction and fraction.strip(".0")):
            return None
    elif hour > 23:
        return None
    seconds += hour * 3600 + minute * 60 + second
    return float(seconds) + float("0" + fraction) if fraction else float(seconds)


def _date_time(text: str) -> float | None:
    """Seconds since 1970-01-01T00:00:00Z (a value without a time zone as if in UTC)."""
    match = _DATETIME_RE.fullmatch(text)
    return None if match is None else _instant(match, clock=True)


def _date_time_stamp(text: str) -> float | None:
    """As :func:`_date_time`; the time zone is required."""
    match = _DATETIME_RE.fullmatch(text)
    return None if match is None or match["tz"] is None else _instant(match, clock=True)


def _date(text: str) -> float | None:
    """The date's first instant (midnight in its time zone)."""
    match = _DATE_RE.fullmatch(text)
    return None if match is None else _instant(match)


def _time(text: str) -> float | None:
    """The time on XPath's reference date, 1972-12-31 (``24:00:00`` is ``00:00:00``)."""
    match = _TIME_RE.fullmatch(text)
    if match is None:
        return None
    seconds = _instant(match, month=12, day=31, clock=True)
    if seconds is not None and match["hour"] == "24":
        seconds -= 86400  # a time's 24:00:00 is its day's 00:00:00, not the next day's
    return seconds


def _g_year(text: str) -> float | None:
    match = _G_YEAR_RE.fullmatch(text)
    return None if match is None else _instant(match)


def _g_year_month(text: str) -> float | None:
    match = _G_YEAR_MONTH_RE.fullmatch(text)
    return None if match is None else _instant(match)


_PARSERS: Final[dict[str, Callable[[str], float | None]]] = {
    **{_XSD + name: _integer_parser(*bounds) for name, bounds in _INTEGER_BOUNDS.items()},
    _XSD + "decimal": _decimal,
    _XSD + "float": _float,
    _XSD + "double": _float,
    _XSD + "boolean": _boolean,
    _XSD + "dateTime": _date_time,
    _XSD + "dateTimeStamp": _date_time_stamp,
    _XSD + "date": _date,
    _XSD + "time": _time,
    _XSD + "gYear": _g_year,
    _XSD + "gYearMonth": _g_year_month,
}

#: The date/time datatypes with a comparable value, by the value class SPARQL compares
#: them in: values of one class compare with each other only (a date is not less than a
#: date-time, it is incomparable to it).
TEMPORAL_CLASSES: Final = {
    _XSD + "dateTime": "dateTime", _XSD + "dateTimeStamp": "dateTime", _XSD + "date": "date",
    _XSD + "time": "time", _XSD + "gYear": "gYear", _XSD + "gYearMonth": "gYearMonth",
}

#: Seconds either side of its comparable value where a date/time value *without* a time
#: zone may lie (XSD 1.1 allows zones from -14:00 to +14:00). Two values without one, or
#: two with one, are ordered by their comparable values; one of each only when they are
#: further apart than this, and incomparable otherwise (XSD 1.1 Part 2, D.2.1: a SPARQL
#: comparison of them is then an error).
FLOATING_WINDOW: Final = 14 * 3600


def is_zoned(text: str) -> bool:
    """Whether a date/time lexical form carries a time zone (``Z``, ``±hh:mm``)."""
    text = text.rstrip(_XSD_WHITESPACE)
    return text.endswith("Z") or (len(text) > 6 and text[-3] == ":" and text[-6] in "+-")

#: Datatypes for which :func:`comparable_value` can return a value.
COMPARABLE_DATATYPES: Final = frozenset(_PARSERS)


def comparable_value(value: str, datatype: str | None) -> float | None:
    """The value SQL compares a literal by, or ``None`` if it has none.

    * XSD numeric types (``integer``, ``decimal``, ``float``, ``double`` and the
      built-in derived integer types): the number, if the lexical form is valid for
      the type (including its range: ``"300"^^xsd:byte`` has none).  ``INF``,
      ``+INF`` and ``-INF`` are infinities; ``NaN`` has none, because it is not
      equal to or ordered against anything.
    * ``xsd:boolean``: 1.0 for ``true``/``1``, 0.0 for ``false``/``0``.
    * ``xsd:dateTime``, ``xsd:dateTimeStamp`` (whose time zone is required),
      ``xsd:date``, ``xsd:time``, ``xsd:gYear`` and ``xsd:gYearMonth``: seconds since
      1970-01-01T00:00:00Z of the value's first instant (a date at midnight, a year on
      1 January, a time on XPath's reference date 1972-12-31; fractions, years before
      1970 or 1 CE and ``24:00:00`` included). A value without a time zone is placed as
      if in UTC; SQL orders it against zoned ones only outside :data:`FLOATING_WINDOW`.
    * Any other datatype, or no datatype: none.

    Leading and trailing XSD whitespace is ignored, as the ``collapse`` whitespace
    facet of these types says; the stored lexical form itself is never changed.
    """
    if datatype is None:
        return None
    parse = _PARSERS.get(datatype)
    if parse is None:
        return None
    return parse(value.strip(_XSD_WHITESPACE))
