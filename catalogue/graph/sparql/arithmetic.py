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

from collections.abc import Mapping
from typing import Protocol

from ..terms import TEMPORAL_CLASSES
from .numbers import (
    DAY_TIME_DURATION,
    DECIMAL,
    DIVISION_SCALE,
    DOUBLE,
    DURATION,
    DURATION_ID,
    FLOAT,
    INTEGER,
    RANK_TYPES,
    RESULT_TYPES,
    SQLITE_AGGREGATES,
    TAGS,
    TEMPORAL_CODES,
    canonical_decimal,
    canonical_double,
    datatype_of,
    rank_of,
    sparql_arith,
    sparql_boolean,
    sparql_lex,
    sparql_num,
)
from .sql import ERROR, Dialect, Unsupported, Val
from .values import LITERAL_KIND

__all__ = [
    "DAY_TIME_DURATION",
    "DIVISION_SCALE",
    "DURATION_ID",
    "RANK_TYPES",
    "SQLITE_AGGREGATES",
    "Arithmetic",
    "canonical_decimal",
    "canonical_double",
    "datatype_of",
    "pg_decimal_text",
    "rank_of",
    "sparql_arith",
    "sparql_boolean",
    "sparql_lex",
    "sparql_num",
]

_XSD = "http://www.w3.org/2001/XMLSchema#"

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
        self.stored_durations = any("uration" in iri for iri in self.dt_ids)
        self.temporal_of_id = {i: TEMPORAL_CODES[iri] for iri, i in self.dt_ids.items() if iri in TEMPORAL_CODES}

    # ------------------------------------------------------------------ operands

    def packed(self, v: Val, *, temporal: bool = False) -> tuple[str, frozenset[int]]:
        """``v`` as a packed value (NULL unless a valid number, or with ``temporal`` a
        date, date-time or time: its comparable value, seconds) and the codes it can have."""
        if v.packed is not None:
            return v.packed, v.ranks
        if v.kind == "NULL":  # unbound
            return "NULL", frozenset()
        if v.static_dt_known:
            r = rank_of(v.sdt) if v.skind == LITERAL_KIND else None
            t = TEMPORAL_CODES.get(v.sdt or "") if temporal and v.skind == LITERAL_KIND else None
            if v.num == "NULL" or (r is None and t is None):
                return "NULL", frozenset()
            if t is not None:
                tag = TAGS[t] if v.szoned else TAGS[t].lower()
                return f"('{tag}:' || {self._seconds(v.num)})", frozenset([t])
            value = self._double_text(v.num) if r >= FLOAT else v.lex
            return f"('{r}:' || {value})", frozenset([r])
        codes = dict(self.rank_of_id)
        if temporal:
            codes.update(self.temporal_of_id)
        if not codes or v.dt == "NULL":  # no datatype anywhere: no number, no date
            return "NULL", frozenset()
        # A date or time without a time zone is tagged in lower case: subtracting it from
        # one with a zone is an error, as Oxigraph has it (XSD's partial order).
        zoned = self.c.dialect.zoned(v.lex)
        whens = " ".join(
            f"WHEN {i} THEN " + (f"(CASE WHEN {zoned} THEN '{TAGS[r]}:' ELSE '{TAGS[r].lower()}:' END)"
                                 if r in TAGS else f"'{r}:'")
            for i, r in sorted(codes.items())
        )
        # Integers and decimals by their digits; doubles (on PostgreSQL, which cannot
        # read "1E400" or "INF") by their value, NaN included; dates by their seconds.
        by_value = [i for i, r in codes.items() if r in (FLOAT, DOUBLE)] if self.pg else []
        by_seconds = sorted(self.temporal_of_id) if temporal else []
        value = v.lex
        if by_value or by_seconds:
            parts = []
            if by_seconds:
                parts.append(f"WHEN {v.dt} IN ({', '.join(map(str, by_seconds))}) THEN {self._seconds(v.num)}")
            if by_value:
                parts.append(f"WHEN {v.dt} IN ({', '.join(map(str, sorted(by_value)))}) THEN {self._double_text(v.num)}")
            value = f"(CASE {' '.join(parts)} ELSE {v.lex} END)"
        doubles = [i for i, r in codes.items() if r in (FLOAT, DOUBLE)]
        valid = f"{v.num} IS NOT NULL"
        if doubles:  # NaN is a double, though it has no comparable value
            valid = f"({valid} OR ({v.dt} IN ({', '.join(map(str, sorted(doubles)))}) AND trim({v.lex}) = 'NaN'))"
        packed = f"(CASE WHEN {valid} THEN (CASE {v.dt} {whens} END) || {value} END)"
        return packed, frozenset(codes.values())

    def _double_text(self, num: str) -> str:
        """A double's value as text (``Infinity``; ``NaN`` where it has none)."""
        return f"COALESCE(CAST({num} AS TEXT), 'NaN')" if self.pg else f"COALESCE(printf('%.17g', {num}), 'NaN')"

    def _seconds(self, num: str) -> str:
        """A comparable value (seconds) as text that reads back as the same double."""
        return f"CAST({num} AS TEXT)" if self.pg else f"printf('%.17g', {num})"

    def _may_be_temporal(self, v: Val) -> bool:
        if v.packed is not None:
            return DURATION in v.ranks
        if v.static_dt_known:
            return v.skind == LITERAL_KIND and (v.sdt in TEMPORAL_CLASSES or "uration" in (v.sdt or ""))
        return self.stored_temporal

    def _may_be_duration(self, v: Val) -> bool:
        if v.packed is not None:
            return DURATION in v.ranks
        if v.static_dt_known:
            return v.skind == LITERAL_KIND and "uration" in (v.sdt or "")
        return self.stored_durations

    # -------------------------------------------------------------- entry points

    def binary(self, op: str, a: Val, b: Val) -> Val:
        temporal = op in "+-" and self._may_be_temporal(a) and self._may_be_temporal(b)
        if temporal and (self._may_be_duration(a) or self._may_be_duration(b)):
            # Adding durations to dates (an extension rdflib and Oxigraph both make) stays
            # with rdflib; the difference of two dates is compiled.
            raise Unsupported("date or duration arithmetic")
        temporal = temporal and op == "-"
        pa, ranks_a = self.packed(a, temporal=temporal)
        pb, ranks_b = self.packed(b, temporal=temporal)
        floor = DECIMAL if op == "/" else INTEGER
        ranks = frozenset(max(x, y, floor) for x in ranks_a for y in ranks_b if x <= DOUBLE and y <= DOUBLE)
        ranks |= frozenset(DURATION for x in ranks_a for y in ranks_b if x == y and x in TAGS and x != DURATION)
        if not ranks:
            return ERROR
        packed = _pg_binary(op, pa, pb, temporal=temporal) if self.pg else self._sqlite(op, pa, pb)
        return self.result(packed, ranks)

    def unary(self, op: str, v: Val) -> Val:
        """``-v`` (``op`` = ``neg``), ``+v`` (``pos``), ``ABS``, ``CEIL``, ``FLOOR`` or
        ``ROUND`` (``abs`` ... ``round``) of ``v``: the same type."""
        pv, ranks = self.packed(v)
        ranks = frozenset(r for r in ranks if r <= DOUBLE)
        if not ranks:
            return ERROR
        packed = _pg_unary(op, pv) if self.pg else self._sqlite(op, pv)
        return self.result(packed, ranks)

    def cast(self, rank: int, v: Val) -> Val:
        """``xsd:integer(v)`` (``rank`` 0), ``xsd:decimal``, ``xsd:float``, ``xsd:double``:
        of a number, a simple literal or ``xsd:string`` in the target's lexical space
        (whitespace around it allowed), or a boolean; anything else is an error."""
        source = self._cast_source(v)
        if source is None:
            return ERROR
        packed = _pg_cast(rank, source) if self.pg else self._sqlite(f"to{rank}", source)
        return self.result(packed, frozenset([rank]))

    def boolean(self, v: Val) -> str | None:
        """``xsd:boolean(v)`` as SQL text (``true``/``false``, NULL for an error), or None
        where it is an error for every row: of a number (false for zero and NaN), or of a
        string or boolean reading ``true``, ``false``, ``1`` or ``0``."""
        source = self._cast_source(v)
        if source is None:
            return None
        if not self.pg:
            self.c.need_function("sparql_boolean")
            return f"sparql_boolean({source})"
        return (
            "(SELECT CASE WHEN tag IN ('S', 'B') THEN (CASE v WHEN 'true' THEN 'true' WHEN '1' THEN 'true' "
            "WHEN 'false' THEN 'false' WHEN '0' THEN 'false' END) "
            "WHEN tag IN ('0', '1') THEN (CASE WHEN CAST(v AS NUMERIC) = 0 THEN 'false' ELSE 'true' END) "
            "WHEN tag IN ('2', '3') THEN (CASE WHEN v = 'NaN' OR CAST(v AS DOUBLE PRECISION) = 0 "
            "THEN 'false' ELSE 'true' END) END "
            "FROM (SELECT substr(p, 1, 1) AS tag, btrim(substr(p, 3), E' \\t\\n\\r') AS v "
            f"FROM (SELECT {source} AS p OFFSET 0) AS fp) AS fu)"
        )

    def _sqlite(self, op: str, a: str, b: str = "NULL") -> str:
        """SQLite's call of :func:`~.numbers.sparql_arith` (registered for the statement)."""
        self.c.need_function("sparql_arith")
        return f"sparql_arith('{op}', {a}, {b})"

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
        doubles = sorted(i for i, r in self.rank_of_id.items() if r >= FLOAT)
        if whens:
            tags.append(f"WHEN {{num}} IS NOT NULL THEN (CASE {{dt}} {whens} END)")
        if doubles:  # NaN is a double, though it has no comparable value
            tags.append(f"WHEN {{dt}} IN ({', '.join(map(str, doubles))}) AND trim({{lex}}) = 'NaN' THEN '3:'")
        # A bare NULL datatype (a value computed without one) is typed: PostgreSQL reads
        # "CASE NULL WHEN 1" as text compared with an integer.
        dt = "CAST(NULL AS INTEGER)" if v.dt == "NULL" else v.dt
        tag = "(CASE " + " ".join(t.format(dt=dt, num=v.num, lex=v.lex) for t in tags) + " END)"
        value = v.lex
        if self.pg and doubles:  # by value, as in :meth:`packed` ("1E400" is INF)
            value = f"(CASE WHEN {dt} IN ({', '.join(map(str, doubles))}) THEN {self._double_text(v.num)} ELSE {v.lex} END)"
        return f"(CASE WHEN {v.kind} = {LITERAL_KIND} AND {v.lang} IS NULL THEN {tag} || {value} END)"

    # ------------------------------------------------------------------- result

    def result(self, packed: str, ranks: frozenset[int]) -> Val:
        """The term of a packed number whose rank is one of ``ranks``."""
        static = next(iter(ranks)) if len(ranks) == 1 else None
        if static is not None:
            dt_id = self.dt_ids.get(RESULT_TYPES[static])
            dt = "NULL" if dt_id is None else f"(CASE WHEN {packed} IS NOT NULL THEN {dt_id} END)"
        else:
            ids = {x: self.dt_ids.get(RESULT_TYPES[x], DURATION_ID if x == DURATION else None) for x in ranks}
            missing = [RESULT_TYPES[x] for x in sorted(ranks) if ids[x] is None]
            if missing:
                raise Unsupported(f"arithmetic giving {missing[0]}, a datatype the store has no id for")
            whens = " ".join(f"WHEN '{TAGS.get(x, x)}' THEN {ids[x]}" for x in sorted(ranks))
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
            sdt=RESULT_TYPES[static] if static is not None else None,
            static_dt_known=static is not None,
            packed=packed,
            ranks=ranks,
        )


# ------------------------------------------------------------------ PostgreSQL SQL


def _pg_binary(op: str, pa: str, pb: str, *, temporal: bool = False) -> str:
    """A packed ``pa op pb`` in PostgreSQL: NUMERIC up to decimals, else doubles; with
    ``temporal``, the seconds between two dates, date-times or times too.

    Every operand enters through a sub-select with ``OFFSET 0``: without that fence
    PostgreSQL pulls the sub-selects up and copies each operand's expression into every
    place its column is read, so that nested arithmetic grew exponentially in the
    planner (two nested ``STRLEN(SUBSTR(STR(x), 1)) + 1`` took the server's memory
    until the kernel killed it)."""
    # GREATEST skips NULLs: a rank only where both operands are numbers.
    rank = "CASE WHEN ra IS NOT NULL AND rb IS NOT NULL THEN " + (
        "GREATEST(ra, rb, 1) END" if op == "/" else "GREATEST(ra, rb) END")
    x, y = "CAST(va AS NUMERIC)", "CAST(vb AS NUMERIC)"
    if op == "/":
        # NUMERIC division keeps at least the divisor's scale: 40 digits, of which 18 are kept.
        quotient = f"CAST(trunc({x} / ({y} * CAST('1.{'0' * 40}' AS NUMERIC)), {DIVISION_SCALE}) AS TEXT)"
        exact = f"(CASE WHEN {y} <> 0 THEN '1:' || {pg_decimal_text(quotient)} END)"
    else:
        exact = f"CAST(r AS TEXT) || ':' || CAST({x} {op} {y} AS TEXT)"
    # An integer or decimal operand of a double operation: through NUMERIC, which has no
    # negative zero ("-0" would otherwise become -0.0).
    double = _pg_double(op, "CAST(CASE WHEN ta IN ('0', '1') THEN CAST(CAST(va AS NUMERIC) AS TEXT) ELSE va END "
                        "AS DOUBLE PRECISION)",
                        "CAST(CASE WHEN tb IN ('0', '1') THEN CAST(CAST(vb AS NUMERIC) AS TEXT) ELSE vb END "
                        "AS DOUBLE PRECISION)")
    between = (
        "WHEN r IS NULL THEN (CASE WHEN ta = tb AND ta IN ('T', 'D', 'H', 't', 'd', 'h') THEN "
        "'U:' || CAST(round(CAST(va AS NUMERIC) - CAST(vb AS NUMERIC), 6) AS TEXT) END) " if temporal
        else "WHEN r IS NULL THEN NULL "
    )
    digit = "IN ('0', '1', '2', '3')"
    return (
        f"(SELECT CASE {between}WHEN r <= 1 THEN {exact} ELSE CAST(r AS TEXT) || ':' || CAST({double} AS TEXT) END "
        f"FROM (SELECT {rank} AS r, ta, tb, va, vb FROM (SELECT ta, tb, va, vb, "
        f"CASE WHEN ta {digit} THEN CAST(ta AS INTEGER) END AS ra, CASE WHEN tb {digit} THEN CAST(tb AS INTEGER) END AS rb "
        "FROM (SELECT substr(pa, 1, 1) AS ta, substr(pb, 1, 1) AS tb, substr(pa, 3) AS va, substr(pb, 3) AS vb "
        f"FROM (SELECT {pa} AS pa, {pb} AS pb OFFSET 0) AS fp WHERE pa IS NOT NULL AND pb IS NOT NULL) AS fu) AS fr) AS fq)"
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
        "FROM (SELECT CASE WHEN substr(p, 1, 1) IN ('0', '1', '2', '3') THEN CAST(substr(p, 1, 1) AS INTEGER) END AS r, "
        f"substr(p, 3) AS v FROM (SELECT {pv} AS p OFFSET 0) AS fp) AS fu)"
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
        # PostgreSQL raises for text beyond a double's range, or that rounds to zero
        # ("1e999", "2e-324"); XPath rounds them to ±INF and zero.
        n = "CAST(v AS NUMERIC)"
        exact = (
            "CAST((CASE WHEN v IN ('NaN', 'Infinity', '-Infinity') THEN CAST(v AS DOUBLE PRECISION) "
            f"WHEN abs({n}) >= 1.797693134862315807937289714053e308 "
            f"THEN CAST(CASE WHEN {n} < 0 THEN '-Infinity' ELSE 'Infinity' END AS DOUBLE PRECISION) "
            f"WHEN {n} <> 0 AND abs({n}) <= 2.4703282292062327208828439643e-324 "
            f"THEN CAST(CASE WHEN {n} < 0 THEN '-0' ELSE '0' END AS DOUBLE PRECISION) "
            "ELSE CAST(v AS DOUBLE PRECISION) END) AS TEXT)"
        )
    # A double's text, from a number of any rank; a numeric text where the target is exact.
    from_number = exact if rank >= FLOAT else f"(CASE WHEN tag IN ('0', '1') OR {finite} THEN {exact} END)"
    return (
        f"(SELECT '{rank}:' || (CASE WHEN tag = 'B' THEN (SELECT {exact} FROM (SELECT {boolean} AS v) AS fb) "
        f"WHEN tag = 'S' THEN (CASE WHEN v ~ {valid} THEN (SELECT {exact} FROM (SELECT "
        "(CASE v WHEN 'INF' THEN 'Infinity' WHEN '+INF' THEN 'Infinity' WHEN '-INF' THEN '-Infinity' ELSE v END) "
        f"AS v) AS fs) END) WHEN tag IN ('0', '1', '2', '3') THEN {from_number} END) "
        f"FROM (SELECT substr(p, 1, 1) AS tag, btrim(substr(p, 3), {ws}) AS v FROM (SELECT {source} AS p OFFSET 0) AS fp) AS fu)"
    )


def _pg_num(packed: str) -> str:
    """The comparable value of a packed value: NULL for NaN and for exact numbers beyond
    a double's range (as for stored literals)."""
    return (
        "(SELECT CASE WHEN substr(p, 1, 1) IN ('0', '1') THEN (CASE WHEN abs(CAST(substr(p, 3) AS NUMERIC)) "
        "< 1e308 THEN CAST(CAST(substr(p, 3) AS NUMERIC) AS DOUBLE PRECISION) END) "
        "WHEN substr(p, 1, 1) IN ('2', '3') THEN "
        "NULLIF(CAST(substr(p, 3) AS DOUBLE PRECISION), CAST('NaN' AS DOUBLE PRECISION)) END "
        f"FROM (SELECT {packed} AS p OFFSET 0) AS fp)"
    )


def _pg_lex(packed: str) -> str:
    return (
        "(SELECT CASE substr(p, 1, 1) WHEN '0' THEN substr(p, 3) "
        "WHEN '1' THEN substr(p, 3) "
        f"WHEN 'U' THEN {_pg_duration_text('CAST(substr(p, 3) AS NUMERIC)')} "
        f"ELSE {_pg_double_text('CAST(substr(p, 3) AS DOUBLE PRECISION)')} END FROM (SELECT {packed} AS p OFFSET 0) AS fp)"
    )


def _pg_duration_text(seconds: str) -> str:
    """:func:`canonical_day_time_duration` in PostgreSQL's SQL."""
    part = "(CASE WHEN {0} > 0 THEN CAST({0} AS TEXT) || '{1}' ELSE '' END)"
    sec = f"(CASE WHEN sec > 0 THEN {pg_decimal_text('CAST(sec AS TEXT)')} || 'S' ELSE '' END)"
    time = f"{part.format('h', 'H')} || {part.format('m', 'M')} || {sec}"
    return (
        "(SELECT CASE WHEN d = 0 AND h = 0 AND m = 0 AND sec = 0 THEN 'PT0S' ELSE "
        f"sg || 'P' || {part.format('d', 'D')} || (CASE WHEN h > 0 OR m > 0 OR sec > 0 THEN 'T' || {time} "
        "ELSE '' END) END FROM (SELECT sg, trunc(a / 86400) AS d, trunc(mod(a, 86400) / 3600) AS h, "
        "trunc(mod(a, 3600) / 60) AS m, mod(a, 60) AS sec FROM (SELECT CASE WHEN s < 0 THEN '-' ELSE '' END AS sg, "
        f"abs(s) AS a FROM (SELECT {seconds} AS s) AS fs) AS fa) AS fd)"
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
            f"(SELECT CASE WHEN abs(x) < 1e307 AND abs(y) < 1e307 OR x IN ('Infinity', '-Infinity', 'NaN') "
            f"OR y IN ('Infinity', '-Infinity', 'NaN') THEN x {op} y "
            f"ELSE (CASE WHEN abs(hx {op} hy) > {half_max} THEN sign(hx {op} hy) * {inf} ELSE (hx {op} hy) * 2 END) END "
            # Halved, except a value too small to matter beside one this large (halving a
            # subnormal would underflow, which PostgreSQL raises).
            "FROM (SELECT x, y, CASE WHEN abs(x) < 1e-300 THEN 0 ELSE x * 0.5 END AS hx, "
            f"CASE WHEN abs(y) < 1e-300 THEN 0 ELSE y * 0.5 END AS hy FROM (SELECT {a} AS x, {b} AS y) AS fx) AS fh)"
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


