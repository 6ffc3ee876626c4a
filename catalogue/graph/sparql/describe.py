"""DESCRIBE in one recursive SQL statement, as rdflib answers it.

rdflib describes a resource by its concise bounded description: its triples, and
recursively those of its blank-node objects and of reifications of its statements.
Asked node by node through ``triples()`` that is a round trip per node; here one
recursive statement collects it.

On PostgreSQL the statement looks the described IRIs up itself (:func:`_one_statement`):
one round trip, where looking their ids up first took two, a third of a small
description's time (and sending the last statement for the same resources as a guess with
the lookup, in one pipeline, still cost a pipeline's round trip: q08 of the benchmark,
0.58 -> 0.47 ms at a million triples). Blank nodes, bound by a ``WHERE``, are looked up
first as on SQLite.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Iterator
from typing import Any, Final
from uuid import uuid4

from rdflib.graph import ConjunctiveGraph, Dataset, Graph
from rdflib.namespace import RDF
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import QueryContext
from rdflib.term import BNode, Node, URIRef
from sqlalchemy.exc import DBAPIError

from ..deadline import check_deadline
from ..dialect.driver import driver_connection, driver_errors
from ..terms import encode
from .described import DescriptionStore
from .explain import ExplainEntry
from .pg_cursor import fetch_all
from .source import QuadSource

__all__ = ["default_graph", "describe"]

#: The names of description graphs: a prefix drawn when the module is imported and a number
#: (threads share the counter; a process forked after the import would repeat the names
#: of its parent, which only tell one result graph from another within a process).
_RESULT_PREFIX: Final = f"description{uuid4().hex[:16]}n"
_RESULT_NUMBERS: Final = itertools.count()


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
    # Named from a counter: a graph named by rdflib mints a UUID, 2% of a small description.
    result = Graph(store=store_of_result, identifier=BNode(f"{_RESULT_PREFIX}{next(_RESULT_NUMBERS)}"),
                   bind_namespaces="core")
    # (The store's own, where the graph is the store's: rdflib's namespace manager makes
    # every prefix's URIRef again.)
    store_of_result.bind_all(graph.store.namespaces() if graph.store is store else graph.namespaces())
    out = {"type_": "DESCRIBE", "graph": result}
    log = getattr(store, "sql_log", None)
    postgres = store.dialect_name == "postgresql"
    if postgres and all(isinstance(r, URIRef) and store.holdable(r) for r in wanted):
        _fill_by_ids(store, store_of_result, _one_statement(store, resources, scope, log))
        return out
    conn = store.connection
    try:
        ids = store.lookup_term_ids(wanted)
        sql = _statement(store, ids, resources, scope)
        if sql is None:
            return out
        if log is not None:
            log.append(ExplainEntry(sql, {}))
        if postgres:
            rows = fetch_all(conn, sql, {})
    except DBAPIError:
        if postgres:
            with contextlib.suppress(Exception):
                store.rollback()
        raise
    # The rows through the driver's cursor: SQLAlchemy's result set-up and row objects
    # were a fifth of a small description's time.
    if postgres:
        _fill_rows(store, store_of_result, rows)
    else:  # stepped through the driver's cursor (its rows become the graph's triples)
        with _sqlite_cursor_of(conn, sql) as cursor:
            _fill_rows(store, store_of_result, cursor)
    return out


def _fill_rows(store: QuadSource, into: DescriptionStore, rows: Iterable[Any]) -> None:
    """The description's rows (subject, predicate, object: each a term's kind, value,
    datatype id and language) decoded into ``into``, straight (Graph.add only checks that
    each term is a Node, which decoding guarantees)."""
    decode = store.decode_term
    # A description's subjects and predicates repeat from row to row: each term is
    # decoded once (a quarter of the rows' Python time for 58 triples), found by its
    # four columns, sliced from the row (a function call per term was a fifth of a
    # small description's time: query 8, 58 triples, 0.33 ms on SQLite).
    decoded: dict[tuple[Any, ...], Node] = {}
    known = decoded.get
    triples = []
    for n, row in enumerate(rows):
        if not n & 255:
            check_deadline()
        s, p, o = row[0:4], row[4:8], row[8:12]
        ts, tp, to = known(s), known(p), known(o)
        if ts is None:
            ts = decoded[s] = decode(*s)
        if tp is None:
            tp = decoded[p] = decode(*p)
        if to is None:
            to = decoded[o] = decode(*o)
        triples.append((ts, tp, to))
    into.fill(triples)


def _fill_by_ids(store: QuadSource, into: DescriptionStore, rows: list[tuple[Any, ...]]) -> None:
    """The rows of :data:`_PG_DESCRIBE` into ``into``: each row's term (its id, kind, value,
    datatype and language) decoded once, then the triples (of rows tagged 1) made of them."""
    decode = store.decode_term
    terms: dict[int, Node] = {}
    ids = []
    for i, row in enumerate(rows):  # (in any order: the subjects' and predicates' rows need not come first)
        if not i & 1023:
            check_deadline()
        if row[1] not in terms:
            terms[row[1]] = decode(row[2], row[3], row[4], row[5])
        if row[0] == 1:
            ids.append((row[6], row[7], row[8]))
    into.fill([(terms[s], terms[p], terms[o]) for s, p, o in ids])


#: The rows of a PostgreSQL description, with the resources (and the graph) looked up by the
#: statement itself: ``{seeds}`` the resources' (hash, IRI) pairs, ``{scope}`` the graph's
#: condition. The recursion gathers the description's triples with their objects' terms (a
#: blank object's triples are gathered next). Three kinds of rows: a triple (tag 1: its
#: object's id, kind, value, datatype and language, then subject, predicate and object ids),
#: and a term of a subject or predicate (tag 0: id, kind, value, datatype, language), once
#: each, so that each term is read from ``terms`` once and subjects and predicates are not
#: sent again for each of their triples (query 8 at a million triples: 137 term lookups ->
#: 98, 0.26 -> 0.23 ms a statement through pgbench; at ten million, sending terms once:
#: 0.33 -> 0.27 ms on the server); and a row tagged 2 if ``rdf:subject`` is stored:
#: reifications are then part of a description, which this statement does not follow
#: (PostgreSQL allows one recursive reference only), and the caller falls back. (The
#: recursion's UNION compares whole rows, the object's text with them: a large literal is
#: hashed once for each triple that holds it, as it is sent once for each.)
_PG_DESCRIBE: Final = """WITH RECURSIVE cbd(s, p, o, kind, value, datatype, lang) AS (
SELECT q.s, q.p, q.o, o.kind, o.value, o.datatype, o.lang
FROM terms t JOIN (VALUES {seeds}) AS r(h, v) ON t.hash = r.h AND t.kind = 1 AND t.value = r.v
JOIN quads q ON q.s = t.id{scope} JOIN terms o ON o.id = q.o
UNION
SELECT q.s, q.p, q.o, o.kind, o.value, o.datatype, o.lang
FROM cbd JOIN quads q ON q.s = cbd.o{scope} JOIN terms o ON o.id = q.o WHERE cbd.kind = 2
),
sp AS (SELECT s AS id FROM cbd UNION SELECT p FROM cbd)
SELECT 2, NULL::bigint, NULL::smallint, NULL, NULL::integer, NULL, NULL::bigint, NULL::bigint, NULL::bigint
WHERE EXISTS (SELECT 1 FROM terms t WHERE t.hash = {reified})
UNION ALL
SELECT 0, t.id, t.kind, t.value, t.datatype, t.lang, NULL, NULL, NULL FROM sp JOIN terms t ON t.id = sp.id
UNION ALL
SELECT 1, cbd.o, cbd.kind, cbd.value, cbd.datatype, cbd.lang, cbd.s, cbd.p, cbd.o FROM cbd"""
_SCOPE: Final = " AND q.g = COALESCE((SELECT t.id FROM terms t WHERE t.hash = {hash} AND t.kind = 1 AND t.value = {iri}), -1)"


def _one_statement(store: QuadSource, resources: set[Node], scope: Node | None,
                   log: list[ExplainEntry] | None = None) -> list[tuple[Any, ...]]:
    """The rows of the description of ``resources`` (IRIs) in ``scope`` (None: every graph),
    on PostgreSQL in one statement that looks the IRIs up itself: one round trip, where
    looking the ids up first took two (or a guess sent with the lookup, in one pipeline:
    a pipeline's round trip costs more than a plain statement's).

    The IRIs are in the text, quoted by the driver, not parameters: a statement without
    parameters has one plan, which the driver prepares the second time it is sent (that
    time costs a round trip more, to prepare it; from the third on, the same description
    asked again, as a portal page is, costs one); with parameters PostgreSQL plans afresh
    each time, judging its generic plan of an array of unknown length costlier.
    """
    iris = tuple(sorted(str(r) for r in resources if isinstance(r, URIRef)))
    if not iris:
        return []  # a WHERE that bound nothing, or only literals: nothing to describe
    raw = driver_connection(store.connection)  # (begins the transaction, as SQLAlchemy has it)
    sql = _pg_describe_sql(raw, iris, None if scope is None else str(scope))
    if log is not None:
        log.append(ExplainEntry(sql, {}))
    conn = store.connection
    try:
        # Straight to the driver: SQLAlchemy's text() would take ":name" inside an IRI
        # (urn:x:abc) for a parameter.
        with driver_errors(conn, sql, None):
            cursor = raw.cursor()
            try:
                cursor.execute(sql)  # no parameters: sent as written, % included
                rows = cursor.fetchall()
            finally:
                cursor.close()
    except DBAPIError:
        with contextlib.suppress(Exception):
            store.rollback()
        raise
    if any(row[0] == 2 for row in rows):  # rdf:subject is stored: rdflib's evaluation follows reifications
        if log is not None:
            log.append(ExplainEntry(None, {}, "DescribeQuery: rdf:subject is stored, so reified statements "
                                              "are part of a description (the rows above were not used)"))
        raise NotImplementedError
    return rows


#: Statements of :func:`_one_statement`, by IRIs, graph and the connection's encoding:
#: quoting each IRI through psycopg (an adaptation context a time) and hashing it was an
#: eighth of a small description's time (query 8, two IRIs, 0.53 ms). Only statements of
#: at most :data:`_PG_STATEMENT_CHARS` characters are kept (a description of thousands of
#: resources, bound by a WHERE that a harvest changes, would keep megabytes a time), and
#: the whole is emptied when it holds :data:`_PG_STATEMENTS_KEPT`: 16 MB at most.
_PG_STATEMENTS: dict[tuple[Any, ...], str] = {}
_PG_STATEMENTS_KEPT: Final = 1024
_PG_STATEMENT_CHARS: Final = 16_384


def _pg_describe_sql(raw: Any, iris: tuple[str, ...], scope: str | None) -> str:
    """:data:`_PG_DESCRIBE` for ``iris`` (sorted) in ``scope``, quoted for ``raw``'s server."""
    # psycopg quotes by the connection's encoding (a backslash as E'\\', which reads the
    # same whatever standard_conforming_strings is: a test sees to it).
    key = (iris, scope, raw.info.encoding)
    sql = _PG_STATEMENTS.get(key)
    if sql is not None:
        return sql
    from psycopg.sql import Literal as SQLLiteral

    def quoted(iri: str) -> str:
        return SQLLiteral(iri).as_string(raw)

    # CAST of a numeric literal, not ``-n::bigint``: that casts n first, and 2^63 is no bigint
    seeds = ", ".join(f"(CAST({encode(URIRef(i))[0]} AS BIGINT), {quoted(i)})" for i in iris)
    scope_of = ""
    if scope is not None:
        # (The IRI last: one holding "{hash}" stays as it is.)
        scope_of = _SCOPE.replace("{hash}", str(encode(URIRef(scope))[0])).replace("{iri}", quoted(scope))
    # Reified statements would be part of the description: the hash alone answers whether
    # any could be (a collision only sends the question to rdflib's evaluation).
    sql = _PG_DESCRIBE.format(seeds=seeds, reified=encode(RDF.subject)[0], scope=scope_of)
    if len(sql) <= _PG_STATEMENT_CHARS:
        if len(_PG_STATEMENTS) >= _PG_STATEMENTS_KEPT:
            _PG_STATEMENTS.clear()
        _PG_STATEMENTS[key] = sql
    return sql


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
