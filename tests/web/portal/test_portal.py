"""The HTML portal (``/`` and ``/browse``), over HTTP and in a real headless Chromium.

One catalogue per module (SQLite, and PostgreSQL when configured) holds the
example stores, a v2 hierarchy, tensorstore's sharded array, two invalid
stores and a hostile one whose titles, attributes and names carry markup and
quotes; a real uvicorn server on a loopback port serves it. The HTTP tests
render every node's page and check the markup (one h1, labelled inputs,
scoped table headers, no inline script or style, escaped catalogue text), the
facts shown against the catalogue, that the Python and TensorStore snippets
really open the data, and that hostile parameters get HTML 4xx pages.

The browser tests drive Debian's Chromium (``/usr/bin/chromium``) with
Playwright: search, open a dataset, follow a facet, copy a snippet, check the
layout at phone width in dark mode. They fail on any console error, page
error, failed request or HTTP error status, and keep full-page screenshots in
``build/test-artifacts/`` (``CATALOGUE_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import pathlib
import re
import statistics
import time
import urllib.parse
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any, ClassVar

import httpx
import markupsafe
import pytest

import catalogue
from catalogue.web.portal import arrays, graph_digest, tree
from catalogue.web.portal import node_page as pages
from catalogue.web.settings import Settings
from tests.support import stores
from tests.support.measurements import report_measurement
from tests.support.paths import ARTIFACTS, EXAMPLES
from tests.support.webserver import serve

CHROMIUM = pathlib.Path("/usr/bin/chromium")

HOSTILE_TITLE = "<script>alert(1)</script> Hostile & \"quoted\" 'title'"
HOSTILE_ATTR = "\"><img src=x onerror=alert(2)>"
HOSTILE_LONG_NAME = "</pre></code><script>alert(3)</script>"


def build_hostile(root: pathlib.Path) -> pathlib.Path:
    """A v3 group whose text is markup: title, summary, attribute keys and values, an array name."""
    path = root / "hostile.zarr"
    path.mkdir()
    group = {
        "zarr_format": 3, "node_type": "group",
        "attributes": {
            "title": HOSTILE_TITLE,
            "summary": "A <b>bold</b> summary with \"double\" and 'single' quotes & ampersands.",
            "keywords": ["<i>kw</i>", "plain"],
            "onerror": HOSTILE_ATTR,
            "<key attr=\"x\">": {"nested": "</td></tr></table><script>alert(4)</script>", "n": [1, 2.5, None]},
            "multi": "line one\nline two <br>",
        },
    }
    (path / "zarr.json").write_text(json.dumps(group))
    array_dir = path / 'q"uote<a>'
    array_dir.mkdir()
    array = {
        "zarr_format": 3, "node_type": "array", "shape": [4, 3], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "dimension_names": ["<t>", None],
        "attributes": {"long_name": HOSTILE_LONG_NAME, "units": "\"K\"", "standard_name": "air_temperature"},
    }
    (array_dir / "zarr.json").write_text(json.dumps(array))
    return path


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, pathlib.Path]:
    root = tmp_path_factory.mktemp("portal-stores")
    out = {p.name: p for p in sorted(EXAMPLES.glob("*.zarr"))}
    out["v2"] = stores.build_zarr_v2_plain(root)
    out["sharded"] = stores.build_tensorstore_arrays(root)
    out["deep"] = stores.build_zarr_v3_deep(root)
    out["dependent"] = stores.build_dependent_arrays(root)
    out["wrong_types"] = stores.build_wrong_types(root)
    out["missing_key"] = stores.build_missing_key(root)
    out["hostile"] = build_hostile(root)
    return out


@pytest.fixture(scope="module")
def catalogue_sources(sources) -> list[pathlib.Path]:
    """The module's stores, in harvest order: ``web_server`` (tests/web/conftest.py) serves them."""
    return list(sources.values())


@pytest.fixture(scope="module")
def catalogue_db(module_db_url, catalogue_sources) -> str:
    with catalogue.open(module_db_url) as cat:
        for source in catalogue_sources:
            cat.harvest(str(source))
    return module_db_url


@pytest.fixture(scope="module")
def client(web_server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_server.base, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def node_iris(cat) -> dict[str, str]:
    """Every catalogued node IRI -> its kind (group, array, dependent)."""
    out = {}
    for row in cat.query("SELECT ?n ?t WHERE { ?n zarr:path ?p ; a ?t }"):
        kind = str(row.t).rsplit("#", 1)[-1]
        if kind in ("Group", "Array", "DependentArray"):
            iri = str(row.n)
            if kind == "DependentArray" or out.get(iri) is None:
                out[iri] = {"Group": "group", "Array": "array", "DependentArray": "dependent"}[kind]
    return out


def iri_of(source: pathlib.Path, path: str = "") -> str:
    url = source.absolute().as_uri()
    return url + ("/" + urllib.parse.quote(path) if path else "")


def browse(client: httpx.Client, iri: str) -> httpx.Response:
    return client.get("/browse", params={"iri": iri})


# --------------------------------------------------------------------------- markup checks
class Page(HTMLParser):
    """The parts of a page the checks need: elements, text by id, headings, forms, scripts."""

    VOID: ClassVar[set[str]] = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.texts: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []
        self._buffers: dict[str, list[str]] = {}
        self.headings: list[tuple[str, str]] = []
        self._heading: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.elements.append((tag, attributes))
        if tag in self.VOID:
            return
        ident = attributes.get("id")
        self._open.append((tag, ident))
        if ident:
            self._buffers[ident] = []
        if tag in ("h1", "h2", "h3", "h4"):
            self._heading = [tag]

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            name, ident = self._open.pop()
            if ident is not None:
                self.texts[ident] = "".join(self._buffers.pop(ident, []))
            if name == tag:
                break
        if tag in ("h1", "h2", "h3", "h4") and self._heading:
            self.headings.append((self._heading[0], "".join(self._heading[1:]).strip()))
            self._heading = None

    def handle_data(self, data: str) -> None:
        for buffer in self._buffers.values():
            buffer.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def all(self, tag: str, **match: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in match.items())]

    def h1(self) -> list[str]:
        return [text for tag, text in self.headings if tag == "h1"]


def check_markup(text: str) -> Page:
    """The accessibility and safety rules every portal page follows."""
    page = Page(text)
    assert page.all("html", lang="en"), "no <html lang=en>"
    assert len(page.h1()) == 1, f"expected one h1, got {page.h1()}"
    for landmark in ("header", "nav", "main", "footer"):
        assert page.all(landmark), f"no <{landmark}> landmark"
    ids = [a["id"] for _, a in page.elements if "id" in a]
    assert len(ids) == len(set(ids)), "duplicate ids"
    labelled = {a.get("for") for a in page.all("label")}
    for tag in ("input", "select", "textarea"):
        for a in page.all(tag):
            if a.get("type") in ("hidden", "submit", "button"):
                continue
            assert a.get("id") in labelled or a.get("aria-label"), f"unlabelled <{tag}> {a}"
    for a in page.all("th"):
        assert a.get("scope") in ("col", "row"), f"<th> without scope: {a}"
    scripts = page.all("script")
    assert len(scripts) == 1 and scripts[0].get("src", "").startswith("/static/portal.js"), scripts
    for tag, a in page.elements:
        assert "style" not in a, f"inline style on <{tag}> (the CSP forbids it)"
        assert not any(k.startswith("on") for k in a), f"event handler attribute on <{tag}>: {a}"
        for key in ("href", "src", "action"):
            assert not a.get(key, "").lower().startswith(("javascript:", "data:text")), a
    for button in page.all("button"):
        target = button.get("data-copy-target")
        if target:
            assert target in page.texts, f"copy button for missing #{target}"
    assert page.all("a", **{"class": "skip-link", "href": "#main"})
    return page


# --------------------------------------------------------------------------- HTTP: node pages
def test_every_node_page_renders(client, node_iris, sources):
    hostile_root = iri_of(sources["hostile"])
    assert len(node_iris) > 40
    for iri, kind in node_iris.items():
        response = browse(client, iri)
        assert response.status_code == 200, (iri, response.text[:300])
        assert response.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in response.headers["content-security-policy"]
        page = check_markup(response.text)
        assert page.texts["node-iri"] == iri
        current = [a for a in page.all("a") if a.get("aria-current") == "page" and "tree-link" in a.get("class", "")]
        assert len(current) == 1 and urllib.parse.parse_qs(urllib.parse.urlsplit(current[0]["href"]).query)["iri"] == [iri]
        assert "snippet-sparql" in page.texts and page.texts["snippet-sparql"].startswith("DESCRIBE")
        if kind != "group":
            assert page.all("section", **{"aria-labelledby": "layout-heading"})
        if not iri.startswith(hostile_root):
            assert "<script>" not in response.text.replace('<script src="', "")


def test_group_page_lists_arrays_and_tree(client, sources):
    root = iri_of(sources["ocean_model_v3.zarr"])
    page = check_markup(browse(client, root).text)
    assert page.h1() == ["Toy regional ocean model output (synthetic)"]
    listed = {urllib.parse.parse_qs(urllib.parse.urlsplit(a["href"]).query)["iri"][0]
              for a in page.all("a") if a.get("href", "").startswith("/browse")}
    for path in ("grid/depth", "ocean/profiles/salinity", "ocean/surface/ssh"):
        assert iri_of(sources["ocean_model_v3.zarr"], path) in listed
    assert "No findings" in browse(client, root).text
    text = browse(client, root).text
    assert "Arrays in this dataset" in text and "Provenance" in text and "succeeded" in text


def test_sharded_array_shows_shards_and_inner_chunks(client, sources, cat):
    iri = iri_of(sources["sharded"], "zarr3_sharded")
    response = browse(client, iri)
    page = check_markup(response.text)
    text = html.unescape(re.sub(r"<[^>]+>", " ", response.text))
    text = " ".join(text.split())
    assert "Shards 8 × 8 (4 shards)" in text
    assert "Inner chunks 4 × 4 (16 chunks)" in text
    assert "sharding_indexed" in text and "gzip" in text and "index at the start" in text
    assert "Data type uint16" in text and "Fill value 7" in text
    spec = json.loads(page.texts["snippet-tensorstore"])
    assert spec == cat.tensorstore_spec(iri)


def test_v2_array_shows_compressor_filters_and_order(client, sources):
    iri = iri_of(sources["v2"], "temperature")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", browse(client, iri).text)).split())
    assert "delta filter" in text and "blosc compressor" in text
    assert "Memory order F" in text and "Data type <f4" in text and 'Fill value "NaN"' in text
    assert "Chunks 4 × 3 (4 chunks)" in text and "y 8 x 6" in text
    assert "v2 (separator /)" in text and "Zarr v2" in text


def test_invalid_nodes_show_their_findings(client, sources):
    for name, rule, pointer in (("wrong_types", "v3.shape", "/shape"), ("missing_key", "v2.required", "/dtype")):
        response = browse(client, iri_of(sources[name]))
        page = check_markup(response.text)
        table = [a for a in page.all("table") if "findings" in a.get("class", "")]
        assert table, name
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())
        assert rule in text and pointer in text and "Error" in text and "Invalid" in text
    # a group page gathers the findings below it, with a column naming the node
    text = browse(client, iri_of(sources["dependent"])).text
    assert "v3.chunk_key_encoding.proposed" in text and "multiscale/s1" in text


def test_dependent_array_links_its_primary(client, sources):
    iri = iri_of(sources["dependent"], "multiscale/s1")
    text = browse(client, iri).text
    assert "A dependent array of" in text
    assert f'href="/browse?{urllib.parse.urlencode({"iri": iri_of(sources["dependent"], "multiscale")})}"' in text


def test_hostile_catalogue_text_is_escaped(client, sources):
    root = iri_of(sources["hostile"])
    response = browse(client, root)
    page = check_markup(response.text)
    assert page.h1() == [HOSTILE_TITLE]
    raw = response.text
    for needle in ("<script>alert", "<img src=x", "<b>bold</b>", "<i>kw</i>", '<key attr="x">', "</table><script>"):
        assert needle not in raw
    assert str(markupsafe.escape(HOSTILE_ATTR)) in raw
    # the array whose name holds a quote and markup: its page, and its link from the group
    array_iri = iri_of(sources["hostile"], 'q"uote<a>')
    assert "%22" in array_iri and "%3C" in array_iri
    assert f'href="/browse?{html.escape(urllib.parse.urlencode({"iri": array_iri}))}"' in raw
    array_page = browse(client, array_iri)
    assert array_page.status_code == 200
    check_markup(array_page.text)
    assert "alert(3)" in html.unescape(array_page.text) and "<script>alert(3)" not in array_page.text
    search = client.get("/", params={"q": "hostile"})
    check_markup(search.text)
    assert "<script>alert" not in search.text and html.escape("<script>alert(1)</script>") in search.text


def test_snippets_open_the_data(client, sources):
    """The Python snippets run as shown: zarr-python and xarray open the group and the array."""
    pytest.importorskip("xarray")
    tensorstore = pytest.importorskip("tensorstore")
    assert tensorstore
    for iri in (iri_of(sources["cf_air_temperature_v3.zarr"]), iri_of(sources["cf_sea_surface_v2.zarr"], "sst"),
                iri_of(sources["sharded"], "zarr3_sharded")):
        page = Page(browse(client, iri).text)
        for snippet in ("snippet-python", "snippet-tensorstore-python"):
            if snippet not in page.texts:
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out), _quiet_warnings():
                exec(compile(page.texts[snippet], f"<{snippet} {iri}>", "exec"), {})
            assert out.getvalue().strip(), (snippet, iri)
        assert "snippet-python" in page.texts


@contextlib.contextmanager
def _quiet_warnings() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_sparql_snippets_answer(client, cat, sources):
    root = iri_of(sources["cf_air_temperature_v3.zarr"])
    page = Page(browse(client, root).text)
    described = cat.query(page.texts["snippet-sparql"])
    assert len(described.graph) > 10
    rows = list(cat.query(page.texts["snippet-sparql-arrays"]))
    assert {str(r.path) for r in rows} == {"lat", "lon", "pr", "tas", "time"}
    run = [a["href"] for a in page.all("a") if a.get("href", "").startswith("/sparql?query=")]
    assert len(run) == 2
    # "Run" asks for formats browsers show inline (Turtle for DESCRIBE, SPARQL JSON for SELECT)
    described = client.get(run[0])
    assert described.status_code == 200 and described.headers["content-type"].startswith("text/turtle")
    assert "cf_air_temperature_v3.zarr>" in described.text
    selected = client.get(run[1])
    assert selected.status_code == 200 and len(selected.json()["results"]["bindings"]) == 5


def test_provenance_shows_the_latest_check(client, cat, sources):
    """A re-harvest that finds a consolidated source unchanged writes no graph; the page says
    when the source was last checked, besides when its current version was harvested."""
    source = sources["cf_air_temperature_v3.zarr"]
    iri = iri_of(source)
    before = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", browse(client, iri).text)).split())
    assert "Harvested" in before and "Outcome succeeded" in before
    report = cat.harvest(str(source))
    assert report.run.outcome == "unchanged"
    after = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", browse(client, iri).text)).split())
    assert "Last checked" in after and "(unchanged)" in after


def test_node_page_machine_links(client, sources):
    iri = iri_of(sources["cf_air_temperature_v3.zarr"], "tas")
    page = Page(browse(client, iri).text)
    hrefs = [a["href"] for a in page.all("a")]
    q = urllib.parse.urlencode({"iri": iri})
    for expected in (f"/node?{q}&format=turtle", f"/node?{q}&format=jsonld", f"/node?{q}&format=json",
                     f"/node/chunks?{q}", f"/node/tensorstore?{q}", "/sparql"):
        assert expected in hrefs, expected


def test_large_hierarchy_path_shows_the_same(cat, sources, monkeypatch):
    """Graphs over FULL_LOAD_LIMIT are read node by node: the page must not change."""
    iris = [iri_of(sources["ocean_model_v3.zarr"]), iri_of(sources["ocean_model_v3.zarr"], "ocean/surface/ssh"),
            iri_of(sources["dependent"], "multiscale"), iri_of(sources["wrong_types"])]
    graph_digest._cache.clear()
    whole = [pages.node_page(cat, iri, base="") for iri in iris]
    monkeypatch.setattr(graph_digest, "FULL_LOAD_LIMIT", 0)
    graph_digest._cache.clear()
    piecewise = [pages.node_page(cat, iri, base="") for iri in iris]
    graph_digest._cache.clear()
    assert piecewise == whole


def test_huge_hierarchy_shows_the_path_and_counts_the_rest(client, cat, sources, monkeypatch):
    """Past MAX_TREE nodes the tree keeps the path to the node open and counts what it hides;
    past FULL_LOAD_LIMIT triples a group page lists MAX_LISTED_LARGE arrays in full."""
    monkeypatch.setattr(tree, "MAX_TREE", 3)
    monkeypatch.setattr(graph_digest, "FULL_LOAD_LIMIT", 0)
    monkeypatch.setattr(pages, "MAX_LISTED_LARGE", 2)
    graph_digest._cache.clear()
    try:
        root = iri_of(sources["ocean_model_v3.zarr"])
        page = pages.node_page(cat, iri_of(sources["ocean_model_v3.zarr"], "ocean/surface/ssh"), base="")
        grid, ocean = page.tree.children
        assert (grid.node.name, grid.children, grid.hidden) == ("grid", [], 2)
        profiles, surface = ocean.children
        assert (profiles.children, profiles.hidden) == ([], 3)
        assert [c.node.name for c in surface.children] == ["ssh"] and surface.children[0].current
        group = pages.node_page(cat, root, base="")
        assert [a.relative for a in group.arrays] == ["grid/depth", "grid/land_mask"] and group.unlisted == 4
        response = browse(client, root)  # the server runs in this process: same limits
        check_markup(response.text)
        assert "… and 4 more arrays" in response.text
        surface = Page(browse(client, iri_of(sources["ocean_model_v3.zarr"], "ocean/surface")).text)
        more = surface.all("span", **{"class": "tree-more"})
        assert len(more) == 2  # grid (2 inside) and profiles (3 inside) are folded
    finally:
        graph_digest._cache.clear()


def _v3_array(data_type: object, codecs: list) -> dict:
    return {"zarr.json": {
        "zarr_format": 3, "node_type": "array", "shape": [4, 6], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs,
    }}


def test_array_sizes_follow_the_validator():
    """Only data types validation accepts are sized: bfloat16 is not a Zarr v3 type."""
    info = graph_digest.NodeInfo(iri="file:///a.zarr/x", path="x", kind="array")
    expected = [("float32", 96), ("complex128", 384), ("bool", 24), ("r16", 48), ({"name": "int16"}, 48),
                ("bfloat16", None), ("r12", None), ("string", None)]
    for dtype, nbytes in expected:
        assert arrays.array_view(info, _v3_array(dtype, [{"name": "bytes"}])).nbytes == nbytes, dtype
    v2 = {".zarray": {"zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "<f8", "compressor": None,
                      "fill_value": 0, "order": "C", "filters": None}}
    assert arrays.array_view(info, v2).nbytes == 192
    v2[".zarray"]["dtype"] = "|O"
    assert arrays.array_view(info, v2).nbytes is None


def test_codec_kinds_follow_the_validator():
    """Each codec is labelled with the kind the validator gives it (unknown codecs: no label)."""
    info = graph_digest.NodeInfo(iri="file:///a.zarr/x", path="x", kind="array")
    codecs = [{"name": "numcodecs.delta", "configuration": {"dtype": "<f4"}},
              {"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 0, "scale": 10, "dtype": "<f4"}},
              "transpose", {"name": "numcodecs.pcodec"}, {"name": "zstd"}, {"name": "numcodecs.zlib"},
              {"name": "private.codec"}]
    view = arrays.array_view(info, _v3_array("float32", codecs))
    assert [(c.name, c.role) for c in view.codecs] == [
        ("numcodecs.delta", "array → array"), ("numcodecs.fixedscaleoffset", "array → array"),
        ("transpose", "array → array"), ("numcodecs.pcodec", "array → bytes"), ("zstd", "bytes → bytes"),
        ("numcodecs.zlib", "bytes → bytes"), ("private.codec", "")]
    zfp = arrays.array_view(info, _v3_array("float32", [{"name": "numcodecs.zfpy"}]))
    assert zfp.codecs[0].role == "array → bytes"


def test_untitled_dataset_has_one_name_everywhere(tmp_path):
    """A dataset without a title is named by its store's last path segment, percent-decoded, the same
    in /datasets, on its portal page, in the DCAT catalogue and in its export's file name."""
    store = tmp_path / "sea surface (v3).zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}))
    db = f"sqlite:///{tmp_path / 'names.db'}"
    with catalogue.open(db) as c:
        iri = c.harvest(str(store)).graph
    assert "%20" in iri
    name = "sea surface (v3).zarr"
    with serve(Settings(db=db)) as url:
        [hit] = httpx.get(url + "/datasets").json()["hits"]
        assert hit["iri"] == iri and hit["title"] == name
        page = check_markup(httpx.get(url + "/browse", params={"iri": iri}).text)
        assert page.h1() == [name]
        from rdflib import DCTERMS, Graph, URIRef

        dcat = Graph().parse(data=httpx.get(url + "/catalog", headers={"Accept": "text/turtle"}).text,
                             format="turtle")
        assert [str(t) for t in dcat.objects(URIRef(iri), DCTERMS.title)] == [name]
        export = httpx.get(url + "/export", params={"graph": iri, "format": "turtle"})
        assert export.status_code == 200
        assert 'filename="sea_surface_v3_.zarr.ttl"' in export.headers["content-disposition"]


def test_cached_digest_sees_a_load_after_the_recheck_interval(tmp_path):
    """The page cache is keyed by graph and harvest run; a load into the graph (no new run) changes
    its size, which is counted again once the recheck interval has passed (never on every view)."""
    store = tmp_path / "plain.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}))
    extra = tmp_path / "extra.ttl"
    extra.write_text(f"<{store.absolute().as_uri()}> <http://www.w3.org/ns/dcat#keyword> \"added\" .\n")
    with catalogue.open(f"sqlite:///{tmp_path / 'recheck.db'}") as c:
        iri = c.harvest(str(store)).graph
        graph_digest._cache.clear()
        try:
            first = pages.node_page(c, iri, base="", recheck=3600)
            assert first.keywords == [] and first.counts == {"groups": 1, "arrays": 0}
            c.load(str(extra), graph=iri)
            assert pages.node_page(c, iri, base="", recheck=3600).keywords == []  # trusted within the interval
            assert pages.node_page(c, iri, base="", recheck=0).keywords == ["added"]
        finally:
            graph_digest._cache.clear()


BROKEN_TTL = """
@prefix zarr: <https://w3id.org/zarr-catalogue/vocab#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
<https://example.org/broken.zarr> a zarr:Group ; zarr:path "" ; zarr:zarrFormat 3 ;
    zarr:member <https://example.org/broken.zarr/a> ;
    zarr:attributes "{not json"^^rdf:JSON .
<https://example.org/broken.zarr/a> a zarr:Array ; zarr:path "a" ; zarr:zarrFormat 3 ;
    zarr:shape "[1,"^^rdf:JSON ; zarr:dataType "float32", "int8" .
"""


def test_inconsistent_graph_still_renders(tmp_path):
    """Triples loaded by hand that do not rebuild into metadata: the page says so, it does not fail."""
    source = tmp_path / "broken.ttl"
    source.write_text(BROKEN_TTL)
    with serve(Settings(db=f"sqlite:///{tmp_path / 'broken.db'}")) as url:
        with catalogue.open(f"sqlite:///{tmp_path / 'broken.db'}") as c:
            c.load(str(source), graph="https://example.org/broken.zarr")
        for iri in ("https://example.org/broken.zarr", "https://example.org/broken.zarr/a"):
            response = httpx.get(url + "/browse", params={"iri": iri})
            assert response.status_code == 200, response.text[:300]
            check_markup(response.text)
        assert "could not be rebuilt" in response.text


def test_pages_are_fast(client, sources):
    iri = iri_of(sources["ocean_model_v3.zarr"])
    timings: dict[str, list[float]] = {"/browse": [], "/": []}
    for _ in range(3):  # warm caches
        browse(client, iri)
        client.get("/", params={"q": "temperature"})
    for _ in range(15):
        started = time.perf_counter()
        assert browse(client, iri).status_code == 200
        timings["/browse"].append(time.perf_counter() - started)
        started = time.perf_counter()
        assert client.get("/", params={"q": "temperature", "dimension": "time"}).status_code == 200
        timings["/"].append(time.perf_counter() - started)
    for route, values in timings.items():
        median = statistics.median(values) * 1000
        report_measurement(f"portal {route}: median {median:.1f} ms over {len(values)} requests (loopback)")
        assert median < 250, (route, median)


# --------------------------------------------------------------------------- HTTP: search page
def test_search_page_lists_everything_with_facets(client, node_iris, cat):
    response = client.get("/")
    assert response.status_code == 200
    page = check_markup(response.text)
    assert page.h1() == ["Find Zarr datasets"]
    assert page.all("input", type="search", name="q", id="q")
    datasets = {str(r.g) for r in cat.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?g zarr:path \"\" } }")}
    total = len(datasets)
    assert f"{total} datasets" in response.text
    assert len([a for a in page.all("h3") if a.get("class") == "result-title"]) == total
    for facet in ("dtype", "dimension", "standard_name", "units", "codec", "zarr_format", "valid"):
        assert page.all("section", **{"aria-labelledby": f"facet-{facet}"}), facet
    # the catalogue's size, as the index keeps it, against counts of the graph itself
    counts = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())
    groups = len({str(r.n) for r in cat.query("SELECT DISTINCT ?n WHERE { ?n a zarr:Group }")})
    arrays = len({str(r.n) for r in cat.query("SELECT DISTINCT ?n WHERE { ?n a zarr:Array }")})
    triples = sum(n for iri, n in cat.graphs() if iri in datasets)
    assert (f"{total:,} datasets · {groups:,} groups · {arrays:,} arrays · {triples:,} triples") in counts


def _facet_links(page: Page) -> dict[tuple[str, str], dict[str, str]]:
    out = {}
    for a in page.all("a"):
        href = a.get("href", "")
        if not href.startswith("/?") and href != "/":
            continue
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)
        for key, values in query.items():
            for value in values:
                out[(key, value)] = a
    return out


def test_facet_link_filters_and_is_marked_active(client):
    page = Page(client.get("/").text)
    link = _facet_links(page)[("zarr_format", "2")]
    filtered = client.get(link["href"])
    fpage = check_markup(filtered.text)
    active = [a for a in fpage.all("a") if a.get("aria-current") == "true"]
    assert len(active) == 1 and "zarr_format" not in active[0]["href"]  # toggles the filter off
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", filtered.text)).split())
    assert "3 datasets" in text and "Zarr format: Zarr v2" in text
    results = [a for a in fpage.all("h3") if a.get("class") == "result-title"]
    assert len(results) == 3
    assert fpage.all("span", **{"class": "badge badge-format"})
    # the search form keeps the filter when the text changes
    assert fpage.all("input", type="hidden", name="zarr_format", value="2")
    # removing it again
    back = client.get(active[0]["href"])
    assert len([a for a in Page(back.text).all("h3") if a.get("class") == "result-title"]) > 3


def test_search_text_and_paging(client):
    response = client.get("/", params={"q": "temperature"})
    check_markup(response.text)
    titles = [html.unescape(t) for t in re.findall(r'<h3 class="result-title"><a [^>]*>([^<]*)</a>', response.text)]
    # title matches rank first (then title order), variables-only matches after them
    assert titles[:2] == ["Daily near-surface air temperature and precipitation, July 2021 (synthetic)",
                          "Monthly sea surface temperature and sea-ice fraction, Q1 2022 (synthetic)"]
    assert "Toy regional ocean model output (synthetic)" in titles[2:]
    paged = client.get("/", params={"limit": 2})
    ppage = check_markup(paged.text)
    assert len([a for a in ppage.all("h3") if a.get("class") == "result-title"]) == 2
    nav = ppage.all("nav", **{"aria-label": "Pagination"})
    assert nav
    nxt = next(a for a in ppage.all("a") if a.get("rel") == "next")
    second = check_markup(client.get(nxt["href"]).text)
    assert [a for a in second.all("a") if a.get("aria-current") == "page" and a.get("href", "").startswith("/?")]
    assert "showing 3–4" in client.get(nxt["href"]).text


def test_search_empty_state(client):
    response = client.get("/", params={"q": "no-such-thing-anywhere", "codec": "zstd"})
    page = check_markup(response.text)
    assert "No datasets match" in response.text and "Clear filters" in response.text
    assert page.all("a", **{"aria-label": "Remove filter Codec: zstd"})


def test_empty_catalogue(tmp_path):
    with serve(Settings(db=f"sqlite:///{tmp_path / 'empty.db'}")) as url:
        response = httpx.get(url + "/")
        assert response.status_code == 200
        check_markup(response.text)
        assert "The catalogue is empty" in response.text


# --------------------------------------------------------------------------- HTTP: errors and static files
def _error_page(response: httpx.Response, status: int) -> None:
    assert response.status_code == status, (response.request.url, response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("text/html"), response.headers["content-type"]
    check_markup(response.text)
    assert "Traceback" not in response.text and "File \"" not in response.text


@pytest.mark.parametrize("query, status", [
    ("", 400),
    ("iri=", 400),
    ("iri=nope", 400),
    ("iri=../../etc/passwd", 400),
    ("iri=%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400),
    ("iri=..%252f..%252fetc%252fpasswd", 400),
    ("iri=%ff%fe", 400),
    ("iri=file:///tmp/a%c3", 400),
    ("iri=file:///a%20b", 400),
    ("iri=file:///a%3Cb%3E", 400),
    ("iri=file:///x&iri=file:///y", 400),
    ("iri=" + "a" * 10_000 + ":x", 400),
    ("iri=file:///etc/passwd", 404),
    ("iri=file:///does/not/exist.zarr", 404),
    ("iri=https://example.org/unknown", 404),
    ("iri=urn:zarr-catalogue:harvests", 404),
])
def test_browse_errors_are_html(client, query, status):
    _error_page(client.get("/browse?" + query), status)


def test_browse_non_node_iri_is_404(client, sources):
    _error_page(browse(client, iri_of(sources["wrong_types"]) + "#validation"), 404)


@pytest.mark.parametrize("query", [
    "q=%ff", "limit=abc", "limit=0", "limit=100000", "offset=-1", "sort=bogus", "zarr_format=4",
    "valid=maybe", "harvested_since=yesterday", "q=" + "x" * 600, "dtype=" + "x" * 300, "q=a&q=b",
])
def test_search_errors_are_html(client, query):
    _error_page(client.get("/?" + query), 400)


@pytest.mark.parametrize("query", [
    "q=%00%01", "units=%0A", "q=a%7Fb", "q=a&other=" + "x" * 17_000, "&".join(["codec=c"] * 51),
    "q=" + "+".join(f"w{i}" for i in range(33)),
])
def test_search_page_refuses_what_the_api_refuses(client, query):
    """The search page parses its parameters with /datasets's own rules (control characters,
    query strings over 16,384 bytes, too many values or terms): both answer 400."""
    _error_page(client.get("/?" + query), 400)
    api = client.get("/datasets?" + query)
    assert api.status_code == 400 and api.json()["status"] == 400, api.text[:300]


@pytest.mark.parametrize("path", [
    "/static/../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd", "/static/..%2f..%2fetc%2fpasswd",
    "/static/nope.css", "/static/", "/static/portal.css/../../pyproject.toml",
])
def test_static_traversal_is_refused(client, path):
    response = client.get(path)
    assert response.status_code in (400, 404), path
    assert "[build-system]" not in response.text and "root:" not in response.text


def test_static_files_are_cached(client):
    page = Page(client.get("/").text)
    css = next(a["href"] for a in page.all("link") if a.get("rel") == "stylesheet")
    response = client.get(css)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
    assert "immutable" in response.headers["cache-control"]
    again = client.get(css, headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304
    for name, kind in (("portal.js", "text/javascript"), ("favicon.svg", "image/svg+xml")):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind)
        assert "max-age=300" in r.headers["cache-control"]


# --------------------------------------------------------------------------- Chromium
def _artifact(name: str) -> pathlib.Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


#: The browser tests run once, on the SQLite catalogue (the pages' database access is tested on both above).
sqlite_only = pytest.mark.parametrize("module_db_url", ["sqlite"], indirect=True)


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


class Watched:
    """A browser page whose console errors, page errors, failed requests and HTTP errors are kept."""

    def __init__(self, browser: Any, base: str, **context: Any) -> None:
        self.context = browser.new_context(**context)
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        # ERR_ABORTED is the browser cancelling a request itself (the favicon of a page left
        # for the next one before it came: a flake of the full suite's load), not a failure
        self.page.on("requestfailed", lambda r: r.failure != "net::ERR_ABORTED"
                     and self.problems.append(f"failed: {r.url} {r.failure}"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))

    def shot(self, name: str) -> None:
        self.page.evaluate("window.scrollTo(0, 0)")  # sticky panels where a reader first sees them
        self.page.screenshot(path=str(_artifact(name)), full_page=True)

    def close(self) -> None:
        self.context.close()
        assert not self.problems, self.problems


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


@sqlite_only
def test_browser_search_open_dataset_and_copy(watched, web_server, sources):
    w = watched()
    page = w.page
    page.goto(web_server.base + "/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to main content"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"  # visible focus
    page.fill("#q", "air temperature")
    page.press("#q", "Enter")
    page.wait_for_url(re.compile(r"q=air\+temperature"))
    results = page.locator("h3.result-title a")
    assert results.count() >= 1
    title = "Daily near-surface air temperature and precipitation, July 2021 (synthetic)"
    assert results.first.inner_text() == title
    w.shot("portal-search.png")

    results.first.click()
    page.wait_for_url(re.compile(r"/browse\?iri="))
    assert page.locator("h1").inner_text() == title
    current = page.locator('.tree a[aria-current="page"]')
    assert current.count() == 1 and current.inner_text() == "cf_air_temperature_v3.zarr"
    assert page.locator(".tree a.tree-link").count() == 6
    # open an array from the tree, then copy its Python snippet
    page.locator(".tree a.tree-link", has_text="tas").click()
    page.wait_for_url(re.compile(r"tas$"))
    assert page.locator("h1").inner_text() == "tas"
    button = page.locator('button[data-copy-target="snippet-python"]')
    assert button.is_visible()
    button.click()
    page.wait_for_function("document.querySelector('[data-copy-target=\"snippet-python\"]').textContent === 'Copied'")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.locator("#snippet-python").inner_text()
    assert 'zarr.open_array("' in copied
    w.shot("portal-array.png")


@sqlite_only
def test_browser_facet_filters(watched, web_server):
    w = watched()
    page = w.page
    page.goto(web_server.base + "/")
    all_results = page.locator("h3.result-title").count()
    facet = page.locator("section[aria-labelledby=facet-zarr_format] a", has_text="Zarr v2")
    expected = int(facet.locator(".facet-count").inner_text().split()[0])
    facet.click()
    page.wait_for_url(re.compile(r"zarr_format=2"))
    active = page.locator('section[aria-labelledby=facet-zarr_format] a[aria-current="true"]')
    assert active.count() == 1 and "Zarr v2" in active.inner_text()
    assert page.locator("h3.result-title").count() == expected < all_results
    badges = page.locator(".result .result-meta .badge-format").all_inner_texts()
    assert badges == ["Zarr v2"] * expected
    assert page.locator(".active-filters a").inner_text().startswith("Zarr format: Zarr v2")
    w.shot("portal-facet.png")
    # a second facet narrows further; the first stays active
    page.locator("section[aria-labelledby=facet-valid] a", has_text="Invalid").click()
    page.wait_for_url(re.compile(r"valid=false"))
    assert page.locator(".facet a[aria-current=\"true\"]").count() == 2
    assert page.locator("h3.result-title").inner_text() == "missing_key.zarr"
    # removing the filters brings everything back
    page.locator("a", has_text="Clear filters").first.click()
    page.wait_for_url(web_server.base + "/")
    assert page.locator("h3.result-title").count() == all_results
    # choosing a sort order applies it at once (the script submits the form)
    page.select_option("#sort", "-harvested")
    page.wait_for_url(re.compile(r"sort=-harvested"))
    assert page.locator("#sort").input_value() == "-harvested"


@sqlite_only
def test_browser_sharded_page_and_tree(watched, web_server, sources):
    w = watched()
    page = w.page
    iri = iri_of(sources["ocean_model_v3.zarr"], "ocean/surface/ssh")
    page.goto(web_server.base + "/browse?" + urllib.parse.urlencode({"iri": iri}))
    assert page.locator("h1").inner_text() == "ssh"
    facts = page.locator(".facts").first.inner_text()
    assert "SHARDS" in facts.upper() and "INNER CHUNKS" in facts.upper()
    # the tree shows every node of this small hierarchy, nested, the node highlighted
    assert page.locator('.tree a[aria-current="page"]').inner_text() == "ssh"
    assert page.locator(".tree a.tree-link").count() == 11  # 5 groups, 6 arrays
    assert page.locator(".tree ul ul ul a.tree-link", has_text="ssh").count() == 1
    assert page.locator("button.copy-button:visible").count() >= 4
    w.shot("portal-sharded.png")


@sqlite_only
def test_browser_invalid_and_hostile_pages(watched, web_server, sources):
    w = watched()
    page = w.page
    page.goto(web_server.base + "/browse?" + urllib.parse.urlencode({"iri": iri_of(sources["wrong_types"])}))
    assert page.locator(".badge-bad").first.inner_text() == "Invalid"
    assert "v3.shape" in page.locator("table.findings").inner_text()
    page.goto(web_server.base + "/browse?" + urllib.parse.urlencode({"iri": iri_of(sources["hostile"])}))
    assert page.locator("h1").inner_text() == HOSTILE_TITLE
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    assert page.evaluate("document.querySelectorAll('img').length") == 1  # the logo
    w.shot("portal-hostile.png")


@sqlite_only
def test_browser_phone_dark_mode(watched, web_server, sources):
    w = watched(viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True, has_touch=True)
    page = w.page
    for url, name in (("/", "portal-phone-dark-search.png"),
                      ("/browse?" + urllib.parse.urlencode({"iri": iri_of(sources["cf_air_temperature_v3.zarr"], "tas")}),
                       "portal-phone-dark-array.png")):
        page.goto(web_server.base + url)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{url} scrolls sideways by {overflow}px at 390px"
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(14, 19, 26)", background
        w.shot(name)


@sqlite_only
def test_browser_works_without_javascript(browser, web_server, sources):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(web_server.base + "/?q=ocean")
        page.locator("h3.result-title a").first.click()
        page.wait_for_url(re.compile(r"/browse\?iri="))
        assert page.locator("h1").inner_text() == "Toy regional ocean model output (synthetic)"
        assert page.locator("button.copy-button:visible").count() == 0  # hidden: nothing to copy with
        assert page.locator("#snippet-python").inner_text().startswith("import xarray")
    finally:
        context.close()
