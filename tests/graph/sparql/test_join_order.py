"""PostgreSQL joins a basic graph pattern in the order the compiler writes, by windows
(:mod:`catalogue.graph.sparql.join_order`): the pattern matching fewest rows first, then
patterns connected to those before, a path between the groups it joins."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from rdflib import BNode, Dataset, Literal, Namespace, URIRef, Variable
from rdflib.collection import Collection
from rdflib.namespace import RDF
from rdflib.paths import MulPath

from catalogue.graph.database import JOIN_COLLAPSE
from catalogue.graph.sparql.join_order import (
    ColumnStatistics,
    JoinStatistics,
    join_statistics,
    order_patterns,
)
from catalogue.graph.store import SQLStore

EX = Namespace("http://x/")
TYPE, NAME, SHAPE, FIRST, REST, NIL, NOWHERE = 1, 2, 3, 4, 5, 6, 7
IDS = {RDF.type: TYPE, EX.name: NAME, EX.shape: SHAPE, RDF.first: FIRST, RDF.rest: REST, RDF.nil: NIL,
       Literal("air_temperature"): 100, Literal(180): 101, EX.Array: 102}
# a million quads: rdf:first and rdf:rest a fifth each, rdf:nil a tenth of all objects,
# 180 a fiftieth, one standard name a thousandth
STATS = JoinStatistics(
    rows=1e6,
    s=ColumnStatistics({}, 1e-5, 1e5),
    p=ColumnStatistics({TYPE: 0.1, NAME: 0.05, SHAPE: 0.05, FIRST: 0.2, REST: 0.2}, 0.01, 30),
    o=ColumnStatistics({NIL: 0.1, 101: 0.02, 102: 0.05}, 1e-6, 3e5),
)
a, shape, n1, steps, x, y = (Variable(v) for v in ("a", "shape", "n1", "steps", "x", "y"))


def _order(triples, bound=()):
    return order_patterns(triples, STATS, IDS.get, lambda term: term in bound)


def test_the_selective_pattern_first_then_its_neighbours():
    shape_query = [
        (shape, RDF.first, steps),
        (shape, RDF.rest, n1),
        (n1, RDF.first, Literal(180)),
        (a, EX.shape, shape),
        (a, EX.name, Literal("air_temperature")),
    ]
    ordered = _order(shape_query)
    assert ordered[0] == (a, EX.name, Literal("air_temperature"))
    assert ordered[1] == (a, EX.shape, shape)  # the only pattern connected to ?a
    # ?shape's two patterns each give a row or so per subject: rdf:first (written first)
    # ties with rdf:rest, then the cell of 180 that rdf:rest reached
    assert ordered[2:] == [(shape, RDF.first, steps), (shape, RDF.rest, n1), (n1, RDF.first, Literal(180))]


def test_patterns_sharing_no_variable_wait_for_the_connected_ones():
    ordered = _order([(x, RDF.type, EX.Array), (y, EX.name, Literal("air_temperature")), (y, EX.shape, shape),
                      (shape, RDF.rest, RDF.nil)])
    # the name is rarest; then its group, rdf:nil's rest included, before the typed nodes
    assert ordered == [(y, EX.name, Literal("air_temperature")), (y, EX.shape, shape), (shape, RDF.rest, RDF.nil),
                       (x, RDF.type, EX.Array)]


def test_a_term_the_database_lacks_comes_first_and_bound_variables_are_constants():
    missing = (x, EX.name, Literal("never stored"))
    assert _order([(x, RDF.type, EX.Array), missing])[0] == missing
    # ?a bound from outside (initBindings): its shape is one subject's rows
    assert _order([(x, EX.name, Literal("air_temperature")), (a, EX.shape, x)], bound={a})[0] == (a, EX.shape, x)


def test_a_path_comes_between_the_groups_it_joins():
    dims, cell = Variable("dims"), BNode("cell")
    closure = (dims, MulPath(RDF.rest, "*"), cell)
    ordered = _order([(cell, RDF.first, Literal(180)), (a, RDF.type, EX.Array), (a, EX.shape, dims), closure])
    # 180's cells are fewer than the arrays: they come first, then the closure from them,
    # which binds the lists, then the arrays holding those lists
    assert ordered == [(cell, RDF.first, Literal(180)), closure, (a, EX.shape, dims), (a, RDF.type, EX.Array)]


# ------------------------------------------------------------------ on PostgreSQL
QUERY = """PREFIX ex: <http://x/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?array ?steps WHERE {
  ?array ex:name "air_temperature" ; ex:shape ?shape .
  ?shape rdf:first ?steps ;
         rdf:rest/rdf:first 180 ;
         rdf:rest/rdf:rest/rdf:first 360 ;
         rdf:rest/rdf:rest/rdf:rest rdf:nil .
}"""


def _fill(ds: Dataset) -> None:
    g = ds.graph(URIRef("http://x/g"))
    for i in range(600):
        array = EX[f"a{i}"]
        g.add((array, EX.name, Literal("air_temperature" if i % 100 == 1 else f"name{i % 7}")))
        cells = BNode()
        Collection(g, cells, [Literal(n) for n in ((i % 5 + 1, 180, 360) if i % 2 else (180, 360))])
        g.add((array, EX.shape, cells))


@pytest.mark.postgres
def test_postgresql_joins_an_rdf_list_query_in_the_written_order(postgres_url):
    store = SQLStore(postgres_url)
    ds = Dataset(store=store, default_union=True)
    _fill(ds)
    store.commit()
    memory = Dataset(default_union=True)
    _fill(memory)
    from catalogue.graph.sparql import join_order

    # before the first ANALYZE there are no statistics: the patterns stay as written (and
    # the statement is compiled again once there are, not taken from the statement cache)
    conn = store.connection
    join_order._CACHE.clear()
    if join_statistics(conn) is None:
        assert Counter(tuple(r) for r in ds.query(QUERY)) == Counter(tuple(r) for r in memory.query(QUERY))
        store.rollback()
    conn = store.connection
    conn.exec_driver_sql("ANALYZE quads")
    store.commit()
    join_order._CACHE.clear()
    stats = join_statistics(conn)
    assert stats is not None and stats.rows == pytest.approx(len(store), rel=0.2)
    assert conn.exec_driver_sql("SHOW join_collapse_limit").scalar() == str(JOIN_COLLAPSE)
    store.sql_log = log = []
    rows = Counter(tuple(r) for r in ds.query(QUERY))
    store.sql_log = None
    assert rows == Counter(tuple(r) for r in memory.query(QUERY)) and sum(rows.values()) == 6
    sql = next(e.sql for e in log if e.sql)
    first = re.search(r"FROM quads (q\d+)\n", sql).group(1)
    name = store.lookup_term_ids([EX.name])[EX.name]
    # the rare name is the first table: the planner's windows start from it
    assert f"{first}.p = {name} AND" in sql
    store.close()
