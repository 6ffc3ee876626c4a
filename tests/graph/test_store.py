"""The SQL-backed rdflib store, on SQLite and PostgreSQL.

Behaviour is checked against rdflib's own Memory store wherever rdflib defines it, so
that a Dataset on the catalogue database is a drop-in replacement.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

import pytest
import rdflib
from rdflib import BNode, Dataset, Graph, Literal, Namespace, URIRef, Variable
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.store import VALID_STORE, Store
from sqlalchemy import select, text

from catalogue.graph import store as store_module
from catalogue.graph import terms as term_codec
from catalogue.graph.database import is_memory_sqlite, make_engine
from catalogue.graph.load import ids as term_ids
from catalogue.graph.schema import terms as terms_table
from catalogue.graph.store import BATCH_SIZE, SQLStore
from catalogue.graph.terms import TermCollisionError, decode, encode

pytestmark = [
    # rdflib's own code (SPARQL evaluation, Dataset.add) calls its deprecated APIs.
    pytest.mark.filterwarnings("ignore:Dataset.default_context is deprecated"),
    pytest.mark.filterwarnings("ignore:Dataset.contexts is deprecated"),
]

# Plain namespaces: rdflib's closed RDF/XSD namespaces warn when pytest inspects them.
RDF = Namespace(str(rdflib.RDF))
XSD = Namespace(str(rdflib.XSD))
EX = Namespace("http://example.org/")
G1, G2, G3, EMPTY = EX.g1, EX.g2, EX.g3, EX.empty
RDF_JSON = RDF.JSON
B1 = BNode("b1")
#: term_hash(IRI, "http://example.org/a"): stored in every existing database, so it
#: must never change.
PINNED_HASH = 235938553847498387

QUADS = [
    (EX.a, RDF.type, EX.Dataset, G1),
    (EX.a, EX.title, Literal("Alpha", lang="en"), G1),
    (EX.a, EX.title, Literal("Alfa", lang="it"), G1),
    (EX.a, EX.size, Literal("10", datatype=XSD.integer), G1),
    (EX.b, RDF.type, EX.Dataset, G2),
    (EX.b, EX.size, Literal("0010", datatype=XSD.integer, normalize=False), G2),
    (EX.b, EX.title, Literal("Beta"), G2),
    (EX.a, RDF.type, EX.Dataset, G2),  # the same triple in two graphs
    (B1, EX.refersTo, EX.a, G3),
    (B1, EX.ratio, Literal("1.0", datatype=XSD.double, normalize=False), G3),
    (EX.c, RDF.type, EX.Dataset, DATASET_DEFAULT_GRAPH_ID),
    (EX.c, EX.size, Literal("3.5", datatype=XSD.decimal), DATASET_DEFAULT_GRAPH_ID),
    (EX.c, EX.title, Literal("Gamma", lang="en"), DATASET_DEFAULT_GRAPH_ID),
]


def load(ds: Dataset, quads: Iterable[tuple] = QUADS, empty: bool = True) -> Dataset:
    for s, p, o, g in quads:
        ds.graph(g).add((s, p, o))
    if empty:
        ds.graph(EMPTY)
    return ds


def quad_set(ds: Dataset) -> Counter:
    return Counter(ds.quads((None, None, None, None)))


def graph_names(store: Store) -> set:
    return {graph.identifier for graph in store.contexts()}


def stored_values(store: SQLStore) -> set[str]:
    return set(store._connection().execute(select(terms_table.c.value)).scalars())


def count_quads(url: str, graph: URIRef | None = None) -> int:
    """Count quads through a separate engine: what other processes can see."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            if graph is None:
                return conn.execute(text("SELECT count(*) FROM quads")).scalar_one()
            return conn.execute(
                text(
                    "SELECT count(*) FROM quads JOIN terms ON terms.id = quads.g "
                    "WHERE terms.hash = :h"
                ),
                {"h": encode(graph)[0]},
            ).scalar_one()
    finally:
        engine.dispose()


# ------------------------------------------------------------------- plugin


def test_registered_as_rdflib_store_plugin():
    assert rdflib.plugin.get("catalogue", Store) is SQLStore


def test_dataset_with_plugin_name_uses_private_memory_database():
    ds = Dataset(store="catalogue", default_union=True)
    ds.graph(G1).add((EX.a, EX.p, Literal("x")))
    other = Dataset(store="catalogue")
    assert len(ds) == 1
    assert len(other) == 0
    assert list(ds.query("SELECT ?o WHERE { ?s ?p ?o }")) == [(Literal("x"),)]
    assert is_memory_sqlite(ds.store.engine.url)


def test_open_returns_valid_store(db_url):
    store = SQLStore()
    try:
        assert store.open(db_url) == VALID_STORE
        assert len(store) == 0
    finally:
        store.close()


def test_store_on_given_engine(db_url):
    engine = make_engine(db_url)
    try:
        store = SQLStore(engine=engine)
        Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
        store.commit()
        store.close()
        # The engine belongs to the caller and stays usable.
        assert count_quads(db_url) == 1
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM graphs")).scalar_one() == 1
    finally:
        engine.dispose()


def test_closed_store_refuses_work_until_reopened(db_url):
    store = SQLStore(db_url)
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        len(store)
    store.open(db_url)
    assert len(store) == 0
    store.close()


# ------------------------------------------------------------------- terms


def test_term_hashes_are_signed_64_bit_and_stable():
    h, kind, value, datatype, lang = encode(EX.a)
    assert (kind, value, datatype, lang) == (1, str(EX.a), None, None)
    assert -(2**63) <= h < 2**63
    assert h == encode(URIRef(str(EX.a)))[0] == term_codec.term_hash(1, str(EX.a), None, None)
    # The old name stays: revision 0001 used the hash as the term id.
    assert term_codec.term_id is term_codec.term_hash
    # Pinned: terms.hash of existing databases was computed with this function.
    assert term_codec.term_hash(1, "http://example.org/a", None, None) == PINNED_HASH


def test_encode_takes_a_short_way_to_the_same_hash():
    """IRIs and blank nodes are hashed without :func:`content` (the harvest's most common
    terms); the answer is the one the parts give, lone surrogates and subclasses included."""
    from rdflib.term import RDFLibGenid

    for node in [EX.a, URIRef("http://x/\ud800é"), BNode("b0"), BNode("\udfff"), RDF.type,
                 RDFLibGenid("http://rdlib.net/.well-known/genid/rdflib/N1")]:
        kind, value, datatype, lang = term_codec.content(node)
        assert encode(node) == (term_codec.term_hash(kind, value, datatype, lang), kind, value, datatype, lang)


def test_term_hashes_distinguish_kinds_datatypes_and_tags():
    variants = [
        URIRef("x"),
        BNode("x"),
        Literal("x"),
        Literal("x", datatype=XSD.string),
        Literal("x", lang="en"),
        Literal("x", datatype=URIRef("")),
        Literal("1", datatype=XSD.integer),
        Literal("01", datatype=XSD.integer, normalize=False),
    ]
    assert len({encode(v)[0] for v in variants}) == len(variants)
    # Separators cannot be forged through the parts.
    assert term_codec.term_hash(3, "b", "a", None) != term_codec.term_hash(3, "", "a|b", None)


def test_language_tags_compare_case_insensitively_like_rdflib():
    upper, lower = Literal("chat", lang="EN"), Literal("chat", lang="en")
    assert upper == lower  # rdflib's view
    assert encode(upper)[0] == encode(lower)[0]
    assert encode(upper)[4] == "EN"  # but the tag is kept as written


def test_decode_keeps_lexical_forms():
    for term in [
        Literal("1.0", datatype=XSD.double, normalize=False),
        Literal("01", datatype=XSD.integer, normalize=False),
        Literal("1", datatype=XSD.boolean, normalize=False),
        Literal("plain"),
        Literal("x" * 5000, lang="de"),
        BNode("n1"),
        URIRef("http://example.org/ü"),
    ]:
        _, kind, value, datatype, lang = encode(term)
        back = decode(kind, value, datatype, lang)
        assert type(back) is type(term)
        assert str(back) == str(term)
        assert back == term
        if isinstance(term, Literal):
            assert back.datatype == term.datatype
            assert back.language == term.language
    assert decode(3, "plain", None, None).datatype is None


def test_unstorable_terms_are_rejected():
    with pytest.raises(TypeError):
        encode(Variable("x"))
    with pytest.raises(TypeError):
        encode(Graph())


# ------------------------------------------------------- lexical round trips

BIG_JSON = json.dumps({"data": "ü€😀" * 150_000, "n": 1.0}, ensure_ascii=False)

ROUND_TRIP_OBJECTS = [
    Literal("1.0", datatype=XSD.double, normalize=False),
    Literal("1E0", datatype=XSD.double, normalize=False),
    Literal("01", datatype=XSD.integer, normalize=False),
    Literal("1", datatype=XSD.integer),
    Literal("-0", datatype=XSD.integer, normalize=False),
    Literal("2024-01-01T00:00:00.000Z", datatype=XSD.dateTime, normalize=False),
    Literal("not a number", datatype=XSD.integer, normalize=False),
    Literal("x", datatype=XSD.string),
    Literal("x"),
    Literal(""),
    Literal('line\nbreak\ttab "quoted" \\ back', lang="en-GB"),
    Literal("colour", lang="EN-gb"),
    Literal('{"b": 1,  "a": "ü€😀",\n "c": [1.0, 1e2]}', datatype=RDF_JSON, normalize=False),
    Literal(BIG_JSON, datatype=RDF_JSON, normalize=False),
    Literal("x", datatype=URIRef("http://example.org/dt/ü")),
    URIRef("http://example.org/ü/😀?q=ä#frag"),
    URIRef("x"),
    BNode("x"),
    BNode(),
]


def test_lexical_forms_survive_storage_and_reopen(db_url):
    graph_names_ = [G1, BNode("graph-bnode"), URIRef("http://example.org/graphs/ü")]
    store = SQLStore(db_url)
    for name in graph_names_:
        g = Graph(store, identifier=name)
        for i, obj in enumerate(ROUND_TRIP_OBJECTS):
            g.add((EX[f"s{i}"], EX.value, obj))
    store.commit()
    store.close()

    store = SQLStore(db_url)
    try:
        assert graph_names(store) == set(graph_names_)
        for name in graph_names_:
            g = Graph(store, identifier=name)
            assert len(g) == len(ROUND_TRIP_OBJECTS)
            for i, expected in enumerate(ROUND_TRIP_OBJECTS):
                (got,) = list(g.objects(EX[f"s{i}"], EX.value))
                assert type(got) is type(expected)
                assert str(got) == str(expected)
                if isinstance(expected, Literal):
                    assert got.datatype == expected.datatype
                    assert got.language == expected.language
                # Lookup by the exact term finds it, and only it.
                assert list(g.subjects(EX.value, expected)) == [EX[f"s{i}"]]
        # "1"^^xsd:integer and "01"^^xsd:integer are different terms.
        g = Graph(store, identifier=G1)
        assert list(g.subjects(EX.value, Literal("01", datatype=XSD.integer, normalize=False))) == [
            EX.s2
        ]
        assert list(g.subjects(EX.value, Literal("1", datatype=XSD.integer))) == [EX.s3]
        assert BIG_JSON in stored_values(store)
    finally:
        store.close()


def test_iri_blank_node_and_literal_with_same_text_are_distinct(sql_store):
    g = Graph(sql_store, identifier=G1)
    for obj in (URIRef("x"), BNode("x"), Literal("x")):
        g.add((EX.s, EX.p, obj))
    assert len(g) == 3
    assert {type(o) for o in g.objects(EX.s, EX.p)} == {URIRef, BNode, Literal}


def test_language_tag_case_variants_are_one_triple_like_memory(sql_store):
    results = []
    for store in (sql_store, "Memory"):
        g = Graph(store, identifier=G1)
        g.add((EX.s, EX.p, Literal("chat", lang="EN")))
        g.add((EX.s, EX.p, Literal("chat", lang="en")))
        results.append((len(g), [(o, o.language) for o in g.objects()]))
    assert results[0] == results[1] == (1, [(Literal("chat", lang="EN"), "EN")])


def test_hash_collision_is_detected(sql_store, monkeypatch):
    g = Graph(sql_store, identifier=G1)
    g.add((EX.s, EX.p, Literal("a")))
    real_encode = term_ids.encode
    victim_id = encode(Literal("a"))[0]

    def colliding_encode(node):
        encoded = real_encode(node)
        if node == Literal("b"):
            return (victim_id, *encoded[1:])
        if node in (Literal("c"), Literal("d")):
            return (encode(Literal("unused"))[0], *encoded[1:])
        return encoded

    # The writes' encoder (load.ids) and the patterns' (the store's own import).
    monkeypatch.setattr(term_ids, "encode", colliding_encode)
    monkeypatch.setattr(store_module, "encode", colliding_encode)
    # Against a stored term ...
    with pytest.raises(TermCollisionError, match="collision"):
        g.add((EX.s, EX.p, Literal("b")))
    sql_store.rollback()
    # ... and between two new terms of one batch.
    with pytest.raises(TermCollisionError):
        sql_store.addN([(EX.s, EX.p, Literal("c"), g), (EX.s, EX.p, Literal("d"), g)])
    sql_store.rollback()
    monkeypatch.setattr(term_ids, "encode", real_encode)
    monkeypatch.setattr(store_module, "encode", real_encode)
    assert list(g.objects()) == []  # everything above was rolled back


def test_a_blank_node_stored_before_is_one_term_and_a_colliding_one_is_refused(sql_store, monkeypatch):
    """Blank nodes skip the look-up before the insert (each conversion mints new labels):
    one stored before is found by the insert's conflict, and a collision still refused."""
    g = Graph(sql_store, identifier=G1)
    b = BNode("kept")
    g.add((b, EX.p, Literal("one")))
    sql_store.commit()
    g.add((b, EX.p, Literal("two")))
    g.add((BNode("new"), EX.p, b))
    sql_store.commit()
    assert sorted(str(o) for o in g.objects(b, EX.p)) == ["one", "two"]
    assert set(g.subjects(EX.p, b)) == {BNode("new")}
    real_encode = term_ids.encode
    victim = encode(Literal("one"))[0]
    monkeypatch.setattr(term_ids, "encode",
                        lambda node: (victim, *real_encode(node)[1:]) if node == BNode("thief") else real_encode(node))
    with pytest.raises(TermCollisionError):
        g.add((BNode("thief"), EX.p, Literal("three")))
    sql_store.rollback()
    monkeypatch.setattr(term_ids, "encode", real_encode)
    assert len(g) == 3
    # the blank node is one term row, however often it was written
    from sqlalchemy import text

    with sql_store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM terms WHERE value = 'kept' AND kind = 2")).scalar() == 1
        # a geometry new in a batch where a stored blank node conflicted is still spatially indexed
        wkt = Literal("POINT(10 20)", datatype=URIRef("http://www.opengis.net/ont/geosparql#wktLiteral"))
    sql_store.addN([(b, EX.geom, wkt, g)])
    sql_store.commit()
    with sql_store.engine.connect() as conn:
        geo_id = sql_store._lookup_term_id(wkt)
        assert conn.execute(text("SELECT count(*) FROM geo_index WHERE key / 16 = :i"), {"i": geo_id}).scalar() == 1


def test_new_terms_are_numbered_predicates_then_classes_then_graphs_then_the_rest(sql_store):
    """The terms in most quads get the smallest ids (SQLite stores small integers in fewer
    bytes), each group in order of first appearance."""
    from rdflib import RDF

    if sql_store.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL numbers terms by its own sequence")
    g = Graph(sql_store, identifier=G1)
    sql_store.addN([(EX.a, EX.p2, Literal("x"), g), (EX.a, RDF.type, EX.C, g), (EX.b, EX.p1, EX.a, g)])
    sql_store.commit()
    ids = {n: sql_store._lookup_term_id(n) for n in (EX.p2, RDF.type, EX.p1, EX.C, G1, EX.a, Literal("x"), EX.b)}
    assert sorted(ids, key=ids.get) == [EX.p2, RDF.type, EX.p1, EX.C, G1, EX.a, Literal("x"), EX.b]


# ------------------------------------------------------------- add / remove


def test_add_without_context_goes_to_default_graph(sql_store):
    sql_store.add((EX.s, EX.p, EX.o), None)
    assert graph_names(sql_store) == {DATASET_DEFAULT_GRAPH_ID}
    with pytest.raises(ValueError, match="formula"):
        sql_store.add((EX.s, EX.p, EX.o), Graph(sql_store, identifier=G1), quoted=True)


def test_add_remove_with_wildcards_per_graph_and_across_graphs(sql_store):
    ds = load(Dataset(store=sql_store, default_union=True))
    g1, g2 = ds.graph(G1), ds.graph(G2)
    assert (len(g1), len(g2), len(ds)) == (4, 4, 12)

    # Remove within one graph: the triple stays in the other graph.
    g1.remove((EX.a, RDF.type, None))
    assert (EX.a, RDF.type, EX.Dataset) not in g1
    assert (EX.a, RDF.type, EX.Dataset) in g2
    assert (EX.a, RDF.type, EX.Dataset) in ds

    # Remove across all graphs (context None).
    sql_store.remove((None, EX.size, None), None)
    assert list(ds.triples((None, EX.size, None))) == []
    assert (len(g1), len(g2)) == (2, 3)

    # Subject wildcard in one graph via the dataset quad form.
    ds.remove((None, None, None, G2))
    assert len(g2) == 0
    # Empty graphs stay registered until remove_graph (Memory-store semantics).
    assert G2 in graph_names(sql_store)

    # Removing with a term that cannot be stored matches nothing.
    sql_store.remove((Variable("x"), None, None), None)
    assert len(g1) == 2


def test_len_counts_distinct_triples_over_graphs(sql_store):
    ds = load(Dataset(store=sql_store, default_union=True))
    mem = load(Dataset(store="Memory", default_union=True))
    assert len(sql_store) == len(mem.store) == 12
    for name in (G1, G2, G3, EMPTY, DATASET_DEFAULT_GRAPH_ID, EX.unknown):
        assert len(ds.graph(name)) == len(mem.graph(name))
        assert sql_store.__len__(Graph(identifier=name)) == mem.store.__len__(
            Graph(identifier=name)
        )


def test_contexts_include_empty_graphs_and_filter_by_triple(sql_store):
    ds = load(Dataset(store=sql_store, default_union=True))
    assert graph_names(sql_store) == {G1, G2, G3, EMPTY, DATASET_DEFAULT_GRAPH_ID}
    assert {g.identifier for g in sql_store.contexts((EX.a, RDF.type, EX.Dataset))} == {G1, G2}
    assert list(sql_store.contexts((EX.nope, RDF.type, EX.Dataset))) == []
    assert all(isinstance(g, Graph) and g.store is sql_store for g in sql_store.contexts())
    ds.remove_graph(EMPTY)
    assert EMPTY not in graph_names(sql_store)
    assert sql_store.graph_ids() == sorted([G1, G2, G3, DATASET_DEFAULT_GRAPH_ID], key=str)


def test_triples_report_all_graphs_of_a_triple_like_memory(sql_store):
    mem = Dataset(store="Memory")
    for ds in (mem, Dataset(store=sql_store)):
        load(ds)
    for store in (sql_store, mem.store):
        for context in (None, Graph(identifier=G1)):
            matches = {
                triple: {c.identifier for c in contexts}
                for triple, contexts in store.triples((EX.a, RDF.type, None), context)
            }
            assert matches == {(EX.a, RDF.type, EX.Dataset): {G1, G2}}


def test_union_triples_are_distinct_and_match_memory(sql_store):
    ds = load(Dataset(store=sql_store, default_union=True))
    mem = load(Dataset(store="Memory", default_union=True))
    patterns = [
        (None, None, None),
        (EX.a, None, None),
        (None, RDF.type, None),
        (None, None, EX.Dataset),
        (EX.a, RDF.type, None),
        (None, RDF.type, EX.Dataset),
        (EX.a, None, EX.Dataset),
        (EX.a, RDF.type, EX.Dataset),
        (B1, None, None),
        (None, None, Literal("0010", datatype=XSD.integer, normalize=False)),
        (None, None, Literal("10", datatype=XSD.integer)),
        (EX.missing, None, None),
        (Variable("v"), None, None),
    ]
    for pattern in patterns:
        got = list(sql_store.triples(pattern, None))
        want = list(mem.store.triples(pattern, None))
        assert Counter(t for t, _ in got) == Counter(t for t, _ in want), pattern
        assert Counter(ds.triples(pattern)) == Counter(mem.triples(pattern)), pattern
        for name in (G1, G2, G3, DATASET_DEFAULT_GRAPH_ID):
            assert Counter(ds.graph(name).triples(pattern)) == Counter(
                mem.graph(name).triples(pattern)
            ), (pattern, name)


# ----------------------------------------------------- Dataset vs Memory store


def test_dataset_api_matches_memory_store(sql_store):
    sql = Dataset(store=sql_store, default_union=True)
    mem = Dataset(store="Memory", default_union=True)

    def same() -> None:
        assert quad_set(sql) == quad_set(mem)
        assert len(sql) == len(mem)
        assert {g.identifier for g in sql.graphs()} == {g.identifier for g in mem.graphs()}
        assert Counter(sql.triples((None, None, None))) == Counter(mem.triples((None, None, None)))
        for name in (G1, G2, G3, EMPTY, DATASET_DEFAULT_GRAPH_ID):
            assert len(sql.graph(name)) == len(mem.graph(name))

    for ds in (sql, mem):
        load(ds)
    same()
    for ds in (sql, mem):
        ds.add((EX.d, RDF.type, EX.Dataset))  # into the default graph
        ds.add((EX.d, EX.title, Literal("Delta"), G3))
        ds.addN([(EX.e, EX.p, Literal(1), ds.graph(G1)), (EX.e, EX.p, Literal(2), ds.graph(G2))])
        ds.remove((EX.a, EX.title, None))
        ds.remove((None, RDF.type, EX.Dataset, G2))
    same()
    for ds in (sql, mem):
        ds.remove_graph(G1)
        ds.remove_graph(DATASET_DEFAULT_GRAPH_ID)  # empties it, but it stays
        ds.graph(EX.fresh)
    same()
    assert DATASET_DEFAULT_GRAPH_ID in {g.identifier for g in sql.graphs()}


def test_dataset_without_default_union_matches_memory_store(sql_store):
    sql = load(Dataset(store=sql_store))
    mem = load(Dataset(store="Memory"))
    for pattern in [(None, None, None), (None, RDF.type, None)]:
        assert Counter(sql.triples(pattern)) == Counter(mem.triples(pattern))
    query = "SELECT ?s WHERE { ?s a <http://example.org/Dataset> }"
    assert Counter(sql.query(query)) == Counter(mem.query(query)) == Counter([(EX.c,)])


QUERIES = [
    # GRAPH ?g iterates the named graphs (the default graph is skipped).
    "SELECT ?g ?s WHERE { GRAPH ?g { ?s a ex:Dataset } }",
    "SELECT ?g WHERE { GRAPH ?g { } }",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ex:Dataset }",
    "SELECT ?s WHERE { ?s a ex:Dataset }",
    "SELECT ?s ?t WHERE { ?s ex:title ?t FILTER(lang(?t) = 'en') }",
    "SELECT ?s ?n WHERE { ?s ex:size ?n FILTER(?n > 5) }",
    "SELECT ?s ?n WHERE { ?s ex:size ?n FILTER(str(?n) = '0010') }",
    "SELECT ?s ?t WHERE { ?s a ex:Dataset OPTIONAL { ?s ex:title ?t } }",
    "SELECT ?g ?s ?t WHERE { GRAPH ?g { ?s a ex:Dataset OPTIONAL { ?s ex:title ?t } } }",
    "SELECT ?b ?x WHERE { GRAPH ex:g3 { ?b ex:refersTo ?x } }",
    "SELECT ?s ?o WHERE { GRAPH ex:empty { ?s ?p ?o } }",
    "SELECT ?g ?s FROM NAMED ex:g1 FROM NAMED ex:g2 WHERE { GRAPH ?g { ?s a ex:Dataset } }",
    "SELECT ?s ?p ?o FROM ex:g2 WHERE { ?s ?p ?o }",
    "SELECT ?r WHERE { ?b ex:ratio ?r FILTER(datatype(?r) = xsd:double) }",
    "ASK { GRAPH ex:g3 { ?b ex:refersTo ex:a } }",
    "ASK { GRAPH ex:g1 { ex:b ?p ?o } }",
]


@pytest.mark.parametrize("query", QUERIES)
def test_sparql_results_match_memory_store(sql_store, query):
    sql = load(Dataset(store=sql_store, default_union=True))
    mem = load(Dataset(store="Memory", default_union=True))
    prefixes = "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
    got, want = sql.query(prefixes + query), mem.query(prefixes + query)
    if want.type == "ASK":
        assert got.askAnswer == want.askAnswer
    else:
        assert Counter(tuple(row) for row in got) == Counter(tuple(row) for row in want)
        assert len(want) > 0 or "empty" in query


def test_sparql_construct_and_update_match_memory_store(sql_store):
    sql = load(Dataset(store=sql_store, default_union=True))
    mem = load(Dataset(store="Memory", default_union=True))
    construct = "CONSTRUCT { ?s <http://example.org/has> ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"
    assert Counter(sql.query(construct)) == Counter(mem.query(construct))
    updates = [
        "DELETE WHERE { GRAPH ?g { ?s <http://example.org/size> ?o } }",
        "INSERT DATA { GRAPH <http://example.org/g4> { <http://example.org/z> a <http://example.org/Dataset> } }",
        "DELETE { GRAPH ?g { ?s <http://example.org/title> ?t } } "
        "INSERT { GRAPH ?g { ?s <http://example.org/label> ?t } } "
        "WHERE { GRAPH ?g { ?s <http://example.org/title> ?t } }",
        "DROP GRAPH <http://example.org/g3>",
    ]
    for update in updates:
        sql.update(update)
        mem.update(update)
        assert quad_set(sql) == quad_set(mem), update
        assert {g.identifier for g in sql.graphs()} == {g.identifier for g in mem.graphs()}


# ---------------------------------------------------------------- namespaces


def test_bind_semantics_match_memory_store(sql_store):
    ops = [
        ("ex", URIRef(EX), True),
        ("ex2", URIRef(EX), True),  # rebinding a namespace moves it to the new prefix
        ("other", URIRef("http://other.org/"), True),
        ("other", URIRef("http://other2.org/"), True),  # rebinding a prefix replaces it
        ("keep", URIRef("http://other2.org/"), False),  # namespace bound: no change
        ("other", URIRef("http://other3.org/"), False),  # prefix bound: no change
        ("new", URIRef("http://new.org/"), False),
        ("", URIRef("http://default.org/"), True),
    ]
    mem = rdflib.plugin.get("Memory", Store)()
    for store in (sql_store, mem):
        for prefix, namespace, override in ops:
            store.bind(prefix, namespace, override=override)
    assert dict(sql_store.namespaces()) == dict(mem.namespaces())
    for prefix, namespace, _ in ops:
        assert sql_store.namespace(prefix) == mem.namespace(prefix)
        assert sql_store.prefix(namespace) == mem.prefix(namespace)
    assert sql_store.namespace("missing") is None
    assert sql_store.prefix(URIRef("http://missing.org/")) is None


def test_namespaces_persist_across_close_and_reopen(db_url):
    store = SQLStore(db_url)
    store.bind("ex", EX)
    store.bind("gone", URIRef("http://gone.org/"))
    store.commit()
    store.bind("rolledback", URIRef("http://rolledback.org/"))
    store.rollback()
    store.close()

    store = SQLStore(db_url)
    try:
        assert dict(store.namespaces()) == {"ex": URIRef(EX), "gone": URIRef("http://gone.org/")}
        assert store.prefix(URIRef(EX)) == "ex"
        ds = Dataset(store=store)
        assert ("ex", URIRef(EX)) in set(ds.namespaces())
        assert "@prefix ex: <http://example.org/>" in Graph(store, identifier=G1).add(
            (EX.a, EX.p, EX.b)
        ).serialize(format="turtle")
    finally:
        store.close()


# -------------------------------------------------------------- transactions


def test_rollback_discards_writes(sql_store):
    ds = Dataset(store=sql_store, default_union=True)
    ds.graph(G1).add((EX.a, EX.p, EX.b))
    sql_store.commit()
    ds.graph(G1).add((EX.a, EX.p, EX.c))
    ds.graph(G2).add((EX.a, EX.p, EX.c))
    ds.graph(G1).remove((EX.a, EX.p, EX.b))
    sql_store.bind("ex", EX)
    # Own writes are visible before commit.
    assert set(ds.quads((None, None, None, None))) == {
        (EX.a, EX.p, EX.c, G1),
        (EX.a, EX.p, EX.c, G2),
    }
    sql_store.rollback()
    assert set(ds.quads((None, None, None, None))) == {(EX.a, EX.p, EX.b, G1)}
    assert graph_names(sql_store) == {G1}
    assert sql_store.namespace("ex") is None
    assert str(EX.c) not in stored_values(sql_store)


def test_writes_are_visible_to_others_only_after_commit(db_url, sql_store):
    reader = SQLStore(db_url, private=True)  # a connection of its own, as another process has
    try:
        Graph(sql_store, identifier=G1).add((EX.a, EX.p, EX.b))
        assert count_quads(db_url) == 0
        assert len(reader) == 0
        sql_store.commit()
        assert count_quads(db_url) == 1
        reader.rollback()  # end the reader's snapshot (SQLite keeps one per transaction)
        assert len(reader) == 1
        assert list(Graph(reader, identifier=G1)) == [(EX.a, EX.p, EX.b)]
    finally:
        reader.close()


def test_close_rolls_back_unless_asked_to_commit(db_url):
    store = SQLStore(db_url)
    Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
    store.close()
    assert count_quads(db_url) == 0
    store = SQLStore(db_url)
    Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
    store.close(commit_pending_transaction=True)
    assert count_quads(db_url) == 1


# -------------------------------------------------------------- bulk loading


def numbered(n: int, graph_tag: str = "") -> list[tuple]:
    return [(EX[f"s{graph_tag}{i}"], EX.value, Literal(i)) for i in range(n)]


def test_replace_graph_replaces_content_and_counts(sql_store, db_url):
    first = numbered(5) + numbered(5)  # duplicates are stored once
    assert sql_store.replace_graph(G1, first) == 5
    Graph(sql_store, identifier=G2).add((EX.other, EX.p, EX.o))
    sql_store.commit()
    second = numbered(BATCH_SIZE + 7, "x")
    assert sql_store.replace_graph(G1, iter(second)) == len(second)
    assert count_quads(db_url, G1) == 5  # not committed yet
    sql_store.commit()
    assert count_quads(db_url, G1) == len(second)
    assert set(sql_store.graph_triples(G1)) == set(second)
    assert list(sql_store.graph_triples(G2)) == [(EX.other, EX.p, EX.o)]
    assert sql_store.graph_ids() == [G1, G2]
    assert sql_store.replace_graph(G1, []) == 0
    assert G1 in sql_store.graph_ids()  # an empty graph still exists


def test_replace_graph_in_batches_with_repeats_across_them(sql_store, db_url, monkeypatch):
    """One graph's triples in batches of four: a triple repeated in a later batch is one
    quad, the graph's own IRI may be a subject or an object, and blank nodes and literals
    new in one batch are known in the next."""
    monkeypatch.setattr(store_module, "BATCH_SIZE", 4)
    b = BNode()
    triples = [(EX.a, EX.p, Literal(1)), (G1, EX.p, EX.a), (EX.a, EX.q, b), (b, EX.p, Literal("x")),
               (EX.a, EX.p, Literal(1)), (EX.c, EX.p, G1), (b, EX.p, Literal("x")), (EX.a, EX.q, b),
               (G1, EX.p, EX.a), (EX.d, EX.p, Literal(1))]
    assert sql_store.replace_graph(G1, triples) == 6
    sql_store.commit()
    assert count_quads(db_url, G1) == 6
    assert set(sql_store.graph_triples(G1)) == set(triples)
    assert sql_store.replace_graph(G1, triples[:3]) == 3  # a new version, in one batch
    sql_store.commit()
    assert set(sql_store.graph_triples(G1)) == set(triples[:3])


def test_replace_graph_failure_and_rollback_keep_old_graph(sql_store, db_url):
    old = numbered(50)
    sql_store.replace_graph(G1, old)
    sql_store.commit()

    def failing_harvest() -> Iterator[tuple]:
        yield from numbered(BATCH_SIZE + 10, "new")
        raise RuntimeError("harvest failed half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        sql_store.replace_graph(G1, failing_harvest())
    # Other connections still see the old graph while the failed transaction is open.
    assert count_quads(db_url, G1) == len(old)
    sql_store.rollback()
    assert set(sql_store.graph_triples(G1)) == set(old)
    assert len(Graph(sql_store, identifier=G1)) == len(old)
    assert count_quads(db_url, G1) == len(old)
    assert str(EX.snew0) not in stored_values(sql_store)


def test_replace_graph_collects_terms_only_the_old_graph_used(sql_store):
    only_old = Literal("only in the old g1")
    sql_store.replace_graph(G1, [(EX.a, EX.p, only_old), (EX.a, EX.p, EX.shared), (EX.a, EX.q, G2)])
    sql_store.replace_graph(G2, [(EX.b, EX.p, EX.shared)])
    sql_store.commit()
    before = stored_values(sql_store)
    assert {str(only_old), str(EX.shared), str(G2)} <= before

    sql_store.replace_graph(G1, [(EX.a, EX.p, Literal("new"))])
    after = stored_values(sql_store)
    assert str(only_old) not in after  # orphaned: collected
    assert str(EX.q) not in after
    assert str(EX.shared) in after  # still used by g2
    assert str(G2) in after  # still a graph name
    assert {str(EX.a), str(EX.p), "new", str(G1)} <= after

    # remove_graph collects too, including the graph's own name.
    Graph(sql_store, identifier=G3).add((EX.c, EX.p, G2))  # g2's name used as an object
    sql_store.remove_graph(Graph(identifier=G2))
    after = stored_values(sql_store)
    assert str(EX.b) not in after
    assert str(EX.shared) not in after
    assert str(G2) in after  # still referenced from g3
    sql_store.remove_graph(Graph(identifier=G3))
    assert str(G2) not in stored_values(sql_store)
    sql_store.commit()
    assert stored_values(sql_store) == {str(EX.a), str(EX.p), "new", str(G1)}


def test_gc_deletes_all_unreferenced_terms(sql_store):
    g = Graph(sql_store, identifier=G1)
    g.add((EX.a, EX.p, Literal("keep")))
    g.add((EX.a, EX.p, Literal("drop")))
    g.remove((None, None, Literal("drop")))
    assert "drop" in stored_values(sql_store)
    assert sql_store.gc() == 1
    assert stored_values(sql_store) == {str(EX.a), str(EX.p), "keep", str(G1)}


def test_add_n_batches_and_streams_large_results(sql_store):
    n = BATCH_SIZE * 2 + 3
    sql_store.addN(
        (EX[f"s{i}"], EX.value, Literal(i), Graph(identifier=G1 if i % 2 else G2)) for i in range(n)
    )
    assert len(sql_store) == n
    seen = 0
    # Other statements on the same connection while a streamed result is open.
    for (_s, _p, o), contexts in sql_store.triples((None, EX.value, None), None):
        seen += 1
        if seen % 5000 == 0:
            assert len(Graph(sql_store, identifier=G1)) == n // 2
            assert [c.identifier for c in contexts] == [G1 if int(o) % 2 else G2]
    assert seen == n
    # Abandoning a streamed result half-way must not break the connection.
    it = sql_store.triples((None, None, None), Graph(identifier=G1))
    next(it)
    del it
    assert len(Graph(sql_store, identifier=G2)) == n - n // 2


def test_unfinished_stream_does_not_outlive_its_transaction(sql_store):
    """A server-side cursor closed after commit would abort the next transaction."""
    g = Graph(sql_store, identifier=G1)
    sql_store.addN((EX[f"s{i}"], EX.value, Literal(i), g) for i in range(3 * 2000))
    sql_store.commit()
    abandoned = sql_store.triples((None, EX.value, None), None)
    next(abandoned)
    resumed = sql_store.triples((None, EX.value, None), None)
    next(resumed)
    sql_store.commit()
    g.add((EX.a, EX.p, EX.b))
    del abandoned
    gc.collect()
    g.add((EX.a, EX.p, EX.c))
    sql_store.commit()
    assert len(g) == 3 * 2000 + 2
    with pytest.raises(RuntimeError, match="after commit"):
        next(resumed)


# ---------------------------------------------------------------- lifecycle


def test_destroy_drops_the_tables(db_url):
    store = SQLStore(db_url)
    Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
    store.commit()
    store.destroy()
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            tables = set(
                conn.execute(
                    text(
                        # sqlite_sequence (AUTOINCREMENT's bookkeeping) cannot be dropped.
                        "SELECT name FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%'"
                        if conn.dialect.name == "sqlite"
                        # Tables of extensions (PostGIS's spatial_ref_sys) are the extension's,
                        # which may serve other schemas: destroy leaves the extension installed.
                        else "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT EXISTS ("
                        "SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')"
                    )
                ).scalars()
            )
    finally:
        engine.dispose()
    assert tables == set()
    # Opening again recreates an empty store.
    store = SQLStore(db_url)
    assert len(store) == 0
    store.destroy(db_url)
    store.close()


def test_graph_with_blank_node_name(sql_store):
    name = BNode()
    g = Graph(sql_store, identifier=name)
    g.add((EX.a, EX.p, EX.b))
    assert graph_names(sql_store) == {name}
    assert list(Graph(sql_store, identifier=name)) == [(EX.a, EX.p, EX.b)]
    assert list(Graph(sql_store, identifier=URIRef(str(name)))) == []


# ------------------------------------------------- concurrency (PostgreSQL only)


def test_collector_waits_for_an_uncommitted_writer(postgres_url):
    """A term an uncommitted writer references is never collected: the collector waits
    for the writer's lock, then sees the reference."""
    writer, loader = SQLStore(postgres_url, private=True), SQLStore(postgres_url, private=True)
    shared = Literal("shared")
    wrote, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            Graph(writer, identifier=G2).add((EX.t, EX.p, shared))  # holds the write lock
            wrote.set()
            release.wait(30)
            writer.commit()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
            wrote.set()

    try:
        loader.replace_graph(G1, [(EX.s, EX.p, shared)])
        loader.commit()
        thread = threading.Thread(target=write)
        thread.start()
        assert wrote.wait(30)
        threading.Timer(0.5, release.set).start()
        loader.replace_graph(G1, [(EX.s, EX.p, Literal("other"))])  # orphans "shared"? waits first
        loader.commit()
        thread.join(30)
        assert errors == []
        assert list(Graph(loader, identifier=G2)) == [(EX.t, EX.p, shared)]
        assert "shared" in stored_values(loader)
        assert loader.gc() == 0
    finally:
        writer.close()
        loader.close()


def test_writer_waits_for_a_collecting_transaction(postgres_url):
    writer, loader = SQLStore(postgres_url, private=True), SQLStore(postgres_url, private=True)
    shared = Literal("shared")
    errors: list[BaseException] = []

    def write() -> None:
        try:
            Graph(writer, identifier=G2).add((EX.t, EX.p, shared))
            writer.commit()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        loader.replace_graph(G1, [(EX.s, EX.p, shared)])
        loader.commit()
        loader.replace_graph(G1, [(EX.s, EX.p, Literal("other"))])  # deletes "shared"
        thread = threading.Thread(target=write)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # blocked until the collector commits
        loader.commit()
        thread.join(30)
        assert not thread.is_alive()
        assert errors == []
        loader.rollback()
        assert list(Graph(loader, identifier=G2)) == [(EX.t, EX.p, shared)]
        assert "shared" in stored_values(loader)
    finally:
        writer.close()
        loader.close()


# ------------------------------------------- sequential ids and SQL-level helpers


def term_rows(store: SQLStore) -> dict[str, tuple]:
    """value -> (id, hash, kind, datatype id, lang, num) of every stored term."""
    rows = store.connection.execute(
        text("SELECT value, id, hash, kind, datatype, lang, num FROM terms")
    ).all()
    return {row[0]: tuple(row[1:]) for row in rows}


def test_term_ids_are_sequential_with_predicates_and_classes_first(sql_store):
    sql_store.addN(
        [
            (EX.a, EX.title, Literal("Alpha"), G1),
            (EX.a, RDF.type, EX.Dataset, G1),
            (EX.b, EX.size, Literal(3), G2),
        ]
    )
    rows = term_rows(sql_store)
    ids = {value: row[0] for value, row in rows.items()}
    assert sorted(ids.values()) == list(range(1, len(ids) + 1))
    predicates = {ids[str(EX.title)], ids[str(RDF.type)], ids[str(EX.size)]}
    assert predicates == {1, 2, 3}
    assert ids[str(EX.Dataset)] == 4  # a class: the object of rdf:type
    assert {ids[str(G1)], ids[str(G2)]} == {5, 6}
    assert all(row[1] == encode(URIRef(v))[0] for v, row in rows.items() if row[2] == 1)


def test_new_ids_continue_after_every_id_ever_used(db_url):
    store = SQLStore(db_url)
    try:
        g = Graph(store, identifier=G1)
        g.add((EX.a, EX.p, Literal("first")))
        g.add((EX.a, EX.p, Literal("last")))
        store.commit()
        highest = max(row[0] for row in term_rows(store).values())
        assert term_rows(store)["last"][0] == highest
        g.remove((None, None, Literal("last")))
        assert store.gc() == 1
        store.commit()
        g.add((EX.a, EX.p, Literal("new")))
        store.commit()
        # The id of the collected term is not given to another one.
        assert term_rows(store)["new"][0] > highest
    finally:
        store.close()


def test_rollback_forgets_ids_it_handed_out(db_url):
    """After a rollback the same ids may name other terms; caches must not lie."""
    store = SQLStore(db_url)
    try:
        Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
        store.commit()
        Graph(store, identifier=G2).add((EX.a, EX.p, EX.c))
        assert graph_names(store) == {G1, G2}  # caches the name of G2's id
        store.rollback()
        Graph(store, identifier=G3).add((EX.a, EX.p, Literal("x", datatype=XSD.gYear)))
        Graph(store, identifier=G3).add((EX.a, EX.p, Literal("y", datatype=XSD.date)))
        store.commit()
        assert graph_names(store) == {G1, G3}
        assert set(Graph(store, identifier=G3).objects()) == {
            Literal("x", datatype=XSD.gYear),
            Literal("y", datatype=XSD.date),
        }
        assert {(g.identifier, t) for t, gs in store.triples((None, None, None)) for g in gs} == {
            (G1, (EX.a, EX.p, EX.b)),
            (G3, (EX.a, EX.p, Literal("x", datatype=XSD.gYear))),
            (G3, (EX.a, EX.p, Literal("y", datatype=XSD.date))),
        }
    finally:
        store.close()


def test_comparable_values_are_stored_with_literals(sql_store):
    g = Graph(sql_store, identifier=G1)
    objects = {
        "0010": Literal("0010", datatype=XSD.integer, normalize=False),
        "1.5e0": Literal("1.5e0", datatype=XSD.double, normalize=False),
        "true": Literal("true", datatype=XSD.boolean),
        "1970-01-02T00:00:00Z": Literal(
            "1970-01-02T00:00:00Z", datatype=XSD.dateTime, normalize=False
        ),
        "2024-01-01T00:00:00": Literal("2024-01-01T00:00:00", datatype=XSD.dateTime),
        "2024-02-30": Literal("2024-02-30", datatype=XSD.date, normalize=False),
        "ten": Literal("ten", datatype=XSD.integer, normalize=False),
        "7": Literal("7"),
        "8": Literal("8", datatype=XSD.string),
    }
    for obj in objects.values():
        g.add((EX.s, EX.p, obj))
    nums = {value: row[5] for value, row in term_rows(sql_store).items() if value in objects}
    assert nums == {
        "0010": 10.0,
        "1.5e0": 1.5,
        "true": 1.0,
        "1970-01-02T00:00:00Z": 86400.0,
        "2024-01-01T00:00:00": 1704067200.0,  # zoneless: as if in UTC
        "2024-02-30": None,
        "ten": None,
        "7": None,
        "8": None,
    }


def test_datatypes_are_stored_once_and_never_collected(sql_store):
    g = Graph(sql_store, identifier=G1)
    g.add((EX.s, EX.p, Literal("1", datatype=XSD.integer)))
    g.add((EX.s, EX.p, Literal("2", datatype=XSD.integer)))
    g.add((EX.s, EX.p, Literal("x", lang="en")))
    g.add((EX.s, EX.p, Literal("{}", datatype=RDF_JSON)))
    dts = sql_store.datatype_ids()
    assert set(dts) == {str(XSD.integer), str(RDF_JSON)}
    rows = term_rows(sql_store)
    assert rows["1"][3] == rows["2"][3] == dts[str(XSD.integer)]
    assert rows["x"][3] is None and rows["x"][4] == "en"
    assert rows[str(EX.s)][3] is None
    sql_store.remove_graph(g)
    assert sql_store.datatype_ids() == dts
    assert sql_store.datatype_iri(dts[str(RDF_JSON)]) == str(RDF_JSON)
    with pytest.raises(LookupError):
        sql_store.datatype_iri(max(dts.values()) + 1)


def test_connection_and_dialect_name(db_url):
    store = SQLStore()
    try:
        store.open(db_url)
        expected = "sqlite" if db_url.startswith("sqlite") else "postgresql"
        assert store.dialect_name == expected
        Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
        # The store's own transaction: its uncommitted quad is visible.
        assert store.connection.execute(text("SELECT count(*) FROM quads")).scalar_one() == 1
        assert store.connection is store.connection
        store.rollback()
        assert store.connection.execute(text("SELECT count(*) FROM quads")).scalar_one() == 0
    finally:
        store.close()
    fresh = SQLStore()  # opens its private database on first use
    assert fresh.dialect_name == "sqlite"
    fresh.close()


def test_lookup_term_ids_and_decode_term(sql_store):
    load(Dataset(store=sql_store))
    nodes = [
        EX.a,
        RDF.type,
        B1,
        Literal("Alpha", lang="EN"),  # stored as "en": the same term
        Literal("0010", datatype=XSD.integer, normalize=False),
        Literal("10", datatype=XSD.integer),
        Literal("Beta"),
        G1,
    ]
    missing = [EX.missing, Literal("Beta", datatype=XSD.string), Literal("x", lang="en")]
    ids = sql_store.lookup_term_ids([*nodes, *missing, Variable("v")])
    assert set(ids) == set(nodes)
    assert len(set(ids.values())) == len(nodes)
    assert sql_store.lookup_term_ids([]) == {}
    rows = {
        row[0]: row[1:]
        for row in sql_store.connection.execute(
            text("SELECT id, kind, value, datatype, lang FROM terms")
        )
    }
    for node, tid in ids.items():
        back = sql_store.decode_term(*rows[tid])
        assert back == node
        assert type(back) is type(node)
        if isinstance(node, Literal):
            assert str(back) == str(node)
            assert back.datatype == node.datatype
    assert sql_store.decode_term(*rows[ids[Literal("Alpha", lang="EN")]]).language == "en"


def test_lookup_term_ids_refuses_a_hash_collision(sql_store, monkeypatch):
    Graph(sql_store, identifier=G1).add((EX.s, EX.p, Literal("a")))
    real_encode = term_ids.encode
    victim = encode(Literal("a"))[0]

    def colliding_encode(node):
        encoded = real_encode(node)
        return (victim, *encoded[1:]) if node == Literal("b") else encoded

    monkeypatch.setattr(term_ids, "encode", colliding_encode)
    monkeypatch.setattr(store_module, "encode", colliding_encode)
    with pytest.raises(TermCollisionError):
        sql_store.lookup_term_ids([Literal("b")])
    # A pattern reads it as what it is: a term that is not stored.
    assert list(sql_store.triples((None, None, Literal("b")), None)) == []
    assert [t for t, _ in sql_store.triples((None, None, Literal("a")), None)] == [
        (EX.s, EX.p, Literal("a"))
    ]


def _in_another_connection(url: str, work) -> None:
    """Run ``work(store)`` on a store of its own (another thread: another connection),
    committed; its error raised here."""
    errors: list[BaseException] = []

    def run() -> None:
        store = SQLStore(url)
        try:
            work(store)
            store.commit()
        except BaseException as exc:  # surfaced in the test's thread
            errors.append(exc)
        finally:
            store.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def _write_again(store: SQLStore) -> None:
    """G1 dropped (its terms collected), then written again with one term more: each
    term stored anew, under another id."""
    store.remove_graph(Graph(identifier=G1))
    store.commit()
    graph = Graph(store, identifier=G1)
    graph.add((EX.s, EX.p, Literal("v")))
    graph.add((EX.later, EX.p, Literal("v")))


def _stored_ids(store: SQLStore, nodes) -> dict:
    """The ids the terms table holds for ``nodes`` now (read without the store's lookup)."""
    by_hash = {encode(node)[0]: node for node in nodes}
    rows = store.connection.execute(text("SELECT hash, id FROM terms")).all()
    return {by_hash[h]: i for h, i in rows if h in by_hash}


@pytest.mark.parametrize("writer", ["another connection", "the same connection"])
def test_looked_up_ids_follow_terms_written_again(db_url, writer):
    """On SQLite the lookups of a query's constants are kept from one transaction to the
    next (load.ids._kept_term_ids): they must not outlive a term deleted and written
    again, nor a term not stored then stored, whoever wrote it."""
    store = SQLStore(db_url)
    try:
        Graph(store, identifier=G1).add((EX.s, EX.p, Literal("v")))
        store.commit()
        nodes = [EX.s, EX.p, Literal("v"), EX.later]
        before = store.lookup_term_ids(nodes)
        assert set(before) == {EX.s, EX.p, Literal("v")}
        ask = Dataset(store=store, default_union=True)
        assert ask.query('ASK { <http://example.org/s> <http://example.org/p> "v" }').askAnswer
        store.rollback()
        if writer == "another connection":
            _in_another_connection(db_url, _write_again)
        else:
            _write_again(store)
            store.commit()
        after = store.lookup_term_ids(nodes)
        assert after == _stored_ids(store, nodes)
        assert set(after) == set(nodes)
        assert after[EX.s] != before[EX.s]
        for subject in ("s", "later"):
            assert ask.query(f'ASK {{ <http://example.org/{subject}> <http://example.org/p> "v" }}').askAnswer
    finally:
        store.close()


def test_looked_up_ids_do_not_outlive_a_rolled_back_removal(db_url):
    """Terms deleted in a transaction, looked up there (not stored), and restored by its
    rollback, which SQLite does not count as a change (found by the review)."""
    store = SQLStore(db_url)
    try:
        Graph(store, identifier=G1).add((EX.s, EX.p, Literal("v")))
        store.commit()
        nodes = [EX.s, EX.p, Literal("v"), G1]
        stored = store.lookup_term_ids(nodes)
        assert set(stored) == set(nodes)
        store.remove_graph(Graph(identifier=G1))
        assert store.lookup_term_ids(nodes) == {}
        store.rollback()
        assert store.lookup_term_ids(nodes) == stored == _stored_ids(store, nodes)
        assert store.has_graph(G1)
        ask = Dataset(store=store, default_union=True)
        assert ask.query('ASK { <http://example.org/s> <http://example.org/p> "v" }').askAnswer
    finally:
        store.close()


def test_graph_name_ids(sql_store):
    load(Dataset(store=sql_store))
    names = sql_store.graph_name_ids()
    assert set(names.values()) == {G1, G2, G3, EMPTY, DATASET_DEFAULT_GRAPH_ID}
    assert list(names.values()) == sorted(names.values(), key=str)
    assert sql_store.lookup_term_ids(names.values()) == {name: gid for gid, name in names.items()}


def test_analyze_refreshes_planner_statistics(sql_store):
    sql_store.addN((EX[f"s{i}"], EX.value, Literal(i), G1) for i in range(500))
    sql_store.commit()
    sql_store.analyze()
    conn = sql_store.connection
    if sql_store.dialect_name == "sqlite":
        stats = dict(conn.execute(text("SELECT idx, stat FROM sqlite_stat1")).all())
        assert {"ix_quads_spog", "ix_quads_posg", "ix_quads_ospg", "ix_terms_hash"} <= set(stats)
        assert stats["ix_quads_spog"].startswith("500 ")
    else:
        reltuples = conn.execute(
            text("SELECT reltuples FROM pg_class WHERE relname = 'quads'")
        ).scalar_one()
        assert reltuples == 500
    sql_store.commit()
    assert len(sql_store) == 500


def test_sqlite_writers_queue_for_the_write_lock(sqlite_url):
    """A writer numbers terms itself, so it must hold the lock before it reads ids."""
    first, second = SQLStore(sqlite_url, private=True), SQLStore(sqlite_url, private=True)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            Graph(second, identifier=G2).add((EX.b, EX.q, Literal("second")))
            second.commit()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        Graph(first, identifier=G1).add((EX.a, EX.p, Literal("first")))
        thread = threading.Thread(target=write)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # waiting for the first writer's lock
        first.commit()
        thread.join(30)
        assert not thread.is_alive()
        assert errors == []
        rows = term_rows(first)
        assert len({row[0] for row in rows.values()}) == len(rows) == 8
        assert list(Graph(first, identifier=G2)) == [(EX.b, EX.q, Literal("second"))]
    finally:
        first.close()
        second.close()


def sqlite_write_lock_is_free(url: str) -> bool:
    conn = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return False
    finally:
        conn.close()
    return True


def test_sqlite_write_lock_is_taken_by_the_first_write(sqlite_url):
    store, other = SQLStore(sqlite_url, private=True), SQLStore(sqlite_url, private=True)
    try:
        assert len(store) == 0  # a read opens the transaction (BEGIN, not IMMEDIATE)
        assert sqlite_write_lock_is_free(sqlite_url)
        store.bind("ex", EX)  # a write that numbers no terms still takes the lock
        assert not sqlite_write_lock_is_free(sqlite_url)
        Graph(store, identifier=G1).add((EX.a, EX.p, EX.b))
        store.commit()
        assert sqlite_write_lock_is_free(sqlite_url)
        Graph(store, identifier=G1).add((EX.a, EX.p, EX.c))  # BEGIN IMMEDIATE
        assert not sqlite_write_lock_is_free(sqlite_url)
        store.commit()
        Graph(other, identifier=G2).add((EX.a, EX.p, EX.c))
        other.commit()
        assert len(term_rows(store)) == 6  # a, p, b, c, g1, g2
    finally:
        store.close()
        other.close()


def test_concurrent_writers_of_the_same_new_terms(postgres_url):
    """The second writer waits for the first's lock, then reads the winner's ids."""
    first, second = SQLStore(postgres_url, private=True), SQLStore(postgres_url, private=True)
    shared = [(EX.a, EX.p, Literal("shared")), (EX.a, RDF.type, EX.Dataset)]
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for triple in shared:
                Graph(second, identifier=G2).add(triple)
            second.commit()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        for triple in shared:
            Graph(first, identifier=G1).add(triple)
        thread = threading.Thread(target=write)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # blocked on the first writer's uncommitted terms
        first.commit()
        thread.join(30)
        assert not thread.is_alive()
        assert errors == []
        first.rollback()
        assert set(Graph(first, identifier=G2)) == set(shared)
        assert len(term_rows(first)) == 7  # a, p, shared, type, Dataset, g1, g2
        assert {c.identifier for c in first.contexts(shared[0])} == {G1, G2}
    finally:
        first.close()
        second.close()
