"""SQL building blocks for the SPARQL compiler: dialects, term values and blocks.

The compiler builds SQL *text*, not SQLAlchemy expression trees: the statements are
large, generated once per query and printed by ``catalogue query --explain``, so they
should read like SQL a person would write.  Only integer term ids and numbers the
compiler computed itself are written inline; every string from the query goes through
a bound parameter.

A :class:`Block` is one ``SELECT ... FROM ... WHERE ...`` under construction.  Inner
joins, filters and left joins of SPARQL patterns are merged into a single block where
SPARQL semantics allow it, so that the database's planner sees one flat join (that is
what makes compiled queries fast); anything that needs its own scope (UNION, grouping,
DISTINCT, LIMIT) is rendered and wrapped as a derived table.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Block", "Dialect", "GraphScope", "Names", "Unsupported", "Val", "VarRef"]


class Unsupported(Exception):
    """This part of the query is not compiled; rdflib's evaluator answers it instead."""


class Dialect:
    """What differs between SQLite and PostgreSQL in the SQL the compiler writes."""

    def __init__(self, name: str) -> None:
        if name not in ("sqlite", "postgresql"):
            raise Unsupported(f"no SPARQL compiler for the {name} dialect")
        self.name = name
        self.is_pg = name == "postgresql"

    def text_order(self, expr: str) -> str:
        """``expr`` compared by code point: SPARQL orders strings by code point, which is
        UTF-8 byte order; PostgreSQL needs the C collation for that, SQLite's default
        BINARY collation already is."""
        return f'({expr} COLLATE "C")' if self.is_pg else expr

    def contains(self, haystack: str, needle: str) -> str:
        fn = "strpos" if self.is_pg else "instr"
        return f"({fn}({haystack}, {needle}) > 0)"

    def limit(self, limit: int | None, offset: int) -> str:
        parts = []
        if limit is not None:
            parts.append(f"LIMIT {int(limit)}")
        elif offset and not self.is_pg:
            parts.append("LIMIT -1")
        if offset:
            parts.append(f"OFFSET {int(offset)}")
        return " ".join(parts)

    def text_param(self, name: str) -> str:
        return f"CAST(:{name} AS TEXT)"

    def num_literal(self, value: float) -> str:
        if value != value:  # NaN has no comparable value
            return "NULL"
        if value in (float("inf"), float("-inf")):
            if self.is_pg:
                return (
                    "CAST('Infinity' AS DOUBLE PRECISION)"
                    if value > 0
                    else ("CAST('-Infinity' AS DOUBLE PRECISION)")
                )
            return "9e999" if value > 0 else "-9e999"
        text = repr(float(value))
        return f"CAST({text} AS DOUBLE PRECISION)" if self.is_pg else text

    def int_to_text(self, expr: str) -> str:
        return f"CAST({expr} AS TEXT)"

    @property
    def _xsd_spaces(self) -> str:
        return "' ' || chr(9) || chr(10) || chr(13)" if self.is_pg else "' ' || char(9, 10, 13)"

    def xsd_trim(self, lex: str) -> str:
        """``lex`` without the XSD whitespace around it (the ``collapse`` facet's ends)."""
        return f"btrim({lex}, {self._xsd_spaces})" if self.is_pg else f"trim({lex}, {self._xsd_spaces})"

    def zoned(self, lex: str) -> str:
        """Whether the date/time lexical form ``lex`` ends with a time zone (``Z`` or
        ``±hh:mm``, before trailing XSD whitespace): :func:`catalogue.graph.terms.is_zoned`."""
        text = f"rtrim({lex}, {self._xsd_spaces})"
        return f"({text} LIKE '%Z' OR {text} LIKE '%+__:__' OR {text} LIKE '%-__:__')"

    @staticmethod
    def zone_length(text: str) -> str:
        """The length of the time zone that ends a trimmed date/time lexical form: 1 for
        ``Z``, 6 for ``±hh:mm``, 0 for none."""
        return (f"(CASE WHEN {text} LIKE '%Z' THEN 1 WHEN substr({text}, length({text}) - 5, 1) IN ('+', '-') "
                f"AND substr({text}, length({text}) - 2, 1) = ':' THEN 6 ELSE 0 END)")


@dataclass(frozen=True)
class GraphScope:
    """Which graph triple patterns match: the union of all graphs, one graph (by term
    id; ``-1`` for a graph that does not exist) or the graph named by a variable."""

    mode: str  # "union" | "const" | "var"
    gid: int = -1
    var: Any = None


@dataclass(frozen=True)
class Val:
    """The parts of an RDF term value as SQL expressions (``NULL`` kind: unbound/error).

    ``skind``/``sdt``/``slang`` carry what is known at compile time (for constants and
    computed values), so the compiler can specialise comparisons instead of writing
    run-time type dispatch.  ``sdt`` is the datatype IRI; ``dt`` the SQL expression of
    the datatype id in the ``datatypes`` table (which may be ``NULL`` for a datatype the
    database has never seen, hence the static copy).
    """

    kind: str
    lex: str
    dt: str
    lang: str
    num: str
    id: str | None = None
    skind: int | None = None
    sdt: str | None = None
    slang: str | None = None
    static_dt_known: bool = False
    #: Whether a date/time constant carries a time zone (None: not known statically).
    szoned: bool | None = None
    #: For a computed number (:mod:`.arithmetic`): SQL for its packed text (rank and
    #: exact value) and the promotion ranks it can have.
    packed: str | None = None
    ranks: frozenset[int] = frozenset()
    #: A stored term that every solution binds (``id`` is never NULL): an EXISTS
    #: correlated on it compares ids plainly, which an index serves (``x IS NULL OR``
    #: kept SQLite from it: FILTER NOT EXISTS over 212 datasets, 11.7 -> 0.6 ms).
    bound: bool = False


@dataclass
class VarRef:
    """How a variable is available in a block: a term id column or a computed value."""

    id: str | None
    val: Val | None = None
    nullable: bool = False
    #: For a computed value that is one of the query's constants (VALUES with a term
    #: the database does not hold): SQL for its term id, NULL where it is not stored (no
    #: stored term is then the same term). A join with stored terms compares ids, which
    #: the database can look up by index, instead of the terms' parts.
    stored_id: str | None = None

    @property
    def is_id(self) -> bool:
        return self.id is not None


#: Aliases of the one-row table, unique within the process (so within any statement).
_UNITS = itertools.count()


def _unit() -> str:
    """One row and no variables: the join identity, what a group with nothing in it
    matches; each with an alias of its own (joined groups copy each other's items)."""
    return f"(SELECT 1 AS one) AS unit_{next(_UNITS)}"


@dataclass
class Block:
    """A flat ``SELECT`` under construction.

    ``items`` is the FROM clause as ``(join, source, on)``: the first item's join is
    ``""``; later ones are ``"JOIN"`` or ``"LEFT JOIN"``.  ``distinct_pending`` marks a
    block that still owes a DISTINCT over all its variables (triple patterns matched
    against the union of graphs see a triple once per graph holding it; see
    ``patterns.py``).
    """

    items: list[tuple[str, str, str | None]] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    vars: dict[Any, VarRef] = field(default_factory=dict)
    distinct_pending: bool = False
    # id expression -> alias of the ``terms`` row joined for it (one join per value).
    term_joins: dict[str, str] = field(default_factory=dict)
    #: The column holding this block's per-solution seed of ``BNODE(str)``, once a BIND
    #: over it has drawn one (see ``compiler._p_Extend``).
    bnode_seed: str | None = None
    #: Whether each solution stays apart from every other in a DISTINCT over the
    #: variables after a join: distinct rows binding every variable (a VALUES without
    #: UNDEF, a SELECT DISTINCT sub-select, triple patterns in one graph, the empty
    #: pattern), or rows numbered in a hidden variable (a sliced sub-select, any other
    #: VALUES of several rows). Joined with a block owing a DISTINCT, the DISTINCT can then
    #: come after the join instead of wrapping the other block. Not copied: a block
    #: extended is no longer known.
    distinct_set: bool = False

    def copy(self) -> Block:
        """A block to extend without changing this one (its lists and maps copied)."""
        return Block(
            items=list(self.items),
            where=list(self.where),
            vars=dict(self.vars),
            distinct_pending=self.distinct_pending,
            term_joins=dict(self.term_joins),
            bnode_seed=self.bnode_seed,
        )

    def add_item(self, source: str, on: str | None = None, *, left: bool = False) -> None:
        if not self.items and left:
            # A group that starts with OPTIONAL: the optional part joins the one empty
            # solution (SPARQL's join identity), as the block with no items stands for.
            self.items.append(("", _unit(), None))
        if not self.items:
            self.items.append(("", source, None))
            if on:
                self.where.append(on)
            return
        self.items.append(("LEFT JOIN" if left else "JOIN", source, on or "TRUE"))

    def from_sql(self) -> str:
        if not self.items:
            return _unit()
        out = []
        for join, source, on in self.items:
            if not join:
                out.append(source)
            elif join == "CROSS JOIN":
                out.append(f"CROSS JOIN {source}")
            else:
                out.append(f"{join} {source} ON {on}")
        return "\n  ".join(out)

    def where_sql(self) -> str:
        return f"\nWHERE {' AND '.join(self.where)}" if self.where else ""


class Names:
    """Unique aliases, column names and bound parameters for one compiled statement."""

    def __init__(self) -> None:
        self._counter = itertools.count()
        self._columns: dict[Any, str] = {}
        self.params: dict[str, Any] = {}

    def alias(self, prefix: str) -> str:
        return f"{prefix}{next(self._counter)}"

    def column(self, var: Any) -> str:
        """The column name that carries ``var`` in every derived table of the query."""
        col = self._columns.get(var)
        if col is None:
            col = f"v{len(self._columns)}"
            self._columns[var] = col
        return col

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return name


def and_all(conds: list[str]) -> str:
    if not conds:
        return "TRUE"
    if len(conds) == 1:
        return conds[0]
    return "(" + " AND ".join(conds) + ")"


VAL_PARTS = ("k", "l", "d", "g", "n")


def val_columns(col: str, val: Val) -> list[tuple[str, str]]:
    """``(expression, column name)`` pairs that carry a computed value through a
    derived table."""
    # A bare NULL column is text to PostgreSQL, which then refuses to compare it with an
    # id ("operator does not exist: text = integer"): kind and datatype get their type.
    kind = "CAST(NULL AS INTEGER)" if val.kind == "NULL" else val.kind
    dt = "CAST(NULL AS INTEGER)" if val.dt == "NULL" else val.dt
    exprs = (kind, val.lex, dt, val.lang, val.num)
    return [(e, f"{col}_{p}") for e, p in zip(exprs, VAL_PARTS, strict=True)]


def val_from_columns(table: str, col: str, val: Val) -> Val:
    """The same computed value, read back from a derived table's columns."""
    k, lx, d, g, n = (f'{table}."{col}_{p}"' for p in VAL_PARTS)
    return Val(
        kind=k,
        lex=lx,
        dt=d,
        lang=g,
        num=n,
        id=None,
        skind=val.skind,
        sdt=val.sdt,
        slang=val.slang,
        static_dt_known=val.static_dt_known,
    )


#: No value: unbound, or an error for every row (SQL's NULL in every part).
ERROR = Val(kind="NULL", lex="NULL", dt="NULL", lang="NULL", num="NULL", id="NULL")
