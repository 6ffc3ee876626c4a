"""Numbers as the SPARQL compiler computes them: XPath's numeric types by promotion
rank, their lexical forms, and the Python side of the *packed* values of
:mod:`.arithmetic` (``"<rank>:<value>"``): the functions and aggregates SQLite runs per
row (SQLite has no exact decimal type), and the canonical forms both databases write.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, Decimal, InvalidOperation, localcontext
from typing import Final

from .values import NUMERIC_TYPES

__all__ = [
    "DAY_TIME_DURATION",
    "DIVISION_SCALE",
    "DURATION_ID",
    "RANK_TYPES",
    "RESULT_TYPES",
    "SQLITE_AGGREGATES",
    "SYNTHETIC_DATATYPES",
    "canonical_day_time_duration",
    "canonical_decimal",
    "canonical_double",
    "datatype_of",
    "rank_of",
    "sparql_arith",
    "sparql_lex",
    "sparql_num",
    "with_synthetic",
]

_XSD = "http://www.w3.org/2001/XMLSchema#"
#: The promoted types by rank: integer, decimal, float, double.
RANK_TYPES = (_XSD + "integer", _XSD + "decimal", _XSD + "float", _XSD + "double")
INTEGER, DECIMAL, FLOAT, DOUBLE = range(4)
#: Codes of the date/time operands of a subtraction (tags ``T``, ``D``, ``H``) and of
#: its result, an ``xsd:dayTimeDuration`` (tag ``U``, the seconds between them).
DATE_TIME, DATE, TIME, DURATION = 5, 6, 7, 9  # tagged T, D, H (t, d, h without a time zone), U
DAY_TIME_DURATION = "http://www.w3.org/2001/XMLSchema#dayTimeDuration"
#: The datatype of each result code.
RESULT_TYPES = {**dict(enumerate(("http://www.w3.org/2001/XMLSchema#integer",
                                  "http://www.w3.org/2001/XMLSchema#decimal",
                                  "http://www.w3.org/2001/XMLSchema#float",
                                  "http://www.w3.org/2001/XMLSchema#double"))), DURATION: DAY_TIME_DURATION}
TAGS = {DATE_TIME: "T", DATE: "D", TIME: "H", DURATION: "U"}
TEMPORAL_CODES = {"http://www.w3.org/2001/XMLSchema#dateTime": DATE_TIME,
                   "http://www.w3.org/2001/XMLSchema#dateTimeStamp": DATE_TIME,
                   "http://www.w3.org/2001/XMLSchema#date": DATE, "http://www.w3.org/2001/XMLSchema#time": TIME}
#: Ids standing for the XSD datatypes a store holds no literal of (stored ids are
#: positive): a computed value or a query's constant of such a type carries one of these
#: in its datatype column, and :func:`datatype_of` gives its IRI back when the row is
#: read. With them an expression choosing between values of several types (COALESCE,
#: IF) compiles whether or not the store has seen each type. In a fixed order, so that
#: a statement compiled for the same store is the same text.
SYNTHETIC_DATATYPES: Final[dict[str, int]] = {
    iri: -n for n, iri in enumerate((
        DAY_TIME_DURATION,
        *(_XSD + name for name in (
            "string", "boolean", "integer", "decimal", "float", "double", "date", "dateTime", "dateTimeStamp",
            "time", "gYear", "gYearMonth", "gMonth", "gMonthDay", "gDay", "duration", "yearMonthDuration",
            "long", "int", "short", "byte", "nonNegativeInteger", "positiveInteger", "nonPositiveInteger",
            "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
        )),
    ), start=1)
}
_SYNTHETIC_IRIS: Final = {i: iri for iri, i in SYNTHETIC_DATATYPES.items()}
#: The id standing for ``xsd:dayTimeDuration`` (a date subtraction's result).
DURATION_ID = SYNTHETIC_DATATYPES[DAY_TIME_DURATION]
#: Fractional digits kept by a decimal division.
DIVISION_SCALE = 18
_XSD_WHITESPACE = " \t\n\r"
_UNARY = ("neg", "pos", "abs", "ceil", "floor", "round", "to0", "to1", "to2", "to3")
_OPS = ("+", "-", "*", "/", *_UNARY)
# XSD lexical forms a string must have to be cast to a number.
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
_DECIMAL_TEXT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_DOUBLE_TEXT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee][+-]?[0-9]+)?|[+-]?INF|NaN")


def rank_of(datatype: str | None) -> int | None:
    """The promotion rank of a numeric datatype IRI (None for anything else)."""
    if datatype not in NUMERIC_TYPES:
        return None
    return RANK_TYPES.index(datatype) if datatype in RANK_TYPES else INTEGER  # derived integer types


# ----------------------------------------------------------------- canonical forms


def canonical_decimal(value: Decimal) -> str:
    """XSD 1.1's canonical decimal: no exponent, no trailing zeros, and no point for
    an integral value (``3``, ``3.5``, ``-0.5``; XSD 1.0 wrote ``3.0``): the form of a
    decimal division's quotient."""
    if value == 0:
        return "0"
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def canonical_double(value: float) -> str:
    """XSD 1.0's canonical double: one digit before the point, the shortest digits that
    give the value back, an exponent (``3.21E4``, ``4.0E-1``, ``0.0E0``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    if value == 0:
        return "-0.0E0" if math.copysign(1.0, value) < 0 else "0.0E0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    point = exponent + len(digits) - 1  # type: ignore[operator]
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{point}"


# ------------------------------------------------------- SQLite's Python functions


def canonical_day_time_duration(seconds: Decimal) -> str:
    """XSD 1.1's canonical ``xsd:dayTimeDuration`` of a number of seconds (``P1DT2H``,
    ``-PT0.5S``, ``PT0S``)."""
    sign = "-" if seconds < 0 else ""
    rest = abs(seconds)
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, rest = divmod(rest, 60)
    time = "".join(
        f"{int(n)}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n
    ) + (f"{canonical_decimal(rest)}S" if rest else "")
    if not days and not time:
        return "PT0S"
    return f"{sign}P{f'{int(days)}D' if days else ''}{'T' + time if time else ''}"


def datatype_of(datatype_id: int) -> str | None:
    """The datatype IRI a negative id stands for (:data:`SYNTHETIC_DATATYPES`)."""
    return _SYNTHETIC_IRIS.get(datatype_id)


def with_synthetic(stored: dict[str, int], used: Iterable[str]) -> dict[str, int]:
    """The store's datatype ids, and a negative id for each XSD datatype of ``used`` (the
    datatypes of a query's literals) it has none of. Only those: the compiler reads what
    a value may be from the ids, so every other type would make every query's SQL larger
    (and a store without durations would seem to hold some, and its date subtractions
    fall back); a type of the query's own literals must be told apart wherever the query
    uses it, stored values included."""
    extra = {iri: SYNTHETIC_DATATYPES[iri] for iri in used if iri in SYNTHETIC_DATATYPES and iri not in stored}
    return {**stored, **dict(sorted(extra.items()))} if extra else stored


def _unpack(packed: str) -> tuple[int, int | Decimal | float]:
    rank, text = int(packed[0]), packed[2:].strip(_XSD_WHITESPACE)
    if rank == INTEGER:
        return rank, int(text)
    if rank == DECIMAL:
        return rank, Decimal(text)
    return rank, float(text)


def _pack(rank: int, value: int | Decimal | float) -> str:
    if rank == DECIMAL:
        return f"1:{format(value, 'f')}"
    if rank >= FLOAT:
        return f"{rank}:{float(value)!r}"
    return f"0:{value}"


def _unary(op: str, rank: int, x: int | Decimal | float) -> str | None:
    if op == "neg":
        return _pack(rank, -x)
    if op == "pos":
        return _pack(rank, +x)
    if op == "abs":
        return _pack(rank, abs(x))
    if rank == INTEGER:
        return _pack(rank, x)
    if rank == DECIMAL:
        assert isinstance(x, Decimal)
        if op == "round":  # XPath: half way rounds towards positive infinity
            return _pack(rank, (x + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))
        return _pack(rank, x.to_integral_value(rounding=ROUND_CEILING if op == "ceil" else ROUND_FLOOR))
    x = float(x)
    if math.isinf(x) or math.isnan(x):
        return _pack(rank, x)
    y = x + 0.5 if op == "round" else x
    out = float(math.ceil(y) if op == "ceil" else math.floor(y))
    return _pack(rank, math.copysign(out, y) if out == 0 else out)  # ceil(-0.5) is -0.0, as IEEE (and PostgreSQL)


def _cast(target: int, packed: str) -> str | None:
    """XPath's casts to the numeric types, from a packed number, string (``S``) or
    boolean (``B``)."""
    tag, text = packed[0], packed[2:].strip(_XSD_WHITESPACE)
    value: int | Decimal | float
    if tag == "B":
        if text not in ("true", "false", "1", "0"):
            return None
        value = 1 if text in ("true", "1") else 0
    elif tag == "S":
        if target == INTEGER and _INTEGER_TEXT.fullmatch(text):
            value = int(text)
        elif target == DECIMAL and _DECIMAL_TEXT.fullmatch(text):
            value = Decimal(text)
        elif target >= FLOAT and _DOUBLE_TEXT.fullmatch(text):
            value = float(text)
        else:
            return None
    else:
        value = _unpack(packed)[1]
    if target >= FLOAT:
        return _pack(target, float(value) + 0.0 if not isinstance(value, float) else value)
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return None
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if target == INTEGER:
        return _pack(INTEGER, int(exact))
    return _pack(DECIMAL, exact)


def sparql_boolean(packed: str | None) -> str | None:
    """XPath's cast to ``xsd:boolean`` of a packed number, string (``S``) or boolean
    (``B``): ``true`` or ``false``, or NULL (an error) for any other text or value."""
    if packed is None:
        return None
    tag, text = packed[0], packed[2:].strip(_XSD_WHITESPACE)
    if tag in ("S", "B"):
        return {"true": "true", "1": "true", "false": "false", "0": "false"}.get(text)
    if tag not in ("0", "1", "2", "3"):
        return None
    try:
        value = _unpack(packed)[1]
    except (ValueError, InvalidOperation):
        return None
    return "false" if value == 0 or (isinstance(value, float) and math.isnan(value)) else "true"


def _double(op: str, x: float, y: float) -> float:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if y == 0:
        return math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def sparql_arith(op: str | None, a: str | None, b: str | None) -> str | None:
    """SQLite's arithmetic on packed values: ``a op b`` (``op`` one of ``+ - * /``), or
    a function of ``a`` (``neg``, ``pos``, ``abs``, ``ceil``, ``floor``, ``round``, and
    ``to0`` ... ``to3``, the casts to the ranks' types; ``b`` unused).  None for an error."""
    if op not in _OPS or a is None or (b is None and op not in _UNARY):
        return None
    try:
        if op.startswith("to"):
            return _cast(int(op[2]), a)
        if a[0] in "TDHUtdh" or (b is not None and b[0] in "TDHUtdh"):
            # The seconds between two dates, date-times or times, both with a time zone or
            # both without (a lower-case tag); anything else an error.
            if b is None or op != "-" or a[0] != b[0] or a[0] == "U":
                return None
            with localcontext() as ctx:
                ctx.prec = 200
                seconds = Decimal(a[2:].strip()) - Decimal(b[2:].strip())
                return f"U:{seconds.quantize(Decimal('0.000001'))}"
        ra, x = _unpack(a)
        if b is None:
            return _unary(op, ra, x)
        rb, y = _unpack(b)
        rank = max(ra, rb, DECIMAL if op == "/" else INTEGER)
        if rank >= FLOAT:
            # + 0.0: an integer or decimal zero has no sign once it is a double.
            fx = float(x) + 0.0 if ra <= DECIMAL else float(x)
            fy = float(y) + 0.0 if rb <= DECIMAL else float(y)
            return _pack(rank, _double(op, fx, fy))
        with localcontext() as ctx:
            ctx.prec = 200
            dx, dy = Decimal(x), Decimal(y)
            if op == "/":
                if dy == 0:
                    return None
                quotient = (dx / dy).quantize(Decimal(1).scaleb(-DIVISION_SCALE), rounding=ROUND_DOWN)
                return f"1:{canonical_decimal(quotient)}"
            out = dx + dy if op == "+" else dx - dy if op == "-" else dx * dy
        return _pack(rank, int(out) if rank == INTEGER else out)
    except (ValueError, InvalidOperation, IndexError):
        return None


class _Sum:
    """SQLite's SUM of packed numbers (a NULL, no number or unbound, is an error)."""

    average = False

    def __init__(self) -> None:
        self.bad = False
        self.rank = INTEGER
        self.n = 0
        self.exact = Decimal(0)
        self.double = 0.0

    def step(self, packed: str | None) -> None:
        if packed is None or packed[0] == "U":
            self.bad = True
            return
        rank, value = _unpack(packed)
        self.rank = max(self.rank, rank)
        self.n += 1
        if rank <= DECIMAL:
            with localcontext() as ctx:
                ctx.prec = 200
                self.exact += Decimal(value)
        self.double += float(value)

    def finalize(self) -> str | None:
        if self.bad:
            return None
        if self.n == 0:
            return "0:0"
        if not self.average:
            if self.rank >= FLOAT:
                return _pack(self.rank, self.double)
            return _pack(self.rank, int(self.exact) if self.rank == INTEGER else self.exact)
        if self.rank >= FLOAT:
            return _pack(self.rank, self.double / self.n)
        with localcontext() as ctx:
            ctx.prec = 200
            mean = (self.exact / self.n).quantize(Decimal(1).scaleb(-DIVISION_SCALE), rounding=ROUND_DOWN)
        return f"1:{canonical_decimal(mean)}"


class _Average(_Sum):
    """SQLite's AVG of packed numbers (a decimal for integers, as XPath divides)."""

    average = True


#: ``name: (arguments, class)``: the aggregates SQLite runs in Python.
SQLITE_AGGREGATES = {"sparql_sum": (1, _Sum), "sparql_avg": (1, _Average)}


def sparql_lex(packed: str | None) -> str | None:
    """The lexical form of a packed value (see the module's docstring)."""
    if packed is None:
        return None
    if packed[0] == "U":
        return canonical_day_time_duration(Decimal(packed[2:]))
    rank, value = _unpack(packed)
    if rank == INTEGER:
        return str(value)
    if rank == DECIMAL:
        text = format(value, "f")
        return text[1:] if value == 0 and text.startswith("-") else text  # no negative zero
    return canonical_double(value)  # type: ignore[arg-type]


def sparql_num(packed: str | None) -> float | None:
    """The comparable value of a packed value (:func:`~catalogue.graph.terms.comparable_value`'s rules)."""
    if packed is None or packed[0] == "U":  # durations have no comparable value here
        return None
    rank, value = _unpack(packed)
    try:
        number = float(value)
    except OverflowError:  # an integer beyond a double's range
        return None
    if math.isnan(number) or (rank <= DECIMAL and math.isinf(number)):
        return None
    return number
