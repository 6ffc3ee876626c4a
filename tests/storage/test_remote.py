"""Harvesting from http(s):// and s3:// stores, against real servers on 127.0.0.1.

The HTTP server (tests/support/servers.py) serves folders written by zarr-python and
xarray, answers 404 for anything else and cannot list folders, like a static
file server; it can fail, refuse or hang on chosen paths. The S3 server is
moto in server mode, written to by zarr-python through s3fs. The yardstick
for every remote harvest is the harvest of the same store from local disk:
same nodes, same documents, same content fingerprints.
"""

from __future__ import annotations

import hashlib
import pathlib
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
import zarr
from click.testing import CliRunner

import catalogue
from catalogue.errors import DocumentError, SourceUnavailable, UsageError
from catalogue.harvest import load_hierarchy
from catalogue.harvest.fingerprints import canonical_fingerprint, fingerprint_documents
from catalogue.model.nodes import Hierarchy
from catalogue.storage.opening import open_store
from tests.support import servers, stores

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

CONSOLIDATED = ("xarray_cf_v2", "xarray_cf_v3", "zarr_v3_consolidated_nested")
WALKED = ("zarr_v2_plain", "zarr_v3_deep", "tensorstore_arrays", "dependent_arrays")


def _server_threads() -> set[threading.Thread]:
    """Threads of the test servers (listener, request handlers, moto)."""
    names = ("http_server:", "process_request_thread", "_server_entry")
    return {t for t in threading.enumerate() if any(n in t.name for n in names)}


@pytest.fixture
def faulty(good_stores) -> Iterator[servers.HTTPServerControl]:
    """A private HTTP server over ``good_stores`` for tests that inject faults or count requests."""
    with servers.http_server(next(iter(good_stores.values())).parent) as control:
        yield control


def assert_same(remote: Hierarchy, here: Hierarchy, *, fingerprints: bool = True) -> None:
    """Two harvests of one store agree node by node (documents, kinds, members, fingerprints)."""
    assert sorted(remote.nodes) == sorted(here.nodes)
    assert sorted(remote.failed) == sorted(here.failed)
    assert remote.zarr_format == here.zarr_format and remote.consolidated == here.consolidated
    for path, node in here.nodes.items():
        other = remote.nodes[path]
        assert other.kind == node.kind, path
        assert other.documents == node.documents, path
        assert other.members == node.members, path
        assert {k: v.pointer for k, v in other.locations.items()} == {k: v.pointer for k, v in node.locations.items()}
        assert other.fingerprint and len(other.fingerprint) == 32
        if fingerprints:
            assert other.fingerprint == node.fingerprint, path
    for path in remote.nodes:
        assert remote.iri(path).startswith(remote.url)


# ------------------------------------------------------------------ HTTP
@pytest.mark.parametrize("name", CONSOLIDATED)
def test_http_consolidated_store_matches_local(name, good_stores, http_store):
    url = f"{http_store.url}/{name}.zarr"
    h = load_hierarchy(url)
    assert h.url == url and h.consolidated and not h.undiscovered
    assert_same(h, load_hierarchy(str(good_stores[name])))
    main = h.nodes[""].location.url
    assert main.startswith(url + "/") and main.rsplit("/", 1)[-1] in ("zarr.json", ".zmetadata")


@pytest.mark.parametrize("name", WALKED)
def test_http_without_consolidated_metadata_reads_the_root_and_says_what_is_missing(name, good_stores, http_store):
    url = f"{http_store.url}/{name}.zarr/"  # a trailing slash is not part of the IRI
    h = load_hierarchy(url)
    assert h.url == url.rstrip("/")
    assert set(h.nodes) == {""} and not h.failed and not h.consolidated
    if h.nodes[""].kind == "group":
        (message,) = h.undiscovered
        assert message.startswith(f"{h.url}: the store cannot be listed and has no consolidated metadata")
        assert "nodes = [...]" in message
    assert not h.nodes[""].members


@pytest.mark.parametrize("name", WALKED)
def test_http_explicit_nodes_are_found(name, good_stores, http_store):
    here = load_hierarchy(str(good_stores[name]))
    leaves = [p for p in here.nodes if p and here.nodes[p].primary is None]
    h = load_hierarchy(f"{http_store.url}/{name}.zarr", nodes=leaves)
    assert not h.undiscovered
    assert_same(h, here)


def test_http_explicit_leaves_imply_their_parents(good_stores, http_store):
    h = load_hierarchy(f"{http_store.url}/zarr_v3_deep.zarr", nodes=["/group1/group2/int8_gzip/"])
    assert sorted(h.nodes) == ["", "group1", "group1/group2", "group1/group2/int8_gzip"]
    assert h.nodes["group1"].members == ["group1/group2"]


def test_http_explicit_node_that_is_missing_is_reported(good_stores, http_store):
    url = f"{http_store.url}/zarr_v2_plain.zarr"
    h = load_hierarchy(url, nodes=["temperature", "nope", "temperature/inside_an_array"])
    assert sorted(h.nodes) == ["", "temperature"]
    assert sorted(h.undiscovered) == [
        f"{url}/nope: listed under nodes but not found (no metadata there, or a parent is missing or is an array)",
        f"{url}/temperature/inside_an_array: listed under nodes but not found "
        "(no metadata there, or a parent is missing or is an array)",
    ]


def test_http_each_document_is_requested_once_and_404s_are_not_retried(good_stores, faulty):
    here = load_hierarchy(str(good_stores["zarr_v2_plain"]))
    load_hierarchy(f"{faulty.url}/zarr_v2_plain.zarr", nodes=[p for p in here.nodes if p])
    assert faulty.counts and max(faulty.counts.values()) == 1, faulty.counts
    assert faulty.counts["zarr_v2_plain.zarr/zarr.json"] == 1  # a 404, not retried
    assert {m for m, _ in faulty.log} == {"GET"}  # no HEAD before each GET
    chunks = [p for p in faulty.counts if not p.rsplit("/", 1)[-1].startswith((".z", "zarr.json"))]
    assert not chunks, "only metadata documents are requested"


def test_http_a_level_is_fetched_concurrently_within_the_bound(good_stores, faulty):
    here = load_hierarchy(str(good_stores["zarr_v2_plain"]))
    nodes = [p for p in here.nodes if p]
    faulty.delay = 0.3
    h = load_hierarchy(f"{faulty.url}/zarr_v2_plain.zarr", nodes=nodes)
    assert_same(h, here)
    # level 1 has five candidates with three documents each: all fifteen at once
    assert faulty.max_in_flight >= 10, faulty.max_in_flight
    faulty.reset_counts()
    started = time.monotonic()
    load_hierarchy(f"{faulty.url}/zarr_v2_plain.zarr", nodes=nodes, concurrency=4)
    assert 2 <= faulty.max_in_flight <= 4, faulty.max_in_flight
    # one request at a time would take 23 x 0.3 = 6.9 s; four at a time about 2.4 s
    assert time.monotonic() - started < 5.5


def test_http_server_errors_are_retried(good_stores, faulty):
    faulty.fail_times["xarray_cf_v2.zarr/.zmetadata"] = 2
    h = load_hierarchy(f"{faulty.url}/xarray_cf_v2.zarr")
    assert h.consolidated and "air" in h.nodes
    assert faulty.counts["xarray_cf_v2.zarr/.zmetadata"] == 3


@pytest.mark.parametrize("status", [429, 502, 503])
def test_http_throttling_and_gateway_errors_are_retried_then_reported(good_stores, faulty, status):
    faulty.status["xarray_cf_v2.zarr/.zmetadata"] = status
    with pytest.raises(SourceUnavailable) as info:
        load_hierarchy(f"{faulty.url}/xarray_cf_v2.zarr", retries=2)
    message = str(info.value)
    assert message == (f"{faulty.url}/xarray_cf_v2.zarr/.zmetadata: unavailable after 3 attempts: "
                       f"HTTP {status} {info.value.reason.rsplit(str(status), 1)[-1].strip()}")
    assert faulty.counts["xarray_cf_v2.zarr/.zmetadata"] == 3
    assert "\n" not in message


def test_http_hanging_root_is_a_bounded_one_line_error(good_stores, faulty):
    faulty.hang.add("zarr_v3_deep.zarr/zarr.json")
    started = time.monotonic()
    with pytest.raises(SourceUnavailable) as info:
        load_hierarchy(f"{faulty.url}/zarr_v3_deep.zarr", timeout=1, retries=1)
    elapsed = time.monotonic() - started
    assert 2.0 <= elapsed < 15, elapsed  # two attempts of one second, then it gives up
    assert str(info.value) == (
        f"{faulty.url}/zarr_v3_deep.zarr/zarr.json: unavailable after 2 attempts: timed out after 1 s"
    )
    assert faulty.counts["zarr_v3_deep.zarr/zarr.json"] == 2


def test_http_hanging_node_fails_alone(good_stores, faulty):
    faulty.hang.add("zarr_v3_deep.zarr/group1/group2/int8_gzip/zarr.json")
    here = load_hierarchy(str(good_stores["zarr_v3_deep"]))
    started = time.monotonic()
    h = load_hierarchy(f"{faulty.url}/zarr_v3_deep.zarr", nodes=list(here.nodes), timeout=1, retries=0)
    assert time.monotonic() - started < 15
    assert set(h.failed) == {"group1/group2/int8_gzip"}
    assert set(h.nodes) == set(here.nodes) - {"group1/group2/int8_gzip"}
    error = h.failed["group1/group2/int8_gzip"]
    assert isinstance(error, DocumentError) and error.rule == "document.unreadable"
    assert str(error) == f"{faulty.url}/zarr_v3_deep.zarr/group1/group2/int8_gzip/zarr.json: " \
                         "unavailable after 1 attempt: timed out after 1 s"
    assert "group1/group2/int8_gzip" in h.nodes["group1/group2"].members  # failed nodes stay members


def test_http_unreachable_source(good_stores):
    url = servers.closed_port_url() + "/store.zarr"
    started = time.monotonic()
    with pytest.raises(SourceUnavailable) as info:
        load_hierarchy(url, retries=2)
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert message.startswith(f"{url}/zarr.json: unavailable after 3 attempts: cannot connect")
    assert info.value.whole_source and "\n" not in message


def test_http_unreachable_source_through_the_cli_is_one_error_line(db_url):
    from catalogue.cli import main

    url = servers.closed_port_url() + "/store.zarr"
    result = CliRunner().invoke(main, ["harvest", url, "--db", db_url])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and url in errors[0] and "cannot connect" in errors[0]


def test_http_access_denied_is_not_retried(good_stores, faulty):
    for name in ("zarr.json", ".zmetadata", ".zarray", ".zgroup", ".zattrs"):
        faulty.status[f"xarray_cf_v2.zarr/{name}"] = 401
    with pytest.raises(SourceUnavailable) as info:
        load_hierarchy(f"{faulty.url}/xarray_cf_v2.zarr")
    assert info.value.denied
    assert str(info.value).startswith(f"{faulty.url}/xarray_cf_v2.zarr/zarr.json: access denied: HTTP 401")
    assert "storage_options" in str(info.value)
    assert max(faulty.counts.values()) == 1


def test_http_403_for_missing_keys_does_not_stop_a_readable_store(good_stores, faulty):
    """Buckets that forbid anonymous listing answer 403, not 404, for keys that do not exist."""
    faulty.status["zarr_v2_plain.zarr/zarr.json"] = 403
    faulty.status["zarr_v2_plain.zarr/.zmetadata"] = 403
    faulty.status["zarr_v2_plain.zarr/temperature/.zgroup"] = 403
    here = load_hierarchy(str(good_stores["zarr_v2_plain"]))
    h = load_hierarchy(f"{faulty.url}/zarr_v2_plain.zarr", nodes=[p for p in here.nodes if p])
    assert_same(h, here)


def test_http_document_size_limit(good_stores, http_store):
    """The limit holds over HTTP too: a node's document beyond it fails that node; the root's stops the harvest."""
    url = f"{http_store.url}/zarr_v3_deep.zarr"
    h = load_hierarchy(url, nodes=["group1/group2/sharded_f64", "group1/group2/int8_gzip"], max_document_bytes=1000)
    assert set(h.failed) == {"group1/group2/sharded_f64"} and "group1/group2/int8_gzip" in h.nodes
    error = h.failed["group1/group2/sharded_f64"]
    assert error.rule == "json.too-large"
    assert str(error) == (f"{url}/group1/group2/sharded_f64/zarr.json: document is larger than the limit of "
                          "1,000 bytes (see --max-document-size)")
    with pytest.raises(DocumentError) as info:
        load_hierarchy(url, max_document_bytes=1)  # the root zarr.json may hold consolidated metadata: 64 x
    assert info.value.rule == "json.too-large" and "limit of 64 bytes" in str(info.value)


def test_http_store_access(good_stores, http_store):
    store = open_store(f"{http_store.url}/zarr_v3_deep.zarr")
    assert not store.listable and store.remote
    assert store.child_folders("") == [] and store.list_keys() is None
    assert store.read("nope.json") is None
    assert store.exists("zarr.json") and not store.exists("nope.json")
    disk = good_stores["zarr_v3_deep"] / "group1" / "group2" / "sharded_f64" / "c" / "0" / "1"
    key = "group1/group2/sharded_f64/c/0/1"
    got = store.read_ranges([key, key, key, "group1/missing"], [None, 3, -5, None], [None, 10, None, None])
    data = disk.read_bytes()
    assert got == [data, data[3:10], data[-5:], None]
    many = store.read_many(["zarr.json", "nope", "group1/zarr.json"])
    assert many[0] == (good_stores["zarr_v3_deep"] / "zarr.json").read_bytes() and many[1] is None


def test_open_store_rejects_bad_sources():
    for source in ("ftp://example.org/x.zarr", "http://127.0.0.1:1/x.zarr?sig=1", "s3://", "http:///x"):
        with pytest.raises(UsageError):
            open_store(source)
    with pytest.raises(UsageError):
        open_store("http://127.0.0.1:1/x.zarr", retries=-1)
    assert open_store("http://127.0.0.1:1/a b/x.zarr/").url == "http://127.0.0.1:1/a%20b/x.zarr"


# -------------------------------------------------- HTTP through the API
@pytest.mark.parametrize("name", ["xarray_cf_v2", "xarray_cf_v3"])
def test_http_harvest_and_read_through_the_catalogue(name, good_stores, http_store, tmp_path):
    url = f"{http_store.url}/{name}.zarr"
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        report = cat.harvest(url)
        assert report.ok and report.graph == url and report.arrays == 4
        assert url in {str(g) for g, *_ in cat.graphs()}
        got = cat.read(f"{url}/air")
        assert cat.documents(f"{url}/air") == load_hierarchy(str(good_stores[name])).nodes["air"].documents
    expected = zarr.open_array(good_stores[name] / "air", mode="r")[...]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("name", "path"), [("zarr_v3_deep", "group1/group2/sharded_f64"),
                                            ("zarr_v3_deep", "group1/group2/bigendian_f16"),
                                            ("tensorstore_arrays", "zarr3_sharded"),
                                            ("zarr_v2_plain", "temperature")])
def test_http_chunk_reads_equal_zarr_python(name, path, good_stores, http_store):
    """Chunks and shard indexes (suffix ranges, index at start or end) over HTTP."""
    from catalogue.chunks.layout import layout_from_documents
    from catalogue.chunks.read import read_selection

    h = load_hierarchy(f"{http_store.url}/{name}.zarr", nodes=[path])
    iri = h.iri(path)
    layout = layout_from_documents(h.nodes[path].documents, iri, iri)
    got = read_selection(layout, open_store(iri), None)
    fmt = 3 if "zarr.json" in h.nodes[path].documents else 2
    expected = zarr.open_array(good_stores[name] / path, mode="r", zarr_format=fmt)[...]
    np.testing.assert_array_equal(got, expected)


def test_http_chunk_reads_from_a_server_that_ignores_ranges(good_stores, faulty):
    """A server answering 200 with the whole file still gives the right shard index and chunks."""
    from catalogue.chunks.layout import layout_from_documents
    from catalogue.chunks.read import read_selection

    faulty.ignore_ranges = True
    path = "group1/group2/sharded_f64"
    h = load_hierarchy(f"{faulty.url}/zarr_v3_deep.zarr", nodes=[path])
    iri = h.iri(path)
    got = read_selection(layout_from_documents(h.nodes[path].documents, iri, iri), open_store(iri), None)
    np.testing.assert_array_equal(got, zarr.open_array(good_stores["zarr_v3_deep"] / path, mode="r")[...])


def test_http_subgroup_consolidated_metadata_names_its_children(tmp_path):
    """Without root consolidated metadata, a sub-group's own still shows its subtree over HTTP."""
    store = tmp_path / "sub.zarr"
    root = zarr.open_group(store, mode="w", zarr_format=3)
    a = root.create_group("a")
    a.create_group("b").create_array("c", shape=(2,), dtype="i1")
    a.create_array("x", shape=(2,), dtype="i1")
    root.create_array("y", shape=(2,), dtype="i1")
    zarr.consolidate_metadata(store, path="a")
    with servers.http_server(tmp_path) as control:
        h = load_hierarchy(f"{control.url}/sub.zarr", nodes=["a"])
    assert sorted(h.nodes) == ["", "a", "a/b", "a/b/c", "a/x"]  # "y" is nobody's consolidated child
    assert not h.undiscovered and not h.consolidated


def test_classify_http_errors():
    """aiohttp's exceptions, as fsspec's HTTPFileSystem lets them through."""
    import socket

    import aiohttp
    from multidict import CIMultiDict, CIMultiDictProxy
    from yarl import URL

    from catalogue.storage.failures import Failure as _Failure
    from catalogue.storage.failures import classify

    info = aiohttp.RequestInfo(URL("http://h/x"), "GET", CIMultiDictProxy(CIMultiDict()), URL("http://h/x"))

    def status(code: int) -> BaseException:
        return aiohttp.ClientResponseError(info, (), status=code, message="m")

    key = aiohttp.client_reqrep.ConnectionKey("h", 80, False, True, None, None, None)
    expected = {
        404: _Failure.ABSENT, 410: _Failure.ABSENT, 416: _Failure.EMPTY, 401: _Failure.DENIED,
        403: _Failure.DENIED, 429: _Failure.TRANSIENT, 500: _Failure.TRANSIENT, 503: _Failure.TRANSIENT,
        400: _Failure.FATAL,
    }
    for code, kind in expected.items():
        assert classify(status(code), 1)[0] is kind, code
    dns = aiohttp.ClientConnectorDNSError(key, socket.gaierror(-2, "Name or service not known"))
    assert classify(dns, 1) == (_Failure.CONNECT, "cannot connect: Name or service not known")
    refused = aiohttp.ClientConnectorError(key, ConnectionRefusedError(111, "Connection refused"))
    assert classify(refused, 1)[0] is _Failure.CONNECT
    assert classify(aiohttp.ServerDisconnectedError(), 1)[0] is _Failure.TRANSIENT
    assert classify(ConnectionResetError(104, "reset"), 1)[0] is _Failure.TRANSIENT
    assert classify(TimeoutError(), 2.5) == (_Failure.TRANSIENT, "timed out after 2.5 s")
    assert classify(FileNotFoundError("x"), 1)[0] is _Failure.ABSENT
    assert classify(ValueError("odd"), 1) == (_Failure.FATAL, "ValueError: odd")


# -------------------------------------------------------------------- S3
@pytest.mark.parametrize("name", ["xarray_cf_v2", "zarr_v2_plain", "zarr_v3_deep", "dependent_arrays"])
def test_s3_uploaded_store_matches_local(name, good_stores, s3):
    url = s3.upload(good_stores[name], f"s3://{s3.bucket()}/stores/{name}.zarr")
    h = load_hierarchy(url, storage_options=s3.storage_options)
    here = load_hierarchy(str(good_stores[name]))
    assert h.url == url and not h.undiscovered  # S3 lists: no consolidated metadata needed
    assert_same(h, here, fingerprints=False)
    for path, node in here.nodes.items():
        if node.kind == "array" or h.consolidated:  # arrays: content hashes, as locally
            assert h.nodes[path].fingerprint == node.fingerprint, path


def test_s3_group_fingerprints_use_listed_etags(good_stores, s3):
    url = s3.upload(good_stores["zarr_v3_deep"], f"s3://{s3.bucket()}/deep.zarr")
    h = load_hierarchy(url, storage_options=s3.storage_options)
    md5 = hashlib.md5((good_stores["zarr_v3_deep"] / "zarr.json").read_bytes()).hexdigest()
    assert h.nodes[""].fingerprint == fingerprint_documents({"zarr.json": f"etag:{md5}".encode()})
    again = load_hierarchy(url, storage_options=s3.storage_options)
    assert {p: n.fingerprint for p, n in again.nodes.items()} == {p: n.fingerprint for p, n in h.nodes.items()}


def test_s3_store_written_by_zarr_python(s3):
    url = f"s3://{s3.bucket()}/written.zarr"
    root = zarr.open_group(url, mode="w", storage_options=s3.storage_options, attributes={"title": "t"})
    temp = root.create_array("temperature", shape=(6, 4), chunks=(3, 2), dtype="f4", fill_value=np.nan,
                             dimension_names=["y", "x"], attributes={"units": "K"})
    temp[:] = np.arange(24, dtype="f4").reshape(6, 4)
    root.create_group("sub", attributes={"k": 1}).create_array("counts", shape=(5,), chunks=(5,), dtype="i2")
    _close_zarr_s3_session(root)
    h = load_hierarchy(url, storage_options=s3.storage_options)
    assert sorted(h.nodes) == ["", "sub", "sub/counts", "temperature"]
    fs = s3.filesystem()
    import json

    for path, node in h.nodes.items():
        key = f"{url[len('s3://'):]}/{path}/zarr.json" if path else f"{url[len('s3://'):]}/zarr.json"
        assert node.documents == {"zarr.json": json.loads(fs.cat_file(key))}, path
    assert h.nodes["temperature"].attributes == {"units": "K"}
    store = open_store(url, storage_options=s3.storage_options)
    assert {"temperature/c/0/0", "zarr.json"} <= store.list_keys()
    assert store.child_folders("") == ["sub", "temperature"]


def _close_zarr_s3_session(group: zarr.Group) -> None:
    """Close the aiobotocore client of zarr-python's asynchronous s3fs instance.

    zarr's ``Store.close()`` leaves it open, and its garbage collection later
    warns "Unclosed client session" in whichever test happens to be running.
    """
    from zarr.core.sync import sync

    client = getattr(group.store.fs, "_s3", None)  # type: ignore[attr-defined]
    if client is not None:
        sync(client.close())


def test_s3_missing_bucket_and_missing_store(s3):
    with pytest.raises(SourceUnavailable) as info:
        load_hierarchy(f"s3://no-such-bucket-{time.time_ns()}/x.zarr", storage_options=s3.storage_options)
    assert str(info.value).endswith("/x.zarr/zarr.json: the bucket does not exist")
    from catalogue.errors import HierarchyError

    with pytest.raises(HierarchyError, match="no Zarr metadata found"):
        load_hierarchy(f"s3://{s3.bucket()}/nothing-here.zarr", storage_options=s3.storage_options)


def test_s3_unreachable_endpoint(s3):
    options = dict(s3.storage_options, endpoint_url=servers.closed_port_url())
    started = time.monotonic()
    with pytest.raises(SourceUnavailable) as info:
        load_hierarchy("s3://bucket/x.zarr", storage_options=options, timeout=2, retries=1)
    assert time.monotonic() - started < 15
    assert str(info.value).startswith("s3://bucket/x.zarr/zarr.json: unavailable after 2 attempts: cannot connect")


def test_s3_wrong_credentials(s3, good_stores):
    # moto's server accepts any key and secret unless IAM enforcement is set up before it
    # starts (INITIAL_NO_AUTH_ACTION_COUNT), so refused credentials cannot be shown here;
    # the HTTP 401 test covers how a refusal is reported, and test_classify_s3_errors
    # covers the mapping of S3's error codes.
    url = s3.upload(good_stores["zarr_v3_lone_array"], f"s3://{s3.bucket()}/lone.zarr")
    h = load_hierarchy(url, storage_options=dict(s3.storage_options, key="wrong", secret="wrong"))
    assert set(h.nodes) == {""}


def test_classify_s3_errors():
    """S3 error codes as botocore raises them, wrapped by s3fs as it does."""
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError
    from s3fs.errors import translate_boto_error

    from catalogue.storage.failures import Failure as _Failure
    from catalogue.storage.failures import classify

    def s3_error(code: str, status: int) -> BaseException:
        error = ClientError({"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}},
                            "GetObject")
        return translate_boto_error(error)

    cases = {
        ("NoSuchKey", 404): _Failure.ABSENT,
        ("NoSuchBucket", 404): _Failure.GONE,
        ("AccessDenied", 403): _Failure.DENIED,
        ("InvalidAccessKeyId", 403): _Failure.DENIED,
        ("SignatureDoesNotMatch", 403): _Failure.DENIED,
        ("SlowDown", 503): _Failure.TRANSIENT,
        ("InternalError", 500): _Failure.TRANSIENT,
        ("InvalidRange", 416): _Failure.EMPTY,
        ("InvalidArgument", 400): _Failure.FATAL,
    }
    for (code, status), expected in cases.items():
        assert classify(s3_error(code, status), 1)[0] is expected, code
    assert classify(EndpointConnectionError(endpoint_url="http://x"), 1)[0] is _Failure.CONNECT
    assert classify(NoCredentialsError(), 1)[0] is _Failure.DENIED
    assert classify(TimeoutError(), 1) == (_Failure.TRANSIENT, "timed out after 1 s")


def test_s3_harvest_and_read_through_the_catalogue(good_stores, s3, tmp_path, monkeypatch):
    """Catalogue.harvest/read take s3 settings from the environment (they pass no storage_options)."""
    import s3fs

    url = s3.upload(good_stores["xarray_cf_v2"], f"s3://{s3.bucket()}/cf.zarr")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3.secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", s3.region)
    s3fs.S3FileSystem.clear_instance_cache()  # cached instances keep the environment they were made in
    try:
        with catalogue.open(str(tmp_path / "c.db")) as cat:
            report = cat.harvest(url)
            assert report.ok and report.graph == url
            got = cat.read(f"{url}/air")
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
    np.testing.assert_array_equal(got, zarr.open_array(good_stores["xarray_cf_v2"] / "air", mode="r")[...])


# ------------------------------------------------------ selection (good_stores)
def test_exclude_skips_nodes_and_their_subtrees_unread(good_stores, monkeypatch):
    from catalogue.storage.access import StoreAccess

    reads: list[str] = []
    original = StoreAccess.read

    def counting(self, key, **kwargs):
        reads.append(key)
        return original(self, key, **kwargs)

    monkeypatch.setattr(StoreAccess, "read", counting)
    h = load_hierarchy(str(good_stores["zarr_v3_deep"]), exclude=["group1/group2/*_f*"])
    assert sorted(h.nodes) == ["", "group1", "group1/group2", "group1/group2/bool_dotted",
                               "group1/group2/complex_scalar", "group1/group2/int8_gzip"]
    assert not [k for k in reads if "_f" in k]
    assert h.nodes["group1/group2"].members == ["group1/group2/bool_dotted", "group1/group2/complex_scalar",
                                                 "group1/group2/int8_gzip"]
    reads.clear()
    h = load_hierarchy(str(good_stores["zarr_v3_deep"]), exclude=["group1"])
    assert list(h.nodes) == [""] and h.nodes[""].members == []
    assert not [k for k in reads if k.startswith("group1")]


def test_include_keeps_matches_and_their_ancestors(good_stores):
    h = load_hierarchy(str(good_stores["zarr_v3_deep"]), include=["*/bool_dotted", "nothing*"])
    assert sorted(h.nodes) == ["", "group1", "group1/group2", "group1/group2/bool_dotted"]
    assert h.nodes["group1/group2"].members == ["group1/group2/bool_dotted"]
    h = load_hierarchy(str(good_stores["zarr_v3_deep"]), include=["no-match"])
    assert list(h.nodes) == [""] and h.nodes[""].members == []


def test_max_depth(good_stores, monkeypatch):
    store = str(good_stores["zarr_v3_deep"])
    assert list(load_hierarchy(store, max_depth=0).nodes) == [""]
    assert sorted(load_hierarchy(store, max_depth=1).nodes) == ["", "group1"]
    assert sorted(load_hierarchy(store, max_depth=2).nodes) == ["", "group1", "group1/group2"]
    assert len(load_hierarchy(store, max_depth=3).nodes) == len(stores.GOOD_NODES["zarr_v3_deep"])
    with pytest.raises(UsageError):
        load_hierarchy(store, max_depth=-1)


def test_selection_applies_to_consolidated_metadata(good_stores):
    store = str(good_stores["zarr_v3_consolidated_nested"])
    assert sorted(load_hierarchy(store, exclude=["a/b"]).nodes) == ["", "a", "a/x", "empty"]
    assert sorted(load_hierarchy(store, include=["a/b/c"]).nodes) == ["", "a", "a/b", "a/b/c"]
    assert sorted(load_hierarchy(store, max_depth=1).nodes) == ["", "a", "empty"]
    h = load_hierarchy(str(good_stores["xarray_cf_v2"]), exclude=["l*"])
    assert sorted(h.nodes) == ["", "air", "time"] and h.nodes[""].members == ["air", "time"]


# ---------------------------------------------------------- fingerprints
def test_fingerprints_are_content_hashes(good_stores, tmp_path):
    import shutil

    store = pathlib.Path(shutil.copytree(good_stores["zarr_v2_plain"], tmp_path / "f.zarr"))
    before = {p: n.fingerprint for p, n in load_hierarchy(str(store)).nodes.items()}
    assert len(set(before.values())) == len(before)  # every node its own
    assert before == {p: n.fingerprint for p, n in load_hierarchy(str(store)).nodes.items()}
    attrs = store / "temperature" / ".zattrs"
    attrs.write_text(attrs.read_text().replace('"degC"', '"K"'))
    after = {p: n.fingerprint for p, n in load_hierarchy(str(store)).nodes.items()}
    assert {p for p in before if before[p] != after[p]} == {"temperature"}
    raw = {name: (store / "counts" / name).read_bytes() for name in (".zarray", ".zattrs")}
    assert after["counts"] == fingerprint_documents(raw)


def test_consolidated_and_dependent_fingerprints_are_canonical_json(good_stores):
    h = load_hierarchy(str(good_stores["xarray_cf_v3"]))
    assert all(n.fingerprint == canonical_fingerprint(n) for n in h.nodes.values())
    h = load_hierarchy(str(good_stores["dependent_arrays"]))
    dependents = [n for n in h.nodes.values() if n.primary is not None]
    assert dependents and all(n.fingerprint == canonical_fingerprint(n) for n in dependents)


# ----------------------------------------------------------------- hygiene
def test_servers_leave_no_threads_behind(good_stores):
    before = _server_threads()
    with servers.http_server(next(iter(good_stores.values())).parent) as control:
        control.hang.add("zarr_v3_deep.zarr/zarr.json")
        with pytest.raises(SourceUnavailable):
            load_hierarchy(f"{control.url}/zarr_v3_deep.zarr", timeout=0.5, retries=0)
        load_hierarchy(f"{control.url}/xarray_cf_v2.zarr")  # leaves a keep-alive connection open
    with servers.s3_server() as s3:
        s3.bucket("hygiene")
    assert not _server_threads() - before  # nothing started here is still running (earlier tests' may end meanwhile)


def test_s3_read_and_resolve_take_storage_options_from_the_sources_file(good_stores, s3, tmp_path, monkeypatch):
    """No credentials in the environment: harvest and chunk reads both use the sources file's options."""
    from catalogue.cli import main

    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    url = s3.upload(good_stores["xarray_cf_v2"], f"s3://{s3.bucket()}/cf.zarr")
    config = tmp_path / "sources.toml"
    opts = s3.storage_options
    config.write_text(
        f'[[source]]\nurl = "{url}"\nstorage_options = {{ endpoint_url = "{opts["endpoint_url"]}", '
        f'key = "{opts["key"]}", secret = "{opts["secret"]}", client_kwargs = {{ region_name = "{s3.region}" }} }}\n'
    )
    db = str(tmp_path / "c.db")
    runner = CliRunner()
    assert runner.invoke(main, ["harvest", "--config", str(config), "--db", db]).exit_code == 0
    out = tmp_path / "air.npy"
    result = runner.invoke(main, ["read", f"{url}/air", "--selection", "0:2", "-o", str(out),
                                                "--config", str(config), "--db", db])
    assert result.exit_code == 0, result.output
    np.testing.assert_array_equal(np.load(out), zarr.open_array(good_stores["xarray_cf_v2"] / "air", mode="r")[0:2])
    result = runner.invoke(main, ["resolve", f"{url}/air", "--selection", "0", "--config", str(config),
                                                "--db", db])
    assert result.exit_code == 0 and '"fill": false' in result.stdout


def test_storage_options_for_picks_the_longest_containing_source():
    from catalogue.harvest.sources import Source, storage_options_for

    sources = [Source(url="s3://b/", storage_options={"a": 1}), Source(url="s3://b/x.zarr", storage_options={"a": 2}),
               Source(url="s3://b/x.zarr2", storage_options={"a": 3})]
    assert storage_options_for(sources, "s3://b/x.zarr/air") == {"a": 2}
    assert storage_options_for(sources, "s3://b/y.zarr") == {"a": 1}
    assert storage_options_for(sources, "s3://c/y.zarr") is None
