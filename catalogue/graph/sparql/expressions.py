"""Compile SPARQL expressions (FILTER, BIND, ORDER BY, ...) to SQL.

An expression compiles either to a SQL boolean (``("bool", sql)``, NULL = error) or to a
term value (``("val", Val)``); operators convert between the two as SPARQL does
(effective boolean value one way, ``xsd:boolean`` literals the other).  Whatever is not
listed here raises :class:`~.sql.Unsupported`, and rdflib evaluates that part of the
query instead, so the set below only has to be *correct*, not complete.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import BNode, Literal, URIRef, Variable

from .arithmetic import DAY_TIME_DURATION, DURATION_ID, Arithmetic
from .casts import CASTS, CastsMixin
from .functions import FunctionsMixin
from .geo import compile_call
from .regex import PLAIN, pg_pattern
from .sql import ERROR, Dialect, Names, Unsupported, Val
from .values import LANG_STRING, LITERAL_KIND, STRING, ValueOps, as_sql

__all__ = ["ExprCompiler", "ExpressionContext", "Resolver"]

#: Looks a variable up in the current scope: its value, or None when it is unbound there.
Resolver = Callable[[Variable], Val | None]

Compiled = tuple[str, Any]  # ("bool", sql) | ("val", Val)

_ASCII_WORD = re.compile(r"[A-Za-z0-9 ]+")


class ExpressionContext(Protocol):
    """What expressions need of the statement being compiled (the compiler passes
    itself; this module never imports it)."""

    dialect: Dialect
    names: Names
    ops: ValueOps
    datatype_ids: Any
    #: Spatial lookups the statement needs resolved before it runs (:mod:`.geo`).
    lookups: list[Any]

    def need_function(self, name: str) -> None: ...

    def exists_sql(self, graph: Any, resolve: Resolver, *, negate: bool) -> str: ...


class ExprCompiler(FunctionsMixin, CastsMixin):
    """Compiles expressions against a scope given by a :data:`Resolver` (the built-in
    functions of :mod:`.functions` and the casts of :mod:`.casts` included)."""

    def __init__(
        self, compiler: ExpressionContext, resolve: Resolver, *, per_row: bool = False,
        draws: list[str] | None = None, bnode_seed: str | None = None,
    ) -> None:
        self.c = compiler
        self.ops = compiler.ops
        self.resolve = resolve
        #: Whether values drawn per solution (RAND, UUID, STRUUID, BNODE) may be compiled,
        #: in a BIND or an ORDER BY key.  Their SQL (``random()`` ...) is drawn in a
        #: derived table, one column per call, and the expression reads those columns:
        #: written into the expression, each part of the term would draw its own, and
        #: PostgreSQL computes an uncorrelated subquery around it once per statement.
        self.per_row = per_row
        #: The SQL of each call drawn (the caller materialises them, then compiles again).
        self.drawn: list[str] = []
        #: On that second compilation: the columns holding the draws, in call order.
        self.draws = draws
        #: A column drawn once per solution and carried through the BINDs and projected
        #: expressions over it (``Block.bnode_seed``): ``BNODE(str)`` is the same node for
        #: the same string within a solution, in every one of them.
        self.bnode_seed = bnode_seed

    # ------------------------------------------------------------------- entry points

    def condition(self, expr: Any) -> str:
        """SQL for a FILTER condition: its effective boolean value."""
        return self.as_bool(self.compile(expr))

    def filter_condition(self, expr: Any) -> str:
        """SQL for a FILTER (or OPTIONAL) condition, where an error and false both
        drop the row: a GeoSPARQL relation in it (or in one of its ``&&`` conjuncts)
        can then be a plain membership test the database drives an index with."""
        if isinstance(expr, CompValue):
            if expr.name == "ConditionalAndExpression":
                parts = [self.filter_condition(expr.expr)]
                parts += [self.filter_condition(x) for x in expr.other or []]
                return "(" + " AND ".join(parts) + ")"
            if expr.name == "Function":
                return self.as_bool(compile_call(self.c, self.value, expr, positive=True))
        return self.condition(expr)

    def value(self, expr: Any) -> Val:
        return self.as_val(self.compile(expr))

    def as_bool(self, compiled: Compiled) -> str:
        kind, x = compiled
        return x if kind == "bool" else self.ops.ebv(x)

    def as_val(self, compiled: Compiled) -> Val:
        kind, x = compiled
        return x if kind == "val" else self.ops.boolean(x)

    # ----------------------------------------------------------------------- dispatch

    def compile(self, e: Any) -> Compiled:
        if isinstance(e, Variable):
            v = self.resolve(e)
            return ("val", v if v is not None else ERROR)
        if isinstance(e, URIRef | Literal):
            return ("val", self.ops.const(e))
        if isinstance(e, BNode):
            raise Unsupported("blank node in an expression")
        if not isinstance(e, CompValue):
            raise Unsupported(f"expression {e!r}")
        method = getattr(self, f"_e_{e.name}", None)
        if method is None:
            raise Unsupported(f"expression {e.name}")
        compiled = method(e)
        _check_size(compiled, self.c.dialect.is_pg)
        return compiled

    # ---------------------------------------------------------------------- operators

    def _e_ConditionalAndExpression(self, e: CompValue) -> Compiled:
        parts = [self.condition(e.expr)] + [self.condition(x) for x in e.other or []]
        return ("bool", "(" + " AND ".join(parts) + ")")

    def _e_ConditionalOrExpression(self, e: CompValue) -> Compiled:
        parts = [self.condition(e.expr)] + [self.condition(x) for x in e.other or []]
        return ("bool", "(" + " OR ".join(parts) + ")")

    def _e_TrueFilter(self, e: CompValue) -> Compiled:
        return ("bool", "TRUE")

    def _e_UnaryNot(self, e: CompValue) -> Compiled:
        return ("bool", f"(NOT {self.condition(e.expr)})")

    def _e_RelationalExpression(self, e: CompValue) -> Compiled:
        op = e.op
        left = self.value(e.expr)
        if op in ("IN", "NOT IN"):
            # rdflib's parse of an empty list, "()", is rdf:nil
            others = [] if isinstance(e.other, URIRef) else list(e.other or [])
            if not others:
                return ("bool", "FALSE" if op == "IN" else "TRUE")
            tests = [self.ops.compare("=", left, self.value(x)) for x in others]
            test = "(" + " OR ".join(tests) + ")"
            return ("bool", test if op == "IN" else f"(NOT {test})")
        if op not in ("=", "!=", "<", ">", "<=", ">="):
            raise Unsupported(f"operator {op}")
        return ("bool", self.ops.compare(op, left, self.value(e.other)))

    def _e_AdditiveExpression(self, e: CompValue) -> Compiled:
        return self._arithmetic(e)

    def _e_MultiplicativeExpression(self, e: CompValue) -> Compiled:
        return self._arithmetic(e)

    def _arithmetic(self, e: CompValue) -> Compiled:
        """``a op b op c ...``, left to right (:mod:`.arithmetic`)."""
        if e.other is None:  # the grammar's production with nothing to do
            return self.compile(e.expr)
        arith = Arithmetic(self.c)
        acc = self.value(e.expr)
        for op, term in zip(e.op, e.other, strict=True):
            acc = arith.binary(op, acc, self.value(term))
        return ("val", acc)

    def _e_UnaryMinus(self, e: CompValue) -> Compiled:
        return ("val", Arithmetic(self.c).unary("neg", self.value(e.expr)))

    def _e_UnaryPlus(self, e: CompValue) -> Compiled:
        return ("val", Arithmetic(self.c).unary("pos", self.value(e.expr)))

    def _e_Function(self, e: CompValue) -> Compiled:
        """Calls of functions named by IRI: casts to the numeric XSD types and
        ``xsd:string`` (:mod:`.functions`), the GeoSPARQL relations (:mod:`.geo`); other
        casts and functions stay with rdflib."""
        if str(e.iri) in CASTS:
            return self.cast(e)
        return compile_call(self.c, self.value, e, positive=False)

    # ---------------------------------------------------------------------- built-ins

    def _e_Builtin_BOUND(self, e: CompValue) -> Compiled:
        v = self.resolve(e.arg)
        if v is None:
            return ("bool", "FALSE")
        return ("bool", f"({v.id if v.id is not None else v.kind} IS NOT NULL)")

    def _kind_test(self, e: CompValue, kind: int) -> Compiled:
        v = self.value(e.arg)
        return ("bool", f"({v.kind} = {kind})")

    def _e_Builtin_isIRI(self, e: CompValue) -> Compiled:
        return self._kind_test(e, 1)

    _e_Builtin_isURI = _e_Builtin_isIRI

    def _e_Builtin_isBLANK(self, e: CompValue) -> Compiled:
        return self._kind_test(e, 2)

    def _e_Builtin_isLITERAL(self, e: CompValue) -> Compiled:
        return self._kind_test(e, 3)

    def _e_Builtin_isNUMERIC(self, e: CompValue) -> Compiled:
        v = self.value(e.arg)
        cls = self.ops.in_class(v, "numeric")
        if cls is False:
            return ("bool", f"CASE WHEN {v.kind} IS NULL THEN NULL ELSE FALSE END")
        cond = as_sql(cls)
        return (
            "bool",
            f"CASE WHEN {v.kind} IS NULL THEN NULL ELSE "
            f"COALESCE({cond} AND {v.num} IS NOT NULL, FALSE) END",
        )

    def _e_Builtin_sameTerm(self, e: CompValue) -> Compiled:
        return ("bool", self.ops.same_term(self.value(e.arg1), self.value(e.arg2)))

    def _e_Builtin_STR(self, e: CompValue) -> Compiled:
        v = self.value(e.arg)
        ok = f"{v.kind} IN (1, {LITERAL_KIND})"
        return _plain_term(ok, LITERAL_KIND, v.lex)

    def _case_map(self, e: CompValue, sqlite_fn: str, pg_fn: str) -> Compiled:
        """LCASE/UCASE: same datatype and language, mapped lexical form (an error for
        anything but a string literal).  SQLite's lower()/upper() only map ASCII, so
        SQLite calls Python's str.lower/str.upper (as rdflib does)."""
        v = self.value(e.arg)
        ok = self.ops.is_string_literal(v, allow_lang=True)
        if ok is False:
            return ("val", ERROR)
        if self.c.dialect.is_pg:
            fn = pg_fn
        else:
            fn = sqlite_fn
            self.c.need_function(sqlite_fn)
        cond = as_sql(ok)
        return (
            "val",
            Val(
                kind=f"CASE WHEN {cond} THEN {LITERAL_KIND} END",
                lex=f"CASE WHEN {cond} THEN {fn}({v.lex}) END",
                dt=v.dt,
                lang=v.lang,
                num="NULL",
                skind=v.skind,
                sdt=v.sdt,
                slang=v.slang,
                static_dt_known=v.static_dt_known,
            ),
        )

    def _e_Builtin_LCASE(self, e: CompValue) -> Compiled:
        return self._case_map(e, "sparql_lcase", "lower")

    def _e_Builtin_UCASE(self, e: CompValue) -> Compiled:
        return self._case_map(e, "sparql_ucase", "upper")

    def _e_Builtin_LANG(self, e: CompValue) -> Compiled:
        v = self.value(e.arg)
        ok = f"{v.kind} = {LITERAL_KIND}"
        return _plain_term(ok, LITERAL_KIND, f"COALESCE({v.lang}, '')")

    def _e_Builtin_DATATYPE(self, e: CompValue) -> Compiled:

        v = self.value(e.arg)
        ok = f"{v.kind} = {LITERAL_KIND}"
        if v.static_dt_known and v.skind == LITERAL_KIND:
            # Known here: a computed value's datatype may be one the store has no id for.
            iri = LANG_STRING if v.slang is not None else v.sdt or STRING
            return _plain_term(ok, 1, self.c.dialect.text_param(self.c.names.param(iri)))
        lang_string = self.c.dialect.text_param(self.c.names.param(LANG_STRING))
        string = self.c.dialect.text_param(self.c.names.param(STRING))
        # A negative id stands for a type the store holds no literal of (SYNTHETIC_DATATYPES),
        # a date difference's xsd:dayTimeDuration whatever the query's literals are.
        negatives = {DAY_TIME_DURATION: DURATION_ID, **{iri: i for iri, i in self.c.datatype_ids.items() if i < 0}}
        synthetic = " ".join(f"WHEN {i} THEN {self.c.dialect.text_param(self.c.names.param(iri))}"
                             for iri, i in negatives.items())
        negative = f"WHEN {v.dt} < 0 THEN (CASE {v.dt} {synthetic} END) " if v.dt != "NULL" else ""
        lex = (
            f"CASE WHEN {ok} THEN (CASE WHEN {v.lang} IS NOT NULL THEN {lang_string} "
            f"WHEN {v.dt} IS NULL THEN {string} {negative}"
            f"ELSE (SELECT dt_.iri FROM datatypes dt_ WHERE dt_.id = {v.dt}) END) END"
        )
        return _plain_term(ok, 1, lex, lex_guarded=True)

    def _e_Builtin_LANGMATCHES(self, e: CompValue) -> Compiled:
        tag = self.value(e.arg1)
        rng = e.arg2
        if not isinstance(rng, Literal) or rng.datatype is not None or rng.language:
            raise Unsupported("langMatches with a non-constant range")
        text = str(rng)
        if not re.fullmatch(r"\*|[A-Za-z0-9]+(-[A-Za-z0-9]+)*", text):
            raise Unsupported("unusual language range")
        ok = self.ops.in_class(tag, "string")
        if ok is False:
            return ("bool", "NULL")
        if text == "*":
            test = f"{tag.lex} <> ''"
        else:
            p = self.c.dialect.text_param(self.c.names.param(text.lower()))
            prefix = self.c.dialect.text_param(self.c.names.param(text.lower() + "-%"))
            test = f"(lower({tag.lex}) = {p} OR lower({tag.lex}) LIKE {prefix})"
        return ("bool", test if ok is True else f"CASE WHEN {ok} THEN {test} END")

    def _string_args(self, e: CompValue) -> tuple[Val, str, str]:
        """Checks shared by CONTAINS/STRSTARTS/STRENDS: argument compatibility."""
        a = self.value(e.arg1)
        b = e.arg2
        if not isinstance(b, Literal) or (
            b.datatype is not None
            and str(b.datatype) != ("http://www.w3.org/2001/XMLSchema#string")
        ):
            raise Unsupported("string function with a non-constant second argument")
        ok = self.ops.is_string_literal(a, allow_lang=True)
        if ok is False:
            return a, "", "FALSE_TYPE"
        cond = as_sql(ok)
        if b.language:
            lang = self.c.dialect.text_param(self.c.names.param(b.language.lower()))
            cond = f"({cond} AND lower({a.lang}) = {lang})"
        return a, self.c.dialect.text_param(self.c.names.param(str(b))), cond

    def _string_test(self, e: CompValue, make: Callable[[str, str], str]) -> Compiled:
        a, b, cond = self._string_args(e)
        if cond == "FALSE_TYPE":
            return ("bool", "NULL")
        return ("bool", f"CASE WHEN {cond} THEN {make(a.lex, b)} END")

    def _e_Builtin_CONTAINS(self, e: CompValue) -> Compiled:
        return self._string_test(e, self.c.dialect.contains)

    def _e_Builtin_STRSTARTS(self, e: CompValue) -> Compiled:
        return self._string_test(e, lambda a, b: f"(substr({a}, 1, length({b})) = {b})")

    def _e_Builtin_STRENDS(self, e: CompValue) -> Compiled:
        return self._string_test(
            e,
            lambda a, b: (
                f"(length({a}) >= length({b}) AND substr({a}, length({a}) - length({b}) + 1) = {b})"
            ),
        )

    def _e_Builtin_REGEX(self, e: CompValue) -> Compiled:
        text = self.value(e.text)
        pattern, flags = e.pattern, e.flags
        if not isinstance(pattern, Literal) or (
            flags is not None and not isinstance(flags, Literal)
        ):
            raise Unsupported("regex with a non-constant pattern or flags")
        pat, fl = str(pattern), "" if flags is None else str(flags)
        if set(fl) - set("ismxq"):
            return ("bool", "NULL")  # invalid flags: an error for every row
        ok = self.ops.is_string_literal(text, allow_lang=True)
        if ok is False:
            return ("bool", "NULL")
        test = self._regex_test(text.lex, pat, fl)
        return ("bool", test if ok is True else f"CASE WHEN {ok} THEN {test} END")

    def _regex_test(self, lex: str, pat: str, flags: str) -> str:
        d, names = self.c.dialect, self.c.names
        if d.is_pg:
            if flags in ("", "q") and pat and (PLAIN.fullmatch(pat) or "q" in flags):
                return d.contains(lex, d.text_param(names.param(pat)))
            pg = pg_pattern(pat, flags)
            if pg is None:
                raise Unsupported("regex pattern outside the PostgreSQL-safe subset")
            op = "~*" if "i" in flags else "~"
            test = f"({lex} {op} {d.text_param(names.param(pg))})"
            if flags == "i" and _ASCII_WORD.fullmatch(pat):
                # ASCII text (as many bytes as characters) is searched for the lowercased
                # word in its ASCII-lowercased self ("C": whatever the database's locale),
                # which is exact there and a third of the case-blind regex's time (113,000
                # plain literals: 18 against 61 ms; benchmark query 3 at ten million triples
                # was 2.5x Oxigraph); other text keeps the regex.
                low = d.text_param(names.param(pat.lower()))
                return (f"(CASE WHEN octet_length({lex}) = char_length({lex}) "
                        f'THEN strpos(lower({lex} COLLATE "C"), {low}) > 0 ELSE {test} END)')
            return test
        if "q" in flags:
            pat, flags = re.escape(pat), flags.replace("q", "")
        if not flags and PLAIN.fullmatch(pat) and pat:
            return d.contains(lex, d.text_param(names.param(pat)))
        self.c.need_function("sparql_regex")
        call = (
            f"sparql_regex({lex}, {d.text_param(names.param(pat))}, "
            f"{d.text_param(names.param(flags))})"
        )
        if flags == "i" and _ASCII_WORD.fullmatch(pat):
            # SQLite's LIKE folds ASCII case; non-ASCII text (where Unicode case folding
            # can matter, e.g. KELVIN SIGN ~ k) still goes through the exact function.
            # A CASE, not ``LIKE OR (GLOB AND call)``: SQLite evaluates both sides of an OR
            # whose value it computes (as in a CASE branch), and so called the function for
            # every row (benchmark query 3 at ten million triples: 84 ms, 4.5x Oxigraph).
            # Non-ASCII is told by the UTF-8 bytes outnumbering the characters: a GLOB
            # for a character outside ' '..'~' walked each text (3.5 of query 3's 11 ms of
            # SQL, for its 4,169 titles without the word).
            like = d.text_param(names.param(f"%{pat}%"))
            return (f"(CASE WHEN {lex} LIKE {like} THEN 1 "
                    f"WHEN length(CAST({lex} AS BLOB)) <> length({lex}) THEN {call} = 1 "
                    f"WHEN {lex} IS NOT NULL THEN 0 END)")
        return f"({call} = 1)"

    # ------------------------------------------------------------------------ EXISTS

    def _e_Builtin_EXISTS(self, e: CompValue) -> Compiled:
        return ("bool", self.c.exists_sql(e.graph, self.resolve, negate=False))

    def _e_Builtin_NOTEXISTS(self, e: CompValue) -> Compiled:
        return ("bool", self.c.exists_sql(e.graph, self.resolve, negate=True))



# Nested expressions repeat their operands' SQL (a COALESCE in each part of its term, an
# arithmetic result in its packed text); past these sizes an expression is left to
# rdflib rather than sent to the database.  SQLite's parser stack (100 entries) overflows
# at about 20 nested "(CASE ... END)" (measured: 15 pass, 20 fail) and 40 nested calls
# (evaluate.py also falls back when SQLite's parser refuses a statement).  PostgreSQL's
# arithmetic is made of correlated scalar subqueries (fenced: arithmetic.py); a cap on
# their number keeps the planner's work bounded.
_MAX_SQL = 40_000
_MAX_DEPTH_SQLITE = 20  # nesting of "(" and CASE together, in an expression inside a statement
_MAX_DEPTH_PG = 120
_MAX_SUBQUERIES_PG = 400
_NESTING = re.compile(r"[()]|\bCASE\b|\bEND\b")


def _check_size(compiled: Compiled, pg: bool) -> None:
    kind, x = compiled
    parts = [x] if kind == "bool" else [x.kind, x.lex, x.dt, x.num]
    max_depth = _MAX_DEPTH_PG if pg else _MAX_DEPTH_SQLITE
    for sql in parts:
        if len(sql) > _MAX_SQL or (pg and sql.count("SELECT") > _MAX_SUBQUERIES_PG):
            raise Unsupported("an expression nested too deeply for one statement")
        depth = deepest = 0
        for token in _NESTING.findall(sql):
            if token in ("(", "CASE"):
                depth += 1
                deepest = max(deepest, depth)
            else:
                depth -= 1
        if deepest > max_depth:
            raise Unsupported("an expression nested too deeply for one statement")


def _plain_term(ok: str, kind: int, lex: str, *, lex_guarded: bool = False) -> Compiled:
    """A term built by a function (STR, LANG: a simple literal; DATATYPE: an IRI), with no
    datatype, language or number of its own: ``lex`` where ``ok`` holds, unbound elsewhere."""
    return (
        "val",
        Val(
            kind=f"CASE WHEN {ok} THEN {kind} END",
            lex=lex if lex_guarded else f"CASE WHEN {ok} THEN {lex} END",
            dt="NULL",
            lang="NULL",
            num="NULL",
            skind=kind,
            static_dt_known=True,
        ),
    )
