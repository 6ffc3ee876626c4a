"""SPARQL's built-in functions beyond tests and comparisons, as SQL: conditionals
(``COALESCE``, ``IF``), string building (``STRLEN``, ``SUBSTR``, ``CONCAT``,
``STRBEFORE``, ``STRAFTER``, ``ENCODE_FOR_URI``, ``REPLACE``), term construction (``STRDT``,
``STRLANG``, ``IRI``), numeric functions (``ABS``, ``CEIL``, ``FLOOR``, ``ROUND``, through
:mod:`.arithmetic`), date parts (``YEAR`` ... ``TZ``),
hashes, ``NOW`` (the query's instant), and ``RAND``, ``UUID``, ``STRUUID`` and ``BNODE()``
in a BIND or an ORDER BY key, drawn once per solution in a derived table
(:class:`~.expressions.ExprCompiler`'s ``per_row``); elsewhere they stay with rdflib.

Part of :class:`~.expressions.ExprCompiler` (a mixin: each ``_e_Builtin_<NAME>`` is
found by name).  Each follows SPARQL 1.1's section 17.4; where SQLite lacks an
operation (hashes, percent-encoding, UUIDs) a Python function registered on the
connection does it per row, inside the statement.  Argument errors are SQL ``NULL``.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import urllib.parse
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Literal, URIRef
from sqlalchemy.engine import Connection

from ..database import database_key
from ..terms import COMPARABLE_DATATYPES
from .arithmetic import Arithmetic, rank_of
from .regex import PLAIN, compile_replace, pg_pattern, xpath_replace
from .sql import ERROR, Unsupported, Val
from .values import BLANK_KIND, IRI_KIND, LITERAL_KIND, STRING, as_sql, is_bound

#: ``("bool", sql)`` or ``("val", Val)``, as :mod:`.expressions` compiles them.
Compiled = tuple[str, Any]

__all__ = ["SQLITE_FUNCTIONS", "VOLATILE_FUNCTIONS", "FunctionsMixin"]

_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER, _DATE_TIME, _DATE = _XSD + "integer", _XSD + "dateTime", _XSD + "date"
_DAY_TIME_DURATION = _XSD + "dayTimeDuration"
#: Characters RFC 3987 keeps out of IRIs.
_NOT_IN_IRIS = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_LANG_TAG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")
#: Per database (URL): whether pgcrypto's ``digest`` is there (:func:`has_digest`).
_DIGEST: dict[str, bool] = {}
_DIGEST_LOCK = threading.Lock()


def has_digest(conn: Connection) -> bool:
    """Whether ``conn``'s PostgreSQL database has pgcrypto's ``digest(bytea, text)`` on its
    search path (revision ``0013_pgcrypto`` installs it where the server has it): SPARQL's
    ``SHA1`` in SQL, which PostgreSQL has no other way to compute. Asked once per database
    and process (an extension is rarely removed; a query then fails with the missing
    function, as any other query on a broken database would)."""
    key = database_key(conn.engine)
    with _DIGEST_LOCK:
        found = _DIGEST.get(key)
    if found is None:
        found = conn.exec_driver_sql("SELECT to_regprocedure('digest(bytea, text)') IS NOT NULL").scalar() is True
        with _DIGEST_LOCK:
            _DIGEST[key] = found
    return found


_HASHES = {"MD5": "md5", "SHA1": "sha1", "SHA256": "sha256", "SHA384": "sha384", "SHA512": "sha512"}


class FunctionsMixin:
    """The functions of this module, for :class:`~.expressions.ExprCompiler`."""

    if TYPE_CHECKING:
        c: Any
        ops: Any

        def value(self, expr: Any) -> Val: ...
        def condition(self, expr: Any) -> str: ...
        def _regex_test(self, lex: str, pat: str, flags: str) -> str: ...

    # ------------------------------------------------------------------ helpers

    def _string_arg(self, v: Val, *, allow_lang: bool = True) -> str | None:
        """SQL condition that ``v`` is a string literal (None: never)."""
        if v.kind == "NULL":  # unbound
            return None
        ok = self.ops.is_string_literal(v, allow_lang=allow_lang)
        if ok is False:
            return None
        return as_sql(ok)

    def _like(self, v: Val, ok: str, lex: str) -> Compiled:
        """A string result with ``v``'s datatype and language tag where ``ok`` holds."""
        return ("val", Val(
            kind=f"(CASE WHEN {ok} THEN {LITERAL_KIND} END)",
            lex=f"(CASE WHEN {ok} THEN {lex} END)",
            dt=v.dt, lang=v.lang, num="NULL",
            skind=LITERAL_KIND if v.static_dt_known else None, sdt=v.sdt, slang=v.slang,
            static_dt_known=v.static_dt_known,
        ))

    def _simple(self, ok: str, lex: str) -> Compiled:
        """A simple literal ``lex`` where ``ok`` holds."""
        return ("val", Val(
            kind=f"(CASE WHEN {ok} THEN {LITERAL_KIND} END)", lex=f"(CASE WHEN {ok} THEN {lex} END)",
            dt="NULL", lang="NULL", num="NULL", skind=LITERAL_KIND, static_dt_known=True,
        ))

    def _typed(self, ok: str, lex: str, num: str, datatype: str) -> Compiled:
        """A literal of a datatype known here (its id if the store has one)."""
        dt_id = self.c.datatype_ids.get(datatype)
        return ("val", Val(
            kind=f"(CASE WHEN {ok} THEN {LITERAL_KIND} END)", lex=f"(CASE WHEN {ok} THEN {lex} END)",
            dt="NULL" if dt_id is None else f"(CASE WHEN {ok} THEN {dt_id} END)", lang="NULL",
            num=f"(CASE WHEN {ok} THEN {num} END)", skind=LITERAL_KIND, sdt=datatype, static_dt_known=True,
        ))

    def _python(self, name: str) -> str:
        self.c.need_function(name)
        return name

    # ------------------------------------------------------------- conditionals

    def _choose(self, cases: list[tuple[str, Val]]) -> Val:
        """The value of the first case whose condition holds (NULL if none); a case
        whose value is always an error is left out (an untyped NULL would also upset
        PostgreSQL's typing of the CASE)."""
        cases = [(c, v) for c, v in cases if v.kind != "NULL"]
        if not cases:
            return ERROR
        statics = {(v.skind, v.sdt, v.slang) for _, v in cases if v.static_dt_known}
        static = len(statics) == 1 and all(v.static_dt_known for _, v in cases)
        if not static:
            for _, v in cases:
                if v.static_dt_known and v.skind == LITERAL_KIND and v.sdt is not None and v.dt == "NULL":
                    raise Unsupported(f"a choice between values of {v.sdt}, a datatype the store has no id for")

        def pick(part: Callable[[Val], str]) -> str:
            return "(CASE " + " ".join(f"WHEN {c} THEN {part(v)}" for c, v in cases) + " END)"

        ids = [v.id for _, v in cases]
        same_id = all(i is not None and i != "NULL" for i in ids)
        first = cases[0][1]
        return Val(
            kind=pick(lambda v: v.kind), lex=pick(lambda v: v.lex), dt=pick(lambda v: v.dt),
            lang=pick(lambda v: v.lang), num=pick(lambda v: v.num),
            id=pick(lambda v: v.id) if same_id else None,  # type: ignore[arg-type, return-value]
            skind=first.skind if static else None, sdt=first.sdt if static else None,
            slang=first.slang if static else None, static_dt_known=static,
        )

    def _e_Builtin_COALESCE(self, e: CompValue) -> Compiled:
        vals = [self.value(x) for x in e.arg]
        if not vals:
            return ("val", ERROR)
        return ("val", self._choose([(f"{v.kind} IS NOT NULL", v) for v in vals]))

    def _e_Builtin_IF(self, e: CompValue) -> Compiled:
        cond = self.condition(e.arg1)
        return ("val", self._choose([(cond, self.value(e.arg2)), (f"NOT {cond}", self.value(e.arg3))]))

    # ------------------------------------------------------------------ strings

    def _e_Builtin_STRLEN(self, e: CompValue) -> Compiled:
        v = self.value(e.arg)
        ok = self._string_arg(v)
        if ok is None:
            return ("val", ERROR)
        return self._typed(ok, self.c.dialect.int_to_text(f"length({v.lex})"), f"length({v.lex})", _INTEGER)

    def _integer_arg(self, v: Val) -> str | None:
        """SQL condition that ``v`` is a valid ``xsd:integer`` (or derived) literal."""
        if v.kind == "NULL":
            return None
        if v.static_dt_known:
            return as_sql(is_bound(v)) if v.skind == LITERAL_KIND and rank_of(v.sdt) == 0 and v.num != "NULL" else None
        ids = sorted(i for iri, i in self.c.datatype_ids.items() if rank_of(iri) == 0)
        return f"({v.dt} IN ({', '.join(map(str, ids))}) AND {v.num} IS NOT NULL)" if ids else None

    def _e_Builtin_SUBSTR(self, e: CompValue) -> Compiled:
        """XPath's ``fn:substring`` with SPARQL's ``xsd:integer`` positions: the
        characters at positions ``p`` with ``start <= p < start + length``."""
        v, start = self.value(e.arg), self.value(e.start)
        conds = [self._string_arg(v), self._integer_arg(start)]
        # Positions beyond SQL's 32-bit integers are clamped (no text is that long).
        first = f"(CASE WHEN {start.num} > 2147483647 THEN 2147483647 ELSE {start.num} END)"
        lo = f"(CASE WHEN {first} < 1 THEN 1 ELSE {first} END)"
        if e.length is None:
            lex = f"substr({v.lex}, CAST({lo} AS INTEGER))"
        else:
            length = self.value(e.length)
            conds.append(self._integer_arg(length))
            end = f"({first} + {length.num})"  # exclusive
            count = f"(CASE WHEN {end} > {lo} THEN {end} - {lo} ELSE 0 END)"
            lex = (f"substr({v.lex}, CAST({lo} AS INTEGER), "
                   f"CAST(CASE WHEN {count} > 2147483647 THEN 2147483647 ELSE {count} END AS INTEGER))")
        if any(c is None for c in conds):
            return ("val", ERROR)
        return self._like(v, " AND ".join(c for c in conds if c and c != "TRUE") or "TRUE", lex)

    def _compatible(self, a: Val, b: Val) -> str | None:
        """SPARQL's argument compatibility: both string literals, and ``b`` without a
        language tag or with ``a``'s."""
        oa, ob = self._string_arg(a), self._string_arg(b)
        if oa is None or ob is None:
            return None
        return f"({oa} AND {ob} AND ({b.lang} IS NULL OR lower({b.lang}) = lower({a.lang})))"

    def _position(self, a: str, b: str) -> str:
        return f"strpos({a}, {b})" if self.c.dialect.is_pg else f"instr({a}, {b})"

    def _before_after(self, e: CompValue, after: bool) -> Compiled:
        a, b = self.value(e.arg1), self.value(e.arg2)
        ok = self._compatible(a, b)
        if ok is None:
            return ("val", ERROR)
        pos = self._position(a.lex, b.lex)
        part = f"substr({a.lex}, {pos} + length({b.lex}))" if after else f"substr({a.lex}, 1, {pos} - 1)"
        # No match: the empty simple literal; a match (the empty string always matches):
        # the part, with the first argument's language tag or datatype.
        found = f"{pos} > 0"
        return ("val", Val(
            kind=f"(CASE WHEN {ok} THEN {LITERAL_KIND} END)",
            lex=f"(CASE WHEN {ok} THEN (CASE WHEN {found} THEN {part} ELSE '' END) END)",
            dt=f"(CASE WHEN {found} THEN {a.dt} END)", lang=f"(CASE WHEN {found} THEN {a.lang} END)",
            num="NULL", skind=LITERAL_KIND,
        )) if not a.static_dt_known or a.sdt is not None or a.slang is not None else self._like(
            a, ok, f"(CASE WHEN {found} THEN {part} ELSE '' END)")

    def _e_Builtin_STRBEFORE(self, e: CompValue) -> Compiled:
        return self._before_after(e, after=False)

    def _e_Builtin_STRAFTER(self, e: CompValue) -> Compiled:
        return self._before_after(e, after=True)

    def _e_Builtin_CONCAT(self, e: CompValue) -> Compiled:
        """The concatenation; its language tag (or ``xsd:string``) where every argument
        has that one, else a simple literal."""
        vals = [self.value(x) for x in e.arg or []]
        if not vals:
            return self._simple("TRUE", "''")
        oks = [self._string_arg(v) for v in vals]
        if any(ok is None for ok in oks):
            return ("val", ERROR)
        ok = " AND ".join(f"({o})" for o in oks)
        lex = " || ".join(v.lex for v in vals)
        first = vals[0]
        same_lang = " AND ".join(f"{v.lang} IS NOT NULL AND lower({v.lang}) = lower({first.lang})" for v in vals)
        string_id = self.c.datatype_ids.get(STRING)
        all_string = (" AND ".join(f"{v.dt} = {string_id}" for v in vals)) if string_id is not None else "FALSE"
        return ("val", Val(
            kind=f"(CASE WHEN {ok} THEN {LITERAL_KIND} END)", lex=f"(CASE WHEN {ok} THEN {lex} END)",
            dt=f"(CASE WHEN {all_string} THEN {string_id} END)" if string_id is not None else "NULL",
            lang=f"(CASE WHEN {same_lang} THEN {first.lang} END)", num="NULL", skind=LITERAL_KIND,
        ))

    def _e_Builtin_ENCODE_FOR_URI(self, e: CompValue) -> Compiled:
        v = self.value(e.arg)
        ok = self._string_arg(v)
        if ok is None:
            return ("val", ERROR)
        if self.c.dialect.is_pg:
            lex = (
                "(SELECT COALESCE(string_agg(CASE WHEN ch ~ '^[A-Za-z0-9._~-]$' THEN ch ELSE "
                "upper(regexp_replace(encode(convert_to(ch, 'UTF8'), 'hex'), '(..)', '%\\1', 'g')) END, '' "
                f"ORDER BY i), '') FROM regexp_split_to_table({v.lex}, '') WITH ORDINALITY AS fe(ch, i))"
            )
        else:
            lex = f"{self._python('sparql_encode_for_uri')}({v.lex})"
        return self._simple(ok, lex)

    def _e_Builtin_REPLACE(self, e: CompValue) -> Compiled:
        """XPath's ``fn:replace`` (:func:`.regex.xpath_replace`) with a constant pattern,
        replacement and flags; the result keeps the text's language tag or datatype."""
        v = self.value(e.arg)
        constants = [e.pattern, e.replacement] + ([] if e.flags is None else [e.flags])
        if not all(isinstance(x, Literal) for x in constants):
            raise Unsupported("REPLACE with a non-constant pattern, replacement or flags")
        if any(x.language or x.datatype not in (None, URIRef(STRING)) for x in constants):
            return ("val", ERROR)  # not simple literals
        pattern, replacement = str(e.pattern), str(e.replacement)
        flags = "" if e.flags is None else str(e.flags)
        ok = self._string_arg(v)
        if ok is None or set(flags) - set("ismxq"):
            return ("val", ERROR)
        try:
            _, template = compile_replace(pattern, replacement, flags)
        except re.error:
            return ("val", ERROR)  # the same error for every row
        d, names = self.c.dialect, self.c.names
        if ("q" in flags or PLAIN.fullmatch(pattern)) and not set(flags) - {"q"}:
            # Plain text, matched case-sensitively: the database's own replace(), on both.
            # (A plain pattern has no groups: $0 is the pattern itself, $1 ... $9 nothing.)
            out = "".join(p if isinstance(p, str) else pattern if p == 0 else "" for p in template)
            return self._like(v, ok, f"replace({v.lex}, {d.text_param(names.param(pattern))}, "
                                     f"{d.text_param(names.param(out))})")
        if d.is_pg:
            pg_replacement, pg = _pg_replacement(template), pg_pattern(pattern, flags)
            if pg is None or pg_replacement is None:
                raise Unsupported("REPLACE outside the PostgreSQL-safe subset")
            pg_flags = "gi" if "i" in flags else "g"
            return self._like(v, ok, (
                f"regexp_replace({v.lex}, {d.text_param(names.param(pg))}, "
                f"{d.text_param(names.param(pg_replacement))}, {d.text_param(names.param(pg_flags))})"))
        call = (f"{self._python('sparql_replace')}({v.lex}, {d.text_param(names.param(pattern))}, "
                f"{d.text_param(names.param(replacement))}, {d.text_param(names.param(flags))})")
        return self._like(v, ok, call)

    def _e_Builtin_NOW(self, e: CompValue) -> Compiled:
        """The query's instant (one for the whole query, as SPARQL says), a constant."""
        self.c.volatile = True
        return ("val", self.ops.const(Literal(self.c.now)))

    # ------------------------------------------------------ values drawn per solution

    def _draw(self, name: str, sql: str) -> str:
        """A value drawn per solution: on the first compilation its SQL (recorded in
        ``drawn``), on the second the column the caller drew it into."""
        if not self.per_row:
            raise Unsupported(f"{name} outside BIND and ORDER BY (a value drawn once per solution)")
        i = len(self.drawn)
        self.drawn.append(sql)
        return sql if self.draws is None else self.draws[i]

    def _uuid(self, name: str) -> str:
        pg = self.c.dialect.is_pg
        return self._draw(name, "CAST(gen_random_uuid() AS TEXT)" if pg else f"{self._python('sparql_uuid')}()")

    def _e_Builtin_RAND(self, e: CompValue) -> Compiled:
        pg = self.c.dialect.is_pg
        value = self._draw("RAND", "CAST(random() AS TEXT)" if pg else f"{self._python('sparql_rand')}()")
        return ("val", Arithmetic(self.c).result(f"('3:' || {value})", frozenset([3])))

    def _e_Builtin_UUID(self, e: CompValue) -> Compiled:
        return ("val", Val(kind=str(IRI_KIND), lex=f"('urn:uuid:' || {self._uuid('UUID')})", dt="NULL",
                           lang="NULL", num="NULL", skind=IRI_KIND, static_dt_known=True))

    def _e_Builtin_STRUUID(self, e: CompValue) -> Compiled:
        return self._simple("TRUE", self._uuid("STRUUID"))

    def _e_Builtin_BNODE(self, e: CompValue) -> Compiled:
        if e.arg is not None:
            return self._bnode_of(self.value(e.arg))
        return ("val", Val(kind=str(BLANK_KIND), lex=f"('b' || replace({self._uuid('BNODE')}, '-', ''))",
                           dt="NULL", lang="NULL", num="NULL", skind=BLANK_KIND, static_dt_known=True))

    def _bnode_of(self, v: Val) -> Compiled:
        """``BNODE(str)``: the same blank node for the same string within a solution, a
        different one in another solution (and for another string). Its label is a digest
        of the solution's seed (a UUID drawn once per solution, :attr:`bnode_seed`) and the
        string; of anything but a simple literal or an ``xsd:string``, an error."""
        if self.bnode_seed is None:
            raise Unsupported("BNODE of a string outside BIND and SELECT expressions")
        ok = self._string_arg(v, allow_lang=False)
        if ok is None:
            return ("val", ERROR)
        keyed = f"({self.bnode_seed} || ' ' || {v.lex})"
        digest = f"md5({keyed})" if self.c.dialect.is_pg else f"{self._python('sparql_md5')}({keyed})"
        return ("val", Val(kind=f"(CASE WHEN {ok} THEN {BLANK_KIND} END)", lex=f"(CASE WHEN {ok} THEN 'b' || {digest} END)",
                           dt="NULL", lang="NULL", num="NULL", skind=BLANK_KIND, static_dt_known=True))

    # ------------------------------------------------------------- construction

    def _e_Builtin_STRDT(self, e: CompValue) -> Compiled:
        v, dt = self.value(e.arg1), e.arg2
        if not isinstance(dt, URIRef):
            raise Unsupported("STRDT with a datatype that is not a constant IRI")
        if str(dt) in COMPARABLE_DATATYPES and str(dt) != STRING:
            raise Unsupported(f"STRDT to {dt} (its comparable value is computed in Python)")
        ok = self._simple_literal(v)
        if ok is None:
            return ("val", ERROR)
        return self._typed(ok, v.lex, "NULL", str(dt))

    def _simple_literal(self, v: Val) -> str | None:
        """SQL condition that ``v`` is a simple literal (no language tag, no datatype:
        the W3C tests make ``xsd:string`` an error for STRDT and STRLANG)."""
        if v.kind == "NULL":
            return None
        if v.static_dt_known:
            return as_sql(is_bound(v)) if v.skind == LITERAL_KIND and v.sdt is None and v.slang is None else None
        return f"({v.kind} = {LITERAL_KIND} AND {v.dt} IS NULL AND {v.lang} IS NULL)"

    def _e_Builtin_STRLANG(self, e: CompValue) -> Compiled:
        v, tag = self.value(e.arg1), e.arg2
        if not isinstance(tag, Literal) or tag.datatype is not None or tag.language:
            return self._strlang_of_value(v, self.value(tag))
        if not _LANG_TAG.fullmatch(str(tag)):
            return ("val", ERROR)
        ok = self._simple_literal(v)
        if ok is None:
            return ("val", ERROR)
        lang = self.c.dialect.text_param(self.c.names.param(str(tag)))
        return ("val", Val(
            kind=f"(CASE WHEN {ok} THEN {LITERAL_KIND} END)", lex=f"(CASE WHEN {ok} THEN {v.lex} END)",
            dt="NULL", lang=f"(CASE WHEN {ok} THEN {lang} END)", num="NULL", skind=LITERAL_KIND,
            slang=str(tag), static_dt_known=True,
        ))

    def _strlang_of_value(self, v: Val, tag: Val) -> Compiled:
        """STRLANG whose tag is computed (``LANG(?l)``, a variable): both arguments simple
        literals, the tag a well-formed language tag (checked per row, as the constant's
        is once), else an error; the result's tag known only at run time."""
        ok, tag_ok = self._simple_literal(v), self._simple_literal(tag)
        if ok is None or tag_ok is None:
            return ("val", ERROR)
        well_formed = self._regex_test(tag.lex, f"^{_LANG_TAG.pattern}$", "")
        cond = f"({ok} AND {tag_ok} AND {well_formed})"
        return ("val", Val(
            kind=f"(CASE WHEN {cond} THEN {LITERAL_KIND} END)", lex=f"(CASE WHEN {cond} THEN {v.lex} END)",
            dt="NULL", lang=f"(CASE WHEN {cond} THEN {tag.lex} END)", num="NULL",
        ))

    def _e_Builtin_IRI(self, e: CompValue) -> Compiled:
        """An IRI from an IRI (itself) or a simple literal (its text: an absolute IRI; a
        relative constant resolved against the query's base, as rdflib's ``absolutize``)."""
        if isinstance(e.arg, Literal) and ":" not in str(e.arg):
            if e.arg.language or e.arg.datatype not in (None, URIRef(STRING)):
                return ("val", ERROR)
            if _NOT_IN_IRIS.search(str(e.arg)):
                return ("val", ERROR)  # no IRI (as Oxigraph has it)
            iri = URIRef(str(e.arg), base=self.c.base) if self.c.base else URIRef(str(e.arg))
            if ":" not in iri:
                raise Unsupported("IRI of a relative reference without a base")
            return ("val", self.ops.const(iri))
        v = self.value(e.arg)
        ok = self._string_arg(v, allow_lang=False)
        cond = f"({v.kind} = {IRI_KIND}" + (f" OR ({ok} AND {v.lex} LIKE '%:%')" if ok else "") + ")"
        return ("val", Val(
            kind=f"(CASE WHEN {cond} THEN {IRI_KIND} END)", lex=f"(CASE WHEN {cond} THEN {v.lex} END)",
            dt="NULL", lang="NULL", num="NULL", skind=IRI_KIND, static_dt_known=True,
        ))

    _e_Builtin_URI = _e_Builtin_IRI

    # ----------------------------------------------------------------- numbers

    def _numeric_function(self, e: CompValue, op: str) -> Compiled:
        return ("val", Arithmetic(self.c).unary(op, self.value(e.arg)))

    def _e_Builtin_ABS(self, e: CompValue) -> Compiled:
        return self._numeric_function(e, "abs")

    def _e_Builtin_CEIL(self, e: CompValue) -> Compiled:
        return self._numeric_function(e, "ceil")

    def _e_Builtin_FLOOR(self, e: CompValue) -> Compiled:
        return self._numeric_function(e, "floor")

    def _e_Builtin_ROUND(self, e: CompValue) -> Compiled:
        return self._numeric_function(e, "round")

    # ------------------------------------------------------------------- dates

    def _date_part(self, e: CompValue, part: str) -> Compiled:
        """YEAR ... SECONDS, TZ and TIMEZONE of an ``xsd:dateTime`` (and, as rdflib and
        Oxigraph allow, YEAR, MONTH, DAY, TZ and TIMEZONE of an ``xsd:date``), read off
        its lexical form ``[-]YYYY-MM-DD[Thh:mm:ss[.s]][zone]``."""
        v = self.value(e.arg)
        if v.kind == "NULL":
            return ("val", ERROR)
        types = [_DATE_TIME] + ([_DATE] if part in ("YEAR", "MONTH", "DAY", "TZ", "TIMEZONE") else [])
        if v.static_dt_known:
            ok = as_sql(is_bound(v)) if v.sdt in types and v.num != "NULL" else None
        else:
            ids = [str(self.c.datatype_ids[t]) for t in types if t in self.c.datatype_ids]
            ok = f"({v.dt} IN ({', '.join(ids)}) AND {v.num} IS NOT NULL)" if ids else None
        if ok is None:
            return ("val", ERROR)
        d = self.c.dialect
        s = d.xsd_trim(v.lex)
        # The year runs to the first '-' after its sign; the zone is 'Z' or '±hh:mm' at the end.
        year_len = f"({self._position(f'substr({s}, 2)', repr('-'))})"
        zone_len = d.zone_length(s)
        zone = f"substr({s}, length({s}) - {zone_len} + 1)"
        at = {"MONTH": 2, "DAY": 5, "HOURS": 8, "MINUTES": 11}
        if part == "YEAR":
            text = f"substr({s}, 1, {year_len})"
        elif part in at:
            text = f"substr({s}, {year_len} + {at[part]}, 2)"
        elif part == "SECONDS":
            start = f"({year_len} + 14)"
            seconds = self._simple(ok, f"substr({s}, {start}, length({s}) - {zone_len} - {start} + 1)")[1]
            return ("val", Arithmetic(self.c).cast(1, seconds))
        elif part == "TZ":
            return self._simple(ok, f"(CASE WHEN {zone_len} = 0 THEN '' ELSE {zone} END)")
        else:  # TIMEZONE: the zone as a dayTimeDuration (an error without one)
            hours = f"CAST(substr({zone}, 2, 2) AS INTEGER)"
            minutes = f"CAST(substr({zone}, 5, 2) AS INTEGER)"
            sign = f"(CASE WHEN substr({zone}, 1, 1) = '-' THEN '-' ELSE '' END)"
            body = (f"{sign} || 'PT' || (CASE WHEN {hours} > 0 THEN {d.int_to_text(hours)} || 'H' ELSE '' END) || "
                    f"(CASE WHEN {minutes} > 0 THEN {d.int_to_text(minutes)} || 'M' ELSE '' END)")
            lex = f"(CASE WHEN {zone} IN ('Z', '+00:00', '-00:00') THEN 'PT0S' ELSE {body} END)"
            return self._typed(f"{ok} AND {zone_len} > 0", lex, "NULL", _DAY_TIME_DURATION)
        number = f"CAST({text} AS INTEGER)"
        return self._typed(ok, d.int_to_text(number), number, _INTEGER)

    def _e_Builtin_YEAR(self, e: CompValue) -> Compiled:
        return self._date_part(e, "YEAR")

    def _e_Builtin_MONTH(self, e: CompValue) -> Compiled:
        return self._date_part(e, "MONTH")

    def _e_Builtin_DAY(self, e: CompValue) -> Compiled:
        return self._date_part(e, "DAY")

    def _e_Builtin_HOURS(self, e: CompValue) -> Compiled:
        return self._date_part(e, "HOURS")

    def _e_Builtin_MINUTES(self, e: CompValue) -> Compiled:
        return self._date_part(e, "MINUTES")

    def _e_Builtin_SECONDS(self, e: CompValue) -> Compiled:
        return self._date_part(e, "SECONDS")

    def _e_Builtin_TZ(self, e: CompValue) -> Compiled:
        return self._date_part(e, "TZ")

    def _e_Builtin_TIMEZONE(self, e: CompValue) -> Compiled:
        return self._date_part(e, "TIMEZONE")

    # ------------------------------------------------------------------ hashes

    def _hash(self, e: CompValue, name: str) -> Compiled:
        v = self.value(e.arg)
        ok = self._string_arg(v, allow_lang=False)
        if ok is None:
            return ("val", ERROR)
        algorithm = _HASHES[name]
        if not self.c.dialect.is_pg:
            return self._simple(ok, f"{self._python('sparql_' + algorithm)}({v.lex})")
        if algorithm == "md5":
            return self._simple(ok, f"md5({v.lex})")
        if algorithm == "sha1":
            if not self.c.digest:
                raise Unsupported("SHA1 on PostgreSQL (it needs the pgcrypto extension)")
            return self._simple(ok, f"encode(digest(convert_to({v.lex}, 'UTF8'), 'sha1'), 'hex')")
        return self._simple(ok, f"encode({algorithm}(convert_to({v.lex}, 'UTF8')), 'hex')")

    def _e_Builtin_MD5(self, e: CompValue) -> Compiled:
        return self._hash(e, "MD5")

    def _e_Builtin_SHA1(self, e: CompValue) -> Compiled:
        return self._hash(e, "SHA1")

    def _e_Builtin_SHA256(self, e: CompValue) -> Compiled:
        return self._hash(e, "SHA256")

    def _e_Builtin_SHA384(self, e: CompValue) -> Compiled:
        return self._hash(e, "SHA384")

    def _e_Builtin_SHA512(self, e: CompValue) -> Compiled:
        return self._hash(e, "SHA512")


# ----------------------------------------------------------- SQLite's functions


def _hasher(name: str) -> Callable[[str | None], str | None]:
    def digest(text: str | None) -> str | None:
        return None if text is None else hashlib.new(name, text.encode("utf-8")).hexdigest()

    return digest


def _encode_for_uri(text: str | None) -> str | None:
    return None if text is None else urllib.parse.quote(text, safe="-._~")


def _pg_replacement(template: tuple[str | int, ...]) -> str | None:
    """A replacement template in PostgreSQL's ``regexp_replace`` syntax (``\\&`` the match,
    ``\\1`` to ``\\9`` groups, ``\\\\`` a backslash); None beyond nine groups."""
    out = []
    for part in template:
        if isinstance(part, str):
            out.append(part.replace("\\", "\\\\"))
        elif part > 9:
            return None
        else:
            out.append("\\&" if part == 0 else f"\\{part}")
    return "".join(out)


def _replace(text: str | None, pattern: str | None, replacement: str | None, flags: str | None) -> str | None:
    """``REPLACE`` for SQLite (NULL, i.e. a SPARQL error, for an unusable pattern)."""
    if text is None or pattern is None or replacement is None:
        return None
    try:
        return xpath_replace(text, pattern, replacement, flags or "")
    except re.error:
        return None


#: The SQLite functions that give another value at each call (not ``deterministic``).
VOLATILE_FUNCTIONS = frozenset({"sparql_rand", "sparql_uuid"})

#: ``name: (arguments, function)`` registered on SQLite connections.
SQLITE_FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    **{f"sparql_{a}": (1, _hasher(a)) for a in _HASHES.values()},
    "sparql_encode_for_uri": (1, _encode_for_uri),
    "sparql_replace": (4, _replace),
    "sparql_rand": (0, lambda: repr(random.random())),
    "sparql_uuid": (0, lambda: str(uuid.uuid4())),
}
