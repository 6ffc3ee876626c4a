"""``catalogue stats``, ``catalogue reindex`` and ``catalogue harvests --sources`` from the command line."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner
from rdflib import Graph, Literal, URIRef

import catalogue
import catalogue.graph.database
from catalogue.cli import main
from catalogue.discovery.query import SearchQuery
from catalogue.graph.store import SQLStore
from tests.support.paths import EXAMPLES


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_stats_counts_what_was_harvested(db_url):
    for store in sorted(EXAMPLES.glob("*.zarr")):
        assert run("harvest", str(store), "--db", db_url)[0] == 0
    code, out, _ = run("stats", "--json", "--exact", "--db", db_url)
    found = json.loads(out)
    assert code == 0
    assert (found["datasets"], found["groups"], found["arrays"]) == (3, 7, 16)
    assert found["queued"] == 0 and found["index_bytes"] > 0 and found["database_bytes"] > found["index_bytes"]
    with catalogue.open(db_url) as cat:
        graphs = dict(cat.graphs())
        assert found["triples"] == sum(graphs.values())  # every dataset graph, counted by the index
        assert found["quads"] == sum(n for _, n in cat.graphs(provenance=True))
    code, out, _ = run("stats", "--db", db_url)
    assert code == 0 and "datasets             3" in out and "search index" in out


def test_reindex_queue_graph_and_full(db_url):
    iri = f"{(EXAMPLES / 'ocean_model_v3.zarr').absolute().as_uri()}"
    assert run("harvest", str(EXAMPLES / "ocean_model_v3.zarr"), "--db", db_url)[0] == 0
    code, out, _ = run("reindex", "--db", db_url)
    assert code == 0 and "up to date (1 dataset(s))" in out
    store = SQLStore(private=True)
    store.open(db_url)
    Graph(store=store, identifier=URIRef(iri)).add((URIRef(iri), URIRef("http://www.w3.org/ns/dcat#keyword"),
                                                    Literal("queued-keyword")))
    store.commit()
    store.close()
    code, out, _ = run("stats", "--json", "--db", db_url)
    assert json.loads(out)["queued"] == 1
    code, out, _ = run("reindex", "--db", db_url)
    assert code == 0 and "reindexed 1 graph(s): 1 dataset(s)" in out
    with catalogue.open(db_url) as cat:
        assert cat.search(SearchQuery(q="queued keyword")).total == 1
    assert run("reindex", "--graph", iri, "--db", db_url)[0] == 0
    code, out, _ = run("reindex", "--full", "--db", db_url)
    assert code == 0 and "2 graph(s): 1 dataset(s)" in out  # the dataset and the provenance graph
    if db_url.startswith("postgresql"):  # every search row rewritten, then vacuumed (SQLStore.vacuum)
        engine = catalogue.graph.database.make_engine(db_url)
        try:
            with engine.connect() as conn:
                vacuumed = conn.exec_driver_sql(
                    "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'search_datasets'").scalar()
        finally:
            engine.dispose()
        assert vacuumed


def test_reindex_bad_input_is_one_line(db_url):
    code, _, err = run("reindex", "--graph", "file:///no/such.zarr", "--db", db_url)
    assert code == 2 and err.strip().count("\n") == 0 and "no graph <file:///no/such.zarr>" in err
    code, _, err = run("reindex", "--graph", "x", "--full", "--db", db_url)
    assert code == 2 and "--graph or --full" in err


def test_harvests_by_source(db_url, tmp_path):
    good = str(EXAMPLES / "cf_sea_surface_v2.zarr")
    missing = str(tmp_path / "gone.zarr")
    for _ in range(2):
        run("harvest", good, missing, "--db", db_url)
    code, out, _ = run("harvests", "--sources", "--db", db_url)
    lines = out.splitlines()
    assert code == 0 and "failed" in lines[0] and "gone.zarr" in lines[0] and "failing since" in lines[0]
    assert "(2 run(s))" in lines[0] and lines[1].startswith("    error:") and "no such file" in lines[1]
    assert any("unchanged" in line and "cf_sea_surface_v2.zarr" in line for line in lines[2:])
    code, out, _ = run("harvests", "--sources", "--failing", "--json", "--db", db_url)
    rows = json.loads(out)
    assert code == 0 and [r["source"] for r in rows] == [f"file://{missing}"]
    assert rows[0]["failures"] == 2 and rows[0]["runs"] == 2 and rows[0]["seconds"] >= 0
    assert run("harvests", "--failing", "--db", db_url)[0] == 2  # --failing goes with --sources


def test_harvests_by_source_lists_the_longest_failing_first(db_url, tmp_path):
    """Several failing sources: in the order they started failing, not by name; a source
    that failed and then succeeded is no longer failing."""
    for name in ("c", "a", "b"):  # failing since: c, then a, then b
        assert run("harvest", str(tmp_path / f"{name}.zarr"), "--db", db_url)[0] != 0
    assert run("harvest", str(tmp_path / "c.zarr"), "--db", db_url)[0] != 0  # c again: since its first
    code, out, _ = run("harvests", "--sources", "--failing", "--json", "--db", db_url)
    rows = json.loads(out)
    assert code == 0 and [r["source"].rsplit("/", 1)[1] for r in rows] == ["c.zarr", "a.zarr", "b.zarr"]
    assert [r["failures"] for r in rows] == [2, 1, 1]
    with catalogue.open(db_url) as cat:  # the first of them, as the database orders and cuts the list
        assert [s.source.rsplit("/", 1)[1] for s in cat.harvest_status(2, failing=True)] == ["c.zarr", "a.zarr"]
    shutil.copytree(EXAMPLES / "cf_sea_surface_v2.zarr", tmp_path / "a.zarr")
    assert run("harvest", str(tmp_path / "a.zarr"), "--db", db_url)[0] == 0
    code, out, _ = run("harvests", "--sources", "--json", "--db", db_url)
    rows = json.loads(out)
    assert [r["source"].rsplit("/", 1)[1] for r in rows] == ["c.zarr", "b.zarr", "a.zarr"]
    assert rows[2]["failing_since"] is None and rows[2]["failures"] == 0
    code, out, _ = run("harvests", "--sources", "--failing", "--json", "--db", db_url)
    assert [r["source"].rsplit("/", 1)[1] for r in json.loads(out)] == ["c.zarr", "b.zarr"]


def test_update_with_a_nul_character_is_refused_in_one_line(db_url):
    """PostgreSQL text cannot hold U+0000: the update is refused whole, the catalogue unchanged."""
    assert run("harvest", str(EXAMPLES / "ocean_model_v3.zarr"), "--db", db_url)[0] == 0
    with catalogue.open(db_url) as cat:
        before = cat.search(SearchQuery()).hits[0].json
        if cat.store.dialect_name != "postgresql":
            return
        import pytest

        from catalogue.errors import CatalogueError

        with pytest.raises(CatalogueError, match="NUL"):
            cat.update('INSERT DATA { GRAPH <urn:x> { <urn:a> <urn:b> "a\\u0000b" } }')
        assert cat.search(SearchQuery()).hits[0].json == before
