"""The store of a DESCRIBE result answers every triple pattern as rdflib's memory store
does, and its graph serialises to the same triples (it is built unindexed and indexed
on the first lookup by pattern)."""

from __future__ import annotations

import itertools

from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.plugins.stores.memory import SimpleMemory

from catalogue.graph.sparql.described import DescriptionStore

EX = Namespace("https://example.org/")


def _triples() -> list[tuple]:
    b = BNode()
    return [
        (EX.a, EX.p, Literal("x")),
        (EX.a, EX.p, Literal("x", lang="en")),
        (EX.a, EX.q, b),
        (b, EX.p, Literal(1)),
        (b, EX.r, EX.a),
        (EX.c, EX.p, EX.a),
    ]


def test_every_pattern_matches_what_the_memory_store_matches() -> None:
    mine, reference = Graph(store=DescriptionStore()), Graph(store=SimpleMemory())
    triples = _triples()
    mine.store.fill(triples[:3])  # type: ignore[attr-defined]
    for t in triples[3:]:
        mine.add(t)
    for t in triples:
        reference.add(t)
    assert len(mine) == len(reference) == 6
    terms = {term for t in triples for term in t} | {EX.nothing}
    for s, p, o in itertools.product([None, *terms], repeat=3):
        assert set(mine.triples((s, p, o))) == set(reference.triples((s, p, o))), (s, p, o)
    mine.add((EX.d, EX.p, EX.a))  # added after the index was built
    assert set(mine.subjects(EX.p, EX.a)) == {EX.c, EX.d}
    mine.remove((None, EX.p, EX.a))
    assert set(mine.subjects(EX.p, EX.a)) == set() and len(mine) == 5
    mine.remove([EX.a, EX.p, Literal("x")])  # a list, as rdflib's memory stores take it
    assert len(mine) == 4 and not list(mine.store.triples([EX.a, EX.p, Literal("x")]))


def test_its_graph_serialises_the_same_triples_with_its_prefixes() -> None:
    mine = Graph(store=DescriptionStore(), bind_namespaces="core")
    mine.bind("ex", EX)
    mine.store.fill(_triples())  # type: ignore[attr-defined]
    text = mine.serialize(format="turtle")
    assert "@prefix ex: <https://example.org/>" in text
    reference = Graph()
    for t in _triples():
        reference.add(t)
    assert isomorphic(Graph().parse(data=text, format="turtle"), reference)


def test_binding_a_prefix_again_follows_the_memory_store() -> None:
    for override in (True, False):
        mine, reference = DescriptionStore(), SimpleMemory()
        for store in (mine, reference):
            store.bind("a", URIRef("https://one/"))
            store.bind("b", URIRef("https://two/"))
            store.bind("a", URIRef("https://two/"), override=override)
        assert sorted(mine.namespaces()) == sorted(reference.namespaces()), override
        assert mine.prefix(URIRef("https://two/")) == reference.prefix(URIRef("https://two/"))


def test_binding_many_at_once_is_binding_each_in_turn() -> None:
    """bind_all writes an empty store's prefixes at once: the same bindings, in the same
    order, as one bind() after another (namespaces repeated under several prefixes; a
    store that has bindings already, and a prefix given twice, take the slow way)."""
    one, two, three = URIRef("https://one/"), URIRef("https://two/"), URIRef("https://three/")
    cases = [
        [("a", one), ("b", two), ("c", three)],
        [("a", one), ("b", one), ("c", two), ("d", one), ("e", two)],
        [("a", one), ("a", two), ("b", one)],  # a prefix twice
        [("a", one), ("a", two)],  # ... where binding at once would leave one's prefix "a"
        [],
    ]
    for pairs in cases:
        for first in ([], [("z", three), ("a", two)]):
            mine, reference = DescriptionStore(), SimpleMemory()
            at_once = DescriptionStore()
            for store in (mine, reference, at_once):
                for prefix, namespace in first:
                    store.bind(prefix, namespace)
            for prefix, namespace in pairs:
                mine.bind(prefix, namespace)
                reference.bind(prefix, namespace)
            at_once.bind_all(iter(pairs))
            assert list(at_once.namespaces()) == list(mine.namespaces()), (pairs, first)
            assert sorted(at_once.namespaces()) == sorted(reference.namespaces()), (pairs, first)
            for namespace in (one, two, three):
                assert at_once.prefix(namespace) == mine.prefix(namespace) == reference.prefix(namespace)
