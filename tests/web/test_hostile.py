"""Every endpoint and parameter against hostile input, and overload: 4xx or 503, never a 500.

The parameters come from the server's own OpenAPI document (plus the portal's
routes, which it does not list), so an endpoint added later is covered too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

import catalogue
from catalogue.web.settings import Settings
from tests.support.paths import EXAMPLES
from tests.support.webserver import WebServer, harvest, serve, serve_catalogue

HOSTILE = [
    "../../../../etc/passwd",
    "..%2f..%2f..%2fetc%2fpasswd",
    "%2e%2e/%2e%2e/pyproject.toml",
    "file:///etc/passwd",
    "http://169.254.169.254/latest/meta-data/",
    "%ff%fe%00",
    "\x00\x01\x7f",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "(" * 5000,
    "{" * 5000,
    "-1",
    "99999999999999999999999999",
    "1e400",
    "A" * 20_000,
    "",
]

#: Routes the OpenAPI document leaves out (HTML pages), with their parameters.
PORTAL = {"/": ["q", "dtype", "dimension", "standard_name", "units", "zarr_format", "codec", "valid",
                "harvested_since", "limit", "offset", "sort"],
          "/browse": ["iri"]}


@pytest.fixture(scope="module")
def short_timeout_server(tmp_path_factory) -> Iterator[WebServer]:
    """A server over two examples whose queries time out after 5 s (the default is 30 s)."""
    db = str(tmp_path_factory.mktemp("hostile") / "c.db")
    sources = [EXAMPLES / store for store in ("cf_air_temperature_v3.zarr", "cf_sea_surface_v2.zarr")]
    harvest(db, sources)
    with serve_catalogue(db, sources, query_timeout=5) as server:
        yield server


def _targets(base: str) -> list[tuple[str, str]]:
    doc = httpx.get(f"{base}/openapi.json").json()
    out = []
    for path, methods in doc["paths"].items():
        operation = methods.get("get")
        if operation is None:
            continue
        for param in operation.get("parameters", []):
            if param["in"] == "query":
                out.append((path, param["name"]))
    out += [(path, name) for path, names in PORTAL.items() for name in names]
    return out


def _check(response: httpx.Response) -> None:
    assert response.status_code < 500, (response.request.url, response.status_code, response.text[:300])
    body = response.text
    assert "Traceback" not in body and 'File "' not in body, body[:300]
    assert "root:x:0:0" not in body  # /etc/passwd never served


def test_every_parameter_of_every_endpoint(short_timeout_server):
    targets = _targets(short_timeout_server.base)
    assert len(targets) > 25 and ("/datasets", "q") in targets and ("/node", "iri") in targets
    with httpx.Client(base_url=short_timeout_server.base, timeout=30) as http:
        for path, name in targets:
            for value in HOSTILE:
                # values with percent-escapes go as written (invalid UTF-8, encoded dots), others encoded
                query = f"{name}={value}" if "%" in value else str(httpx.QueryParams({name: value}))
                _check(http.get(f"{path}?{query}"))


@pytest.mark.parametrize("path", [
    "/static/../../pyproject.toml", "/static/%2e%2e/%2e%2e/pyproject.toml", "/static/..%2f..%2fpyproject.toml",
    "/%2e%2e/%2e%2e/etc/passwd", "/node/..%2f..%2fetc%2fpasswd", "/static/%00", "/" + "a/" * 2000,
    "/export/../../../etc/passwd",
])
def test_path_traversal(short_timeout_server, path):
    with httpx.Client(base_url=short_timeout_server.base, timeout=30) as http:
        response = http.get(httpx.URL(short_timeout_server.base + path), follow_redirects=False)
        _check(response)
        assert response.status_code >= 400 or "[project]" not in response.text


def test_bodies(short_timeout_server):
    with httpx.Client(base_url=short_timeout_server.base, timeout=30) as http:
        for content_type in ("application/sparql-query", "application/x-www-form-urlencoded", "application/json",
                             "text/plain; charset=utf-16", "multipart/form-data; boundary=x"):
            for body in (b"\xff\xfe\x00", b"query=" + b"(" * 5000, b"{" * 5000, b""):
                _check(http.post("/sparql", content=body, headers={"Content-Type": content_type}))
        too_big = http.post("/sparql", content=b"x" * 2_000_000, headers={"Content-Type": "application/sparql-query"})
        assert too_big.status_code == 413 and too_big.json()["status"] == 413


def test_overload_is_shed_with_503_not_queued_forever(tmp_path):
    """One connection, a slow query holding it: others wait at most queue_timeout, then get 503."""
    db = str(tmp_path / "c.db")
    with catalogue.open(db) as cat:
        cat.harvest(str(EXAMPLES / "cf_air_temperature_v3.zarr"))
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    with serve(Settings(db=db, workers=1, queue_timeout=0.3, query_timeout=4)) as base:
        for params in ({}, {"q": "air"}):  # answers kept by the server: no connection needed again
            assert httpx.get(f"{base}/datasets", params=params, timeout=30).status_code == 200
        hog = threading.Thread(target=lambda: httpx.get(f"{base}/sparql", params={"query": slow}, timeout=30))
        hog.start()
        time.sleep(0.5)
        began = time.monotonic()
        shed = httpx.get(f"{base}/health", timeout=30)
        waited = time.monotonic() - began
        assert shed.status_code == 503 and shed.headers["Retry-After"] == "1", shed.text
        assert waited < 2, waited
        assert httpx.get(f"{base}/datasets", params={"q": "air"}, timeout=30).status_code == 200  # kept
        assert httpx.get(f"{base}/datasets", params={"q": "new"}, timeout=30).status_code == 503  # needs the DB
        hog.join(30)
        assert httpx.get(f"{base}/health", timeout=30).status_code == 200  # recovered


def test_cors_is_off_by_default_and_configurable(tmp_path):
    db = str(tmp_path / "c.db")
    catalogue.open(db).close()
    origin = {"Origin": "https://portal.example.org"}
    preflight = {**origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    with serve(Settings(db=db)) as base:
        response = httpx.get(f"{base}/datasets", headers=origin)
        assert response.status_code == 200 and "access-control-allow-origin" not in response.headers
    with serve(Settings(db=db, cors_origins=("https://portal.example.org",))) as base:
        response = httpx.get(f"{base}/datasets", headers=origin)
        assert response.headers["access-control-allow-origin"] == "https://portal.example.org"
        allowed = httpx.options(f"{base}/sparql", headers=preflight)
        assert allowed.status_code == 200 and "POST" in allowed.headers["access-control-allow-methods"]
        other = httpx.get(f"{base}/datasets", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
    with serve(Settings(db=db, cors_origins=("*",))) as base:
        response = httpx.get(f"{base}/sparql", params={"query": "ASK {}"}, headers=origin)
        assert response.headers["access-control-allow-origin"] == "*"


def _answers_within(seconds: float, call) -> object:
    """``call()`` on a thread; fails (instead of hanging the run) if it takes longer than ``seconds``."""
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"no answer within {seconds} s"
    return out[0]


@pytest.mark.parametrize("pattern", ["^(a+)+$", "(a|aa)+$", ".*.*.*.*x"])
def test_catastrophic_regular_expressions_cannot_freeze_the_server(short_timeout_server, pattern):
    """REGEX runs on RE2 (linear time): Python's backtracking re would take hours on these."""
    text = "a" * 5000 + "!"
    query = f'ASK {{ FILTER(REGEX("{text}", "{pattern}")) }}'
    response = _answers_within(10, lambda: httpx.get(f"{short_timeout_server.base}/sparql", params={"query": query}, timeout=60))
    assert response.status_code == 200 and response.json()["boolean"] is False
    select = ('SELECT ?t WHERE { ?d dct:title ?t FILTER(REGEX(CONCAT(?t, "' + text + '"), "' + pattern + '")) }')
    response = _answers_within(10, lambda: httpx.get(f"{short_timeout_server.base}/sparql", params={"query": select}, timeout=60))
    assert response.status_code == 200 and response.json()["results"]["bindings"] == []


def test_backreferences_are_an_error_like_an_invalid_pattern(short_timeout_server):
    """RE2 has no backreferences: such a pattern never matches, as an invalid one never does."""
    for pattern in ("(a)\\\\1", "(a"):
        query = f'SELECT ?d WHERE {{ ?d dct:title ?t FILTER(REGEX(?t, "{pattern}")) }}'
        response = httpx.get(f"{short_timeout_server.base}/sparql", params={"query": query}, timeout=30)
        assert response.status_code == 200 and response.json()["results"]["bindings"] == [], response.text


def test_an_unterminated_string_full_of_escapes_is_refused_quickly(short_timeout_server):
    """The bracket-depth scan is linear (it was quadratic in the regular expression it replaced)."""
    body = ('"\\' * 50_000).encode()
    response = _answers_within(10, lambda: httpx.post(
        f"{short_timeout_server.base}/sparql", content=body, headers={"Content-Type": "application/sparql-query"}, timeout=60))
    assert response.status_code == 400


@pytest.mark.parametrize("path", ["/sparql", "/datasets", "/catalog", "/health", "/", "/openapi.json",
                                  "/export?format=nquads"])
def test_head_answers_like_get_without_a_body(short_timeout_server, path):
    with httpx.Client(base_url=short_timeout_server.base, timeout=30) as http:
        got, head = http.get(path), http.head(path)
        assert head.status_code == got.status_code == 200, (path, head.status_code)
        assert head.headers["content-type"] == got.headers["content-type"] and head.content == b""


def test_host_header_never_builds_redirects_or_links(short_timeout_server):
    iri = (EXAMPLES / "cf_air_temperature_v3.zarr").as_uri() + "/tas"
    response = httpx.get(f"{short_timeout_server.base}/node", params={"iri": iri}, timeout=30,
                         headers={"Host": "evil.example", "Accept": "text/html"})
    assert response.status_code == 303
    assert "evil.example" not in response.headers["location"] and "evil.example" not in response.headers["link"]


def test_chunk_listings_are_capped(tmp_path):
    """A selection of more chunks than max_results is a 413 before any key is built or the store listed."""
    import json as jsonlib

    store = tmp_path / "big.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(jsonlib.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [3000, 3000], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 1]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}))
    db = str(tmp_path / "c.db")
    with catalogue.open(db) as cat:
        cat.harvest(str(store))
        cat.harvest(str(EXAMPLES / "cf_air_temperature_v3.zarr"))
    with serve(Settings(db=db, workers=1, stream_workers=1, queue_timeout=0.5, max_results=1000)) as base:
        capped = _answers_within(10, lambda: httpx.get(f"{base}/node/chunks", params={"iri": store.as_uri()},
                                                        timeout=30))
        assert capped.status_code == 413 and "9,000,000 chunks" in capped.json()["error"]
        small = httpx.get(f"{base}/node/chunks", params={"iri": store.as_uri(), "selection": "0,0:10"}, timeout=30)
        assert small.status_code == 200 and small.json()["chunk_count"] == 10
        assert httpx.get(f"{base}/export", params={"format": "nquads"}, timeout=30).status_code == 200


def test_a_stream_held_open_does_not_take_connections_from_requests(tmp_path):
    """The pool's two lanes: a stream whose reader stopped holds a stream connection only."""
    import asyncio

    from catalogue.web.http.pool import CataloguePool, Overloaded

    db = str(tmp_path / "c.db")
    with catalogue.open(db) as cat:
        cat.harvest(str(EXAMPLES / "cf_air_temperature_v3.zarr"))

    async def scenario() -> None:
        pool = CataloguePool(db, size=1, queue_timeout=0.2, stream_size=1)
        pool.open()
        try:
            held = pool.stream(lambda cat: iter(range(3)))
            assert await held.__anext__() == 0  # the reader stops here, holding the stream lane
            assert await pool.run(lambda cat: len(cat.graphs())) == 1  # requests go on
            with pytest.raises(Overloaded):
                await pool.stream(lambda cat: iter(range(3))).__anext__()
            await held.aclose()  # the client went away: the connection comes back
            assert [x async for x in pool.stream(lambda cat: iter(range(3)))] == [0, 1, 2]
        finally:
            pool.close()

    asyncio.run(scenario())
