"""Every node of every test store round-trips exactly through the SQL catalogue.

"Exactly" means: the documents rebuilt from the graph alone equal the
documents on disk (parsed independently here, by json.loads and the JSON
pointer of consolidated metadata), as strict JSON values. Runs on SQLite and,
when CATALOGUE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import io
import json
import pathlib
from typing import Any

import pytest
from rdflib import Dataset, Graph

import catalogue
from catalogue.errors import display_location
from catalogue.harvest import load_hierarchy
from catalogue.model.nodes import V3_DOCUMENT
from tests.support.jsonvalues import assert_json_equal
from tests.support.paths import SEED_EXAMPLES

SEED_STORES = ["building-block", "zep6-v2", "zep6-v3"]


def resolve_pointer(doc: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def on_disk(location) -> Any:
    """The document at a Location, read straight from the file."""
    path = pathlib.Path(display_location(location.url))
    return resolve_pointer(json.loads(path.read_text(encoding="utf-8")), location.pointer)


def expected_documents(node) -> dict[str, Any]:
    """What was harvested: the files' contents (a v3 group's consolidated block left out)."""
    if node.primary is not None:  # dependent arrays have no file: their completed documents
        return node.documents
    docs = {name: on_disk(loc) for name, loc in node.locations.items()}
    if V3_DOCUMENT in docs:
        docs[V3_DOCUMENT] = {k: v for k, v in docs[V3_DOCUMENT].items() if k != "consolidated_metadata"}
    return docs


@pytest.fixture
def all_sources(good_stores) -> list[pathlib.Path]:
    return [*good_stores.values(), *(SEED_EXAMPLES / s for s in SEED_STORES)]


def test_every_node_round_trips(db_url, all_sources, tmp_path):
    checked = 0
    with catalogue.open(db_url) as cat:
        for source in all_sources:
            report = cat.harvest(str(source))
            assert report.ok, report.errors
        for source in all_sources:
            hierarchy = load_hierarchy(str(source))
            assert not hierarchy.failed
            for path, node in hierarchy.nodes.items():
                iri = hierarchy.iri(path)
                assert_json_equal(cat.documents(iri), expected_documents(node))
                checked += 1
    assert checked >= 45, checked
    print(f"{checked} nodes round-tripped on {db_url.split(':')[0]}")


def test_exports_reparse_with_the_same_triples(db_url, good_stores):
    with catalogue.open(db_url) as cat:
        for source in good_stores.values():
            cat.harvest(str(source))
        runs = sum(1 for _ in cat.quads("urn:zarr-catalogue:harvests"))  # the provenance graph is exported too
        assert runs > 0
        stored = sum(count for _, count in cat.graphs()) + runs
        for fmt in ("nquads", "trig", "json-ld"):
            buf = io.StringIO()
            cat.export(buf, format=fmt)
            ds = Dataset()
            ds.parse(data=buf.getvalue(), format=fmt)
            assert sum(len(g) for g in ds.graphs() if g.identifier != ds.default_graph.identifier) == stored
        for fmt in ("turtle", "nt"):
            buf = io.StringIO()
            cat.export(buf, format=fmt)
            assert len(Graph().parse(data=buf.getvalue(), format=fmt)) == stored, fmt


def test_one_graph_export(db_url, good_stores):
    source = good_stores["zarr_v3_deep"]
    with catalogue.open(db_url) as cat:
        cat.harvest(str(good_stores["xarray_cf_v2"]))
        report = cat.harvest(str(source))
        buf = io.StringIO()
        cat.export(buf, format="turtle", graph=report.graph)
        assert len(Graph().parse(data=buf.getvalue(), format="turtle")) == report.triples
