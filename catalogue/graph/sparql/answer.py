"""A query's whole answer, read under limits: a time limit and a cap on its size.

A server cannot stream a result whose size it does not know and then change its
mind: it reads the whole answer first (rows, a boolean or a graph) while counting
it against ``max_results`` and under :func:`~catalogue.graph.deadline.run_with_deadline`,
so every limit is decided before anything is written. Python callers get the
same through :meth:`catalogue.api.Catalogue.answer`.

What goes wrong is classified here, once, for every caller (:func:`query_failure`):
the query's fault (:class:`~catalogue.errors.QueryError`), too much
(:class:`~catalogue.errors.TooLarge`), too long
(:class:`~catalogue.errors.QueryTimeout`); errors from the database propagate as
themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from rdflib import Graph
from rdflib.plugins.sparql.evaluate import evalPart, evalQuery
from rdflib.plugins.sparql.evalutils import _fillTemplate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.plugins.sparql.sparql import Query, QueryContext
from rdflib.query import Result
from rdflib.term import Node, Variable
from sqlalchemy.exc import SQLAlchemyError

from catalogue.errors import CatalogueError, QueryError, TooLarge
from catalogue.rdf.results import Answer
from catalogue.rdf.vocabulary import PREFIXES

from ..database import busy_error
from ..deadline import check_deadline, run_with_deadline
from .dataset import GraphStore, RDFDataset, dataset_target
from .parse import one_line, parse_query, query_form, uses

__all__ = ["answer_query", "query_failure"]

log = logging.getLogger(__name__)


def query_failure(
    exc: Exception, what: str = "query", *, log_unexpected: bool = False, name_database_errors: bool = False
) -> Exception:
    """The error to raise for ``exc``, raised while evaluating a query (or an update).

    rdflib reports evaluation problems with exceptions of every type (plain
    Exception, TypeError, NotImplementedError): the query's fault as far as its
    author can act on it, so a :class:`~catalogue.errors.QueryError` naming the
    type; with ``log_unexpected`` (a server) also logged in full, in case it is ours.
    Catalogue errors stay as they are; a driver's lock wait becomes
    :class:`~catalogue.errors.Busy`; database errors stay themselves (the database's
    fault, not the query's; :func:`~catalogue.graph.database.busy_error` tells a lock
    wait among them). With ``name_database_errors`` (a command, which has no handler
    further up) a database error that is not a lock wait is a ``QueryError`` naming it.
    """
    if isinstance(exc, SQLAlchemyError) and name_database_errors:
        return busy_error(exc) or QueryError(f"{what} failed: {type(exc).__name__}: {one_line(exc)}")
    if isinstance(exc, CatalogueError | SQLAlchemyError):
        return exc  # a database error's handler knows whether it is a lock wait (busy_error)
    busy = busy_error(exc)  # a driver's own error, not wrapped by SQLAlchemy
    if busy is not None:
        return busy
    if isinstance(exc, RecursionError):
        return QueryError(f"the {what} is nested too deeply to evaluate")
    if log_unexpected:
        log.warning("SPARQL %s failed", "evaluation" if what == "query" else what, exc_info=exc)
    return QueryError(f"{what} failed: {type(exc).__name__}: {one_line(exc)}")


def answer_query(
    store: GraphStore,
    text: str,
    *,
    dataset: RDFDataset | None = None,
    max_results: int | None = None,
    timeout: float | None = None,
    check_form: Callable[[str], Any] | None = None,
) -> Answer:
    """Parse, evaluate and read a whole query under a time limit and a size cap.

    ``dataset`` names the RDF dataset (overriding the query's ``FROM``/``FROM
    NAMED``, see :func:`~catalogue.graph.sparql.dataset.dataset_target`).
    ``max_results`` caps rows (SELECT) and triples (CONSTRUCT/DESCRIBE):
    :class:`~catalogue.errors.TooLarge` beyond. ``timeout`` seconds cover the
    evaluation and the reading of the result: :class:`~catalogue.errors.QueryTimeout`
    beyond. The parse comes first and is never interrupted: the deadline's last resort
    is an exception raised asynchronously into the worker, which must not land inside
    rdflib's parser (pyparsing, whose grammar objects every thread of the process
    shares); its cost is bounded by the text's length and nesting, which the web
    endpoint limits. ``check_form`` is called with the form (SELECT, ASK, CONSTRUCT, DESCRIBE) once
    the query is parsed and before anything is evaluated: a caller that cannot
    deliver that form (no acceptable media type) raises there, at no evaluation
    cost; what it raises propagates unchanged. ``SERVICE`` is refused.
    """

    parsed = parse_query(text)
    form = query_form(parsed)
    if check_form is not None:
        check_form(form)
    if uses(parsed.algebra, "ServiceGraphPattern"):
        raise QueryError("SERVICE (federated query) is not supported by this endpoint")

    def work() -> Answer:
        try:
            target, query = dataset_target(store, parsed, dataset)
            if form == "CONSTRUCT":
                return Answer(form, graph=_construct(target, query, max_results))
            if form == "DESCRIBE":
                # Evaluated on our own graph object: see dataset.quiet.
                result = SPARQLResult(evalQuery(target, query, {}, None))
            else:
                result = target.query(query, initNs=PREFIXES)
            return _read_result(result, form, max_results)
        except Exception as exc:
            failure = query_failure(exc, log_unexpected=True)
            if failure is exc:
                raise
            raise failure from None

    return run_with_deadline(store, timeout, work)  # type: ignore[arg-type]


def _too_large(cap: int, what: str) -> TooLarge:
    return TooLarge(
        f"the query has more than {cap:,} {what} (this server's max_results); "
        "add LIMIT (and OFFSET to page through the result)",
    )


def _construct(target: Graph, query: Query, cap: int | None) -> Graph:
    """CONSTRUCT as rdflib evaluates it, but stopping at the result cap instead of
    building an unbounded graph in memory first."""
    ctx = QueryContext(target, initBindings={}, datasetClause=None)
    ctx.prologue = query.prologue
    algebra = query.algebra
    template = algebra.template or _where_triples(algebra.p)
    graph = Graph()
    for solution in evalPart(ctx, algebra.p):
        check_deadline()
        graph += _fillTemplate(template, solution)
        if cap is not None and len(graph) > cap:
            raise _too_large(cap, "triples")
    return graph


def _where_triples(part: CompValue) -> list[Any]:
    """The template of ``CONSTRUCT WHERE { triples }``: the pattern's own triples,
    found under any solution modifiers (rdflib looks only two levels down, so it
    fails once LIMIT or ORDER BY is added)."""
    while part is not None and part.name != "BGP":
        part = part.p
    return list(part.triples) if part is not None else []


def _read_result(result: Result, form: str, cap: int | None) -> Answer:
    if form == "ASK":
        return Answer(form, boolean=bool(result.askAnswer))
    if form == "DESCRIBE":
        graph = result.graph
        if cap is not None and graph is not None and len(graph) > cap:
            raise _too_large(cap, "triples")
        return Answer(form, graph=graph)
    variables = list(result.vars or [])
    rows: list[dict[Variable, Node]] = []
    # The solutions as they stream (rdflib's iteration would leave out one that binds
    # nothing, an OPTIONAL that matched nothing; it is a solution all the same).
    pending = getattr(result, "_genbindings", None)
    solutions = pending if pending is not None else result.bindings
    try:
        for solution in solutions:
            check_deadline()
            if cap is not None and len(rows) >= cap:
                raise _too_large(cap, "result rows")
            rows.append({v: value for v in variables if (value := solution.get(v)) is not None})
    finally:
        # Close a half-read stream here, on the worker that owns the connection.
        pending = getattr(result, "_genbindings", None)
        if pending is not None and hasattr(pending, "close"):
            pending.close()
    return Answer(form, variables=variables, rows=rows)
