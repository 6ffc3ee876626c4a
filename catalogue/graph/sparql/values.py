"""Term values as SQL: constants, value classes and the SPARQL operator mapping.

SPARQL compares literals by *value* within a value class (numbers with numbers,
strings with strings, ...), compares other terms by identity, and turns every type
error into an *error* that FILTER treats as false but that ``!`` and ``||`` propagate
in three-valued logic.  SQL's ``NULL`` behaves exactly like that error under ``NOT``,
``AND``, ``OR`` and ``WHERE``, so every boolean the compiler writes uses ``NULL`` for
"error".  The ``terms.num`` column holds the comparable value of numeric, boolean and
date/time literals (see :func:`catalogue.graph.terms.comparable_value`); strings compare
by code point on the lexical form.  Dates and times are partially ordered (XSD 1.1): a
value without a time zone is ordered against one with a zone only when they are more
than 14 hours apart, and comparing them otherwise is an error (:meth:`ValueOps._temporal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from rdflib.namespace import RDF, XSD
from rdflib.term import BNode, Literal, Node, URIRef

from ..terms import (
    FLOATING_WINDOW,
    TEMPORAL_CLASSES,
    XSD_NUMERIC_DATATYPES,
    comparable_value,
    is_zoned,
)
from .sql import Dialect, Names, Unsupported, Val

__all__ = ["NUMERIC_TYPES", "ValueContext", "ValueOps", "as_sql", "is_bound"]

NUMERIC_TYPES = XSD_NUMERIC_DATATYPES
STRING = str(XSD.string)
BOOLEAN = str(XSD.boolean)
LANG_STRING = str(RDF.langString)
_XSD_NS = str(XSD)

IRI_KIND, BLANK_KIND, LITERAL_KIND = 1, 2, 3

#: The date/time value classes (dateTime, date, time, gYear, gYearMonth).
TEMPORAL = tuple(dict.fromkeys(TEMPORAL_CLASSES.values()))
# Value classes whose members compare by ``num`` (``string`` compares by lexical form).
NUM_CLASSES = ("numeric", "boolean", *TEMPORAL)


class ValueContext(Protocol):
    """What value operations need of the statement being compiled (the compiler
    passes itself; this module never imports it)."""

    dialect: Dialect
    names: Names
    datatype_ids: Mapping[str, int]

    def term_id(self, term: Node) -> int | None: ...


class ValueOps:
    """SQL for term values and operators, specialised with what is known statically."""

    def __init__(self, compiler: ValueContext) -> None:
        self.c = compiler
        dt = compiler.datatype_ids
        self.numeric_ids = sorted(dt[i] for i in NUMERIC_TYPES if i in dt)
        self.temporal_ids = {
            cls: sorted(dt[i] for i, c in TEMPORAL_CLASSES.items() if c == cls and i in dt) for cls in TEMPORAL
        }
        self.boolean_id = dt.get(BOOLEAN)
        self.string_id = dt.get(STRING)

    # ------------------------------------------------------------------ constants

    def const(self, term: Node) -> Val:
        """The value of a constant term from the query."""
        c = self.c
        tid = c.term_id(term)
        # A constant the database does not hold has no id: comparisons then use its parts
        # (two unknown constants must not look identical through a shared sentinel id).
        id_sql = str(tid) if tid is not None else None
        if isinstance(term, URIRef | BNode):
            kind = IRI_KIND if isinstance(term, URIRef) else BLANK_KIND
            return Val(
                kind=str(kind),
                lex=c.dialect.text_param(c.names.param(str(term))),
                dt="NULL",
                lang="NULL",
                num="NULL",
                id=id_sql,
                skind=kind,
                static_dt_known=True,
            )
        if not isinstance(term, Literal):
            raise Unsupported(f"constant {term!r}")
        sdt = None if term.datatype is None else str(term.datatype)
        lang = term.language
        num = comparable_value(str(term), sdt) if sdt is not None else None
        dt_id = c.datatype_ids.get(sdt) if sdt is not None else None
        zoned = is_zoned(str(term)) if sdt in TEMPORAL_CLASSES else None
        return Val(
            kind=str(LITERAL_KIND),
            lex=c.dialect.text_param(c.names.param(str(term))),
            dt="NULL" if dt_id is None else str(dt_id),
            lang="NULL" if lang is None else c.dialect.text_param(c.names.param(lang)),
            num="NULL" if num is None else c.dialect.num_literal(num),
            id=id_sql,
            skind=LITERAL_KIND,
            sdt=sdt,
            slang=lang,
            static_dt_known=True,
            szoned=zoned,
        )

    def boolean(self, cond: str) -> Val:
        """A SQL boolean (NULL = error) as an ``xsd:boolean`` value."""
        return Val(
            kind=f"CASE WHEN ({cond}) IS NULL THEN NULL ELSE {LITERAL_KIND} END",
            lex=f"CASE WHEN ({cond}) THEN 'true' WHEN NOT ({cond}) THEN 'false' END",
            dt=str(self.c.datatype_ids.get(BOOLEAN, "NULL")),
            lang="NULL",
            num=f"CASE WHEN ({cond}) THEN 1.0 WHEN NOT ({cond}) THEN 0.0 END",
            skind=LITERAL_KIND,
            sdt=BOOLEAN,
            static_dt_known=True,
        )

    # -------------------------------------------------------------- value classes

    @staticmethod
    def _in(expr: str, ids: list[int]) -> str | bool:
        if not ids:
            return False
        if len(ids) == 1:
            return f"{expr} = {ids[0]}"
        return f"{expr} IN ({', '.join(map(str, ids))})"

    def in_class(self, v: Val, cls: str) -> str | bool:
        """Condition (or static truth) that ``v`` is a literal of value class ``cls``.

        Classes: ``numeric``, ``boolean``, the date/time classes of :data:`TEMPORAL`
        (compared by ``num``) and ``string`` (simple literals and ``xsd:string``,
        compared by lexical form).
        """
        if v.static_dt_known:
            if v.skind != LITERAL_KIND:
                return False
            sdt = v.sdt
            if cls == "string":
                found = v.slang is None and (sdt is None or sdt == STRING)
            elif cls == "numeric":
                found = sdt in NUMERIC_TYPES
            elif cls == "boolean":
                found = sdt == BOOLEAN
            else:
                found = TEMPORAL_CLASSES.get(sdt or "") == cls
            return found and is_bound(v)
        if cls == "string":
            cond = f"{v.lang} IS NULL AND ({v.dt} IS NULL"
            if self.string_id is not None:
                cond += f" OR {v.dt} = {self.string_id}"
            return f"({v.kind} = {LITERAL_KIND} AND {cond}))"
        if cls == "numeric":
            return self._in(v.dt, self.numeric_ids)
        if cls == "boolean":
            return False if self.boolean_id is None else f"{v.dt} = {self.boolean_id}"
        return self._in(v.dt, self.temporal_ids[cls])

    def is_string_literal(self, v: Val, *, allow_lang: bool) -> str | bool:
        """Simple literal or ``xsd:string`` (and language-tagged ones if allowed)."""
        if not allow_lang:
            return self.in_class(v, "string")
        if v.static_dt_known:
            return v.skind == LITERAL_KIND and (v.sdt is None or v.sdt == STRING) and is_bound(v)
        cond = f"{v.dt} IS NULL"
        if self.string_id is not None:
            cond = f"({cond} OR {v.dt} = {self.string_id})"
        return f"({v.kind} = {LITERAL_KIND} AND {cond})"

    # ------------------------------------------------------------------ operators

    def same_term(self, a: Val, b: Val) -> str:
        """sameTerm: identity of RDF terms (NULL when either side is unbound)."""
        if a.id is not None and b.id is not None:
            return f"({a.id} = {b.id})"
        lang = f"lower({a.lang}) = lower({b.lang})"
        lang_ok = f"(({a.lang} IS NULL AND {b.lang} IS NULL) OR {lang})"
        dt_ok = self._dt_equal(a, b)
        return (
            f"({a.kind} = {b.kind} AND {a.lex} = {b.lex} AND "
            f"({a.kind} <> {LITERAL_KIND} OR ({dt_ok} AND {lang_ok})))"
        )

    def _dt_equal(self, a: Val, b: Val) -> str:
        if a.static_dt_known and b.static_dt_known:
            return "TRUE" if a.sdt == b.sdt else "FALSE"
        for x, y in ((a, b), (b, a)):
            if x.static_dt_known:
                if x.sdt is None:
                    return f"({y.dt} IS NULL)"
                dt_id = self.c.datatype_ids.get(x.sdt)
                return "FALSE" if dt_id is None else f"({y.dt} = {dt_id})"
        return f"(({a.dt} IS NULL AND {b.dt} IS NULL) OR {a.dt} = {b.dt})"

    def compare(self, op: str, a: Val, b: Val) -> str:
        """``a op b`` for ``= != < > <= >=`` with SPARQL's operator mapping."""
        if op == "!=":
            return f"(NOT {self.compare('=', a, b)})"
        # '=' too: two durations are equal by value ("P1D" and "PT24H"), which rdflib and
        # Oxigraph both compute and the store keeps no comparable value for.
        self.check_supported(a)
        self.check_supported(b)
        sql_op = op
        ga, gb = self._number_or_error(a), self._number_or_error(b)
        # Numbers without a comparable value are NaN here (a computed one is a valid
        # number or an error): unequal to and unordered with everything, so false.
        by_value = f"(CASE WHEN {a.num} IS NULL OR {b.num} IS NULL THEN FALSE ELSE {a.num} {sql_op} {b.num} END)"
        if ga is not None and gb is not None:
            # Two numbers (or errors): by value, without the type dispatch below, which
            # repeats each operand's SQL in every case (a sum of two variables compared
            # with a constant came to 59,000 characters on PostgreSQL).
            return f"(CASE WHEN {ga} IS NULL OR {gb} IS NULL THEN NULL ELSE {by_value} END)"
        for x, gy in ((a, gb), (b, ga)):
            if x.packed is not None and gy is not None:
                # A computed value that may also be a date or a duration, and a number:
                # by value where it is a number; otherwise known to differ ('=' is false)
                # and not ordered (an error).
                number = f"substr({x.packed}, 1, 1) IN ('0', '1', '2', '3')"
                other = "FALSE" if op == "=" else "NULL"
                return (f"(CASE WHEN {x.packed} IS NULL OR {gy} IS NULL THEN NULL WHEN {number} "
                        f"THEN {by_value} ELSE {other} END)")
        cases: list[tuple[str, str]] = []
        if op == "=":
            # IRIs and blank nodes compare by identity only: use the id (index-friendly).
            for x, y in ((a, b), (b, a)):
                if x.static_dt_known and x.skind in (IRI_KIND, BLANK_KIND):
                    if x.id is not None and y.id is not None:
                        return f"({x.id} = {y.id})"
                    return (
                        f"CASE WHEN {x.kind} IS NULL OR {y.kind} IS NULL THEN NULL ELSE "
                        f"COALESCE({self.same_term(x, y)}, FALSE) END"
                    )
            cases.append((self.same_term(a, b), "TRUE"))
        for cls in (*NUM_CLASSES, "string"):
            ca, cb = self.in_class(a, cls), self.in_class(b, cls)
            if ca is False or cb is False:
                continue
            cond = " AND ".join(str(c) for c in (ca, cb) if c is not True) or "TRUE"
            if cls == "string":
                left, right = self.c.dialect.text_order(a.lex), self.c.dialect.text_order(b.lex)
                body = f"{left} {sql_op} {right}"
            elif cls in TEMPORAL:
                body = self._temporal(sql_op, a, b)
            else:
                body = f"{a.num} {sql_op} {b.num}"
            cases.append((cond, body))
        if op == "=":
            # Different terms that are not both literals: not equal (no error).
            cases.append((f"({a.kind} <> {LITERAL_KIND} OR {b.kind} <> {LITERAL_KIND})", "FALSE"))
            # Two literals whose values are both understood (and differ, or an earlier
            # case would have matched) are unequal; if either has a datatype the store
            # does not interpret (or an ill-typed lexical form), '=' is a type error.
            # A language-tagged literal differs from any other literal.
            for x in (a, b):
                sx = self._lang_tagged(x)
                if sx is not False:
                    cases.append((str(sx), "FALSE"))
            ka, kb = self._known(a), self._known(b)
            if ka is not False and kb is not False:
                cond = " AND ".join(str(c) for c in (ka, kb) if c is not True) or "TRUE"
                cases.append((cond, "FALSE"))
        if not cases:
            return "NULL"
        whens = " ".join(f"WHEN {cond} THEN {body}" for cond, body in cases)
        # An unbound operand is an error whatever the cases say.
        return f"(CASE WHEN {a.kind} IS NULL OR {b.kind} IS NULL THEN NULL {whens} END)"

    @staticmethod
    def _number_or_error(v: Val) -> str | None:
        """SQL that is NULL where ``v`` is an error, if ``v`` is a number wherever it is
        not (an arithmetic result of numeric ranks, a valid numeric constant); else None."""
        if v.packed is not None:
            return v.packed if v.ranks and max(v.ranks) <= 3 else None
        if v.static_dt_known and v.skind == LITERAL_KIND and v.sdt in NUMERIC_TYPES and v.num != "NULL":
            return v.kind
        return None

    def _temporal(self, op: str, a: Val, b: Val) -> str:
        """``a op b`` for two values of one date/time class, in XSD 1.1's partial order:
        both with a time zone or both without, by their comparable values; one of each,
        only when more than :data:`~catalogue.graph.terms.FLOATING_WINDOW` apart (the
        zoneless one may lie anywhere within it), else NULL (incomparable: an error,
        for ``=`` too)."""
        same = f"{a.num} {op} {b.num}"
        before = f"{a.num} + {FLOATING_WINDOW} < {b.num}"
        after = f"{a.num} - {FLOATING_WINDOW} > {b.num}"
        if op == "=":
            mixed = f"CASE WHEN {before} OR {after} THEN FALSE END"
        elif op in ("<", "<="):
            mixed = f"CASE WHEN {before} THEN TRUE WHEN {after} THEN FALSE END"
        else:
            mixed = f"CASE WHEN {after} THEN TRUE WHEN {before} THEN FALSE END"
        za, zb = self._zoned(a), self._zoned(b)
        if isinstance(za, bool) and isinstance(zb, bool):
            return f"({same})" if za == zb else f"({mixed})"
        if isinstance(za, bool) or isinstance(zb, bool):
            known, other = (za, zb) if isinstance(za, bool) else (zb, za)
            alike = other if known else f"NOT {other}"
        else:
            alike = f"{za} = {zb}"
        return f"(CASE WHEN {alike} THEN {same} ELSE {mixed} END)"

    def _zoned(self, v: Val) -> str | bool:
        """Whether date/time value ``v`` has a time zone (statically, or as SQL)."""
        return v.szoned if v.szoned is not None else self.c.dialect.zoned(v.lex)

    def _known(self, v: Val) -> str | bool:
        """``v`` is a literal whose value the compiler understands: a language-tagged or
        string literal, or a well-formed number, boolean, date or time."""
        if v.static_dt_known:
            if v.skind != LITERAL_KIND:
                return False
            if v.slang is not None or v.sdt is None or v.sdt == STRING:
                return True
            if v.sdt in NUMERIC_TYPES or v.sdt == BOOLEAN or v.sdt in TEMPORAL_CLASSES:
                return v.num != "NULL"
            return False
        parts = [f"{v.lang} IS NOT NULL", str(self.in_class(v, "string"))]
        for cls in NUM_CLASSES:
            c = self.in_class(v, cls)
            if c is not False:
                parts.append(f"({c} AND {v.num} IS NOT NULL)")
        return "(" + " OR ".join(p for p in parts if p != "False") + ")"

    def _lang_tagged(self, v: Val) -> str | bool:
        if v.static_dt_known:
            return v.skind == LITERAL_KIND and v.slang is not None
        return f"({v.lang} IS NOT NULL)"

    def check_supported(self, v: Val) -> None:
        """Values of XSD types the store keeps no comparable value for (durations,
        gMonth, gDay, gMonthDay, ...) are left to rdflib, which knows their value spaces:
        constants of those types, and values chosen between such a constant and others
        (a negative id of one of those types is in the query's datatypes only when one of
        its literals has it: :func:`.numbers.with_synthetic`; a stored term, which has an
        id, cannot be one)."""
        if not v.static_dt_known:
            if v.id is not None:
                return
            unknown = next((iri for iri, i in self.c.datatype_ids.items() if i < 0 and not _valued(iri)), None)
            if unknown is not None:
                raise Unsupported(f"comparison with a value that may be an {unknown} constant")
            return
        if v.sdt is not None and v.sdt.startswith(_XSD_NS) and not _valued(v.sdt):
            raise Unsupported(f"comparison with an {v.sdt} constant")

    def ebv(self, v: Val) -> str:
        """Effective boolean value (NULL = type error)."""
        cases = []
        bcls = self.in_class(v, "boolean")
        if bcls is not False:
            cases.append((bcls, f"COALESCE({v.num} <> 0, FALSE)"))
        ncls = self.in_class(v, "numeric")
        if ncls is not False:
            cases.append((ncls, f"COALESCE({v.num} <> 0, FALSE)"))
        scls = self.in_class(v, "string")
        if scls is not False:
            cases.append((scls, f"length({v.lex}) > 0"))
        if not cases:
            return "NULL"
        if len(cases) == 1 and cases[0][0] is True:
            return f"(CASE WHEN {v.kind} IS NULL THEN NULL ELSE {cases[0][1]} END)"
        whens = " ".join(f"WHEN {'TRUE' if c is True else c} THEN {b}" for c, b in cases)
        return f"(CASE WHEN {v.kind} IS NULL THEN NULL {whens} END)"

    # ------------------------------------------------------------------- ordering

    def order_keys(self, v: Val) -> list[str]:
        """Sort keys giving SPARQL's ORDER BY order: unbound, blank nodes, IRIs, then
        literals; numbers (and booleans, dates and times) by value, other literals by
        lexical form (code point order). Date/time values without a time zone sort as
        if in UTC (among zoned ones the partial order leaves their place open)."""
        keys: list[str] = []
        # A value typed at compile time may still be unbound (an error): only a constant
        # kind saves the first key.
        if not v.static_dt_known or not v.kind.isdigit():
            keys.append(
                f"CASE WHEN {v.kind} IS NULL THEN 0 WHEN {v.kind} = {BLANK_KIND} THEN 1 "
                f"WHEN {v.kind} = {IRI_KIND} THEN 2 ELSE 3 END"
            )
        subs = []
        for rank, cls in enumerate(NUM_CLASSES):
            cond = self.in_class(v, cls)
            if cond is False:
                continue
            subs.append((cond, rank))
        if subs and not (len(subs) == 1 and subs[0][0] is True):
            whens = " ".join(f"WHEN {c} AND {v.num} IS NOT NULL THEN {r}" for c, r in subs)
            keys.append(f"CASE {whens} ELSE 9 END")
        if subs:
            keys.append(v.num)
        if not (subs and len(subs) == 1 and subs[0][0] is True):
            keys.append(self.c.dialect.text_order(v.lex))
        return keys


def is_bound(v: Val) -> str | bool:
    """Whether a value whose type is known at compile time is there at all: always for a
    constant, and for a computed one where its kind is not NULL (``STR`` of a blank node
    is an error: a string function applied to it is one too, not a string)."""
    return True if v.kind.isdigit() else f"({v.kind} IS NOT NULL)"


def as_sql(condition: str | bool) -> str:
    """A condition that may be known at compile time (``True``; ``False`` is ruled out by
    the caller) as SQL."""
    return "TRUE" if condition is True else str(condition)


def _valued(datatype: str) -> bool:
    """Whether the compiler compares values of ``datatype`` (an XSD IRI) by value."""
    return datatype in NUMERIC_TYPES or datatype in TEMPORAL_CLASSES or datatype in (BOOLEAN, STRING)
