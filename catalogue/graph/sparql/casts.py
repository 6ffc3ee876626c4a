"""SPARQL's casts (XSD constructor functions) as SQL: to the numeric types (through
:mod:`.arithmetic`), ``xsd:string``, ``xsd:boolean`` and ``xsd:dateTime``, by XPath's
casting rules.  Part of :class:`~.expressions.ExprCompiler` (a mixin, beside
:class:`~.functions.FunctionsMixin`, whose helpers it uses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rdflib.plugins.sparql.parserutils import CompValue

from ..terms import comparable_value
from .arithmetic import RANK_TYPES, Arithmetic
from .sql import ERROR, Val
from .values import IRI_KIND, LITERAL_KIND, STRING, as_sql, is_bound

#: ``("bool", sql)`` or ``("val", Val)``, as :mod:`.expressions` compiles them.
Compiled = tuple[str, Any]

__all__ = ["CASTS", "SQLITE_FUNCTIONS", "CastsMixin", "pg_date_time_seconds"]

_XSD = "http://www.w3.org/2001/XMLSchema#"
_DATE_TIME, _DATE, _DATE_TIME_STAMP = _XSD + "dateTime", _XSD + "date", _XSD + "dateTimeStamp"
_BOOLEAN = _XSD + "boolean"
_NUMERIC = {RANK_TYPES[0]: 0, RANK_TYPES[1]: 1, RANK_TYPES[2]: 2, RANK_TYPES[3]: 3}
#: The casts compiled here.
CASTS = frozenset([*_NUMERIC, STRING, _BOOLEAN, _DATE_TIME])


class CastsMixin:
    """The casts of this module, for :class:`~.expressions.ExprCompiler`."""

    if TYPE_CHECKING:
        c: Any
        ops: Any

        def value(self, expr: Any) -> Val: ...
        def _typed(self, ok: str, lex: str, num: str, datatype: str) -> Compiled: ...
        def _python(self, name: str) -> str: ...

    def cast(self, e: CompValue) -> Compiled:
        """``xsd:integer(x)`` and the other numeric casts, ``xsd:string(x)``,
        ``xsd:boolean(x)`` and ``xsd:dateTime(x)``."""
        target = str(e.iri)
        if len(e.expr or []) != 1:
            return ("val", ERROR)
        v = self.value(e.expr[0])
        if target == STRING:
            # Of an IRI or a literal (its lexical form; a number's as written), not of a blank node.
            ok = f"{v.kind} IN ({IRI_KIND}, {LITERAL_KIND})"
            return self._typed(ok, v.lex, "NULL", STRING)
        if target == _BOOLEAN:
            text = Arithmetic(self.c).boolean(v)
            if text is None:
                return ("val", ERROR)
            return self._typed(f"{text} IS NOT NULL", text, f"(CASE WHEN {text} = 'true' THEN 1 ELSE 0 END)", _BOOLEAN)
        if target == _DATE_TIME:
            return self._cast_date_time(v)
        return ("val", Arithmetic(self.c).cast(_NUMERIC[target], v))

    def _cast_date_time(self, v: Val) -> Compiled:
        """``xsd:dateTime(x)``: of a date-time, itself; of a date, its midnight (in its
        time zone, if it has one); of a string in the lexical space (whitespace around it
        allowed), that date-time; anything else is an error.  A string's comparable value
        is :func:`catalogue.graph.terms.comparable_value`'s: computed in Python on SQLite,
        by :func:`pg_date_time_seconds` on PostgreSQL."""
        if v.kind == "NULL":
            return ("val", ERROR)
        d, ids = self.c.dialect, self.c.datatype_ids
        string = self.ops.in_class(v, "string")
        cases: list[tuple[str, str, str]] = []  # (condition, lexical form, comparable value)
        if v.static_dt_known:
            if v.skind != LITERAL_KIND:
                return ("val", ERROR)
            there = as_sql(is_bound(v))
            if v.sdt in (_DATE_TIME, _DATE_TIME_STAMP):
                cases.append((there, v.lex, v.num))
            elif v.sdt == _DATE:
                cases.append((there, self._midnight(v.lex), v.num))
        else:
            date_times = [str(ids[t]) for t in (_DATE_TIME, _DATE_TIME_STAMP) if t in ids]
            if date_times:
                cases.append((f"{v.dt} IN ({', '.join(date_times)})", v.lex, v.num))
            if _DATE in ids:
                cases.append((f"{v.dt} = {ids[_DATE]}", self._midnight(v.lex), v.num))
        if string is not False:
            trimmed = d.xsd_trim(v.lex)
            seconds = (pg_date_time_seconds(trimmed) if d.is_pg
                       else f"{self._python('sparql_date_time_seconds')}({v.lex})")
            cases.append((as_sql(string), trimmed, seconds))
        if not cases:
            return ("val", ERROR)

        def pick(i: int) -> str:
            return "(CASE " + " ".join(f"WHEN {c[0]} THEN {c[i]}" for c in cases) + " END)"

        num = pick(2)
        return self._typed(f"{num} IS NOT NULL", pick(1), num, _DATE_TIME)

    def _midnight(self, lex: str) -> str:
        """A date's lexical form ``[-]YYYY-MM-DD[zone]`` as the date-time of its midnight."""
        d = self.c.dialect
        s = d.xsd_trim(lex)
        zone_len = d.zone_length(s)
        return (f"(substr({s}, 1, length({s}) - {zone_len}) || 'T00:00:00' || "
                f"substr({s}, length({s}) - {zone_len} + 1))")


#: ``xsd:dateTime``'s lexical form, as :data:`catalogue.graph.terms._DATETIME_RE` (groups:
#: year, month, day, hour, minute, second, fraction, time zone). PostgreSQL's ``$`` ends
#: the string only, as Python's ``fullmatch``.
_PG_DATE_TIME = ("'^(-?(?:[1-9][0-9]{3,}|0[0-9]{3}))-([0-9]{2})-([0-9]{2})T"
                 "([0-9]{2}):([0-9]{2}):([0-9]{2})(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?$'")


_BOUND = 2**53  # terms._MAX_SECONDS
#: The fraction as Python's ``float`` reads it. PostgreSQL refuses a decimal that rounds to
#: zero (``out of range``), where Python gives 0.0: below half the least subnormal double
#: (2^-1075; 2.470328229206232720882e-324, more digits than can matter), it is 0.
_PG_FRACTION = ("CASE WHEN m[7] IS NULL THEN 0 WHEN m[7] !~ '^\\.(0{100}){3}' THEN ('0' || m[7])::double precision "
                "WHEN ('0' || m[7])::numeric <= 2.470328229206232720882e-324 THEN 0 "
                "ELSE ('0' || m[7])::double precision END")


def pg_date_time_seconds(text: str) -> str:
    """PostgreSQL SQL for :func:`catalogue.graph.terms.comparable_value` of the string
    ``text`` (SQL, already trimmed) as an ``xsd:dateTime``: seconds since 1970 as a
    ``double precision``, or NULL where Python gives None. The same steps as Python's
    (``_instant``): fields by the same pattern, a valid month, day (leap years as the
    proleptic Gregorian calendar has them), time zone (up to 14:00) and clock (``24:00:00``
    the next midnight), days from 1970 by the same ``days_from_civil`` arithmetic in
    ``numeric`` (any year, no overflow), the 2^53-second bound, then the fraction added
    as a double, as Python adds it. Without it a query casting strings to date-times
    left PostgreSQL for rdflib (W3C ``cast-dT``)."""
    # Each step in a subquery of its own, so that a field is parsed once and the SQL stays
    # small (an expression is sent whole wherever the cast's value is used). Every step is
    # defined for every match (no cast of an empty string, no double out of range):
    # PostgreSQL may evaluate a branch it will not take when the text is a constant.
    fields = ("SELECT m, m[1]::numeric AS y, m[2]::integer AS mo, m[3]::integer AS d, m[4]::integer AS h, "
              f"m[5]::integer AS mi, m[6]::integer AS s, {_PG_FRACTION} AS f, "
              "coalesce(m[7], '.') ~ '^\\.0*$' AS whole, substr(coalesce(nullif(m[8], 'Z'), '+00:00'), 2, 2)::integer AS zh, "
              "substr(coalesce(nullif(m[8], 'Z'), '+00:00'), 5, 2)::integer AS zm, "
              "CASE WHEN left(m[8], 1) = '-' THEN -1 ELSE 1 END AS zs "
              f"FROM (SELECT regexp_match({text}, {_PG_DATE_TIME}) AS m) AS matched")
    shifted = ("SELECT *, y - CASE WHEN mo <= 2 THEN 1 ELSE 0 END AS ys, "
               "(mod(y, 4) = 0 AND (mod(y, 100) <> 0 OR mod(y, 400) = 0)) AS leap, "
               f"div(153 * (mo + CASE WHEN mo > 2 THEN -3 ELSE 9 END) + 2, 5) + d - 1 AS doy FROM ({fields}) AS f1")
    era = f"SELECT *, floor(ys / 400) AS era, ys - floor(ys / 400) * 400 AS yoe FROM ({shifted}) AS f2"
    midnight = (f"SELECT *, (era * 146097 + yoe * 365 + div(yoe, 4) - div(yoe, 100) + doy - 719468) * 86400 "
                f"- (zh * 60 + zm) * 60 * zs AS midnight FROM ({era}) AS f3")
    checks = ("m IS NOT NULL AND zm <= 59 AND (zh < 14 OR (zh = 14 AND zm = 0)) AND mo BETWEEN 1 AND 12 "
              "AND d BETWEEN 1 AND CASE WHEN mo = 2 THEN CASE WHEN leap THEN 29 ELSE 28 END "
              "WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END "
              f"AND abs(midnight) <= {_BOUND} AND mi <= 59 AND s <= 59 "
              "AND (h <= 23 OR (h = 24 AND mi = 0 AND s = 0 AND whole))")
    value = f"(least(greatest(midnight, -{_BOUND}), {_BOUND}) + h * 3600 + mi * 60 + s)::double precision + f"
    return f"(SELECT CASE WHEN {checks} THEN {value} END FROM ({midnight}) AS date_time)"


def _date_time_seconds(text: str | None) -> float | None:
    """A string's comparable value as an ``xsd:dateTime`` (None: not one), for SQLite."""
    return None if text is None else comparable_value(text, _DATE_TIME)


#: ``name: (arguments, function)``: what SQLite runs in Python for the casts.
SQLITE_FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {"sparql_date_time_seconds": (1, _date_time_seconds)}
