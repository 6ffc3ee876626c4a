"""The estimates that pick the end a closure is seeded from (:mod:`catalogue.graph.sparql.cardinality`)."""

from __future__ import annotations

import uuid

from rdflib import Dataset, Literal, URIRef
from rdflib.namespace import RDF

from catalogue.graph.sparql.cardinality import CAP, Cardinality, Fanout
from catalogue.graph.store import SQLStore

EX = "http://x/"


def _store(db_url: str) -> SQLStore:
    """A tree (a root, 20 groups of 12 members) and 300 lists of three cells, each
    ending in rdf:nil, the object of a third of all rdf:rest quads."""
    store = SQLStore(db_url)
    g = Dataset(store=store).graph(URIRef(EX + "g"))
    member, name = URIRef(EX + "member"), URIRef(EX + "name")
    quads = [(URIRef(EX + "root"), member, URIRef(f"{EX}grp{k}"), g) for k in range(20)]
    quads += [(URIRef(f"{EX}grp{k}"), member, URIRef(f"{EX}arr{k}_{i}"), g) for k in range(20) for i in range(12)]
    for i in range(300):
        cells = [URIRef(f"{EX}l{i}_{k}") for k in range(3)]
        for k, cell in enumerate(cells):
            quads.append((cell, RDF.first, Literal("depth" if i % 30 == 0 and k == 1 else f"d{k}"), g))
            quads.append((cell, RDF.rest, cells[k + 1] if k < 2 else RDF.nil, g))
        quads.append((URIRef(f"{EX}arr{i % 20}_{i % 12}"), name, Literal("x" if i % 10 == 0 else "y"), g))
    store.addN(quads)
    store.commit()
    return store


def test_a_predicate_fans_out_as_its_typical_node_does(db_url: str) -> None:
    store = _store(db_url)
    try:
        ids = store.lookup_term_ids({URIRef(EX + "member"), RDF.rest, RDF.first})
        estimates = Cardinality(store.connection, f"test-{uuid.uuid4()}")
        # down the tree a group has 12 members (the root's 20 are a few of the samples); up, one parent
        assert estimates.fanout(ids[URIRef(EX + "member")]) == Fanout(12.0, 1.0)
        # along a list one cell a step both ways: rdf:nil's 300 predecessors are one object
        # among the 900 (a mean, or the first quads of the index, would make it hundreds)
        assert estimates.fanout(ids[RDF.rest]) == Fanout(1.0, 1.0)
        assert estimates.fanout(ids[RDF.first]).forward == 1.0
        assert estimates.fanout(10 ** 9) == Fanout(1.0, 1.0)  # no quads: nothing to fan out
    finally:
        store.close()


def test_rows_are_counted_up_to_a_cap(db_url: str) -> None:
    store = _store(db_url)
    try:
        ids = store.lookup_term_ids({RDF.first, Literal("depth"), URIRef(EX + "root")})
        estimates = Cardinality(store.connection, f"test-{uuid.uuid4()}")
        assert estimates.rows(None, ids[RDF.first], ids[Literal("depth")]) == 10
        # counted only as far as a smaller pattern found before: "not fewer than 50"
        assert estimates.rows(None, ids[RDF.first], None, below=50) == 50
        assert estimates.rows(None, ids[RDF.first], None) == 900  # counted on when asked for more
        assert estimates.rows(None, ids[RDF.first], None, below=50) == 50
        assert estimates.rows(ids[URIRef(EX + "root")], None, None) == 20
        assert estimates.rows(None, None, None) == CAP
    finally:
        store.close()
