"""The search index kept by writers' transactions equals a rebuild from scratch, whatever happened.

A Hypothesis state machine drives a catalogue (SQLite, and PostgreSQL when the tests
have a server) through random sequences of what changes graphs: harvests of real stores
(the three examples and synthetic hierarchies written like bench/web_data.py's),
re-harvests after a store's title or a variable was changed on disk, removed graphs
(SPARQL ``DROP GRAPH``), ``catalogue load`` of a dataset graph (N-Quads, replacing
what is there), SPARQL updates of titles, keywords, validity flags and extents, and
writes through a plain rdflib store on the database (no index hook: the graph is
queued, and ``catalogue reindex`` indexes it). After every step the index's tables (rows,
facets, facet counts, totals, free-text documents, boxes) must equal what a full
rebuild gives, computed in a transaction that is then rolled back.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import tempfile
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from rdflib import Dataset, Graph, Literal, URIRef
from sqlalchemy import text

import catalogue
from bench.web_data import write_hierarchy
from catalogue.discovery.indexer import reindex
from catalogue.discovery.query import SearchQuery
from catalogue.graph.store import SQLStore
from catalogue.model.extents import Box
from tests.support.paths import EXAMPLES

TABLES = {
    "search_datasets": "SELECT * FROM search_datasets ORDER BY gid",
    "search_facets": "SELECT facet, value, gid FROM search_facets ORDER BY facet, value, gid",
    "search_facet_counts": "SELECT facet, value, datasets FROM search_facet_counts ORDER BY facet, value",
    "search_totals": "SELECT datasets, groups, arrays, triples FROM search_totals",
    "search_huge": "SELECT * FROM search_huge ORDER BY gid",
}
TEXT = {"sqlite": "SELECT rowid, title, keywords, variables, summary FROM search_text ORDER BY rowid",
        "postgresql": "SELECT gid, doc::text, facets FROM search_datasets ORDER BY gid"}
BOXES = {"sqlite": "SELECT key, minx, maxx, miny, maxy FROM search_boxes ORDER BY key",
         "postgresql": "SELECT gid, env::text, env2::text FROM search_datasets ORDER BY gid"}


def snapshot(conn: Any) -> dict[str, list[tuple]]:
    name = conn.dialect.name
    out = {table: [tuple(r) for r in conn.execute(text(sql))] for table, sql in TABLES.items()}
    out["search_text"] = [tuple(r) for r in conn.execute(text(TEXT[name]))]
    out["search_boxes"] = [tuple(r) for r in conn.execute(text(BOXES[name]))]
    out["search_totals"] = [r for r in out["search_totals"] if any(r)]  # an all-zero row is no row
    return out


#: Text without NUL, which PostgreSQL's text cannot hold (a write of it is refused, one
#: line, on that database; tests/graph cover that).
NO_NUL = st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"])


class _Rollback(Exception):
    pass


def rebuilt(cat: catalogue.Catalogue) -> dict[str, list[tuple]]:
    """The index a full rebuild gives, without keeping it."""
    found: dict[str, list[tuple]] = {}

    class Once:
        def __enter__(self):
            self.tx = cat.store.write_transaction()
            return self.tx.__enter__()

        def __exit__(self, *exc):
            if exc[0] is not None:
                return self.tx.__exit__(*exc)
            found.update(snapshot(cat.store.connection))
            self.tx.__exit__(_Rollback, _Rollback(), None)  # rolls the rebuild back
            raise _Rollback

    with pytest.raises(_Rollback):
        reindex(Once, full=True)
    cat.store.rollback()
    return found


def _stores(folder: pathlib.Path) -> list[pathlib.Path]:
    out = []
    for source in sorted(EXAMPLES.glob("*.zarr")):
        shutil.copytree(source, folder / source.name)
        out.append(folder / source.name)
    import random

    for i in range(3):
        out.append(write_hierarchy(folder, 100 + i, random.Random(i)))
    return out


def _root_document(store: pathlib.Path) -> tuple[pathlib.Path, dict, dict]:
    """The root's attribute document, the parsed document and its attributes (v3 or v2)."""
    if (store / "zarr.json").exists():
        path = store / "zarr.json"
        doc = json.loads(path.read_text())
        return path, doc, doc.setdefault("attributes", {})
    path = store / ".zattrs"
    doc = json.loads(path.read_text()) if path.exists() else {}
    return path, doc, doc


class IndexMachine(RuleBasedStateMachine):
    db: str = ""
    folder: pathlib.Path = pathlib.Path()
    #: Steps checked, by kind (the test asserts that every kind ran).
    steps: ClassVar[dict[str, int]] = {}

    def _count(self, kind: str) -> None:
        IndexMachine.steps[kind] = IndexMachine.steps.get(kind, 0) + 1

    @initialize()
    def start(self) -> None:
        self.cat = catalogue.open(self.db)
        for g in list(self.cat.store.graph_ids()):
            self.cat.update(f"DROP SILENT GRAPH <{g}>")
        self.cat.reindex()
        # A folder of its own per run (an ``id`` is reused once its object is freed).
        stores_folder = pathlib.Path(tempfile.mkdtemp(prefix="run", dir=self.folder))
        self.stores = _stores(stores_folder)
        self.harvested: list[str] = []

    def teardown(self) -> None:
        cat = getattr(self, "cat", None)
        if cat is not None:
            cat.close()

    @rule(n=st.integers(0, 5), full=st.booleans())
    def harvest(self, n: int, full: bool) -> None:
        self._count("harvest")
        graph = self.cat.harvest(str(self.stores[n]), full=full).graph
        if graph not in self.harvested:
            self.harvested.append(graph)

    @rule(n=st.integers(0, 5), title=st.text(NO_NUL, min_size=1, max_size=30), drop=st.booleans())
    def change_and_reharvest(self, n: int, title: str, drop: bool) -> None:
        self._count("change_and_reharvest")
        path, doc, attrs = _root_document(self.stores[n])
        if drop:
            attrs.pop("title", None)
        else:
            attrs["title"] = title
        path.write_text(json.dumps(doc))
        self.harvest(n, False)

    @rule(k=st.integers(0, 10))
    def drop_graph(self, k: int) -> None:
        self._count("drop_graph")
        if self.harvested:
            graph = self.harvested.pop(k % len(self.harvested))
            self.cat.update(f"DROP GRAPH <{graph}>")

    @rule(k=st.integers(0, 10), title=st.text(NO_NUL, max_size=20), keyword=st.text(NO_NUL, min_size=1, max_size=12))
    def update_root(self, k: int, title: str, keyword: str) -> None:
        self._count("update_root")
        if not self.harvested:
            return
        g = self.harvested[k % len(self.harvested)]
        title_literal = Literal(title).n3()
        keyword_literal = Literal(keyword).n3()
        self.cat.update(
            f"DELETE {{ GRAPH <{g}> {{ <{g}> dct:title ?t }} }} WHERE {{ GRAPH <{g}> {{ <{g}> dct:title ?t }} }} ;"
            f"INSERT DATA {{ GRAPH <{g}> {{ <{g}> dct:title {title_literal} ; dcat:keyword {keyword_literal} }} }}")

    @rule(k=st.integers(0, 10))
    def update_flags_and_extent(self, k: int) -> None:
        self._count("update_flags_and_extent")
        if not self.harvested:
            return
        g = self.harvested[k % len(self.harvested)]
        self.cat.update(
            f"DELETE {{ GRAPH <{g}> {{ ?n zarr:valid ?v }} }} WHERE {{ GRAPH <{g}> {{ ?n zarr:valid ?v }} }} ;"
            f"DELETE {{ GRAPH <{g}> {{ ?l dcat:bbox ?b }} }} WHERE {{ GRAPH <{g}> {{ <{g}> dct:spatial ?l . ?l dcat:bbox ?b }} }} ;"
            f"INSERT DATA {{ GRAPH <{g}> {{ <{g}> zarr:valid false }} }}")

    @rule(k=st.integers(0, 10), huge=st.booleans())
    def set_extent(self, k: int, huge: bool) -> None:
        """A dataset's box replaced by a global one (``search_huge``, not the box index) or
        by a small one (the box index, not ``search_huge``)."""
        self._count("set_extent")
        if not self.harvested:
            return
        g = self.harvested[k % len(self.harvested)]
        wkt = ("POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))" if huge
               else "POLYGON((10 20,30 20,30 40,10 40,10 20))")
        # ``<g#where>`` loses its statements too: a re-harvest since the last set_extent
        # drops the root's link to it but keeps the node (the harvest did not write it), and
        # the link written again would give it both boxes.
        self.cat.update(
            f"DELETE {{ GRAPH <{g}> {{ <{g}> dct:spatial ?l . ?l ?p ?o }} }} "
            f"WHERE {{ GRAPH <{g}> {{ <{g}> dct:spatial ?l . ?l ?p ?o }} }} ;"
            f"DELETE WHERE {{ GRAPH <{g}> {{ <{g}#where> ?p ?o }} }} ;"
            f"INSERT DATA {{ GRAPH <{g}> {{ <{g}> dct:spatial <{g}#where> . <{g}#where> dcat:bbox "
            f"\"{wkt}\"^^<http://www.opengis.net/ont/geosparql#wktLiteral> }} }}")
        found = self.cat.search(SearchQuery(bbox=Box(100, -80, 120, -60), limit=200))
        assert (g in {h.iri for h in found.hits}) is huge

    @rule(k=st.integers(0, 10))
    def load_a_copy(self, k: int) -> None:
        """``catalogue load`` of a dataset graph's N-Quads into its own graph (a no-op load)
        and, renamed, into a new graph that is not a dataset (its root is another IRI)."""
        self._count("load_a_copy")
        if not self.harvested:
            return
        g = self.harvested[k % len(self.harvested)]
        path = self.folder / f"copy{id(self)}.nq"
        with open(path, "w", encoding="utf-8") as out:
            self.cat.export(out, format="nquads", graph=g)
        self.cat.load(str(path))
        triples = self.folder / f"copy{id(self)}.nt"
        with open(triples, "w", encoding="utf-8") as out:
            self.cat.export(out, format="nt", graph=g)
        self.cat.load(str(triples), graph=g + "/copy")

    @rule(k=st.integers(0, 10), title=st.text(NO_NUL, min_size=1, max_size=20))
    def plain_rdflib_write(self, k: int, title: str) -> None:
        """A write without the catalogue's hook: queued, then ``catalogue reindex``."""
        self._count("plain_rdflib_write")
        if not self.harvested:
            return
        g = URIRef(self.harvested[k % len(self.harvested)])
        store = SQLStore(private=True)
        store.open(self.cat.url)
        try:
            Dataset(store=store).graph(g).add((g, URIRef("http://purl.org/dc/terms/title"), Literal(title)))
            store.commit()
        finally:
            store.close()
        assert self.cat.stats().queued >= 1
        report = self.cat.reindex()
        assert report.graphs >= 1 and self.cat.stats().queued == 0

    @invariant()
    def equals_a_rebuild(self) -> None:
        if not hasattr(self, "cat"):
            return
        self.cat.store.rollback()
        now = snapshot(self.cat.store.connection)
        self.cat.store.rollback()
        assert now == rebuilt(self.cat)
        assert self.cat.search(SearchQuery(limit=1)).total == len(now["search_datasets"])


@pytest.mark.slow
def test_index_equals_a_rebuild(db_url, tmp_path):
    IndexMachine.db = db_url
    IndexMachine.folder = tmp_path
    IndexMachine.steps = {}
    case = IndexMachine.TestCase
    case.settings = settings(max_examples=25, stateful_step_count=12, deadline=None,
                             suppress_health_check=list(HealthCheck))
    every = {"harvest", "change_and_reharvest", "drop_graph", "update_root", "update_flags_and_extent",
             "set_extent", "load_a_copy", "plain_rdflib_write"}
    # Hypothesis leaves some rules out of each run (swarm testing): one run in many took
    # none of a rule's steps in its 25 examples (a fresh clone's `make test`). Another run,
    # with new draws, until each rule has had its turn.
    for _ in range(3):
        case().runTest()
        if set(IndexMachine.steps) == every:
            break
    assert set(IndexMachine.steps) == every, IndexMachine.steps


def test_plain_graph_changes_are_queued_not_lost(db_url):
    """A graph written without the hook is in the queue in the same commit, and the
    reindex gives the same rows as a harvest's own transaction would."""
    with catalogue.open(db_url) as cat:
        iri = cat.harvest(str(EXAMPLES / "ocean_model_v3.zarr")).graph
        before = {h.iri: h.json for h in cat.search(SearchQuery()).hits}
    store = SQLStore(private=True)
    store.open(db_url)
    g = Graph(store=store, identifier=URIRef(iri))
    g.remove((URIRef(iri), URIRef("http://purl.org/dc/terms/title"), None))
    g.add((URIRef(iri), URIRef("http://purl.org/dc/terms/title"), Literal("Renamed by rdflib")))
    store.commit()
    store.close()
    with catalogue.open(db_url) as cat:
        assert cat.stats().queued == 1
        assert cat.search(SearchQuery(q="renamed")).total == 0  # not yet
        assert "1 graph" in cat.reindex().summary()
        assert cat.search(SearchQuery(q="renamed")).total == 1
        assert cat.stats().queued == 0
        hit = json.loads(cat.search(SearchQuery()).hits[0].json)
        assert hit["title"] == "Renamed by rdflib"
        assert {k: v for k, v in hit.items() if k != "title"} == {
            k: v for k, v in json.loads(before[iri]).items() if k != "title"}
