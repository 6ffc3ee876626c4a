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
from .sql import ERROR, Unsupported, Val
from .values import IRI_KIND, LITERAL_KIND, STRING, as_sql, is_bound

#: ``("bool", sql)`` or ``("val", Val)``, as :mod:`.expressions` compiles them.
Compiled = tuple[str, Any]

__all__ = ["CASTS", "SQLITE_FUNCTIONS", "CastsMixin"]

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
        is computed in Python (:func:`catalogue.graph.terms.comparable_value`): on
        PostgreSQL that case stays with rdflib."""
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
            if d.is_pg:
                raise Unsupported("a cast of a string to xsd:dateTime (its value is computed in Python)")
            seconds = f"{self._python('sparql_date_time_seconds')}({v.lex})"
            cases.append((as_sql(string), d.xsd_trim(v.lex), seconds))
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


def _date_time_seconds(text: str | None) -> float | None:
    """A string's comparable value as an ``xsd:dateTime`` (None: not one), for SQLite."""
    return None if text is None else comparable_value(text, _DATE_TIME)


#: ``name: (arguments, function)``: what SQLite runs in Python for the casts.
SQLITE_FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {"sparql_date_time_seconds": (1, _date_time_seconds)}
