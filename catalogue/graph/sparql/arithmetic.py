"""SPARQL arithmetic (``+ - * /``, unary ``-`` and ``+``) as SQL, with XPath's types.

SPARQL maps its arithmetic operators to XPath's ``op:numeric-*`` functions (SPARQL 1.1,
section 17.3): operands are promoted along ``integer < decimal < float < double``
(every derived integer type counts as ``xsd:integer``), the result has the promoted
type, and dividing two integers gives a decimal.  Anything else is a type error, which
the compiler writes as ``NULL`` (:mod:`.values`).  Date and duration arithmetic (an
extension rdflib and Oxigraph both make) is left to rdflib where both operands can be
dates or durations, and is an error where one is a number.

**Exact where the type is.**  Integers and decimals are computed exactly: PostgreSQL in
``NUMERIC``; SQLite, which has no exact decimal type, through :func:`sparql_arith`, a
Python function registered on the connection (run per row inside the statement, never
rdflib's evaluator).  A decimal division keeps 18 fractional digits, truncated, as
Oxigraph does.  Floats and doubles are IEEE doubles (an ``xsd:float`` result is not
rounded to 32 bits, as in rdflib); overflow gives ±INF and division by zero ±INF or NaN,
which PostgreSQL's own operators would raise as errors (:func:`_pg_double`).

**One value, written once.**  Every operand and result travels as one *packed* text,
``"<rank>:<value>"`` (rank 0-3 for integer, decimal, float, double; the value as exact
digits, or as the shortest text of a double), or NULL for an error.  A result's SQL
names its operands' packed texts once, in a scalar subquery, so nested arithmetic grows
linearly in SQL; the term's parts (kind, lexical form, datatype, comparable value) are
each read off the packed text.

**Lexical forms.**  Integers are canonical (``"3"``).  A decimal keeps the scale exact
arithmetic gives it, as Python's ``Decimal`` (so rdflib) and PostgreSQL's ``NUMERIC``
both do: ``1.0 + 2`` is ``"3.0"``, ``1.50 * 2`` is ``"3.00"``, ``CEIL(2.5)`` is ``"3"``
(the W3C tests expect exactly these); a division's quotient has no trailing zeros
(XSD 1.1's canonical form, :func:`canonical_decimal`).  Doubles are canonical
(``"3.5E0"``, ``INF``, ``-INF``, ``NaN``).  A ``NaN`` has no comparable value, so comparing it is an error here, as for
a stored ``NaN`` (:func:`catalogue.graph.terms.comparable_value`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, Decimal, InvalidOperation, localcontext
from typing import Protocol

from ..terms import TEMPORAL_CLASSES
from .sql import Dialect, Unsupported, Val
from .values import LITERAL_KIND, NUMERIC_TYPES

__all__ = [
    "SQLITE_AGGREGATES",
    "Arithmetic",
    "canonical_decimal",
    "canonical_double",
    "sparql_arith",
    "sparql_lex",
    "sparql_num",
]

_XSD = "http://www.w3.org/2001/XMLSchema#"
#: The promoted types by rank: integer, decimal, float, double.
RANK_TYPES = (_XSD + "integer", _XSD + "decimal", _XSD + "float", _XSD + "double")
INTEGER, DECIMAL, FLOAT, DOUBLE = range(4)
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
        return _pack(target, float(value))
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return None
    if target == INTEGER:
        return _pack(INTEGER, int(value))
    return _pack(DECIMAL, Decimal(repr(value)) if isinstance(value, float) else Decimal(value))


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
        ra, x = _unpack(a)
        if b is None:
            return _unary(op, ra, x)
        rb, y = _unpack(b)
        rank = max(ra, rb, DECIMAL if op == "/" else INTEGER)
        if rank >= FLOAT:
            return _pack(rank, _double(op, float(x), float(y)))
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
        if packed is None:
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
    rank, value = _unpack(packed)
    if rank == INTEGER:
        return str(value)
    if rank == DECIMAL:
        text = format(value, "f")
        return text[1:] if value == 0 and text.startswith("-") else text  # no negative zero
    return canonical_double(value)  # type: ignore[arg-type]


def sparql_num(packed: str | None) -> float | None:
    """The comparable value of a packed value (:func:`~catalogue.graph.terms.comparable_value`'s rules)."""
    if packed is None:
        return None
    rank, value = _unpack(packed)
    try:
        number = float(value)
    except OverflowError:  # an integer beyond a double's range
        return None
    if math.isnan(number) or (rank <= DECIMAL and math.isinf(number)):
        return None
    return number


# --------------------------------------------------------------------------- compiler


class ArithmeticContext(Protocol):
    """What arithmetic needs of the statement being compiled."""

    dialect: Dialect
    datatype_ids: Mapping[str, int]

    def need_function(self, name: str) -> None: ...


class Arithmetic:
    """Builds the :class:`~.sql.Val` of an arithmetic expression from its operands'."""

    def __init__(self, compiler: ArithmeticContext) -> None:
        self.c = compiler
        self.pg = compiler.dialect.is_pg
        self.dt_ids = dict(compiler.datatype_ids)
        # The ranks a stored literal can have: those of the numeric datatypes present.
        self.rank_of_id = {i: r for iri, i in self.dt_ids.items() if (r := rank_of(iri)) is not None}
        # Whether a stored value may be a date, time or duration (see :meth:`binary`).
        self.stored_temporal = any(iri in TEMPORAL_CLASSES or "uration" in iri for iri in self.dt_ids)

    # ------------------------------------------------------------------ operands

    def packed(self, v: Val) -> tuple[str, frozenset[int]]:
        """``v`` as a packed value (NULL unless a valid number) and the ranks it can have."""
        if v.packed is not None:
            return v.packed, v.ranks
        if v.kind == "NULL":  # unbound
            return "NULL", frozenset()
        if v.static_dt_known:
            r = rank_of(v.sdt) if v.skind == LITERAL_KIND else None
            if r is None or v.num == "NULL":
                return "NULL", frozenset()
            return f"('{r}:' || {v.lex})", frozenset([r])
        if not self.rank_of_id:
            return "NULL", frozenset()
        whens = " ".join(f"WHEN {i} THEN '{r}:'" for i, r in sorted(self.rank_of_id.items()))
        packed = f"(CASE WHEN {v.num} IS NOT NULL THEN (CASE {v.dt} {whens} END) || {v.lex} END)"
        return packed, frozenset(self.rank_of_id.values())

    def _may_be_temporal(self, v: Val) -> bool:
        if v.packed is not None:
            return False
        if v.static_dt_known:
            return v.skind == LITERAL_KIND and (v.sdt in TEMPORAL_CLASSES or "uration" in (v.sdt or ""))
        return self.stored_temporal

    # -------------------------------------------------------------- entry points

    def binary(self, op: str, a: Val, b: Val) -> Val:
        if op in "+-" and self._may_be_temporal(a) and self._may_be_temporal(b):
            raise Unsupported("date or duration arithmetic")
        pa, ranks_a = self.packed(a)
        pb, ranks_b = self.packed(b)
        if not ranks_a or not ranks_b:
            return _ERROR
        floor = DECIMAL if op == "/" else INTEGER
        ranks = frozenset(max(x, y, floor) for x in ranks_a for y in ranks_b)
        if self.pg:
            packed = _pg_binary(op, pa, pb)
        else:
            self.c.need_function("sparql_arith")
            packed = f"sparql_arith('{op}', {pa}, {pb})"
        return self.result(packed, ranks)

    def unary(self, op: str, v: Val) -> Val:
        """``-v`` (``op`` = ``neg``), ``+v`` (``pos``), ``ABS``, ``CEIL``, ``FLOOR`` or
        ``ROUND`` (``abs`` ... ``round``) of ``v``: the same type."""
        pv, ranks = self.packed(v)
        if not ranks:
            return _ERROR
        if self.pg:
            packed = _pg_unary(op, pv)
        else:
            self.c.need_function("sparql_arith")
            packed = f"sparql_arith('{op}', {pv}, NULL)"
        return self.result(packed, ranks)

    def cast(self, rank: int, v: Val) -> Val:
        """``xsd:integer(v)`` (``rank`` 0), ``xsd:decimal``, ``xsd:float``, ``xsd:double``:
        of a number, a simple literal or ``xsd:string`` in the target's lexical space
        (whitespace around it allowed), or a boolean; anything else is an error."""
        source = self._cast_source(v)
        if source is None:
            return _ERROR
        if self.pg:
            packed = _pg_cast(rank, source)
        else:
            self.c.need_function("sparql_arith")
            packed = f"sparql_arith('to{rank}', {source}, NULL)"
        return self.result(packed, frozenset([rank]))

    def _cast_source(self, v: Val) -> str | None:
        """``v`` packed for a cast: a number as for arithmetic, ``S:`` and the text of a
        string, ``B:`` and the text of a boolean; NULL for anything else."""
        if v.packed is not None:
            return v.packed
        if v.kind == "NULL":
            return None
        if v.static_dt_known:
            if v.skind != LITERAL_KIND or v.slang is not None:
                return None
            if v.sdt is None or v.sdt == _XSD + "string":
                return f"('S:' || {v.lex})"
            if v.sdt == _XSD + "boolean":
                return f"('B:' || {v.lex})"
            return self.packed(v)[0] if rank_of(v.sdt) is not None else None
        whens = " ".join(f"WHEN {i} THEN '{r}:'" for i, r in sorted(self.rank_of_id.items()))
        tags = ["WHEN {dt} IS NULL THEN 'S:'"]
        for iri, tag in ((_XSD + "string", "S"), (_XSD + "boolean", "B")):
            if iri in self.dt_ids:
                tags.append(f"WHEN {{dt}} = {self.dt_ids[iri]} THEN '{tag}:'")
        if whens:
            tags.append(f"WHEN {{num}} IS NOT NULL THEN (CASE {{dt}} {whens} END)")
        tag = "(CASE " + " ".join(t.format(dt=v.dt, num=v.num) for t in tags) + " END)"
        return f"(CASE WHEN {v.kind} = {LITERAL_KIND} AND {v.lang} IS NULL THEN {tag} || {v.lex} END)"

    # ------------------------------------------------------------------- result

    def result(self, packed: str, ranks: frozenset[int]) -> Val:
        """The term of a packed number whose rank is one of ``ranks``."""
        static = next(iter(ranks)) if len(ranks) == 1 else None
        if static is not None:
            dt_id = self.dt_ids.get(RANK_TYPES[static])
            dt = "NULL" if dt_id is None else f"(CASE WHEN {packed} IS NOT NULL THEN {dt_id} END)"
        else:
            missing = [RANK_TYPES[x] for x in sorted(ranks) if RANK_TYPES[x] not in self.dt_ids]
            if missing:
                raise Unsupported(f"arithmetic giving {missing[0]}, a datatype the store has no id for")
            whens = " ".join(f"WHEN '{x}' THEN {self.dt_ids[RANK_TYPES[x]]}" for x in sorted(ranks))
            dt = f"(CASE substr({packed}, 1, 1) {whens} END)"
        if self.pg:
            lex, num = _pg_lex(packed), _pg_num(packed)
        else:
            self.c.need_function("sparql_lex")
            self.c.need_function("sparql_num")
            lex, num = f"sparql_lex({packed})", f"sparql_num({packed})"
        return Val(
            kind=f"(CASE WHEN {packed} IS NOT NULL THEN {LITERAL_KIND} END)",
            lex=lex,
            dt=dt,
            lang="NULL",
            num=num,
            skind=LITERAL_KIND if static is not None else None,
            sdt=RANK_TYPES[static] if static is not None else None,
            static_dt_known=static is not None,
            packed=packed,
            ranks=ranks,
        )


# ------------------------------------------------------------------ PostgreSQL SQL


def _pg_binary(op: str, pa: str, pb: str) -> str:
    """A packed ``pa op pb`` in PostgreSQL: NUMERIC up to decimals, else doubles."""
    rank = "GREATEST(ra, rb, 1)" if op == "/" else "GREATEST(ra, rb)"
    x, y = "CAST(va AS NUMERIC)", "CAST(vb AS NUMERIC)"
    if op == "/":
        # NUMERIC division keeps at least the divisor's scale: 40 digits, of which 18 are kept.
        quotient = f"CAST(trunc({x} / ({y} * CAST('1.{'0' * 40}' AS NUMERIC)), {DIVISION_SCALE}) AS TEXT)"
        exact = f"(CASE WHEN {y} <> 0 THEN '1:' || {pg_decimal_text(quotient)} END)"
    else:
        exact = f"CAST(r AS TEXT) || ':' || CAST({x} {op} {y} AS TEXT)"
    double = _pg_double(op, "CAST(va AS DOUBLE PRECISION)", "CAST(vb AS DOUBLE PRECISION)")
    return (
        f"(SELECT CASE WHEN r <= 1 THEN {exact} ELSE CAST(r AS TEXT) || ':' || CAST({double} AS TEXT) END "
        f"FROM (SELECT {rank} AS r, va, vb FROM (SELECT CAST(substr(pa, 1, 1) AS INTEGER) AS ra, "
        "CAST(substr(pb, 1, 1) AS INTEGER) AS rb, substr(pa, 3) AS va, substr(pb, 3) AS vb "
        f"FROM (SELECT {pa} AS pa, {pb} AS pb) AS fp WHERE pa IS NOT NULL AND pb IS NOT NULL) AS fu) AS fr)"
    )


_PG_UNARY = {"neg": "-{}", "pos": "+{}", "abs": "abs({})", "ceil": "ceil({})", "floor": "floor({})",
             "round": "floor({} + 0.5)"}


def _pg_unary(op: str, pv: str) -> str:
    f = _PG_UNARY[op]
    exact = f.format("CAST(v AS NUMERIC)")
    double = f.format("CAST(v AS DOUBLE PRECISION)")
    return (
        f"(SELECT CASE WHEN r <= 1 THEN CAST(r AS TEXT) || ':' || CAST({exact} AS TEXT) "
        f"ELSE CAST(r AS TEXT) || ':' || CAST({double} AS TEXT) END "
        f"FROM (SELECT CAST(substr(p, 1, 1) AS INTEGER) AS r, substr(p, 3) AS v FROM (SELECT {pv} AS p) AS fp) AS fu)"
    )


def _pg_cast(rank: int, source: str) -> str:
    """A packed cast in PostgreSQL (:func:`_cast`'s rules)."""
    ws = "E' \\t\\n\\r'"
    valid = {
        INTEGER: "'^[+-]?[0-9]+$'",
        DECIMAL: "'^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)$'",
        FLOAT: "'^([+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([Ee][+-]?[0-9]+)?|[+-]?INF|NaN)$'",
    }[min(rank, FLOAT)]
    boolean = "(CASE WHEN v IN ('true', '1') THEN '1' WHEN v IN ('false', '0') THEN '0' END)"
    finite = "v NOT IN ('NaN', 'Infinity', '-Infinity')"
    if rank == INTEGER:
        exact = "CAST(trunc(CAST(v AS NUMERIC)) AS TEXT)"
    elif rank == DECIMAL:
        exact = "CAST(CAST(v AS NUMERIC) AS TEXT)"
    else:
        exact = "CAST(CAST(v AS DOUBLE PRECISION) AS TEXT)"
    # A double's text, from a number of any rank; a numeric text where the target is exact.
    from_number = exact if rank >= FLOAT else f"(CASE WHEN tag IN ('0', '1') OR {finite} THEN {exact} END)"
    return (
        f"(SELECT '{rank}:' || (CASE WHEN tag = 'B' THEN (SELECT {exact} FROM (SELECT {boolean} AS v) AS fb) "
        f"WHEN tag = 'S' THEN (CASE WHEN v ~ {valid} THEN (SELECT {exact} FROM (SELECT "
        "(CASE v WHEN 'INF' THEN 'Infinity' WHEN '+INF' THEN 'Infinity' WHEN '-INF' THEN '-Infinity' ELSE v END) "
        f"AS v) AS fs) END) ELSE {from_number} END) "
        f"FROM (SELECT substr(p, 1, 1) AS tag, btrim(substr(p, 3), {ws}) AS v FROM (SELECT {source} AS p) AS fp) AS fu)"
    )


def _pg_num(packed: str) -> str:
    """The comparable value of a packed value: NULL for NaN and for exact numbers beyond
    a double's range (as for stored literals)."""
    return (
        "(SELECT CASE WHEN substr(p, 1, 1) IN ('0', '1') THEN (CASE WHEN abs(CAST(substr(p, 3) AS NUMERIC)) "
        "< 1e308 THEN CAST(CAST(substr(p, 3) AS NUMERIC) AS DOUBLE PRECISION) END) "
        "ELSE NULLIF(CAST(substr(p, 3) AS DOUBLE PRECISION), CAST('NaN' AS DOUBLE PRECISION)) END "
        f"FROM (SELECT {packed} AS p) AS fp)"
    )


def _pg_lex(packed: str) -> str:
    return (
        "(SELECT CASE substr(p, 1, 1) WHEN '0' THEN substr(p, 3) "
        "WHEN '1' THEN substr(p, 3) "
        f"ELSE {_pg_double_text('CAST(substr(p, 3) AS DOUBLE PRECISION)')} END FROM (SELECT {packed} AS p) AS fp)"
    )


def pg_decimal_text(digits: str) -> str:
    """:func:`canonical_decimal` of a NUMERIC's text (which has no exponent; zero is
    never negative)."""
    return f"regexp_replace(regexp_replace({digits}, " r"'(\.[0-9]*[1-9])0+$', '\1'), '\.0*$', '')"


def _pg_double_text(x: str) -> str:
    """:func:`canonical_double` in PostgreSQL's SQL: its text of a double has the
    shortest digits that give it back, as Python's ``repr``; read back as NUMERIC that is
    plain digits, from which the digits and the exponent are taken."""
    digits = "(CASE WHEN ip <> '0' THEN rtrim(ip || fr, '0') ELSE rtrim(ltrim(fr, '0'), '0') END)"
    point = "(CASE WHEN ip <> '0' THEN length(ip) - 1 ELSE length(ltrim(fr, '0')) - length(fr) - 1 END)"
    return (
        "(SELECT CASE WHEN t = 'NaN' THEN 'NaN' WHEN t = 'Infinity' THEN 'INF' "
        "WHEN t = '-Infinity' THEN '-INF' WHEN t = '0' THEN '0.0E0' WHEN t = '-0' THEN '-0.0E0' "
        "ELSE (CASE WHEN t LIKE '-%' THEN '-' ELSE '' END) || substr(dg, 1, 1) || '.' || "
        "COALESCE(NULLIF(substr(dg, 2), ''), '0') || 'E' || CAST(pt AS TEXT) END "
        f"FROM (SELECT t, {digits} AS dg, {point} AS pt FROM (SELECT t, split_part(u, '.', 1) AS ip, "
        "split_part(u, '.', 2) AS fr FROM (SELECT t, CASE WHEN t IN ('NaN', 'Infinity', '-Infinity') "
        "THEN '' ELSE CAST(abs(CAST(t AS NUMERIC)) AS TEXT) END AS u "
        f"FROM (SELECT CAST({x} AS TEXT) AS t) AS ft) AS fu) AS fs) AS fd)"
    )


def _pg_double(op: str, a: str, b: str) -> str:
    """IEEE ``a op b`` on PostgreSQL, which raises an error where IEEE arithmetic
    overflows to ±INF, underflows to 0 or divides by zero.  Operands of ordinary size
    take the plain operator; the rest a scalar subquery that decides by the logarithm of
    the result's magnitude, computing near the limits on halved or scaled operands."""
    inf = "CAST('Infinity' AS DOUBLE PRECISION)"
    nan = "CAST('NaN' AS DOUBLE PRECISION)"
    half_max = "8.98846567431158e307"
    sign = "(sign(x) * sign(y))"
    if op in "+-":
        return (
            f"(SELECT CASE WHEN abs(x) < 1e307 AND abs(y) < 1e307 THEN x {op} y "
            f"ELSE (CASE WHEN abs((x * 0.5) {op} (y * 0.5)) > {half_max} THEN sign((x * 0.5) {op} (y * 0.5)) * {inf} "
            f"ELSE ((x * 0.5) {op} (y * 0.5)) * 2 END) END FROM (SELECT {a} AS x, {b} AS y) AS fx)"
        )
    lg = "log(abs(x)) + log(abs(y))" if op == "*" else "log(abs(x)) - log(abs(y))"
    special = "x = 0 OR x IN ('Infinity', '-Infinity', 'NaN') OR y IN ('Infinity', '-Infinity', 'NaN')"
    if op == "*":
        special += " OR y = 0"
    zero_divisor = (
        # IEEE: the sign of a zero divisor counts (PostgreSQL prints -0 as '-0').
        f"WHEN y = 0 THEN (CASE WHEN x = 0 OR x = {nan} THEN {nan} "
        f"WHEN (x > 0) = (CAST(y AS TEXT) <> '-0') THEN {inf} ELSE -{inf} END) " if op == "/" else ""
    )
    return (
        f"(SELECT CASE {zero_divisor}"
        f"WHEN abs(x) BETWEEN 1e-150 AND 1e150 AND abs(y) BETWEEN 1e-150 AND 1e150 THEN x {op} y "
        f"WHEN {special} THEN x {op} y "
        f"WHEN {lg} > 308.26 THEN {sign} * {inf} "
        f"WHEN {lg} > 308 THEN (CASE WHEN abs((x * 0.5) {op} y) > {half_max} THEN {sign} * {inf} "
        f"ELSE ((x * 0.5) {op} y) * 2 END) "
        f"WHEN {lg} < -323.5 THEN {sign} * 0.0 "
        f"WHEN {lg} < -307 THEN ((x * 1152921504606846976.0) {op} y) * 8.673617379884035e-19 "
        f"ELSE x {op} y END FROM (SELECT {a} AS x, {b} AS y) AS fx)"
    )


_ERROR = Val(kind="NULL", lex="NULL", dt="NULL", lang="NULL", num="NULL", id="NULL")
