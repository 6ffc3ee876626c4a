"""SPARQL Update on the catalogue's store: applied under the write lock, committed whole.

The web endpoint (with the admin token) and Python callers
(:meth:`catalogue.api.Catalogue.update`) run updates through :func:`run_update`, with
the same refusals and the same errors.
"""

from __future__ import annotations

from typing import Any, cast

from rdflib import Dataset, Graph, URIRef
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import QueryContext
from rdflib.store import Store

from catalogue.errors import QueryError

from ..deadline import run_with_deadline
from .answer import query_failure
from .dataset import GraphStore, copy_dataset
from .parse import parse_update, uses

__all__ = ["apply_update", "run_update"]


def run_update(store: GraphStore, text: str, *, timeout: float | None = None) -> None:
    """Parse and apply an update and commit it; on any failure nothing is changed.

    The write lock is taken first: the WHERE clauses then read what the writes
    apply to, with no other writer in between (:class:`~catalogue.errors.Busy` if
    it cannot be had). ``timeout`` seconds: :class:`~catalogue.errors.QueryTimeout`
    beyond. What the update gets wrong is a :class:`~catalogue.errors.QueryError`
    (see :func:`~catalogue.graph.sparql.answer.query_failure`).
    """

    def apply() -> None:
        store.begin_write()
        apply_update(store, update)

    try:
        update = parse_update(text)  # before the deadline: see answer_query
        try:
            run_with_deadline(store, timeout, apply)
            store.commit()
        except BaseException:
            store.rollback()
            raise
    except Exception as exc:
        failure = query_failure(exc, "update", log_unexpected=True)
        if failure is exc:
            raise
        raise failure from None


def apply_update(store: GraphStore, update: Any) -> None:
    """Run a translated update on the store, operation by operation (no commit).

    rdflib's own ``Dataset.update`` cannot insert or delete triples without
    GRAPH when the default graph is a union (it hands triples to a method that
    takes quads), so each operation gets a context whose default graph is the
    graph store's own unnamed graph (``urn:x-rdflib:default``), for reading
    and writing alike, and whose named graphs are the catalogue's. A bare
    ``DELETE WHERE { ?s ?p ?o }`` therefore cannot touch a harvested hierarchy;
    GRAPH and WITH address those. ``USING``/``USING NAMED`` name the WHERE clause's
    dataset among the catalogue's graphs (:func:`_where_over_using`); a graph not in
    it is empty, never fetched (rdflib would fetch it from the web, into the store).
    LOAD would make the server fetch URLs (or read its own files) and SERVICE would
    query other servers: they are refused.
    """
    from rdflib.plugins.sparql import update as rdflib_update

    handlers = {
        "Clear": rdflib_update.evalClear,
        "Drop": rdflib_update.evalDrop,
        "Create": _create_graph,  # rdflib's raises "Create not implemented!"
        "Add": rdflib_update.evalAdd,
        "Move": rdflib_update.evalMove,
        "Copy": rdflib_update.evalCopy,
        "InsertData": rdflib_update.evalInsertData,
        "DeleteData": rdflib_update.evalDeleteData,
        "DeleteWhere": rdflib_update.evalDeleteWhere,
        "Modify": rdflib_update.evalModify,
    }
    operations = list(update.algebra)
    for operation in operations:
        if operation.name == "Load":
            raise QueryError("LOAD is not supported by this endpoint; load files with `catalogue load` on the server")
        if uses(operation, "ServiceGraphPattern"):
            raise QueryError("SERVICE (federated query) is not supported by this endpoint")
        if operation.name not in handlers:
            raise QueryError(f"unsupported update operation {operation.name}")
    dataset = Dataset(store=cast(Store, store), default_union=False)
    for operation in operations:
        if operation.name == "Modify" and operation.using:
            operation = _where_over_using(store, operation)
        ctx = QueryContext(dataset, initBindings={})
        ctx.graph = dataset.default_graph
        ctx.prologue = operation.prologue
        try:
            handlers[operation.name](ctx, operation)
        except Exception:
            if not operation.silent:
                raise


def _where_over_using(store: GraphStore, operation: CompValue) -> CompValue:
    """The Modify ``operation`` with its WHERE clause already evaluated over the dataset
    its ``USING`` (default graph: their merge; empty without any) and ``USING NAMED``
    clauses name, copied from the catalogue's graphs like a query's ``FROM`` (bounded by
    :data:`~.dataset.MAX_DATASET_TRIPLES`), and handed back as inline data: the
    templates then apply to the store as without USING (``WITH`` included)."""
    from rdflib.plugins.sparql.evaluate import evalPart

    default = list(dict.fromkeys(str(d.default) for d in operation.using if d.default is not None))
    named = list(dict.fromkeys(str(d.named) for d in operation.using if d.named is not None))
    where = copy_dataset(store, default, named)
    ctx = QueryContext(where, initBindings={})
    ctx.graph = where.default_graph
    ctx.prologue = operation.prologue
    solutions = [dict(solution) for solution in evalPart(ctx, operation.where)]
    inline = CompValue("ToMultiSet", p=CompValue("values", res=solutions))
    rebuilt = CompValue("Modify", **{**operation, "using": None, "where": inline})
    rebuilt.prologue = operation.prologue  # an attribute, not a key: not copied above
    return rebuilt


def _create_graph(ctx: QueryContext, operation: CompValue) -> None:
    """CREATE GRAPH: register an empty named graph; an error if it exists (unless SILENT)."""
    store = ctx.dataset.store
    name = URIRef(operation.graphiri)
    has_graph = getattr(store, "has_graph", None)  # the catalogue's store: one lookup
    if has_graph(name) if has_graph is not None else name in set(store.graph_ids()):
        raise ValueError(f"graph <{name}> already exists")
    store.add_graph(Graph(store=store, identifier=name))
