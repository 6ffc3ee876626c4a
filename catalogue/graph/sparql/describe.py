"""DESCRIBE in one recursive SQL statement, as rdflib answers it.

rdflib describes a resource by its concise bounded description: its triples, and
recursively those of its blank-node objects and of reifications of its statements.
Asked node by node through ``triples()`` that is a round trip per node; here one
recursive statement collects it.

On PostgreSQL the statement is built from the ids of the described resources, which
are looked up first: two round trips, a third of a small description's time. So the
statement last built for the same resources and graph is sent in the same round trip
as the lookup (:data:`_LAST`), and kept when the ids give it again, as compiled SELECT
parts are (:func:`.evaluate._speculate`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from typing import Any, Final

from cachetools import LRUCache
from rdflib.graph import ConjunctiveGraph, Dataset, Graph
from rdflib.namespace import RDF
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import QueryContext
from rdflib.term import BNode, Node, URIRef
from sqlalchemy.exc import DBAPIError

from ..deadline import check_deadline
from ..dialect.driver import driver_connection, driver_errors
from .described import DescriptionStore
from .explain import ExplainEntry
from .pg_cursor import fetch_all
from .source import QuadSource

__all__ = ["default_graph", "describe"]

#: Descriptions' statements kept as guesses (by database, resources and graph).
_KEPT: Final = 256
_LAST: LRUCache[tuple[Any, ...], str] = LRUCache(maxsize=_KEPT)
_LAST_LOCK = threading.Lock()
#: Resources beyond which a description's statement is not kept as a guess.
_KEPT_SEEDS: Final = 1_000


def default_graph(graph: ConjunctiveGraph) -> Graph:
    return graph.default_graph if isinstance(graph, Dataset) else graph.default_context


def describe(store: QuadSource, ctx: QueryContext, query: CompValue) -> dict[str, Any]:
    """The ``DescribeQuery`` result rdflib's evaluator expects (a graph of the
    descriptions of the query's resources)."""
    from rdflib.plugins.sparql.evaluate import evalPart

    graph = ctx.graph
    # The graph read: None for the union of all graphs.
    scope: Node | None = None
    if not isinstance(graph, ConjunctiveGraph):
        scope = graph.identifier
    elif not graph.default_union:
        scope = default_graph(graph).identifier
    resources: set[Node] = {t for t in query.PV if isinstance(t, URIRef)}
    if query.p is not None:
        for binding in evalPart(ctx, query.p):
            resources.update(binding.values())
    wanted = {r for r in resources if isinstance(r, URIRef | BNode)} | {RDF.subject, RDF.predicate, RDF.object}
    if scope is not None:
        wanted.add(scope)
    # The store's prefixes, written straight into the result's store: binding them
    # through rdflib's namespace manager (and its default set) took a millisecond, more
    # than the description's SQL. The store keeps no contexts (a description is one
    # graph: Memory's per-context bookkeeping was half of a small DESCRIBE's time, 58
    # triples: 2.3 -> 1.5 ms on SQLite) and indexes only when asked by pattern.
    store_of_result = DescriptionStore()
    result = Graph(store=store_of_result, bind_namespaces="core")
    # (The store's own, where the graph is the store's: rdflib's namespace manager makes
    # every prefix's URIRef again.)
    for prefix, ns in (graph.store.namespaces() if graph.store is store else graph.namespaces()):
        result.store.bind(prefix, ns)
    out = {"type_": "DESCRIBE", "graph": result}
    log = getattr(store, "sql_log", None)
    postgres = store.dialect_name == "postgresql"
    key = (store.connection.engine.url.render_as_string(hide_password=True), frozenset(wanted), scope)
    guess = _guess(key) if postgres and log is None else None
    conn = store.connection
    guessed: list[Any] | None = None
    try:
        lookup = store.term_lookup(wanted) if guess is not None else None
        if guess is not None and lookup is not None:
            guessed, found = fetch_all(conn, guess, {}, ahead=lookup[0])
            ids = lookup[1](found)
        else:
            ids = store.lookup_term_ids(wanted)
        sql = _statement(store, ids, resources, scope)
        if sql is None:
            return out
        if log is not None:
            log.append(ExplainEntry(sql, {}))
        if postgres:
            if len(wanted) <= _KEPT_SEEDS:  # a large description's text is not kept
                _keep(key, sql)
            rows = guessed if guessed is not None and sql == guess else fetch_all(conn, sql, {})[0]
    except DBAPIError:
        if postgres:
            with contextlib.suppress(Exception):
                store.rollback()
        raise
    decode = store.decode_term
    # A description's subjects and predicates repeat from row to row: each term is
    # decoded once (a quarter of the rows' Python time for 58 triples).
    decoded: dict[tuple[Any, ...], Node] = {}

    def term(kind: Any, value: Any, datatype: Any, lang: Any) -> Node:
        key = (kind, value, datatype, lang)
        found = decoded.get(key)
        if found is None:
            found = decoded[key] = decode(kind, value, datatype, lang)
        return found

    def fill(rows: Iterable[Any]) -> None:
        # Into the store straight: Graph.add only checks that each term is a Node,
        # which decode guarantees.
        triples = []
        for row in rows:
            check_deadline()
            triples.append((term(row[0], row[1], row[2], row[3]), term(row[4], row[5], row[6], row[7]),
                            term(row[8], row[9], row[10], row[11])))
        store_of_result.fill(triples)

    # The rows through the driver's cursor: SQLAlchemy's result set-up and row objects
    # were a fifth of a small description's time.
    if postgres:
        fill(rows)
    else:  # stepped through the driver's cursor (its rows become the graph's triples)
        with _sqlite_cursor_of(conn, sql) as cursor:
            fill(cursor)
    return out


def _statement(store: QuadSource, ids: dict[Node, int], resources: set[Node], scope: Node | None) -> str | None:
    """The statement giving the rows (subject, predicate, object; each a term's kind,
    value, datatype and language) of the descriptions of ``resources``, read from the
    graph ``scope`` (None: all), or None where none of them is stored."""
    seeds = sorted(ids[r] for r in resources if r in ids)
    if not seeds:
        return None
    if scope is None:
        g_cond = ""
    else:
        gid = ids.get(scope)
        g_cond = f" AND {{q}}.g = {-1 if gid is None else gid}"
    seed_sql = " UNION ".join(f"SELECT CAST({i} AS BIGINT) AS n" for i in seeds)
    # Blank-node objects are found with a scalar lookup of their kind, not a join:
    # joined, SQLite builds a Bloom filter over the whole terms table in every
    # recursive round.  For the same reason SQLite gets a one-value range on q.s;
    # PostgreSQL plans the plain equality well (and the range badly).
    link = "q.s = cbd.n" if store.dialect_name == "postgresql" else "q.s BETWEEN cbd.n AND cbd.n"
    blank = (
        "SELECT q.o FROM cbd JOIN quads q ON {link}{g} "
        "WHERE (SELECT t.kind FROM terms t WHERE t.id = q.o) = 2"
    ).format(link=link, g=g_cond.format(q="q"))
    branches = [blank]
    if RDF.subject in ids:
        if store.dialect_name == "postgresql":
            raise NotImplementedError  # PostgreSQL allows one recursive reference only
        rs, rp, ro = ids[RDF.subject], ids.get(RDF.predicate, -1), ids.get(RDF.object, -1)
        branches.append(
            "SELECT r1.s FROM cbd JOIN quads q ON q.s = cbd.n{gq} "
            "JOIN quads r1 ON r1.p = {rs} AND r1.o = cbd.n{g1} "
            "JOIN quads r2 ON r2.s = r1.s AND r2.p = {rp} AND r2.o = q.p{g2} "
            "JOIN quads r3 ON r3.s = r1.s AND r3.p = {ro} AND r3.o = q.o{g3}".format(
                rs=rs,
                rp=rp,
                ro=ro,
                gq=g_cond.format(q="q"),
                g1=g_cond.format(q="r1"),
                g2=g_cond.format(q="r2"),
                g3=g_cond.format(q="r3"),
            )
        )
    return (
        f"WITH RECURSIVE cbd(n) AS (\n{seed_sql}\nUNION\n"
        + "\nUNION\n".join(branches)
        + "\n)\nSELECT ts.kind, ts.value, ts.datatype, ts.lang, tp.kind, tp.value, "
        "tp.datatype, tp.lang, tob.kind, tob.value, tob.datatype, tob.lang\n"
        "FROM (SELECT DISTINCT d.s, d.p, d.o FROM quads d "
        f"WHERE d.s IN (SELECT n FROM cbd){g_cond.format(q='d')}) AS x\n"
        "JOIN terms ts ON ts.id = x.s JOIN terms tp ON tp.id = x.p JOIN terms tob ON tob.id = x.o"
    )


def _guess(key: tuple[Any, ...]) -> str | None:
    with _LAST_LOCK:
        return _LAST.get(key)


def _keep(key: tuple[Any, ...], sql: str) -> None:
    with _LAST_LOCK:
        _LAST[key] = sql


@contextlib.contextmanager
def _sqlite_cursor_of(conn: Any, sql: str) -> Iterator[Any]:
    """SQLite's driver cursor over ``sql``, its errors (also while it is read) raised as
    SQLAlchemy's, closed at the end (a timeout between two rows leaves none open)."""
    with driver_errors(conn, sql):
        cursor = driver_connection(conn).execute(sql)
        try:
            yield cursor
        finally:
            cursor.close()
