"""The query entry of the store: parsing (one thread at a time, cached) and ``Store.query``.

rdflib's SPARQL grammar costs milliseconds per parse, more than running a typical
compiled catalogue query, so parsed queries are cached here; and it is not safe to
call from two threads at once, so every parse holds :data:`PARSE_LOCK` (rdflib's own
parse functions are made to hold it too, by :func:`catalogue.graph.sparql.hooks.install`).
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from rdflib.graph import Dataset, Graph

__all__ = [
    "PARSE_LOCK", "TOP_ASK", "TOP_SELECT", "prepared_query", "store_query", "translate_query", "translate_update",
]

_PARSE_CACHE_SIZE = 256

# id() of the pattern directly under the SELECT being run through store_query: its
# solutions go straight into rdflib's Result, so they can be plain dicts.
TOP_SELECT: ContextVar[int | None] = ContextVar("TOP_SELECT", default=None)
# id() of the pattern of the ASK query being run: one solution answers it.
TOP_ASK: ContextVar[int | None] = ContextVar("TOP_ASK", default=None)

#: rdflib's SPARQL grammar (pyparsing) keeps parse state in shared objects: two threads
#: parsing at once fail ("postParse2() missing 1 required positional argument"), as the
#: web server's load test showed. Every parse goes through this lock, rdflib's own too
#: (:func:`catalogue.graph.sparql.hooks.install`). Reentrant, because our wrappers call rdflib's.
PARSE_LOCK = threading.RLock()


def translate_query(query: str, base: str | None = None, namespaces: dict[str, Any] | None = None) -> Any:
    """rdflib's parse and algebra translation of a query, one thread at a time (errors as
    rdflib raises them; :func:`catalogue.graph.sparql.parse.parse_query` is the catalogue's)."""
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    with PARSE_LOCK:
        return translateQuery(keep_constant_filters(_unhooked(parseQuery)(query)), base, namespaces or {})


def translate_update(update: str, base: str | None = None, namespaces: dict[str, Any] | None = None) -> Any:
    """rdflib's parse and algebra translation of an update, one thread at a time."""
    from rdflib.plugins.sparql.algebra import translateUpdate
    from rdflib.plugins.sparql.parser import parseUpdate

    with PARSE_LOCK:
        return translateUpdate(keep_constant_filters(_unhooked(parseUpdate)(update)), base, namespaces or {})


def _unhooked(parse: Any) -> Any:
    """rdflib's parser without :mod:`.hooks`' wrapper (which would take the lock and keep
    the filters a second time)."""
    return getattr(parse, "__wrapped__", parse)


def keep_constant_filters(tree: Any) -> Any:
    """Wrap each ``FILTER`` of a constant literal so that rdflib's algebra keeps it.

    rdflib collects a group's filters with ``if filters:``, and a literal that Python
    finds false (``false``, ``0``, ``""``) is dropped: ``FILTER(false)`` filtered nothing,
    and ``DELETE { ... } WHERE { ... FILTER(false) }`` deleted every match.  A one-operand
    ``&&`` (true for Python, the same value for SPARQL) keeps it; every constant is
    wrapped, as which ones Python finds false is only known after the translation.
    """
    from rdflib.plugins.sparql.algebra import traverse
    from rdflib.plugins.sparql.operators import ConditionalAndExpression
    from rdflib.plugins.sparql.parserutils import CompValue, Expr
    from rdflib.term import Literal

    def visit(node: Any) -> None:
        if isinstance(node, CompValue) and node.name == "Filter":
            expr = dict.get(node, "expr")
            # The parser's precedence levels, each with one operand, around the constant.
            while isinstance(expr, CompValue) and expr.name.endswith("Expression") and dict.get(expr, "other") is None:
                expr = dict.get(expr, "expr")
            if isinstance(expr, Literal) or (isinstance(expr, CompValue) and expr.name == "literal"):
                node["expr"] = Expr("ConditionalAndExpression", ConditionalAndExpression, expr=expr, other=[])

    traverse(tree, visitPre=visit)
    return tree


@lru_cache(maxsize=_PARSE_CACHE_SIZE)
def prepared_query(query: str, base: str | None, namespaces: tuple[tuple[str, str], ...]) -> Any:
    """Parse and translate a query once (the one parse cache): rdflib's pyparsing grammar
    costs milliseconds per query, more than running a typical compiled catalogue query.
    ``namespaces`` are ``(prefix, IRI)`` pairs, sorted, so that equal bindings share entries."""
    return translate_query(query, base, dict(namespaces))


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
    from rdflib.plugins.sparql.sparql import Query

    from .result import StoreResult

    base = kwargs.pop("base", None)
    kwargs.pop("DEBUG", None)
    if kwargs:
        raise NotImplementedError  # unknown options: let rdflib handle (or reject) them
    if isinstance(query, str):
        namespaces = tuple(sorted((str(k), str(v)) for k, v in (init_ns or {}).items()))
        parsed = prepared_query(query, base, namespaces)
    elif isinstance(query, Query):
        parsed = query
    else:
        raise NotImplementedError
    graph = _query_graph(store, query_graph, DATASET_DEFAULT_GRAPH_ID)
    algebra = parsed.algebra
    top = id(algebra.p) if algebra.name == "SelectQuery" else None
    ask = id(algebra.p) if algebra.name == "AskQuery" else None
    token, ask_token = TOP_SELECT.set(top), TOP_ASK.set(ask)
    try:
        return StoreResult(evalQuery(graph, parsed, init_bindings or {}, base))
    finally:
        TOP_SELECT.reset(token)
        TOP_ASK.reset(ask_token)


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
