"""Run compiled SQL in place of rdflib's evaluator, through ``CUSTOM_EVALS``.

The hook is registered by :func:`catalogue.graph.sparql.hooks.install` (which the
store's first query or update calls), never by importing this module.

rdflib evaluates a query by calling ``evalPart`` on each algebra node, and asks every
function in :data:`rdflib.plugins.sparql.CUSTOM_EVALS` first.  :func:`evaluate_part`
answers any solution-producing node whose graph lives in a registered store
(:mod:`.source`): it
compiles the node (and everything below it) into one SQL statement and streams the
rows back as rdflib solutions.  When a node cannot be compiled it declines, rdflib
evaluates that node itself and calls back for its children, so every query is answered,
and the compiled share is as large as the compiler allows.  ``Dataset.query``,
``Catalogue.query`` and ``catalogue query`` all take this path.

Recorded SQL: when ``store.sql_log`` is a list, every statement that ran is appended
to it (``catalogue query --explain`` prints them), with a note for each node that fell
back to rdflib.
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from rdflib.graph import ConjunctiveGraph, Graph
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import FrozenBindings, QueryContext
from rdflib.term import BNode, Literal, Node, URIRef, Variable
from sqlalchemy.exc import DBAPIError

from ..database import database_key
from ..deadline import check_deadline
from ..dialect.driver import driver_connection, driver_errors
from .aggregates import SQLITE_AGGREGATES
from .arithmetic import datatype_of, sparql_arith, sparql_boolean, sparql_lex, sparql_num
from .cardinality import Cardinality
from .casts import SQLITE_FUNCTIONS as CAST_FUNCTIONS
from .compiler import ALGEBRA, Compiler, Statement, bnode_strings_chained, iter_parts
from .describe import default_graph, describe
from .explain import ExplainEntry
from .functions import SQLITE_FUNCTIONS, VOLATILE_FUNCTIONS, has_digest
from .geo import resolve as resolve_lookups
from .geof import relate_text
from .guard import guarded_sql, is_empty
from .join_order import JoinStatistics, join_statistics
from .numbers import with_synthetic
from .pg_cursor import read_rows
from .query import TOP_ASK, TOP_SELECT
from .regex import compile_pattern
from .source import QuadSource, source_of
from .sql import GraphScope, Unsupported
from .statement_cache import STATEMENTS

__all__ = ["ExplainEntry", "compile_part", "evaluate_part"]

# Nodes worth compiling on their own.  Query forms (SelectQuery, ...) stay with rdflib,
# which wraps the solutions of their pattern; a lone Group is handled by its
# AggregateJoin; lone VALUES are cheaper in Python.
_COMPILED = ALGEBRA - {"ToMultiSet", "values", "Group"}


@dataclass(frozen=True)
class _Inputs:
    """What a part's statement is compiled from, besides the ids of its constants."""

    bindings: dict[Variable, Node]
    #: The nodes whose ids are looked up (the constants, the bound values, the graphs).
    nodes: frozenset[Node]
    default_name: Node | None
    union: bool
    #: The statement cache's context (:data:`.statement_cache.Context`).
    context: tuple[Any, ...]
    statistics: JoinStatistics | None


def _optionals(part: CompValue) -> tuple[tuple[frozenset[Variable], frozenset[Variable]], ...]:
    """For each OPTIONAL below ``part``: the variables its left side may bind, and those
    its right side and filter mention. An outer variable (rdflib evaluating a lazy join,
    one solution of its left side at a time) that the right side mentions and the left
    side does not bind must not be put in as a constant: a left row whose optional part
    matches with another value would come back without it (SPARQL joins the group's
    solutions, made without the outer value, and that row then does not join):
    ``?s :p ?a { ?b :q ?c OPTIONAL { ?a :r ?b } }``. rdflib's own OPTIONAL checks a row
    without a match again without the outer values; such parts are left to it."""
    return tuple(
        (frozenset(getattr(node.p1, "_vars", None) or ()), frozenset(_mentioned(node.p2) | _mentioned(node.expr)))
        for node in iter_parts(part) if node.name == "LeftJoin")


def _mentioned(part: Any) -> set[Variable]:
    """The variables an algebra node or expression mentions (rdflib's ``_vars`` of its
    patterns, and those an expression holds itself)."""
    found: set[Variable] = set()
    for node in iter_parts(part):
        found |= getattr(node, "_vars", None) or set()
        found.update(v for v in node.values() if isinstance(v, Variable))
        found.update(i for v in node.values() if isinstance(v, list) for i in v if isinstance(i, Variable))
    if isinstance(part, Variable):
        found.add(part)
    return found


def _inputs(store: QuadSource, ctx: QueryContext, part: CompValue) -> _Inputs:
    """:func:`compile_part`'s first half: what to look up (raises Unsupported)."""
    graph = ctx.graph
    bindings = {k: v for k, v in ctx.solution().items() if isinstance(k, Variable)}
    facts = _facts(part)
    if bindings and facts.sub_select:
        # rdflib pushes outer bindings into sub-selects; keep its semantics there.
        raise Unsupported("sub-select evaluated under outer bindings")
    if bindings and any(right & bindings.keys() - left for left, right in facts.optionals):
        raise Unsupported("OPTIONAL over a variable bound outside the group")
    constants = facts.constants | {v for v in bindings.values() if isinstance(v, URIRef | Literal | BNode)}
    if isinstance(graph, ConjunctiveGraph):
        default_name = default_graph(graph).identifier
        union = graph.default_union
    else:
        dataset = ctx.dataset if ctx._dataset is not None else None
        if dataset is None and any(p.name == "Graph" for p in iter_parts(part)):
            raise Unsupported("GRAPH over a plain graph")
        default_name = default_graph(dataset).identifier if dataset is not None else None
        union = False
    named: list[Node] = [default_name] if default_name is not None else []
    if not isinstance(graph, ConjunctiveGraph):
        assert isinstance(graph, Graph)
        named.append(graph.identifier)
    # PostgreSQL orders joins by the planner's statistics (:mod:`.join_order`); a statement
    # compiled before there were any (no ANALYZE yet) is compiled again once there are.
    statistics = join_statistics(store.connection) if store.dialect_name == "postgresql" else None
    context = (store.dialect_name, _database(store), default_name, union,
               None if isinstance(graph, ConjunctiveGraph) else graph.identifier, TOP_ASK.get() == id(part),
               statistics is not None)
    return _Inputs(bindings, frozenset(constants | {n for n in named if n is not None}), default_name, union,
                   context, statistics)


def compile_part(store: QuadSource, ctx: QueryContext, part: CompValue) -> Statement:
    """Compile ``part`` for evaluation in ``ctx`` (raises Unsupported)."""
    inputs = _inputs(store, ctx, part)
    return _compiled(store, ctx, part, inputs, store.lookup_term_ids(inputs.nodes))


def _compiled(store: QuadSource, ctx: QueryContext, part: CompValue, inputs: _Inputs,
              ids: dict[Node, int]) -> Statement:
    """:func:`compile_part`'s second half, given the ids of ``inputs.nodes``."""
    graph, bindings, default_name = ctx.graph, inputs.bindings, inputs.default_name
    default_id = ids.get(default_name) if default_name is not None else None
    if isinstance(graph, ConjunctiveGraph):
        scope = GraphScope("union") if inputs.union else GraphScope("const", gid=default_id or -1)
    else:
        gid = ids.get(graph.identifier)
        scope = GraphScope("const", gid=-1 if gid is None else gid)
    # A literal of a type the store holds none of gets a negative id (numbers.SYNTHETIC_DATATYPES).
    datatypes = with_synthetic(store.datatype_ids(), {str(n.datatype) for n in inputs.nodes
                                                      if isinstance(n, Literal) and n.datatype is not None})
    first_only = TOP_ASK.get() == id(part)
    if not bindings:
        cached = STATEMENTS.get(part, inputs.context, ids, datatypes, scope=scope, default_id=default_id)
        if cached is not None:
            return cached
    compiler = Compiler(
        dialect=store.dialect_name,
        term_ids=ids,
        datatype_ids=datatypes,
        scope=scope,
        default_graph_id=default_id,
        bindings=bindings,
        join_statistics=inputs.statistics,
        # SQLite only: PostgreSQL planned benchmark query 1 seeded from its list cells with
        # the arrays' four joined patterns estimated at one row (the columns taken as
        # independent), and looped over the closure for each of their 11,374: 472 ms,
        # against about 420 ms seeded from the arrays as the constants around them decide.
        # Nor under bindings (rdflib evaluating a part once per outer row): each row's
        # values would be counted afresh.
        cardinality=(Cardinality(store.connection, inputs.context[1])
                     if store.dialect_name == "sqlite" and not bindings else None),
        now=ctx.now,
        base=getattr(ctx.prologue, "base", None),
        digest=store.dialect_name == "postgresql" and has_digest(store.connection),
        bnode_strings=TOP_SELECT.get() == id(part) and bnode_strings_chained(part),
    )
    stmt = compiler.statement(part, first_only=first_only)
    # Not with spatial lookups: their geometries would be shared between threads, and a
    # prepared GEOS geometry is not safe to use from two at once.
    # Nor with NOW(): the next query's instant is another.
    if not bindings and not stmt.lookups and not stmt.volatile:
        guarded = guarded_sql(stmt.sql, inputs.nodes, ids, datatypes) if store.dialect_name == "postgresql" else None
        STATEMENTS.put(part, inputs.context, ids, datatypes, stmt, scope=scope, default_id=default_id,
                       guarded=guarded)
    return stmt


@dataclass(frozen=True)
class _PartFacts:
    """What :func:`_inputs` needs of a part's algebra, whatever the outer bindings."""

    constants: frozenset[Node]
    #: A sub-select below the part.
    sub_select: bool
    #: :func:`_optionals` of the part.
    optionals: tuple[tuple[frozenset[Variable], frozenset[Variable]], ...]


_FACTS: OrderedDict[int, tuple[Any, _PartFacts]] = OrderedDict()


def _facts(part: CompValue) -> _PartFacts:
    """The facts of a part, remembered per part (parsed queries are cached, so the same
    algebra objects come back, and rdflib evaluates a lazily joined part once per outer
    solution: walking it each time cost 50 us a row; the part is kept referenced so its
    id stays its)."""
    hit = _FACTS.get(id(part))
    if hit is not None and hit[0] is part:
        _FACTS.move_to_end(id(part))
        return hit[1]
    found = _PartFacts(frozenset(Compiler.constants(part)),
                       any(p.name in ("Project", "AggregateJoin") for p in iter_parts(part.get("p"))),
                       _optionals(part))
    _FACTS[id(part)] = (part, found)
    if len(_FACTS) > 1024:
        _FACTS.popitem(last=False)
    return found


def evaluate_part(ctx: QueryContext, part: CompValue) -> Any:
    """The ``CUSTOM_EVALS`` hook: SQL for ``part`` or ``NotImplementedError``."""
    check_deadline()  # rdflib passes every algebra node it evaluates through here
    name = getattr(part, "name", None)
    if name not in _COMPILED and name != "DescribeQuery":
        raise NotImplementedError
    store = source_of(ctx.graph)
    if store is None or not getattr(store, "compile_sparql", True):
        raise NotImplementedError
    if name == "DescribeQuery":
        return describe(store, ctx, part)
    log = getattr(store, "sql_log", None)
    sent: _Sent | None = None
    try:
        inputs = _inputs(store, ctx, part)
        guess = None
        if store.dialect_name == "postgresql" and log is None and not inputs.bindings:
            guess = STATEMENTS.peek(part, inputs.context)
        if guess is not None and guess.guarded is not None and not guess.empty:
            # The statement kept for the part, run with its check: one round trip, where
            # the ids' lookup and then the statement took two (:mod:`.guard`).
            guarded = replace(guess.statement, sql=guess.guarded)
            sent, empty = is_empty(_execute(store, guarded, known_as=guess.statement.sql))
            if empty:  # the check failed, or the answer is empty: asked the usual way
                sent[1]()
                sent = None
        if sent is not None and guess is not None:
            stmt = guess.statement
        else:
            stmt = _compiled(store, ctx, part, inputs, store.lookup_term_ids(inputs.nodes))
    except Unsupported as exc:
        if log is not None:
            log.append(ExplainEntry(None, {}, f"{part.name}: {exc}"))
        raise NotImplementedError from exc
    shown = dict(stmt.params)
    if stmt.lookups:
        for report, lookup in zip(
            resolve_lookups(store.connection, list(stmt.lookups), stmt.params), stmt.lookups, strict=True
        ):
            shown[lookup.param] = report.shown
            if log is not None:
                log.append(ExplainEntry(report.sql, report.params, comment=report.comment))
    if log is not None:
        log.append(ExplainEntry(stmt.sql, shown))
    bound = {k: v for k, v in ctx.solution().items()}
    top = part
    while top.name in ("Slice", "Distinct", "Reduced", "OrderBy"):
        top = top.p
    if top.name == "Project":
        keep = set(top.PV)
        bound = {k: v for k, v in bound.items() if k in keep}
    plain = not bound and TOP_SELECT.get() == id(part)
    sqlite_cursor = None
    if store.dialect_name != "postgresql":
        # SQLite parses the statement when it is executed: opened here, a statement its
        # parser cannot take (its stack holds about 20 nested CASEs) is rdflib's to answer.
        try:
            sqlite_cursor = _sqlite_cursor(store, stmt)
        except Exception as exc:
            if "parser stack overflow" not in str(exc):
                raise
            if log is not None:
                log.append(ExplainEntry(None, {}, f"{part.name}: SQLite's parser stack overflows"))
            raise NotImplementedError from exc
    if store.dialect_name == "postgresql" and sent is None:
        sent = _execute(store, stmt)
        if log is None and not inputs.bindings:  # whether to guess next time (:mod:`.guard`)
            sent, empty = is_empty(sent)
            STATEMENTS.note_empty(part, inputs.context, empty)
    rows = _rows(store, ctx, stmt, bound, plain=plain, sqlite_cursor=sqlite_cursor, sent=sent)
    if sent is not None:
        # A generator that never started never runs its ``finally``: the cursor of a
        # result rdflib never iterates is closed when the generator is collected, as an
        # abandoned one is (closing twice does nothing).
        weakref.finalize(rows, sent[1])
    return rows


def _database(store: QuadSource) -> str:
    """Which database ``store`` is on (statements are kept per database: a guess sent to
    another could fail there)."""
    return database_key(store.connection.engine)


#: Rows of a statement already sent (its batches, and what closes it unread).
_Sent = tuple[Iterator[Any], Callable[[], None]]


def _bounded(stmt: Statement) -> bool:
    """Whether ``stmt``'s rows are read at once rather than through a cursor."""
    return stmt.max_rows is not None and stmt.max_rows <= _FETCH


def _execute(store: QuadSource, stmt: Statement, known_as: str | None = None) -> _Sent:
    """PostgreSQL: run ``stmt`` now (as SQLite's cursor is opened when the part is
    evaluated: the rows are those of the database when the query was asked, whether the
    statement was guessed or not): its rows, bounded results read at once, others
    through a server-side cursor. A failed statement aborts the transaction: it is
    rolled back, as :func:`_rows` does. ``known_as``: the statement ``stmt`` is a form of
    (:func:`.pg_cursor.read_rows`)."""
    conn = store.connection
    try:
        batches, close = read_rows(conn, stmt.sql, stmt.params, _FETCH, bounded=_bounded(stmt), known_as=known_as)
        return batches, close
    except DBAPIError:
        with contextlib.suppress(Exception):
            store.rollback()
        raise


def _sqlite_cursor(store: QuadSource, stmt: Statement) -> Any:
    conn = store.connection
    if stmt.functions:
        _register_functions(conn, stmt.functions)
    # SQLite takes ":name" parameters natively; going straight to the driver's cursor
    # (inside the transaction SQLAlchemy began) saves SQLAlchemy's result set-up, a
    # visible share of a sub-millisecond query.
    with driver_errors(conn, stmt.sql, stmt.params):
        return driver_connection(conn).execute(stmt.sql, stmt.params)


class _Solution(dict):  # type: ignore[type-arg]
    """A final SELECT row: rdflib's Result only calls ``get`` on it, so a dict keyed by
    Variable saves building a FrozenBindings (with its per-lookup checks) per row."""

    __slots__ = ()


def _rows(
    store: QuadSource, ctx: QueryContext, stmt: Statement, bound: dict[Any, Node], *, plain: bool,
    sqlite_cursor: Any = None, sent: _Sent | None = None,
) -> Iterator[Any]:
    """The solutions of a compiled statement.  On PostgreSQL a statement that fails
    (a regular expression the server refuses, a timeout) aborts the transaction: it is
    rolled back before the error goes on, so that the store answers the next query
    instead of "current transaction is aborted" (nothing written in it could be
    committed any more)."""
    try:
        yield from _solutions(store, ctx, stmt, bound, plain=plain, sqlite_cursor=sqlite_cursor, sent=sent)
    except DBAPIError:
        if store.dialect_name == "postgresql":
            with contextlib.suppress(Exception):
                store.rollback()
        raise


def _solutions(
    store: QuadSource, ctx: QueryContext, stmt: Statement, bound: dict[Any, Node], *, plain: bool,
    sqlite_cursor: Any = None, sent: _Sent | None = None,
) -> Iterator[Any]:
    conn = store.connection
    if stmt.functions and sqlite_cursor is None:
        _register_functions(conn, stmt.functions)
    batches: Iterator[Any]
    close: Callable[..., None]
    if sent is None and store.dialect_name == "postgresql":
        sent = _execute(store, stmt)
    if sent is not None:
        batches, close = sent
    else:
        cursor = sqlite_cursor if sqlite_cursor is not None else _sqlite_cursor(store, stmt)

        def fetch() -> list[Any]:
            with driver_errors(conn, stmt.sql, stmt.params):
                return cursor.fetchmany(_FETCH)

        batches = iter(fetch, [])
        close = cursor.close
    decode = store.decode_term
    columns = [(c.var, c.offset, c.static_dt, c.static_dt_known) for c in stmt.columns]
    try:
        for batch in batches:
            for row in batch:
                check_deadline()
                solution = _Solution(bound) if plain else dict(bound)
                for var, off, sdt, static in columns:
                    kind = row[off]
                    if kind is None:
                        continue
                    if static:
                        solution[var] = _static_term(kind, row[off + 1], sdt, row[off + 3])
                    elif (dt := row[off + 2]) is not None and dt < 0:  # a type the store holds no literal of
                        solution[var] = _static_term(kind, row[off + 1], datatype_of(dt), row[off + 3])
                    else:
                        solution[var] = decode(kind, row[off + 1], dt, row[off + 3])
                yield solution if plain else FrozenBindings(ctx, solution)
    finally:
        # An abandoned result is closed when its generator is collected, possibly after
        # the transaction (and with it a server-side cursor) has already ended.
        with contextlib.suppress(Exception):
            close()


# Rows fetched per round trip (and buffered from PostgreSQL's server-side cursor).
_FETCH = 1000


def _static_term(kind: int, lex: str, sdt: str | None, lang: str | None) -> Node:
    from rdflib.term import BNode

    if kind == 1:
        return URIRef(lex)
    if kind == 2:
        return BNode(lex)
    return Literal(
        lex, datatype=None if sdt is None else URIRef(sdt), lang=lang or None, normalize=False
    )


# ------------------------------------------------------------------ SQLite regex


def sparql_regex(text_: str | None, pattern: str | None, flags: str | None) -> int | None:
    """XPath ``fn:matches`` for SQLite, in linear time (RE2; NULL, i.e. a SPARQL error, for a bad pattern)."""
    if text_ is None or pattern is None:
        return None
    try:
        rx = compile_pattern(pattern, flags or "")
    except re.error:
        return None
    return 1 if rx.search(text_) else 0


def _lower(text_: str | None) -> str | None:
    return None if text_ is None else text_.lower()


def _upper(text_: str | None) -> str | None:
    return None if text_ is None else text_.upper()


_FUNCTIONS: dict[str, tuple[int, Any]] = {
    "sparql_regex": (3, sparql_regex),
    "sparql_lcase": (1, _lower),
    "sparql_ucase": (1, _upper),
    "geo_relate": (3, relate_text),
    "sparql_arith": (3, sparql_arith),
    "sparql_lex": (1, sparql_lex),
    "sparql_num": (1, sparql_num),
    "sparql_boolean": (1, sparql_boolean),
    **SQLITE_FUNCTIONS,
    **CAST_FUNCTIONS,
}


#: ``Connection.info`` key: (the driver's connection, the names registered on it).
_REGISTERED = "sparql_functions"


def _register_functions(conn: Any, names: frozenset[str]) -> None:
    """Register the Python functions a statement calls on the SQLite connection, those
    not registered on it yet: SQLite refuses to define a function again while another
    statement is being read ("Error creating function"), as when rdflib reads a
    compiled part inside its loop over another's rows (fuzzer seed 800). Kept in the
    pool's record of the connection, whose ``info`` lives as long as the DBAPI
    connection (the pool may hand out a new one)."""
    raw = conn.connection.driver_connection
    info = conn.connection.info
    held = info.get(_REGISTERED)
    if held is None or held[0] is not raw:
        held = info[_REGISTERED] = (raw, set())
    done = held[1]
    for name in names - done:
        if name in SQLITE_AGGREGATES:
            nargs, cls = SQLITE_AGGREGATES[name]
            raw.create_aggregate(name, nargs, cls)
        else:
            nargs, fn = _FUNCTIONS[name]
            raw.create_function(name, nargs, fn, deterministic=name not in VOLATILE_FUNCTIONS)
        done.add(name)
