"""Run compiled SQL in place of rdflib's evaluator, through ``CUSTOM_EVALS``.

rdflib evaluates a query by calling ``evalPart`` on each algebra node, and asks every
function in :data:`rdflib.plugins.sparql.CUSTOM_EVALS` first.  :func:`evaluate_part`
answers any solution-producing node whose graph lives in a :class:`SQLStore`: it
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

import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rdflib.graph import ConjunctiveGraph, Dataset, Graph
from rdflib.plugins.sparql import CUSTOM_EVALS
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import FrozenBindings, QueryContext
from rdflib.term import Literal, Node, URIRef, Variable
from sqlalchemy import text

from .compiler import Compiler, GraphScope, Statement, iter_parts
from .sql import Unsupported

__all__ = ["ExplainEntry", "compile_part", "evaluate_part", "install"]

HOOK_NAME = "catalogue-sql"

# Nodes worth compiling on their own.  Query forms (SelectQuery, ...) stay with rdflib,
# which wraps the solutions of their pattern; a lone Group is handled by its
# AggregateJoin; lone VALUES are cheaper in Python.
_COMPILED = {
    "BGP",
    "Join",
    "LeftJoin",
    "Filter",
    "Union",
    "Minus",
    "Graph",
    "Extend",
    "Project",
    "Distinct",
    "Reduced",
    "OrderBy",
    "Slice",
    "AggregateJoin",
}


@dataclass(frozen=True)
class ExplainEntry:
    """One statement that ran (``sql`` set) or one node rdflib evaluated (``note``)."""

    sql: str | None
    params: dict[str, Any]
    note: str | None = None

    def render(self) -> str:
        if self.sql is None:
            return f"-- evaluated by rdflib: {self.note}"
        params = "".join(f"\n--   :{k} = {v!r}" for k, v in self.params.items())
        return self.sql + ";" + (f"\n-- parameters:{params}" if params else "")


def install() -> None:
    """Register the hook (idempotent; importing the store module does it)."""
    CUSTOM_EVALS[HOOK_NAME] = evaluate_part


def _store_of(ctx: QueryContext) -> Any:
    from ..store import SQLStore

    graph = ctx.graph
    store = getattr(graph, "store", None)
    return store if isinstance(store, SQLStore) else None


def compile_part(store: Any, ctx: QueryContext, part: CompValue) -> Statement:
    """Compile ``part`` for evaluation in ``ctx`` (raises Unsupported)."""
    graph = ctx.graph
    bindings = {k: v for k, v in ctx.solution().items() if isinstance(k, Variable)}
    if bindings and any(p.name in ("Project", "AggregateJoin") for p in iter_parts(part.get("p"))):
        # rdflib pushes outer bindings into sub-selects; keep its semantics there.
        raise Unsupported("sub-select evaluated under outer bindings")
    constants = Compiler.constants(part) | {
        v for v in bindings.values() if isinstance(v, URIRef | Literal)
    }
    if isinstance(graph, ConjunctiveGraph):
        default_name = _default_graph(graph).identifier
        union = graph.default_union
    else:
        dataset = ctx.dataset if ctx._dataset is not None else None
        if dataset is None and any(p.name == "Graph" for p in iter_parts(part)):
            raise Unsupported("GRAPH over a plain graph")
        default_name = _default_graph(dataset).identifier if dataset is not None else None
        union = False
    named: list[Node] = [default_name] if default_name is not None else []
    if not isinstance(graph, ConjunctiveGraph):
        assert isinstance(graph, Graph)
        named.append(graph.identifier)
    ids = store.lookup_term_ids(
        constants
        | {n for n in named if isinstance(n, URIRef)}
        | {n for n in named if n is not None}
    )
    default_id = ids.get(default_name) if default_name is not None else None
    if isinstance(graph, ConjunctiveGraph):
        scope = GraphScope("union") if union else GraphScope("const", gid=default_id or -1)
    else:
        gid = ids.get(graph.identifier)
        scope = GraphScope("const", gid=-1 if gid is None else gid)
    compiler = Compiler(
        dialect=store.dialect_name,
        term_ids=ids,
        datatype_ids=store.datatype_ids(),
        scope=scope,
        default_graph_id=default_id,
        bindings=bindings,
    )
    return compiler.statement(part)


def _default_graph(graph: ConjunctiveGraph) -> Graph:
    return graph.default_graph if isinstance(graph, Dataset) else graph.default_context


def evaluate_part(ctx: QueryContext, part: CompValue) -> Iterator[FrozenBindings]:
    """The ``CUSTOM_EVALS`` hook: SQL for ``part`` or ``NotImplementedError``."""
    if getattr(part, "name", None) not in _COMPILED:
        raise NotImplementedError
    store = _store_of(ctx)
    if store is None or not getattr(store, "compile_sparql", True):
        raise NotImplementedError
    try:
        stmt = compile_part(store, ctx, part)
    except Unsupported as exc:
        log = getattr(store, "sql_log", None)
        if log is not None:
            log.append(ExplainEntry(None, {}, f"{part.name}: {exc}"))
        raise NotImplementedError from exc
    log = getattr(store, "sql_log", None)
    if log is not None:
        log.append(ExplainEntry(stmt.sql, dict(stmt.params)))
    bound = {k: v for k, v in ctx.solution().items()}
    top = part
    while top.name in ("Slice", "Distinct", "Reduced", "OrderBy"):
        top = top.p
    if top.name == "Project":
        keep = set(top.PV)
        bound = {k: v for k, v in bound.items() if k in keep}
    plain = not bound and _TOP_SELECT.get() == id(part)
    return _rows(store, ctx, stmt, bound, plain=plain)


class _Solution(dict):  # type: ignore[type-arg]
    """A final SELECT row: rdflib's Result only calls ``get`` on it, so a dict keyed by
    Variable saves building a FrozenBindings (with its per-lookup checks) per row."""

    __slots__ = ()


def _rows(
    store: Any, ctx: QueryContext, stmt: Statement, bound: dict[Any, Node], *, plain: bool
) -> Iterator[Any]:
    conn = store.connection
    if stmt.needs_regex:
        _register_regex(conn)
    sql = text(stmt.sql)
    if store.dialect_name == "postgresql":
        sql = sql.execution_options(stream_results=True, max_row_buffer=_FETCH)
    result = conn.execute(sql, stmt.params)
    decode = store.decode_term
    columns = [(c.var, c.offset, c.static_dt, c.static_dt_known) for c in stmt.columns]
    try:
        for batch in result.partitions(_FETCH):
            for row in batch:
                solution = _Solution(bound) if plain else dict(bound)
                for var, off, sdt, static in columns:
                    kind = row[off]
                    if kind is None:
                        continue
                    if static:
                        solution[var] = _static_term(kind, row[off + 1], sdt, row[off + 3])
                    else:
                        solution[var] = decode(kind, row[off + 1], row[off + 2], row[off + 3])
                yield solution if plain else FrozenBindings(ctx, solution)
    finally:
        result.close()


# Rows fetched per round trip (and buffered from PostgreSQL's server-side cursor).
_FETCH = 1000
# id() of the pattern directly under the SELECT being run through store_query: its
# solutions go straight into rdflib's Result, so they can be plain dicts.
_TOP_SELECT: ContextVar[int | None] = ContextVar("_TOP_SELECT", default=None)


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

_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}


@lru_cache(maxsize=256)
def _compiled_regex(pattern: str, flags: str) -> re.Pattern[str] | None:
    value = 0
    for f in flags:
        value |= _FLAGS.get(f, 0)
    try:
        return re.compile(pattern, value)
    except re.error:
        return None


def sparql_regex(text_: str | None, pattern: str | None, flags: str | None) -> int | None:
    """XPath ``fn:matches`` for SQLite (NULL, i.e. a SPARQL error, for a bad pattern)."""
    if text_ is None or pattern is None:
        return None
    rx = _compiled_regex(pattern, flags or "")
    if rx is None:
        return None
    return 1 if rx.search(text_) else 0


def _register_regex(conn: Any) -> None:
    raw = conn.connection.driver_connection
    raw.create_function("sparql_regex", 3, sparql_regex, deterministic=True)


# ------------------------------------------------------------------ Store.query

_PARSE_CACHE_SIZE = 256


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def _prepared(query: str, base: str | None, namespaces: tuple[tuple[str, str], ...]) -> Any:
    """Parse and translate a query once: rdflib's pyparsing grammar costs milliseconds
    per query, more than running a typical compiled catalogue query."""
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    return translateQuery(parseQuery(query), base, dict(namespaces))


def store_query(
    store: Any,
    query: Any,
    init_ns: Any,
    init_bindings: Any,
    query_graph: Any,
    **kwargs: Any,
) -> Any:
    """``Store.query``: rdflib's own evaluation (with the compiler hook), plus a cache of
    parsed queries.  The graph the query runs on is rebuilt over this store from
    ``query_graph`` ("__UNION__", the dataset's default graph or a named graph)."""
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
    from rdflib.plugins.sparql.evaluate import evalQuery
    from rdflib.plugins.sparql.processor import SPARQLResult
    from rdflib.plugins.sparql.sparql import Query

    base = kwargs.pop("base", None)
    kwargs.pop("DEBUG", None)
    if kwargs:
        raise NotImplementedError  # unknown options: let rdflib handle (or reject) them
    if isinstance(query, str):
        namespaces = tuple(sorted((str(k), str(v)) for k, v in (init_ns or {}).items()))
        parsed = _prepared(query, base, namespaces)
    elif isinstance(query, Query):
        parsed = query
    else:
        raise NotImplementedError
    graph = _query_graph(store, query_graph, DATASET_DEFAULT_GRAPH_ID)
    algebra = parsed.algebra
    top = id(algebra.p) if algebra.name == "SelectQuery" else None
    token = _TOP_SELECT.set(top)
    try:
        return SPARQLResult(evalQuery(graph, parsed, init_bindings or {}, base))
    finally:
        _TOP_SELECT.reset(token)


def _query_graph(store: Any, query_graph: Any, default_id: Any) -> Graph:
    cache = store.__dict__.setdefault("_query_graphs", {})
    key = str(query_graph)
    graph = cache.get(key)
    if graph is None:
        if query_graph == "__UNION__":
            graph = Dataset(store=store, default_union=True)
        elif query_graph is None or query_graph == default_id:
            graph = Dataset(store=store, default_union=False)
        else:
            graph = Graph(store=store, identifier=query_graph)
        cache[key] = graph
    return graph
