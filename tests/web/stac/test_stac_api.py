"""The STAC API with real clients: pystac-client over a running server, pystac's validation
against the STAC JSON Schemas (offline), xpystac/xarray reading a store from its asset."""

from __future__ import annotations

import numpy as np
import pystac
import pytest
import xarray as xr
import zarr
from pystac_client import Client
from pystac_client.conformance import ConformanceClasses

from catalogue.rdf.stac import collection_id
from tests.support.stac import OfflineValidator

AIR, SEA, OCEAN, PLAIN = "cf_air_temperature_v3.zarr", "cf_sea_surface_v2.zarr", "ocean_model_v3.zarr", "zarr_v2_plain.zarr"


@pytest.fixture(scope="module")
def ids(web_server) -> dict[str, str]:
    """Store folder name -> its collection id."""
    return {name: collection_id(graph) for name, graph in web_server.graphs.items()}


@pytest.fixture(scope="module")
def client(web_server) -> Client:
    return Client.open(web_server.base + "/stac")


def _names(ids: dict[str, str], collections) -> list[str]:
    by_id = {cid: name for name, cid in ids.items()}
    return [by_id[c.id] for c in collections]


def test_landing_page_declares_what_pystac_client_checks(client):
    for conformance in (ConformanceClasses.CORE, ConformanceClasses.COLLECTIONS,
                        ConformanceClasses.COLLECTION_SEARCH, ConformanceClasses.COLLECTION_SEARCH_FREE_TEXT):
        assert client.conforms_to(conformance), conformance
    assert not client.conforms_to(ConformanceClasses.ITEM_SEARCH)


def test_conformance_route_repeats_the_landing_page(web_server, client):
    assert web_server.get("/stac/conformance").json()["conformsTo"] == client.get_conforms_to()


def test_every_dataset_is_a_collection(client, ids):
    assert sorted(c.id for c in client.get_collections()) == sorted(ids.values())


def test_every_collection_validates_against_the_stac_schemas_offline(client):
    validator = OfflineValidator()
    for collection in client.get_collections():
        validated = collection.validate(validator=validator)
        assert any("datacube" in uri for uri in validated) and any("zarr" in uri for uri in validated)


def test_a_collection_by_id_equals_its_entry_in_the_list(web_server, ids):
    listed = {c["id"]: c for c in web_server.get("/stac/collections", params={"limit": 100}).json()["collections"]}
    for cid in ids.values():
        assert web_server.get(f"/stac/collections/{cid}").json() == listed[cid]


def test_unknown_collection_is_a_404(web_server):
    answer = web_server.get("/stac/collections/no-such-dataset-00000000")
    assert answer.status_code == 404 and "no-such-dataset" in answer.json()["error"]


def test_the_zarr_best_practice_fields(client, ids, web_server):
    air = client.get_collection(ids[AIR]).to_dict()
    assert air["extent"] == {"spatial": {"bbox": [[-180.0, -90.0, 180.0, 90.0]]},
                             "temporal": {"interval": [["2021-07-01T00:00:00Z", "2021-07-06T23:59:59.999999Z"]]}}
    assert "catalogue:unknown_extent" not in air
    assert air["license"] == "CC0-1.0" and air["keywords"] == sorted(air["keywords"]) and "precipitation" in air["keywords"]
    assert air["providers"] == [{"name": "zarr-catalogue example data (synthetic)", "roles": ["producer"]}]
    asset = air["assets"]["zarr"]
    assert asset["href"] == web_server.graphs[AIR] and asset["type"] == "application/vnd.zarr; version=3"
    assert asset["zarr:zarr_format"] == 3 and asset["zarr:node_type"] == "group" and asset["roles"] == ["data"]
    store = [link for link in air["links"] if link["rel"] == "store"]
    assert store == [{"rel": "store", "href": web_server.graphs[AIR], "type": "application/vnd.zarr; version=3",
                      "title": "Zarr store"}]
    assert air["cube:dimensions"] == {
        "time": {"type": "temporal", "extent": ["2021-07-01T00:00:00Z", "2021-07-06T23:59:59.999999Z"], "step": "P1D",
                 "description": "time"},
        "lat": {"type": "spatial", "axis": "y", "extent": [-90.0, 90.0], "reference_system": 4326,
                "description": "latitude"},
        "lon": {"type": "spatial", "axis": "x", "extent": [-180.0, 180.0], "reference_system": 4326,
                "description": "longitude"},
    }
    assert air["cube:variables"]["tas"] == {"dimensions": ["time", "lat", "lon"], "type": "data",
                                            "description": "Near-surface air temperature", "unit": "K",
                                            "data_type": "float32"}
    assert set(air["cube:variables"]) == {"tas", "pr"}

    sea = client.get_collection(ids[SEA]).to_dict()
    assert sea["extent"]["spatial"]["bbox"] == [[150.0, -40.0, -120.0, 40.0]]  # across the antimeridian
    assert sea["assets"]["zarr"]["type"] == "application/vnd.zarr; version=2"


def test_a_native_crs_is_the_projection_extension(client, ids):
    ocean = client.get_collection(ids[OCEAN]).to_dict()
    asset = ocean["assets"]["zarr"]
    assert asset["proj:code"] == "EPSG:32633" and asset["proj:bbox"] == [300000.0, 5540000.0, 800000.0, 6650000.0]
    assert "https://stac-extensions.github.io/projection/v2.0.0/schema.json" in ocean["stac_extensions"]
    assert ocean["catalogue:unknown_extent"] == ["temporal"]
    assert ocean["extent"]["temporal"]["interval"] == [[None, None]]
    assert ocean["description"].endswith("the open interval stands for \"not known\".")


def test_an_unknown_extent_is_said_to_be_unknown(client, ids):
    plain = client.get_collection(ids[PLAIN]).to_dict()
    assert plain["extent"] == {"spatial": {"bbox": [[-180.0, -90.0, 180.0, 90.0]]},
                               "temporal": {"interval": [[None, None]]}}
    assert plain["catalogue:unknown_extent"] == ["spatial", "temporal"]
    assert "no spatial or temporal extent" in plain["description"]
    assert plain["license"] == "other"  # the store names none


@pytest.mark.parametrize(("bbox", "expected"), [
    ((8, 52, 9, 53), {AIR, OCEAN}),
    ((-175, -10, -170, 10), {AIR, SEA}),  # east of the antimeridian, inside the Pacific box
    ((170, -5, -170, 5), {AIR, SEA}),  # a query box across the antimeridian
    ((100, -5, 120, 5), {AIR}),
])
def test_collection_search_by_bbox(client, ids, bbox, expected):
    found = client.collection_search(bbox=list(bbox), limit=100).collections()
    assert set(_names(ids, found)) == expected  # the store without an extent matches no box


@pytest.mark.parametrize(("interval", "expected"), [
    ("2021-07-03T00:00:00Z/2021-07-04T00:00:00Z", {AIR}),
    ("2022-02-01T00:00:00Z/..", {SEA}),
    ("../2021-12-31T00:00:00Z", {AIR}),
    ("2021-07-06T23:00:00Z/2022-01-01T00:00:00Z", {AIR, SEA}),  # a period's last date covers its whole day
    ("2021-07-07T00:00:00Z/2022-01-01T00:00:00Z", {SEA}),
    ("2020-01-01T00:00:00Z/2030-01-01T00:00:00Z", {AIR, SEA}),
])
def test_collection_search_by_datetime(client, ids, interval, expected):
    found = client.collection_search(datetime=interval, limit=100).collections()
    assert set(_names(ids, found)) == expected


def test_free_text_and_filters_combine(client, ids):
    assert _names(ids, client.collection_search(q="precipitation").collections()) == [AIR]
    assert _names(ids, client.collection_search(q="ocean", bbox=[8, 52, 9, 53]).collections()) == [OCEAN]


def test_free_text_alternatives_are_any_of(client, ids):
    """The free-text extension's basic class: comma-separated terms, any of which matches."""
    either = client.collection_search(q="precipitation,salinity", limit=100).collections()
    assert set(_names(ids, either)) == {AIR, OCEAN}
    assert _names(ids, client.collection_search(q="precipitation,nothingmatches").collections()) == [AIR]


def test_paging_follows_next_links(client, ids, web_server):
    search = client.collection_search(limit=1)
    pages = list(search.pages_as_dicts())
    assert [len(page["collections"]) for page in pages] == [1, 1, 1, 1]
    assert sorted(c["id"] for page in pages for c in page["collections"]) == sorted(ids.values())
    assert all(page["numberMatched"] == 4 and page["numberReturned"] == 1 for page in pages)
    second = web_server.get("/stac/collections", params={"limit": 1, "offset": 1}).json()
    rels = {link["rel"]: link["href"] for link in second["links"]}
    assert rels["prev"].endswith("/stac/collections?limit=1") and rels["next"].endswith("limit=1&offset=2")


# pystac-client checks sortby against item search's sort class even for collection search
# (and sends it all the same): its DoesNotConformTo warning says nothing about this server.
@pytest.mark.filterwarnings("ignore::pystac_client.warnings.DoesNotConformTo")
def test_sortby(client, ids):
    assert _names(ids, client.collection_search(sortby="-datetime").collections())[:2] == [SEA, AIR]
    assert _names(ids, client.collection_search(sortby="+datetime").collections())[:2] == [AIR, SEA]
    titles = [c.title for c in client.collection_search(sortby="title").collections()]
    assert titles == sorted(titles)


@pytest.mark.parametrize("query", [
    {"sortby": "-title"}, {"sortby": "license"}, {"sortby": "title,datetime"}, {"bbox": "1,2,3"},
    {"bbox": "0,50,10,40"}, {"datetime": "../.."}, {"datetime": "yesterday"}, {"limit": "0"}, {"limit": "101"},
    {"offset": "-1"}, {"q": "x" * 501},
])
def test_bad_parameters_are_400s(web_server, query):
    answer = web_server.get("/stac/collections", params=query)
    assert answer.status_code == 400, answer.text
    assert answer.json()["status"] == 400


def _open(asset: pystac.Asset) -> xr.Dataset:
    """``xr.open_dataset(asset)`` through xpystac. xpystac 0.5 recognises a Zarr asset only by
    the bare media type (``application/vnd.zarr``), not by the versioned one the STAC Zarr
    best practice asks for, so the version parameter is dropped on the client's copy;
    ``zarr:zarr_format`` still tells xpystac the version."""
    copy = asset.clone()
    copy.media_type = (asset.media_type or "").split(";")[0].strip()
    return xr.open_dataset(copy)


@pytest.mark.parametrize(("name", "variable"), [(AIR, "tas"), (SEA, "sst")])
def test_xpystac_reads_a_store_from_its_asset_as_zarr_python_does(client, ids, web_server, name, variable):
    asset = client.get_collection(ids[name]).assets["zarr"]
    with _open(asset) as ds:
        values = ds[variable].values
    array = zarr.open_group(web_server.graphs[name].removeprefix("file://"), mode="r")[variable]
    direct = array[...].astype(values.dtype)
    # xarray masks the CF fill value (sst's land points, -999) as NaN; zarr-python returns it as stored
    expected = np.where(direct == array.fill_value, np.nan, direct)
    assert np.isnan(expected).any() == (name == SEA)
    np.testing.assert_array_equal(values, expected)


@pytest.mark.xfail(strict=True, reason="xpystac 0.5 compares the media type without its parameters; "
                                       "when this passes, drop the workaround in _open")
def test_xpystac_opens_the_versioned_media_type_itself(client, ids):
    with xr.open_dataset(client.get_collection(ids[AIR]).assets["zarr"]) as ds:
        assert "tas" in ds


@pytest.mark.parametrize("cid", ["..%2F..%2Fetc%2Fpasswd", "%2e%2e", "a" * 300, "%FF%FE", "x%00y", "file%3A%2F%2F%2Fetc"])
def test_hostile_collection_ids_are_4xx(web_server, cid):
    answer = web_server.client.get(f"{web_server.base}/stac/collections/{cid}")
    assert 400 <= answer.status_code < 500 and "Traceback" not in answer.text and "root:x:0:0" not in answer.text
