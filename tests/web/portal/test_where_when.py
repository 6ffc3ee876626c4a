"""Where and when in the portal and ``/datasets``: extents on dataset pages, bbox and datetime searches.

One catalogue per module (SQLite, and PostgreSQL when configured) holds the example
stores, a multiscale pyramid and a v2 hierarchy that declares no extent; the extents
are written into the harvested graphs by ``tests/support/extents.py`` (as the harvest
will write them). A real server on a loopback port serves it. The HTTP tests check
what the dataset pages show against those extents, and the filters of ``/datasets``
and the search page (antimeridian boxes, open intervals, bad parameters); the browser
test draws a box on the search map in Chromium and keeps screenshots in
``build/test-artifacts/``.
"""

from __future__ import annotations

import html
import pathlib
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

import catalogue
from catalogue.model.extents import Box, Extent
from catalogue.web.portal import map as maps
from catalogue.web.portal.search_page import interval_text
from catalogue.web.search_params import search_query
from tests.support import stores
from tests.support.extents import (
    EXAMPLE_EXTENTS,
    OCEAN_WKT,
    add_example_extents,
    build_multiscale_store,
)
from tests.support.paths import EXAMPLES
from tests.web.portal.test_portal import (
    CHROMIUM,
    Page,
    Watched,
    _artifact,
    check_markup,
    sqlite_only,
)

AIR = "Daily near-surface air temperature and precipitation, July 2021 (synthetic)"
SEA = "Monthly sea surface temperature and sea-ice fraction, Q1 2022 (synthetic)"
OCEAN = "Toy regional ocean model output (synthetic)"
PYRAMID = "Sentinel-2 like pyramid over central Europe (synthetic)"


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, pathlib.Path]:
    root = tmp_path_factory.mktemp("where-when-stores")
    out = {p.name: p for p in sorted(EXAMPLES.glob("*.zarr"))}
    out["pyramid.zarr"] = build_multiscale_store(root)
    out["v2"] = stores.build_zarr_v2_plain(root)
    return out


@pytest.fixture(scope="module")
def catalogue_sources(sources) -> list[pathlib.Path]:
    return list(sources.values())


@pytest.fixture(scope="module")
def catalogue_db(module_db_url, catalogue_sources) -> str:
    with catalogue.open(module_db_url) as cat:
        for source in catalogue_sources:
            cat.harvest(str(source))
    add_example_extents(module_db_url, catalogue_sources)
    return module_db_url


@pytest.fixture(scope="module")
def client(web_server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_server.base, timeout=30) as c:
        yield c


def iri_of(source: pathlib.Path, path: str = "") -> str:
    return source.absolute().as_uri() + ("/" + urllib.parse.quote(path) if path else "")


def browse(client: httpx.Client, iri: str) -> httpx.Response:
    response = client.get("/browse", params={"iri": iri})
    assert response.status_code == 200, response.text[:300]
    return response


def text_of(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def extent_section(markup: str) -> str:
    found = re.search(r'<section class="card extent".*?</section>', markup, re.S)
    assert found, "no Extent section"
    return found.group(0)


# --------------------------------------------------------------------------- the library
def _same(found: Extent | None, expected: Extent) -> bool:
    """Equal but for the order of the sources (the graph keeps no order)."""
    return found is not None and replace(found, sources=()) == replace(expected, sources=()) \
        and set(found.sources) == set(expected.sources)


def test_catalogue_reads_extents_and_pyramids(cat, sources):
    pyramid = iri_of(sources["pyramid.zarr"])
    assert _same(cat.extent(pyramid), EXAMPLE_EXTENTS["pyramid.zarr"].nodes[""])
    assert _same(cat.extent(iri_of(sources["ocean_model_v3.zarr"])), EXAMPLE_EXTENTS["ocean_model_v3.zarr"].nodes[""])
    assert cat.extent(iri_of(sources["v2"])) is None
    levels = cat.multiscales(pyramid)
    assert [(level.index, level.asset) for level in levels.levels] == [(0, "0"), (1, "1"), (2, "2")]
    assert cat.multiscales(iri_of(sources["ocean_model_v3.zarr"])) is None


# --------------------------------------------------------------------------- dataset pages
def test_dataset_page_shows_map_time_crs_resolution_sources_and_levels(client, sources):
    response = browse(client, iri_of(sources["pyramid.zarr"]))
    page = check_markup(response.text)
    section = extent_section(response.text)
    text = text_of(section)
    # the map: the land drawn from the page's one outline, the box where the extent says
    svg = Page(section)
    assert svg.all("svg", **{"class": "map map-extent", "role": "img"})
    assert page.all("path", id="land") and len(page.all("path", id="land")) == 1
    assert svg.all("use", href="#land")
    assert svg.all("rect", **{"class": "map-box", "x": "9.0", "y": "-51.0", "width": "6.0", "height": "4.0"})
    label = svg.all("svg", **{"class": "map map-extent"})[0]["aria-label"]
    assert "9°E–15°E, 47°N–51°N" in label and PYRAMID in label
    # the figures, each with where it was read
    assert "2023-06-01 – 2023-06-30" in text
    assert "West, south, east, north 9, 47, 15, 51" in text
    assert "EPSG:32633 · WGS 84 / UTM zone 33N from convention:proj at the root: proj:code" in text
    assert "Box in the native CRS 290000, 5210000, 730000, 5650000" in text
    assert "Cell size 10 m from convention:spatial at /0: spatial:transform" in text
    assert "from stac at the root: start_datetime, end_datetime" in text
    assert svg.all("a", href="http://www.opengis.net/def/crs/EPSG/0/32633", rel="nofollow noopener")
    # the levels, each linked to its node's page, with scale and translation
    rows = re.findall(r"<tr>\s*<th scope=\"row\">(\d)</th>(.*?)</tr>", section, re.S)
    assert [index for index, _ in rows] == ["0", "1", "2"]
    for index, row in rows:
        link = Page(row).all("a")[0]["href"]
        assert urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["iri"] == [iri_of(sources["pyramid.zarr"], index)]
        browse(client, iri_of(sources["pyramid.zarr"], index))
    assert "[4, 4]" in text_of(rows[2][1]) and "[1.5, 1.5]" in text_of(rows[2][1])
    assert "zarr-conventions:multiscales" in text and "average" in text
    # "more like this": the search filtered by this box and time span
    search = next(a["href"] for a in svg.all("a") if a.get("href", "").startswith("/?"))
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(search).query) == {
        "bbox": ["9,47,15,51"], "datetime": ["2023-06-01/2023-06-30"]}
    assert PYRAMID in client.get(search).text


def test_antimeridian_box_footprint_wkt_crs_and_calendar(client, sources):
    section = extent_section(browse(client, iri_of(sources["ocean_model_v3.zarr"])).text)
    svg = Page(section)
    # zoomed across the antimeridian: one box running past 180, the land drawn again 360 further east
    assert svg.all("rect", **{"class": "map-box", "x": "150.0", "y": "-10.0", "width": "60.0", "height": "40.0"})
    assert svg.all("use", href="#land", transform="translate(360 0)")
    west, _, width, _ = (float(v) for v in svg.all("svg", **{"class": "map map-extent"})[0]["viewbox"].split())
    assert west < 150 and west + width > 210
    footprint = svg.all("path", **{"class": "map-footprint"})[0]["d"]
    assert footprint.startswith("M155 25 180 28") and "M180 28 205 20" in footprint  # the eastern part moved by 360
    text = text_of(section)
    assert "150°E–150°W, 30°S–10°N (across the antimeridian)" in text
    assert "2020-01-01T00:00:00Z – 2020-01-10T00:00:00Z (360_day calendar)" in text
    assert "6 hours (PT6H)" in text and "Cell size 25 km" in text
    assert html.unescape(re.search(r'<details class="crs-wkt">.*?<pre[^>]*>(.*?)</pre>', section, re.S).group(1)) == OCEAN_WKT


def test_store_without_extent_says_so(client, sources):
    response = browse(client, iri_of(sources["v2"]))
    page = check_markup(response.text)
    assert "This store declares no extent" in page.texts["no-extent"]
    assert "invents none" in page.texts["no-extent"]
    assert not page.all("svg", role="img") and not page.all("path", id="land")


def test_arrays_show_their_own_extent(client, sources, cat):
    """An array without an extent gets no section at all; one with an extent gets it."""
    arrays = [str(r.a) for r in cat.query("SELECT ?a WHERE { GRAPH ?g { ?a a zarr:Array } } ORDER BY ?a")]
    plain = next(a for a in arrays if a.startswith(iri_of(sources["v2"])))
    assert 'id="extent-heading"' not in browse(client, plain).text
    tas = browse(client, iri_of(sources["cf_air_temperature_v3.zarr"], "tas")).text
    text = text_of(extent_section(tas))
    assert "2021-07-01 – 2021-07-06" in text and "1 day (P1D)" in text and "Cell size 2,224 km" in text
    assert "from cf:grid_mapping at /tas: crs" in text


# --------------------------------------------------------------------------- /datasets
def titles(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text[:300]
    return {hit["title"] for hit in response.json()["hits"]}


@pytest.mark.parametrize("params, expected", [
    ({"bbox": "0,40,20,60"}, {AIR, SEA, PYRAMID}),
    ({"bbox": "10,48,11,49"}, {AIR, SEA, PYRAMID}),
    ({"bbox": "170,-10,-170,10"}, {AIR, SEA, OCEAN}),         # the query crosses the antimeridian
    ({"bbox": "-160,-5,-155,5"}, {AIR, SEA, OCEAN}),          # the ocean's box does (150..-150)
    ({"bbox": "100,-5,120,5"}, {AIR, SEA}),                   # west of the ocean's box
    ({"bbox": "-10,82,10,89"}, {AIR}),                        # north of the sea surface grid
    ({"bbox": "0,40,-100,20,60,100"}, {AIR, SEA, PYRAMID}),   # heights ignored
    ({"datetime": "2021-07-03/.."}, {AIR, SEA, PYRAMID}),
    ({"datetime": "../2020-12-31"}, {OCEAN}),
    ({"datetime": "2022-02-15"}, {SEA}),                      # a date: its whole day
    ({"datetime": "2021-07-06T23:00:00Z"}, {AIR}),            # an instant inside a date span's last day
    ({"datetime": "2020-01-10T00:00:01Z/2021-06-30"}, set()),
    ({"datetime": "/2020-01-01T00:00:00Z"}, {OCEAN}),         # an empty end is open
    ({"bbox": "0,40,20,60", "datetime": "2023-01-01/.."}, {PYRAMID}),
])
def test_datasets_bbox_and_datetime(client, params, expected):
    assert titles(client.get("/datasets", params={**params, "limit": 50})) == expected


def test_datasets_hits_carry_their_extent_and_sort_by_start(client, sources):
    hits = client.get("/datasets", params={"sort": "start", "limit": 50}).json()["hits"]
    assert [h["title"] for h in hits][:4] == [OCEAN, AIR, SEA, PYRAMID]
    by_title = {h["title"]: h for h in hits}
    assert by_title[OCEAN]["extent"] == {"bbox": [150, -30, -150, 10], "start": "2020-01-01T00:00:00Z",
                                         "end": "2020-01-10T00:00:00Z", "calendar": "360_day"}
    assert by_title[PYRAMID]["extent"] == {"bbox": [9, 47, 15, 51], "start": "2023-06-01", "end": "2023-06-30",
                                           "calendar": None}
    assert all(h["extent"] is None for h in hits if h["title"] not in (AIR, SEA, OCEAN, PYRAMID))
    latest = client.get("/datasets", params={"sort": "-start", "limit": 4}).json()["hits"]
    assert [h["title"] for h in latest] == [PYRAMID, SEA, AIR, OCEAN]
    spec = client.get("/openapi.json").json()
    names = {p["name"] for p in spec["paths"]["/datasets"]["get"]["parameters"]}
    assert {"bbox", "datetime"} <= names


@pytest.mark.parametrize("params, named", [
    ({"bbox": "1,2,3"}, "bbox"),
    ({"bbox": "a,b,c,d"}, "bbox"),
    ({"bbox": "10,60,20,50"}, "bbox"),            # south above north
    ({"bbox": "0,0,200,10"}, "bbox"),
    ({"bbox": "nan,0,10,10"}, "bbox"),
    ({"datetime": "yesterday"}, "datetime"),
    ({"datetime": "../.."}, "datetime"),
    ({"datetime": "2021-07-31/2021-07-01"}, "datetime"),
    ({"datetime": "2021-13-01"}, "datetime"),
])
def test_datasets_refuses_bad_bbox_and_datetime(client, params, named):
    response = client.get("/datasets", params=params)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["status"] == 400 and body["error"].startswith(named) and "\n" not in body["error"]
    portal = client.get("/", params=params)
    assert portal.status_code == 400 and portal.headers["content-type"].startswith("text/html")
    assert named in text_of(portal.text)


DATED = {AIR, SEA, OCEAN, PYRAMID}


@pytest.mark.parametrize("value, expected", [
    ("9999-12-31", set()),
    ("9999-12-31T23:59:59-01:00", set()),                   # past datetime.max in UTC: clamped there
    ("0001-01-01T00:00:00+01:00", set()),                   # before datetime.min in UTC: clamped there
    ("../9999-12-31", DATED),
    ("0001-01-01T00:00:00+01:00/..", DATED),
    ("0001-01-01/9999-12-31", DATED),
])
def test_datetime_at_the_ends_of_the_range_never_500s(client, value, expected):
    """Review item 2: instants at the ends of datetime's range are clamped, on every route."""
    assert titles(client.get("/datasets", params={"datetime": value, "limit": 50})) == expected
    stac = client.get("/stac/collections", params={"datetime": value, "limit": 50})
    assert stac.status_code == 200, stac.text[:300]
    assert {c["title"] for c in stac.json()["collections"]} == expected
    for params in ({"datetime": value}, *([{"start": value}, {"end": value}] if "/" not in value else [])):
        page = client.get("/", params=params)
        assert page.status_code == 200, (params, page.text[:300])


# --------------------------------------------------------------------------- the search page
def result_titles(markup: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r'<h3 class="result-title"><a [^>]*>([^<]*)</a>', markup)]


def test_search_page_filters_by_box_and_dates(client):
    response = client.get("/", params={"bbox": "0,40,20,60", "datetime": "2021-07-03/..", "limit": 2})
    page = check_markup(response.text)
    assert set(result_titles(response.text)) <= {AIR, SEA, PYRAMID} and "3 datasets" in text_of(response.text)
    # the filters are shown, each removable on its own
    chips = {a["aria-label"]: a["href"] for a in page.all("a") if a.get("aria-label", "").startswith("Remove filter")}
    where = chips["Remove filter Where: 0°–20°E, 40°N–60°N"]
    when = chips["Remove filter When: from 2021-07-03"]
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(where).query) == {"datetime": ["2021-07-03/.."], "limit": ["2"]}
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(when).query) == {"bbox": ["0,40,20,60"], "limit": ["2"]}
    # paging keeps them
    nxt = next(a["href"] for a in page.all("a") if a.get("rel") == "next")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(nxt).query)
    assert query["bbox"] == ["0,40,20,60"] and query["datetime"] == ["2021-07-03/.."]
    assert len(result_titles(client.get(nxt).text)) == 1
    # the form shows them: the box in its field and on the map, the dates in theirs
    assert page.all("input", id="bbox", name="bbox", value="0,40,20,60")
    assert page.all("input", id="start", type="date", value="2021-07-03") and page.all("input", id="end", value="")
    search_map = re.search(r'<svg class="map map-search".*?</svg>', response.text, re.S).group(0)
    assert Page(search_map).all("rect", **{"class": "map-box", "x": "0.0", "y": "-60.0", "width": "20.0"})
    # each hit shows its time span and a thumbnail of its box
    hit = re.search(r'<li class="result">.*?</li>\s*(?=<li class="result">|</ol>)', response.text, re.S).group(0)
    assert Page(hit).all("svg", **{"class": "map map-thumb"}) and Page(hit).all("use", href="#land")


def test_search_form_dates_without_script_mean_datetime(client):
    """The form's start and end fields (what a browser without the script sends) give the
    same search as the datetime parameter, and the page's links carry datetime alone."""
    form = client.get("/", params={"bbox": "", "start": "2021-01-01", "end": "2022-12-31", "limit": 50})
    api = client.get("/", params={"datetime": "2021-01-01/2022-12-31", "limit": 50})
    assert result_titles(form.text) == result_titles(api.text) and set(result_titles(form.text)) == {AIR, SEA}
    links = [a["href"] for a in Page(form.text).all("a") if a.get("href", "").startswith("/?")]
    assert any("datetime=2021-01-01%2F2022-12-31" in link for link in links)
    assert not any("start=" in link or "end=" in link for link in links)
    assert client.get("/", params={"start": "2024-02-30"}).status_code == 400
    both = client.get("/", params={"start": "2021-01-01", "datetime": "2021-01-01/.."})
    assert both.status_code == 400 and "either datetime or the start and end" in text_of(both.text)


# --------------------------------------------------------------------------- units: maps and intervals
def test_world_map_draws_both_parts_across_the_antimeridian():
    view = maps.world_map(Box(170, -10, -170, 10))
    assert view.view_box == "-180 -90 360 180" and view.copies == (0,)
    assert [(r.x, r.width) for r in view.boxes] == [(170, 10), (-180, 10)]
    assert maps.land_path().count("M") > 100 and "NaN" not in maps.land_path()


@pytest.mark.parametrize("box", [Box(9, 47, 15, 51), Box(150, -30, -150, 10), Box(-1, 89, 1, 90), Box(179.5, 0, 179.9, 1)])
def test_extent_map_frames_the_box_inside_the_world(box):
    view = maps.extent_map(box)
    west, south, east, north = view.frame
    assert -90 <= south < north <= 90 and abs((east - west) - 2 * (north - south)) < 1e-9
    (rect,) = view.boxes
    assert west <= rect.x and rect.x + rect.width <= east and -north <= rect.y and rect.y + rect.height <= -south
    assert view.copies and all(west < 180 + k and east > -180 + k for k in view.copies)
    assert maps.extent_map(Box(-170, -80, 170, 80)).world  # most of the world: the world map


def test_interval_text_round_trips():
    for text in ("2021-07-01/2021-07-31", "2020-01-01/..", "../2019-12-31", "2020-01-01T06:00:00Z/2020-01-02T00:00:00Z"):
        parsed = search_query(datetime=text).datetime
        assert interval_text(*parsed) == text
        assert search_query(datetime=interval_text(*parsed)).datetime == parsed


# --------------------------------------------------------------------------- Chromium
@pytest.fixture(scope="module")
def browser(catalogue_db):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (Debian package chromium), so the browser tests are skipped")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not installed, so the browser tests are skipped")
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def watched(browser, web_server) -> Iterator[Any]:
    made: list[Watched] = []

    def make(**context: Any) -> Watched:
        w = Watched(browser, web_server.base, **{"viewport": {"width": 1280, "height": 900}, **context})
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def _screen(page: Any, lon: float, lat: float) -> tuple[float, float]:
    """Where a longitude and latitude are on the screen, from the search map's own transform."""
    return page.evaluate(
        """([lon, lat]) => { const svg = document.getElementById('search-map');
             const p = svg.createSVGPoint(); p.x = lon; p.y = -lat;
             const s = p.matrixTransform(svg.getScreenCTM()); return [s.x, s.y]; }""", [lon, lat])


@sqlite_only
def test_browser_draw_a_box_and_search(watched, web_server):
    w = watched()
    page = w.page
    page.goto(web_server.base + "/")
    everything = page.locator("h3.result-title").count()
    # drag from 0°E 60°N to 20°E 40°N on the map: the field gets the box
    start, end = _screen(page, 0, 60), _screen(page, 20, 40)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=4)
    page.mouse.move(*end, steps=4)
    page.mouse.up()
    west, south, east, north = (float(v) for v in page.locator("#bbox").input_value().split(","))
    assert abs(west - 0) < 1.5 and abs(south - 40) < 1.5 and abs(east - 20) < 1.5 and abs(north - 60) < 1.5
    assert page.locator("#search-map rect.map-draw").get_attribute("visibility") == "visible"
    page.fill("#start", "2023-01-01")
    page.locator("form[role=search] button[type=submit]").click()
    page.wait_for_url(re.compile(r"bbox="))
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert query["datetime"] == ["2023-01-01/.."] and "start" not in query and "end" not in query
    assert page.locator("h3.result-title").all_inner_texts() == [PYRAMID] and everything > 1
    assert page.locator(".active-filters a").count() == 2
    assert page.locator("#search-map rect.map-box").count() == 1
    w.shot("portal-where-when-search.png")
    # the dataset's page: its map, figures and pyramid
    page.locator("h3.result-title a").click()
    page.wait_for_url(re.compile(r"/browse\?iri="))
    assert page.locator("#extent-heading").inner_text() == "Extent"
    box = page.locator("svg.map-extent rect.map-box").bounding_box()
    frame = page.locator("svg.map-extent").bounding_box()
    assert 0.15 < box["width"] / frame["width"] < 0.5  # the box is framed, not a dot on the world
    assert page.locator(".levels-table tbody tr").count() == 3
    w.shot("portal-where-when-dataset.png")
    page.locator(".extent").screenshot(path=str(_artifact("portal-where-when-extent.png")))
    # removing the box filter from the search brings the other periods' datasets back
    page.go_back()
    page.locator(".active-filters a", has_text="When:").click()
    page.wait_for_url(re.compile(r"bbox=0"))
    assert set(page.locator("h3.result-title").all_inner_texts()) == {AIR, SEA, PYRAMID}


@sqlite_only
def test_browser_antimeridian_page_and_dark_phone(watched, web_server, sources):
    w = watched(viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True, has_touch=True)
    page = w.page
    page.goto(web_server.base + "/browse?" + urllib.parse.urlencode({"iri": iri_of(sources["ocean_model_v3.zarr"])}))
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px at 390px"
    assert page.locator("svg.map-extent use").count() == 2
    page.locator(".extent").scroll_into_view_if_needed()
    page.locator(".extent").screenshot(path=str(_artifact("portal-where-when-antimeridian-phone-dark.png")))
    page.goto(web_server.base + "/?bbox=170,-20,-170,20")
    assert page.locator("#search-map rect.map-box").count() == 2  # both parts on the world
    assert set(page.locator("h3.result-title").all_inner_texts()) == {AIR, SEA, OCEAN}

