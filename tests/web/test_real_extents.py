"""Where and when end to end, on real stores: harvest, library, STAC API, /datasets, portal,
SPARQL and ``catalogue metadata``, on SQLite and PostgreSQL.

The fixtures are written by xarray (CF: a global 0..360 grid, a regional grid with
bounds, a polar stereographic grid with a grid mapping, a curvilinear 2-D lat/lon grid, a
``360_day`` calendar, a region across the antimeridian) and by zarr-python (a 3-level
``multiscales`` pyramid, ``proj:code`` EPSG:32633 with ``spatial:transform``, an EOPF-like
root with ``stac_discovery``, a store with no geography); they are harvested as they are,
with no extent written over what the harvest found (unlike tests/support/extents.py).
Every figure is compared with :func:`tests.support.real_extents.expected_extents`, which
reads the same stores with xarray, zarr-python, pyproj and cftime only.
"""

from __future__ import annotations

import html
import json
import pathlib
import re
import urllib.parse
from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
import shapely
from click.testing import CliRunner
from pyproj import CRS
from pystac_client import Client

import catalogue
from catalogue.cli import main
from catalogue.model.extents import Box, Extent
from catalogue.rdf.stac import collection_id
from tests.support.real_extents import (
    DATA_ARRAY,
    Expected,
    build_fixtures,
    disk_documents,
    expected_extents,
    expected_levels,
    node_paths,
)
from tests.support.webserver import WebServer

#: The calendars the graph writes as the default (rdf/extents.py keeps only other names).
GREGORIAN = {"standard", "gregorian", "proleptic_gregorian"}


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Every fixture store, written once for the module: name -> folder."""
    return build_fixtures(tmp_path_factory.mktemp("real-extents"))


@pytest.fixture(scope="module")
def expected(fixtures) -> dict[str, dict[str, Expected | None]]:
    return expected_extents(fixtures)


@pytest.fixture(scope="module")
def catalogue_sources(fixtures) -> list[pathlib.Path]:
    return list(fixtures.values())


@pytest.fixture(scope="module")
def catalogue_db(module_db_url: str, catalogue_sources: list[pathlib.Path]) -> str:
    """The fixtures harvested with ``catalogue.open(db).harvest``, on both databases."""
    with catalogue.open(module_db_url) as cat:
        for source in catalogue_sources:
            report = cat.harvest(str(source))
            assert report.ok, (source, report.errors)
    return module_db_url


@pytest.fixture(scope="module")
def stac(web_server: WebServer) -> Client:
    return Client.open(web_server.base + "/stac")


def iri_of(store: pathlib.Path, path: str = "") -> str:
    return store.absolute().as_uri() + ("/" + urllib.parse.quote(path) if path else "")


# --------------------------------------------------------------------------- comparisons
def _crs_of(extent: Extent) -> CRS:
    assert extent.crs is not None
    return CRS.from_epsg(extent.crs.epsg) if extent.crs.epsg is not None else CRS.from_wkt(extent.crs.wkt2)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def assert_extent(found: Extent | None, want: Expected | None) -> None:
    """``found`` (from the catalogue) has exactly the figures ``want`` (computed independently)."""
    if want is None:
        assert found is None
        return
    assert found is not None
    if want.bbox is None:
        assert found.bbox is None
    else:
        assert found.bbox is not None and found.bbox.as_list() == pytest.approx(list(want.bbox), abs=1e-9)
    if want.crs is None:
        assert found.crs is None
    else:
        assert _crs_of(found).equals(want.crs, ignore_axis_order=True)
    if want.native_bbox is None:
        assert found.native_bbox is None
    else:
        assert found.native_bbox == pytest.approx(want.native_bbox, abs=1e-6)
    if want.period is None:
        assert found.period is None
    else:
        start, end, calendar = want.period
        assert found.period is not None
        if isinstance(start, str):
            assert (found.period.start, found.period.end) == (start, end)
        else:
            assert (_instant(found.period.start), _instant(found.period.end)) == (start, end)
        assert found.period.calendar == calendar or {found.period.calendar, calendar} <= GREGORIAN
    assert found.temporal_resolution == want.temporal_resolution


def stac_interval(want: Expected) -> list[datetime] | None:
    """STAC's interval for an expected period: a date covers its whole day (UTC)."""
    if want.period is None:
        return None
    start, end, _ = want.period
    if isinstance(start, str):
        first = datetime.combine(datetime.fromisoformat(start).date(), time(), UTC)
        last = datetime.combine(datetime.fromisoformat(end).date(), time(), UTC) + timedelta(days=1, microseconds=-1)
        return [first, last]
    return [start, end]


def box_shape(box: tuple[float, float, float, float]) -> Any:
    """A CRS84 box as shapely geometry, split at the antimeridian when it crosses it."""
    west, south, east, north = box
    if west <= east:
        return shapely.box(west, south, east, north)
    return shapely.MultiPolygon([shapely.box(west, south, 180, north), shapely.box(-180, south, east, north)])


# --------------------------------------------------------------------------- 1. the library
@pytest.mark.parametrize("name", list(DATA_ARRAY))
def test_extent_of_root_and_data_array_equals_the_independent_computation(cat, fixtures, expected, name):
    assert_extent(cat.extent(iri_of(fixtures[name])), expected[name][""])
    array = DATA_ARRAY[name]
    if array is not None:
        assert_extent(cat.extent(iri_of(fixtures[name], array)), expected[name][array])


def test_the_pyramids_levels(cat, fixtures):
    pyramid = cat.multiscales(iri_of(fixtures["pyramid"]))
    assert pyramid is not None and pyramid.resampling == "average"
    found = [(level.asset, level.derived_from, level.cell_size) for level in pyramid.levels]
    assert found == [(asset, parent, cell) for asset, parent, _, cell in expected_levels(fixtures["pyramid"])]
    assert [level.index for level in pyramid.levels] == [0, 1, 2]
    for name in fixtures:
        if name != "pyramid":
            assert cat.multiscales(iri_of(fixtures[name])) is None


# --------------------------------------------------------------------------- 2. STAC
def test_stac_collections_carry_the_extents(stac, fixtures, expected):
    for name, source in fixtures.items():
        want = expected[name][""]
        collection = stac.get_collection(collection_id(iri_of(source)))
        unknown = collection.extra_fields.get("catalogue:unknown_extent", [])
        bbox = collection.extent.spatial.bboxes
        if want is not None and want.bbox is not None:
            assert len(bbox) == 1 and bbox[0] == pytest.approx(list(want.bbox), abs=1e-9)
            assert "spatial" not in unknown
        else:
            assert bbox == [[-180.0, -90.0, 180.0, 90.0]] and "spatial" in unknown
        interval = stac_interval(want) if want is not None else None
        if interval is not None:
            assert collection.extent.temporal.intervals == [interval] and "temporal" not in unknown
        else:
            assert collection.extent.temporal.intervals == [[None, None]] and "temporal" in unknown
        asset = collection.assets["zarr"].extra_fields
        if want is not None and want.crs is not None:
            if want.crs.to_epsg() is not None:
                assert asset["proj:code"] == f"EPSG:{want.crs.to_epsg()}"
            else:
                assert CRS.from_wkt(asset["proj:wkt2"]).equals(want.crs)
            if want.native_bbox is not None:
                assert asset["proj:bbox"] == pytest.approx(list(want.native_bbox))
        else:
            assert not any(key.startswith("proj:") for key in asset)


def test_plain_store_collection_says_its_extent_is_unknown(stac, fixtures):
    plain = stac.get_collection(collection_id(iri_of(fixtures["plain"]))).to_dict()
    assert plain["catalogue:unknown_extent"] == ["spatial", "temporal"]
    assert "no spatial or temporal extent" in plain["description"]


def test_datacube_dimensions_have_the_coordinate_extents(stac, fixtures, expected):
    def dims(name: str) -> dict[str, Any]:
        return stac.get_collection(collection_id(iri_of(fixtures[name]))).to_dict()["cube:dimensions"]

    for name in ("global_grid", "regional_bounds", "antimeridian"):
        want = expected[name][""]
        assert want is not None and want.bbox is not None
        west, south, east, north = want.bbox
        found = dims(name)
        assert found["lon"]["extent"] == pytest.approx([west, east]) and found["lon"]["axis"] == "x"
        assert found["lat"]["extent"] == pytest.approx([south, north]) and found["lat"]["axis"] == "y"
    for name in ("global_grid", "calendar_360"):
        want = expected[name][""]
        interval = stac_interval(want)
        assert interval is not None
        time_dim = dims(name)["time"]
        assert [_instant(v) for v in time_dim["extent"]] == interval
        assert time_dim["step"] == want.temporal_resolution
    assert set(dims("global_grid")) == {"lat", "lon", "time"} and set(dims("calendar_360")) == {"time"}
    # 2-D auxiliary coordinates: y and x have no coordinate array, so no declared kind
    assert dims("curvilinear") == {}


def test_projected_cf_grid_has_native_box_and_xy_dimensions_in_stac(stac, fixtures, expected):
    collection = stac.get_collection(collection_id(iri_of(fixtures["polar_stereographic"]))).to_dict()
    want = expected["polar_stereographic"]["sic"]
    assert want is not None and want.native_bbox is not None
    x0, y0, x1, y1 = want.native_bbox
    assert collection["assets"]["zarr"]["proj:bbox"] == pytest.approx([x0, y0, x1, y1])
    assert collection["cube:dimensions"]["x"]["extent"] == pytest.approx([x0, x1])
    assert collection["cube:dimensions"]["y"]["extent"] == pytest.approx([y0, y1])


SEARCHES = [
    ({"bbox": "175,12,179,18"}, {"global_grid", "antimeridian"}),  # west of the antimeridian
    ({"bbox": "-179,12,-171,18"}, {"global_grid", "antimeridian"}),  # east of it
    ({"bbox": "172,11,-172,19"}, {"global_grid", "antimeridian"}),  # a query box across it
    # the UTM tiles (and the polar grid, which reaches 42°N), not the antimeridian
    ({"bbox": "14.9,45,15.2,45.2"}, {"global_grid", "utm", "pyramid", "polar_stereographic"}),
    ({"bbox": "15.08,45.02,15.1,45.06"}, {"global_grid", "utm", "polar_stereographic"}),  # south of the pyramid
    ({"bbox": "5,45,6,51"}, {"global_grid", "regional_bounds", "curvilinear", "polar_stereographic"}),
    ({"bbox": "-16,64,-15,64.5"}, {"global_grid", "eopf", "polar_stereographic"}),
    ({"bbox": "-100,-80,-90,-70"}, {"global_grid"}),
    ({"bbox": "-100,30,-90,40"}, {"global_grid"}),  # south of the polar grid
    ({"datetime": "2000-01-02T00:00:00Z/2000-01-03T00:00:00Z"}, {"global_grid"}),
    ({"datetime": "2000-06-01T00:00:00Z/2000-06-02T00:00:00Z"}, {"calendar_360"}),
    ({"datetime": "2001-01-30T12:00:00Z"}, {"calendar_360"}),  # inside the last date
    ({"datetime": "2025-10-06T12:40:00Z"}, {"eopf"}),  # 14:43:09+02:00 is 12:43:09Z
    ({"datetime": "2025-10-06T12:44:00Z/.."}, set()),
    ({"datetime": "../2000-01-01T00:00:00Z"}, {"global_grid"}),
    ({"bbox": "0,0,1,1", "datetime": "../2000-03-01T00:00:00Z"}, {"global_grid"}),  # the 360-day store has no box
]


def test_the_expected_hits_are_the_boxes_shapely_finds(expected):
    """The hand-written answers of :data:`SEARCHES` agree with shapely on the expected boxes."""
    for params, want in SEARCHES:
        if "bbox" in params and "datetime" not in params:
            query = box_shape(tuple(float(v) for v in params["bbox"].split(",")))  # type: ignore[arg-type]
            hits = {name for name, nodes in expected.items()
                    if nodes[""] is not None and nodes[""].bbox is not None and box_shape(nodes[""].bbox).intersects(query)}
            assert hits == want, params


def _names(fixtures: dict[str, pathlib.Path], iris: list[str]) -> set[str]:
    by_iri = {iri_of(path): name for name, path in fixtures.items()}
    return {by_iri[iri] for iri in iris}


@pytest.mark.parametrize(("params", "want"), SEARCHES)
def test_stac_collection_search_finds_exactly_the_fixtures(stac, fixtures, params, want):
    search = stac.collection_search(limit=100, **{k: (v.split(",") if k == "bbox" else v) for k, v in params.items()})
    by_id = {collection_id(iri_of(path)): name for name, path in fixtures.items()}
    assert {by_id[c.id] for c in search.collections()} == want


@pytest.mark.parametrize(("params", "want"), SEARCHES)
def test_datasets_search_finds_exactly_the_fixtures(web_server, fixtures, params, want):
    answer = web_server.get("/datasets", params={**params, "limit": 100})
    assert answer.status_code == 200, answer.text
    assert _names(fixtures, [hit["iri"] for hit in answer.json()["hits"]]) == want


def test_datasets_hits_carry_the_harvested_extent(web_server, fixtures, expected):
    hits = {hit["iri"]: hit for hit in web_server.get("/datasets", params={"limit": 100}).json()["hits"]}
    for name, path in fixtures.items():
        want, found = expected[name][""], hits[iri_of(path)]["extent"]
        if want is None:
            assert found is None
            continue
        assert (found["bbox"] is None) == (want.bbox is None)
        if want.bbox is not None:
            assert found["bbox"] == pytest.approx(list(want.bbox), abs=1e-9)


# --------------------------------------------------------------------------- the portal
def _section_text(markup: str) -> str:
    found = re.search(r'<section class="card extent".*?</section>', markup, re.S)
    assert found, "no Extent section"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(0))).split())


@pytest.mark.parametrize("name", [n for n in DATA_ARRAY if n != "plain"])
def test_portal_page_shows_the_box_and_time_span(web_server, fixtures, expected, name):
    page = web_server.get("/browse", params={"iri": iri_of(fixtures[name])})
    assert page.status_code == 200
    text = _section_text(page.text)
    want = expected[name][""]
    assert want is not None
    if want.bbox is not None:
        numbers = re.search(r"West, south, east, north ([-0-9., e]+?)(?: [A-Z]|$)", text)
        assert numbers, text
        assert [float(v) for v in numbers.group(1).split(",")] == pytest.approx(list(want.bbox), abs=1e-9)
    else:
        assert "West, south, east, north" not in text
    if want.period is not None:
        span = re.search(r"Time span (\S+) – (\S+)", text)
        assert span, text
        start, end, calendar = want.period
        if isinstance(start, str):
            assert span.groups() == (start, end)
        else:
            assert (_instant(span.group(1)), _instant(span.group(2))) == (start, end)
        assert (f"({calendar} calendar)" in text) == (calendar not in GREGORIAN)
    else:
        assert "Time span" not in text


def test_portal_page_of_the_plain_store_says_it_declares_no_extent(web_server, fixtures):
    text = _section_text(web_server.get("/browse", params={"iri": iri_of(fixtures["plain"])}).text)
    assert text.startswith("Extent This store declares no extent") and "invents none" in text
    assert "West, south, east, north" not in text and "Time span" not in text


# --------------------------------------------------------------------------- SPARQL
BBOX_QUERY = """
PREFIX dct: <http://purl.org/dc/terms/>
PREFIX dcat: <http://www.w3.org/ns/dcat#>
SELECT ?d ?wkt WHERE { GRAPH ?d { ?d dct:spatial ?where . ?where dcat:bbox ?wkt } }
"""


def test_sparql_over_dct_spatial_dcat_bbox_returns_the_wkt_literal(web_server, fixtures, expected):
    answer = web_server.get("/sparql", params={"query": BBOX_QUERY}, headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    rows: dict[str, list[dict[str, Any]]] = {}
    for row in answer.json()["results"]["bindings"]:
        rows.setdefault(row["d"]["value"], []).append(row["wkt"])
    with_box = {name for name, want in expected.items() if want[""] is not None and want[""].bbox is not None}
    assert _names(fixtures, list(rows)) == with_box
    for name in with_box:
        (wkt,) = rows[iri_of(fixtures[name])]  # exactly one box per dataset
        assert wkt["datatype"] == "http://www.opengis.net/ont/geosparql#wktLiteral"
        box = expected[name][""].bbox  # type: ignore[union-attr]
        assert shapely.from_wkt(wkt["value"]).equals(box_shape(box)), (name, wkt["value"])  # type: ignore[arg-type]


GEO_QUERY = """
SELECT ?d WHERE {{ GRAPH ?d {{ ?d dct:spatial/dcat:bbox ?g .
  FILTER(geof:sfIntersects(?g, "{wkt}"^^geo:wktLiteral)) }} }}
"""


@pytest.mark.parametrize(("params", "want"), [(p, w) for p, w in SEARCHES if list(p) == ["bbox"]])
def test_geosparql_finds_what_the_bbox_search_finds(web_server, fixtures, params, want):
    """The harvested footprints answer GeoSPARQL as /datasets and STAC answer bbox: the same
    datasets, through the spatial index (antimeridian boxes as two-part MULTIPOLYGONs)."""
    box = Box(*(float(v) for v in params["bbox"].split(",")))
    answer = web_server.get("/sparql", params={"query": GEO_QUERY.format(wkt=box.wkt())},
                            headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    assert _names(fixtures, [row["d"]["value"] for row in answer.json()["results"]["bindings"]]) == want


# --------------------------------------------------------------------------- 3. catalogue metadata
def test_catalogue_metadata_rebuilds_every_document_exactly(catalogue_db, fixtures):
    """Derived extent triples never disturb the exact rebuild: every node of every fixture
    prints, as JSON values, what is on disk."""
    runner = CliRunner()
    checked = 0
    for name, store in fixtures.items():
        for path in node_paths(store):
            result = runner.invoke(main, ["metadata", iri_of(store, path), "--db", catalogue_db], catch_exceptions=False)
            assert result.exit_code == 0, (name, path, result.stderr)
            assert json.loads(result.stdout) == disk_documents(store, path), (name, path)
            checked += 1
    assert checked > 3 * len(fixtures)

