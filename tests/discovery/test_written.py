"""The search index takes a replaced graph's rows from its writer (catalogue/graph/written.py)
instead of reading them back: it must make of them exactly what it makes of the database's,
and must not take them once anything else in the transaction has touched the graph."""

from __future__ import annotations

from rdflib import Graph, Literal, Namespace, URIRef

import catalogue
from catalogue.discovery.read import summaries
from catalogue.graph import SQLStore
from tests.support import stores

EX = Namespace("http://x/")


def test_the_index_makes_of_the_kept_rows_what_it_makes_of_the_database(db_url, good_stores, tmp_path):
    """Every good store and a 300-array hierarchy, harvested: each summary from the rows
    the harvest kept equals the one read from the database in the same transaction."""
    compared: list[int] = []
    differing: list[int] = []

    def compare(conn, graphs, *, shared, written):
        held = sorted(g for g in graphs if g in written)
        kept, read = summaries(conn, held, written), summaries(conn, held)
        compared.extend(held)
        differing.extend(g for g in held if kept[g] != read[g])
        return set()  # the catalogue's own hook indexes them

    big = stores.big_v3_hierarchy(tmp_path / "big.zarr", n_arrays=300, n_groups=6)
    with catalogue.open(db_url) as cat:
        cat.store.index_hooks.insert(0, compare)
        for path in [*good_stores.values(), big]:
            cat.harvest(str(path))
    assert len(compared) == len(good_stores) + 1
    assert not differing


def test_rows_are_kept_only_while_nothing_else_touches_the_graph(sqlite_url):
    store = SQLStore(sqlite_url)
    try:
        def kept() -> set[int]:
            return set(store._s.tx_written)

        triples = [(EX.a, EX.p, Literal(1)), (EX.a, EX.q, EX.b)]
        for g in (EX.g1, EX.g2, EX.g3, EX.g4):
            store.replace_graph(g, triples)
        assert len(kept()) == 4
        gid = store.lookup_term_ids([EX.g1, EX.g2, EX.g3, EX.g4])
        store.add((EX.a, EX.r, EX.c), Graph(store=store, identifier=EX.g1))  # an addition
        assert kept() == {gid[EX.g2], gid[EX.g3], gid[EX.g4]}
        store.remove((EX.a, EX.p, None), Graph(store=store, identifier=EX.g2))  # a removal by name
        assert kept() == {gid[EX.g3], gid[EX.g4]}
        store.remove((None, EX.q, None), None)  # from every graph: g3 and g4 lose a triple
        assert kept() == set()
        store.replace_graph(EX.g3, triples)
        store.remove_graph(Graph(store=store, identifier=EX.g3))
        assert kept() == set()
        store.commit()
        assert kept() == set()
        store.replace_graph(URIRef("http://x/g5"), triples)
        store.rollback()
        assert kept() == set()
    finally:
        store.close()


def test_a_transaction_keeps_a_bounded_number_of_rows(sqlite_url, monkeypatch):
    """Graphs past the bound are read back by the index, as they would be without this."""
    import catalogue.graph.session as session
    import catalogue.graph.written as written

    monkeypatch.setattr(session, "MAX_WRITTEN_ROWS", 3)
    monkeypatch.setattr(written, "MAX_WRITTEN_ROWS", 3)
    store = SQLStore(sqlite_url)
    try:
        triples = [(EX.a, EX.p, Literal(1)), (EX.a, EX.q, EX.b)]
        store.replace_graph(EX.g1, triples)
        store.replace_graph(EX.g2, triples)  # 2 + 2 rows: past the bound
        store.replace_graph(EX.g3, [*triples, (EX.a, EX.r, EX.c), (EX.a, EX.s, EX.d)])  # 4 alone
        gid = store.lookup_term_ids([EX.g1, EX.g2, EX.g3])
        assert set(store._s.tx_written) == {gid[EX.g1]}
        assert not store._s.tx_written[gid[EX.g1]].overflowed
        store.replace_graph(EX.g1, triples)  # replaced again: kept again, not counted twice
        assert set(store._s.tx_written) == {gid[EX.g1]}
        store.rollback()
    finally:
        store.close()
