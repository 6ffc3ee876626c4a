"""Aggregates as SQL: ``GROUP BY`` with COUNT, SAMPLE, MIN and MAX (the last two as
window columns, so they return the term SPARQL orders first), SUM and AVG (exact for
integers and decimals, through :mod:`.arithmetic`'s packed numbers) and GROUP_CONCAT
(SPARQL's CONCAT over the group, with or without DISTINCT).

Part of the compiler (:mod:`.compiler`), which it reaches only through
:class:`AggregateHost`: the few compiler services an aggregate needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Variable

from . import sql as ir  # the compiler's SQL building blocks
from .arithmetic import DIVISION_SCALE, Arithmetic, pg_decimal_text
from .arithmetic import SQLITE_AGGREGATES as NUMBER_AGGREGATES
from .values import LITERAL_KIND, STRING, ValueOps

__all__ = ["SQLITE_AGGREGATES", "AggregateCompiler", "AggregateHost"]

_XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


class AggregateHost(Protocol):
    """What aggregate compilation needs of the compiler it is part of."""

    names: ir.Names
    dialect: ir.Dialect
    datatype_ids: Mapping[str, int]
    ops: ValueOps

    def null_id(self) -> str: ...

    def pattern(self, part: Any, scope: ir.GraphScope) -> ir.Block: ...

    def wrap(self, b: ir.Block, *, distinct: bool = False) -> ir.Block: ...

    def value_of(self, b: ir.Block, var: Any) -> ir.Val | None: ...

    def expression_value(self, b: ir.Block, expr: Any) -> ir.Val: ...

    def need_function(self, name: str) -> None: ...

    def render(self, b: ir.Block, *, extra: Iterable[tuple[str, str]] = (), distinct: bool) -> str: ...

    def derived(self, sql: str, refs: Iterable[tuple[Any, ir.VarRef]], prefix: str) -> tuple[ir.Block, str]: ...


class AggregateCompiler:
    """Compiles the aggregate joins of one statement (created by its compiler)."""

    def __init__(self, compiler: AggregateHost) -> None:
        self.c = compiler

    def join(self, part: CompValue, scope: ir.GraphScope) -> ir.Block:
        group = part.p
        b = self.c.pattern(group.p, scope)
        if b.distinct_pending:
            b = self.c.wrap(b, distinct=True)
        extremes = self._extreme_columns(part.A, group.expr or [], b)
        if extremes:
            b, window_alias = self._wrap_with(b, list(extremes.values()))
        keys: list[str] = []
        computed_keys: dict[Variable, ir.Val] = {}
        for e in group.expr or []:
            if not isinstance(e, Variable):
                raise ir.Unsupported("GROUP BY an expression")
            ref = b.vars.get(e)
            if ref is None:
                keys.append(self.c.null_id())
            elif not ref.is_id:
                assert ref.val is not None
                keys += _term_parts(ref.val)
                computed_keys[e] = ref.val
            else:
                keys.append(ref.id)  # type: ignore[arg-type]
        cols: list[str] = []
        outs: list[tuple[Variable, ir.VarRef]] = []
        int_dt = self.c.datatype_ids.get(_XSD_INTEGER)
        for agg in part.A:
            res = agg.res
            col = self.c.names.column(res)
            distinct = "DISTINCT " if agg.distinct == "DISTINCT" else ""
            if agg.name == "Aggregate_Count":
                if agg.vars == "*":
                    if distinct:
                        raise ir.Unsupported("COUNT(DISTINCT *)")
                    count = "COUNT(*)"
                elif isinstance(agg.vars, Variable):
                    ref = b.vars.get(agg.vars)
                    if ref is None:
                        count = "0"
                    elif not ref.is_id:
                        assert ref.val is not None
                        count = f"COUNT({distinct}{_term_key(ref.val) if distinct else ref.val.kind})"
                    else:
                        count = f"COUNT({distinct}{ref.id})"
                else:
                    raise ir.Unsupported("COUNT of an expression")
                val = ir.Val(
                    kind=str(LITERAL_KIND),
                    lex=self.c.dialect.int_to_text(count),
                    dt=str(int_dt) if int_dt is not None else "NULL",
                    lang="NULL",
                    num=count,
                    skind=LITERAL_KIND,
                    sdt=_XSD_INTEGER,
                    static_dt_known=True,
                )
                cols += [f'{e} AS "{c}"' for e, c in ir.val_columns(col, val)]
                outs.append((res, ir.VarRef(id=None, val=val)))
            elif agg.name == "Aggregate_Sample":
                if not isinstance(agg.vars, Variable):
                    raise ir.Unsupported("SAMPLE of an expression")
                ref = b.vars.get(agg.vars)
                if agg.vars in computed_keys:
                    # A computed group key: one value per group, each part taken whole.
                    key = computed_keys[agg.vars]
                    val = ir.Val(kind=f"MIN({key.kind})", lex=f"MIN({key.lex})", dt=f"MIN({key.dt})",
                                 lang=f"MIN({key.lang})", num=f"MIN({key.num})", skind=key.skind, sdt=key.sdt,
                                 slang=key.slang, static_dt_known=key.static_dt_known)
                    cols += [f'{e} AS "{c}"' for e, c in ir.val_columns(col, val)]
                    outs.append((res, ir.VarRef(id=None, val=val)))
                    continue
                if ref is None:
                    cols.append(f'{self.c.null_id()} AS "{col}"')
                elif not ref.is_id:
                    raise ir.Unsupported("SAMPLE of a computed value")
                else:
                    cols.append(f'MIN({ref.id}) AS "{col}"')
                outs.append((res, ir.VarRef(id="x", nullable=True)))
            elif agg.name in ("Aggregate_Min", "Aggregate_Max"):
                _, window_col = extremes[id(agg)]
                cols.append(f'MIN({window_alias}."{window_col}") AS "{col}"')
                outs.append((res, ir.VarRef(id="x", nullable=True)))
            elif agg.name in ("Aggregate_Sum", "Aggregate_Avg"):
                val = self._sum(agg, b)
                cols += [f'{e} AS "{c}"' for e, c in ir.val_columns(col, val)]
                outs.append((res, ir.VarRef(id=None, val=val)))
            elif agg.name == "Aggregate_GroupConcat":
                val = self._group_concat(agg, b)
                cols += [f'{e} AS "{c}"' for e, c in ir.val_columns(col, val)]
                outs.append((res, ir.VarRef(id=None, val=val)))
            else:
                raise ir.Unsupported(agg.name)
        if not cols:
            cols.append("1 AS one_")
        sql = f"SELECT {', '.join(cols)}\nFROM {b.from_sql()}{b.where_sql()}"
        if keys:
            sql += "\nGROUP BY " + ", ".join(keys)
        alias = self.c.names.alias("ag")
        out = ir.Block()
        if keys:
            # Grouping no solutions still gives one (empty) solution, as rdflib and the
            # W3C tests (agg-empty-group) have it: left-join the groups to one row.
            out.add_item(f"(SELECT 1 AS one) AS {alias}u")
            out.add_item(f"(\n{sql}\n) AS {alias}", "TRUE", left=True)
        else:
            out.add_item(f"(\n{sql}\n) AS {alias}")
        for var, ref in outs:
            col = self.c.names.column(var)
            if ref.is_id:
                out.vars[var] = ir.VarRef(id=f'{alias}."{col}"', nullable=True)
            else:
                assert ref.val is not None
                out.vars[var] = ir.VarRef(
                    id=None, val=ir.val_from_columns(alias, col, ref.val), nullable=bool(keys)
                )
        return out

    def _sum(self, agg: CompValue, b: ir.Block) -> ir.Val:
        """SUM or AVG of a group: XPath's addition over the values (an empty group gives
        ``0``); a value that is not a number, or unbound, makes the aggregate an error
        (unbound), as SPARQL's ListEval and Oxigraph have it (rdflib skips unbound ones)."""
        if agg.distinct == "DISTINCT":
            raise ir.Unsupported(f"{agg.name} of DISTINCT values")
        v = self._aggregated(agg, b)
        arith = Arithmetic(self.c)
        p, ranks = arith.packed(v)
        if any(r > 3 for r in ranks):
            raise ir.Unsupported(f"{agg.name} of durations")
        avg = agg.name == "Aggregate_Avg"
        result_ranks = frozenset({0} | ({max(r, 1) for r in ranks} if avg else set(ranks)))
        if self.c.dialect.is_pg:
            bad = f"SUM(CASE WHEN {p} IS NULL THEN 1 ELSE 0 END)"
            rank = f"MAX(CAST(substr({p}, 1, 1) AS INTEGER))"
            exact = f"SUM(CASE WHEN substr({p}, 1, 1) IN ('0', '1') THEN CAST(substr({p}, 3) AS NUMERIC) END)"
            double = f"SUM(CAST(substr({p}, 3) AS DOUBLE PRECISION))"
            n = f"COUNT({p})"
            if avg:
                quotient = f"CAST(trunc({exact} / ({n} * CAST('1.{'0' * 40}' AS NUMERIC)), {DIVISION_SCALE}) AS TEXT)"
                small = f"'1:' || {pg_decimal_text(quotient)}"
                large = f"CAST({rank} AS TEXT) || ':' || CAST({double} / {n} AS TEXT)"
            else:
                small = f"CAST({rank} AS TEXT) || ':' || CAST({exact} AS TEXT)"
                large = f"CAST({rank} AS TEXT) || ':' || CAST({double} AS TEXT)"
            packed = (f"(CASE WHEN {bad} > 0 THEN NULL WHEN {n} = 0 THEN '0:0' "
                      f"WHEN {rank} <= 1 THEN {small} ELSE {large} END)")
        else:
            name = "sparql_avg" if avg else "sparql_sum"
            self.c.need_function(name)
            # Python's sqlite3 gives NULL for an aggregate that never stepped: an empty group
            # is 0 here.
            packed = f"(CASE WHEN COUNT(*) = 0 THEN '0:0' ELSE {name}({p}) END)"
        return arith.result(packed, result_ranks)

    def _aggregated(self, agg: CompValue, b: ir.Block) -> ir.Val:
        """The value an aggregate takes of each solution (unbound: an error for every row)."""
        if isinstance(agg.vars, Variable):
            v = self.c.value_of(b, agg.vars)
            return v if v is not None else ir.ERROR
        return self.c.expression_value(b, agg.vars)

    def _group_concat(self, agg: CompValue, b: ir.Block) -> ir.Val:
        """GROUP_CONCAT: SPARQL's CONCAT of the group's values with the separator, in no
        particular order (the empty simple literal for an empty group).  As CONCAT, it
        keeps a language tag that every value has, and ``xsd:string`` if every value is
        one; a value that is not a string literal, or unbound, makes it an error (unbound),
        as SPARQL's ListEval and Oxigraph have it (rdflib skips unbound values and writes
        any other term as text)."""
        v = self._aggregated(agg, b)
        d = self.c.dialect
        sep = d.text_param(self.c.names.param(" " if agg.separator is None else str(agg.separator)))
        ok = False if v.kind == "NULL" else self.c.ops.is_string_literal(v, allow_lang=True)
        good = "FALSE" if ok is False else f"{v.kind} IS NOT NULL" + ("" if ok is True else f" AND {ok}")
        fine = f"COALESCE(SUM(CASE WHEN {good} THEN 0 ELSE 1 END), 0) = 0"
        lex = f"CAST({v.lex} AS TEXT)"  # typed, should it be a bare NULL (an error)
        if agg.distinct != "DISTINCT":
            joined = f"string_agg({lex}, {sep})" if d.is_pg else f"group_concat({lex}, {sep})"
        elif d.is_pg and (v.static_dt_known or v.kind == "NULL"):
            joined = f"string_agg(DISTINCT {lex}, {sep})"  # one datatype and tag: texts are terms
        elif d.is_pg:
            # Distinct terms (a text and its language tag and datatype), an outer-level
            # aggregate read back in a scalar subquery (its arguments are columns: a
            # constant's would be the subquery's own, which PostgreSQL refuses in FROM).
            joined = (f"(SELECT string_agg(t.v->>0, {sep}) FROM unnest(array_agg(DISTINCT jsonb_build_array("
                      f"{lex}, lower(CAST({v.lang} AS TEXT)), CAST({v.dt} AS INTEGER)))) AS t(v))")
        else:
            self.c.need_function("sparql_concat_distinct")
            joined = f"sparql_concat_distinct({v.lex}, {v.lang}, {v.dt}, {sep})"
        string_id = self.c.datatype_ids.get(STRING)
        some = "COUNT(*) > 0"
        same_lang = (f"{some} AND COUNT({v.lang}) = COUNT(*) AND MIN(lower({v.lang})) = MAX(lower({v.lang}))")
        return ir.Val(
            kind=f"(CASE WHEN {fine} THEN {LITERAL_KIND} END)",
            lex=f"(CASE WHEN {fine} THEN COALESCE({joined}, '') END)",
            dt=(f"(CASE WHEN {fine} AND {some} AND MIN(CASE WHEN {v.dt} = {string_id} THEN 1 ELSE 0 END) = 1 "
                f"THEN {string_id} END)") if string_id is not None else "NULL",
            lang=f"(CASE WHEN {fine} AND {same_lang} THEN MIN({v.lang}) END)",
            num="NULL",
            skind=LITERAL_KIND,
        )

    def _extreme_columns(
        self, aggregates: list[CompValue], group_by: list[Any], b: ir.Block
    ) -> dict[int, tuple[str, str]]:
        """MIN/MAX as window columns: the first id of each group in SPARQL's ORDER BY
        order (MAX: descending), unbound values last.  SQL's MIN/MAX would compare ids
        or raw numbers; this way the result is the term SPARQL orders first, which is
        also what rdflib's evaluator returns."""
        out: dict[int, tuple[str, str]] = {}
        partition = []
        for e in group_by:
            if not isinstance(e, Variable):
                return {}  # GROUP BY an expression: the caller refuses it
            ref = b.vars.get(e)
            if ref is None:
                continue  # unbound in every solution: one NULL key, which partitions nothing
            if not ref.is_id:
                assert ref.val is not None
                partition += _term_parts(ref.val)
                continue
            partition.append(ref.id)
        for agg in aggregates:
            if agg.name not in ("Aggregate_Min", "Aggregate_Max"):
                continue
            if not isinstance(agg.vars, Variable):
                raise ir.Unsupported(f"{agg.name} of an expression")
            ref = b.vars.get(agg.vars)
            if ref is None or not ref.is_id:
                raise ir.Unsupported(f"{agg.name} of an unbound or computed value")
            val = self.c.value_of(b, agg.vars)
            assert val is not None
            desc = " DESC" if agg.name == "Aggregate_Max" else ""
            order = [f"CASE WHEN {ref.id} IS NULL THEN 1 ELSE 0 END"]
            order += [k + desc for k in self.c.ops.order_keys(val)]
            order.append(f"{ref.id}")
            over = (f"PARTITION BY {', '.join(partition)} " if partition else "") + (
                "ORDER BY " + ", ".join(order)
            )
            col = f"m{len(out)}_{self.c.names.column(agg.res)}"
            out[id(agg)] = (f"FIRST_VALUE({ref.id}) OVER ({over})", col)
        return out

    def _wrap_with(self, b: ir.Block, extra: list[tuple[str, str]]) -> tuple[ir.Block, str]:
        """Like :meth:`wrap`, also carrying ``extra`` computed columns."""
        return self.c.derived(self.c.render(b, extra=extra, distinct=False), b.vars.items(), "w")


def _term_key(v: ir.Val) -> str:
    """One text per computed term, NULL when it is unbound or an error (its kind is then
    NULL): what ``COUNT(DISTINCT ...)`` of a computed value counts, terms being the same
    when kind, datatype, language tag (without case) and lexical form are. The lexical
    form comes last, so no two different terms give the same text."""
    return (f"(CASE WHEN {v.kind} IS NULL THEN NULL ELSE CAST({v.kind} AS TEXT) || '|' || "
            f"COALESCE(CAST({v.dt} AS TEXT), '') || '|' || COALESCE(lower({v.lang}), '') || '|' || {v.lex} END)")


def _term_parts(v: ir.Val) -> list[str]:
    """The SQL that tells a computed term from another (language tags compare without
    case); constant parts left out (both databases read ``GROUP BY 2`` as the second
    column of the result)."""
    parts = [v.kind, v.lex, v.dt, f"lower({v.lang})"]
    return [p for p in parts if p not in ("NULL", "lower(NULL)") and not p.lstrip("-").isdigit()]


class _ConcatDistinct:
    """SQLite's GROUP_CONCAT(DISTINCT ...): SQLite's own takes no separator with DISTINCT,
    and would compare texts, not terms (a text with two language tags is two values)."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str | None, int | None]] = set()
        self.parts: list[str] = []
        self.separator = " "

    def step(self, lex: str | None, lang: str | None, dt: int | None, separator: str) -> None:
        self.separator = separator
        if lex is None:
            return  # an error, which the statement's own count sees
        key = (lex, None if lang is None else lang.lower(), dt)
        if key not in self.seen:
            self.seen.add(key)
            self.parts.append(lex)

    def finalize(self) -> str:
        return self.separator.join(self.parts)


#: ``name: (arguments, class)``: the aggregates SQLite runs in Python.
SQLITE_AGGREGATES: dict[str, tuple[int, Any]] = {
    **NUMBER_AGGREGATES, "sparql_concat_distinct": (4, _ConcatDistinct),
}
