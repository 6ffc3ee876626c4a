"""The Python API: catalogue.open(), harvest, query, metadata, and plain rdflib on the Dataset."""

from __future__ import annotations

import pytest
from rdflib import DCAT, RDF, Dataset, URIRef
from rdflib.query import Result

import catalogue
import catalogue.api
from catalogue.errors import NotFound
from catalogue.rdf.dcat import CatalogLinks
from catalogue.rdf.vocabulary import ZARR


def test_api_round_trip(db_url, good_stores):
    store = good_stores["xarray_cf_v3"]
    root = store.absolute().as_uri()
    with catalogue.open(db_url) as cat:
        report = cat.harvest(str(store))
        assert report.ok and report.arrays == 4 and report.groups == 1 and report.graph == root
        result = cat.query("SELECT ?a WHERE { ?a a zarr:Array }")
        assert isinstance(result, Result) and len(result) == 4
        assert cat.metadata(root + "/air")["data_type"] == "float32"
        assert isinstance(cat.dataset, Dataset)
        # any rdflib code works on the dataset, including rdflib's own SPARQL engine
        assert (URIRef(root), ZARR.member, URIRef(root + "/air")) in cat.dataset
        named = cat.dataset.graph(URIRef(root))
        assert len(named) == report.triples
        rows = named.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert int(next(iter(rows))[0]) == report.triples


def test_reopen_keeps_data_and_prefixes(db_url, good_stores):
    with catalogue.open(db_url) as cat:
        cat.harvest(str(good_stores["zarr_v3_lone_array"]))
    with catalogue.open(db_url) as cat:
        assert len(cat.graphs()) == 1
        assert dict(cat.store.namespaces())["zarr"] == URIRef(str(ZARR))


def test_plain_path_opens_sqlite_file(tmp_path, good_stores):
    path = tmp_path / "plain.db"
    with catalogue.open(str(path)) as cat:
        cat.harvest(str(good_stores["zarr_v3_lone_array"]))
    assert path.is_file()


def test_pathlib_paths_are_taken_where_a_path_is(tmp_path, good_stores):
    """What a Python user writes: ``pathlib.Path`` for the database, the store, a batch of
    stores and a file to load, each meaning what the same path as a string means."""
    store = good_stores["zarr_v3_lone_array"]
    with catalogue.open(tmp_path / "paths.db") as cat:
        assert cat.harvest(store).graph == store.absolute().as_uri()
        assert cat.harvest_sources([store], full=True).exit_code == 0
        nt = tmp_path / "one.nt"
        nt.write_text("<https://example.org/s> <https://example.org/p> <https://example.org/o> .\n")
        assert cat.load(nt, graph="https://example.org/g").triples == 1
    assert (tmp_path / "paths.db").is_file()
    report = catalogue.api.validate_store(store)
    assert report.nodes == 1 and not report.errors and report.source == str(store)


def test_dcat_pages_from_python(db_url, good_stores):
    """The DCAT catalogue that /catalog serves, as one library call."""
    store = good_stores["xarray_cf_v3"]
    links = CatalogLinks("https://catalogue.example.org")
    with catalogue.open(db_url) as cat:
        cat.harvest(str(store))
        graph = cat.dcat_catalog(links, page=1, page_size=10)
        assert (links.catalog, RDF.type, DCAT.Catalog) in graph
        assert list(graph.objects(links.catalog, DCAT.dataset)) == [URIRef(store.absolute().as_uri())]
        with pytest.raises(NotFound, match="page 2 is past the last page"):
            cat.dcat_catalog(links, page=2, page_size=10)
