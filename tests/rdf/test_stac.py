"""The STAC Collection builder on plain graphs: what each graph term becomes, and what is left out."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pystac.validation
import pytest
import zarr
from rdflib import Graph, URIRef

from catalogue.harvest import load_hierarchy
from catalogue.model.extents import Box, Extent, MultiscaleLevel, Multiscales, NativeCRS, Period
from catalogue.rdf.convert import hierarchy_triples
from catalogue.rdf.extents import extent_triples, multiscales_triples
from catalogue.rdf.stac import StacLinks, collection_id, dataset_collection
from tests.support.paths import EXAMPLES
from tests.support.stac import OfflineValidator

LINKS = StacLinks("http://catalogue.test")


def _graph(path: pathlib.Path, extents: dict[str, Extent] | None = None,
           pyramids: tuple[Multiscales, ...] = ()) -> tuple[Graph, str]:
    h = load_hierarchy(str(path))
    graph = Graph()
    for triple in hierarchy_triples(h):
        graph.add(triple)
    for node, extent in (extents or {}).items():
        for triple in extent_triples(URIRef(h.iri(node)), extent):
            graph.add(triple)
    for pyramid in pyramids:
        for triple in multiscales_triples(h, pyramid):
            graph.add(triple)
    return graph, h.iri("")


def _valid(collection: dict) -> dict:
    pystac.validation.validate_dict(collection, validator=OfflineValidator())
    return collection


def test_collection_ids_are_stable_url_safe_and_distinct():
    a, b = "https://host/data/sea%20surface.zarr", "s3://bucket/data/sea surface.zarr"
    assert collection_id(a) == collection_id(a) and collection_id(a) != collection_id(b)
    assert re.fullmatch(r"sea_surface\.zarr-[0-9a-f]{8}", collection_id(a))
    assert re.fullmatch(r"[A-Za-z0-9._-]+", collection_id("file:///"))


def test_a_coordinate_arrays_own_extent_wins_over_the_roots():
    root = Extent(bbox=Box(-180, -90, 180, 90), period=Period("2021-07-01", "2021-07-06"))
    graph, iri = _graph(EXAMPLES / "cf_air_temperature_v3.zarr",
                        {"": root, "lat": Extent(bbox=Box(-180, -80, 180, 80))})
    dims = _valid(dataset_collection(graph, iri, LINKS))["cube:dimensions"]
    assert dims["lat"]["extent"] == [-80.0, 80.0] and dims["lon"]["extent"] == [-180.0, 180.0]
    assert dims["time"]["extent"] == ["2021-07-01T00:00:00Z", "2021-07-06T23:59:59.999999Z"]


def test_without_extents_dimensions_are_left_out_and_the_extent_is_said_unknown():
    graph, iri = _graph(EXAMPLES / "cf_sea_surface_v2.zarr")
    collection = _valid(dataset_collection(graph, iri, LINKS))
    assert collection["cube:dimensions"] == {}
    assert set(collection["cube:variables"]) == {"sst", "siconc"}
    assert collection["catalogue:unknown_extent"] == ["spatial", "temporal"]
    assert collection["assets"]["zarr"]["type"] == "application/vnd.zarr; version=2"


@pytest.fixture
def projected(tmp_path) -> pathlib.Path:
    """A projected grid: x/y coordinates, an auxiliary lon, a variable with unnamed
    dimensions, a dimension without a coordinate array, a pyramid in a subgroup."""
    root = zarr.open_group(tmp_path / "utm.zarr", mode="w", zarr_format=3,
                           attributes={"title": "UTM grid", "license": "https://example.org/licence"})
    for name, n, standard in (("x", 4, "projection_x_coordinate"), ("y", 3, "projection_y_coordinate")):
        root.create_array(name, shape=(n,), dtype="float64", dimension_names=[name],
                          attributes={"standard_name": standard, "units": "m"})[...] = np.arange(n)
    root.create_array("lon", shape=(3, 4), dtype="float32", dimension_names=["y", "x"],
                      attributes={"standard_name": "longitude", "units": "degrees_east"})
    root.create_array("height", shape=(2, 3, 4), dtype="complex64", dimension_names=["band", "y", "x"],
                      attributes={"long_name": "Height", "units": "m", "coordinates": "lon"})
    root.create_array("raw", shape=(3, 4), dtype="uint8")
    pyramid = root.create_group("pyramid")
    pyramid.create_array("0", shape=(4, 4), dtype="uint8", dimension_names=["y", "x"])
    return tmp_path / "utm.zarr"


def test_a_projected_grid(projected):
    extent = Extent(bbox=Box(14.9, 50, 15.1, 50.1), crs=NativeCRS(epsg=32633),
                    native_bbox=(500000.0, 5540000.0, 500400.0, 5540300.0))
    graph, iri = _graph(projected, {"": extent}, (Multiscales("pyramid", (MultiscaleLevel(0, "0"),)),))
    collection = _valid(dataset_collection(graph, iri, LINKS))
    dims = collection["cube:dimensions"]
    assert dims == {"y": {"type": "spatial", "axis": "y", "extent": [5540000.0, 5540300.0], "reference_system": 32633},
                    "x": {"type": "spatial", "axis": "x", "extent": [500000.0, 500400.0], "reference_system": 32633}}
    variables = collection["cube:variables"]
    assert set(variables) == {"lon", "height", "pyramid/0"}  # raw has no dimension names; x, y are coordinates
    assert variables["lon"]["type"] == "auxiliary" and variables["height"]["type"] == "data"
    assert variables["height"]["data_type"] == "cfloat32" and variables["height"]["dimensions"] == ["band", "y", "x"]
    asset = collection["assets"]["zarr"]
    assert asset["proj:code"] == "EPSG:32633" and asset["proj:shape"] == [3, 4]
    assert asset["proj:bbox"] == [500000.0, 5540000.0, 500400.0, 5540300.0]
    assert collection["assets"]["pyramid"]["type"] == "application/vnd.zarr; version=3; profile=multiscales"
    assert collection["license"] == "other"
    assert {"rel": "license", "href": "https://example.org/licence"} in collection["links"]
    assert collection["catalogue:unknown_extent"] == ["temporal"]


# ------------------------------------------------- convention-only stores (review item 5)
@pytest.fixture(scope="module")
def convention_collections(tmp_path_factory) -> dict[str, dict]:
    """The utm, pyramid and eopf fixtures harvested (their extents extracted as a harvest
    does), as STAC Collections."""
    import catalogue
    from tests.support import convention_stores

    root = tmp_path_factory.mktemp("conventions")
    out = {}
    with catalogue.open(f"sqlite:///{root / 'c.db'}") as cat:
        for name, build in (("utm", convention_stores.build_utm), ("pyramid", convention_stores.build_pyramid),
                            ("eopf", convention_stores.build_eopf)):
            report = cat.harvest(str(build(root)))
            assert report.ok, report.errors
            out[name] = _valid(cat.stac_collection(collection_id(report.graph), LINKS))
    return out


def test_a_spatial_convention_grid_gives_x_and_y_dimensions(convention_collections):
    utm = convention_collections["utm"]
    dims = utm["cube:dimensions"]
    # b02 [time, y, x] is first by path: its grid is EPSG:32633, 10 m cells from spatial:transform
    assert dims == {
        "y": {"type": "spatial", "axis": "y", "extent": [4988000.0, 5000000.0], "reference_system": 32633, "step": 10.0},
        "x": {"type": "spatial", "axis": "x", "extent": [500000.0, 510000.0], "reference_system": 32633, "step": 10.0},
    }  # "time" has no coordinate array and no convention: left out, as ever
    assert utm["cube:variables"]["b02"]["dimensions"] == ["time", "y", "x"]
    assert utm["assets"]["zarr"]["proj:shape"] == [1200, 1000]


def test_a_pyramids_dimensions_are_its_finest_levels(convention_collections):
    dims = convention_collections["pyramid"]["cube:dimensions"]
    assert dims["x"] == {"type": "spatial", "axis": "x", "extent": [500000.0, 504000.0],
                         "reference_system": 32633, "step": 10.0}
    assert dims["y"]["extent"] == [4996000.0, 5000000.0] and dims["y"]["step"] == 10.0
    assert set(convention_collections["pyramid"]["cube:variables"]) == {"r10m/b02", "r20m/b02", "r40m/b02"}


def test_every_dimension_a_variable_names_is_described_or_unknowable(convention_collections):
    for name, collection in convention_collections.items():
        named = {d for v in collection["cube:variables"].values() for d in v["dimensions"]}
        assert set(collection["cube:dimensions"]) <= named, name
        assert {"x", "y"} <= set(collection["cube:dimensions"]) or not {"x", "y"} & named, name
