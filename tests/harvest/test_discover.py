"""Folders and buckets of stores: ``catalogue harvest SOURCE`` where SOURCE is not itself a
Zarr node finds every store below it (local folder, loopback S3, an HTTP server with index
pages), each into its own graph; bounds (include/exclude/max-depth/listing limit), prune,
implicit roots, and the lenient cases (``"zarr_format": "2"``, NCZarr's extra keys,
editor backups) and the refused one (the pre-release v3 draft layout).

The fixture is 200 stores at mixed depths written by zarr-python (even: v3, odd: v2),
one broken (its ``zarr.json`` is not JSON), one implicit root (``implicit.zarr`` whose
children have documents, its root none), and folders that hold no store.
"""

from __future__ import annotations

import functools
import http.server
import json
import pathlib
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from urllib.parse import unquote

import pytest

import catalogue
from catalogue.discovery.query import SearchQuery
from catalogue.harvest.discover import discover, expand_sources
from catalogue.harvest.sources import Source, load_sources
from catalogue.storage.opening import open_store

CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))
STORES = 200


def _store_path(i: int) -> str:
    """Mixed depths: 1, 2 or 3 folders below the root."""
    return ["", f"region{i % 4}/", f"region{i % 4}/year{i % 3}/"][i % 3] + f"store{i:03d}.zarr"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> pathlib.Path:
    import zarr

    root = tmp_path_factory.mktemp("stores") / "archive"
    for i in range(STORES):
        group = zarr.open_group(root / _store_path(i), mode="w", zarr_format=3 if i % 2 == 0 else 2)
        group.attrs["title"] = f"Discovered store {i:03d}"
        group.create_array("temperature", shape=(4, 4), chunks=(2, 2), dtype="f4")
    broken = root / "region1" / "broken.zarr"
    broken.mkdir(parents=True)
    (broken / "zarr.json").write_text("{not json")
    implicit = root / "region2" / "implicit.zarr"
    for child in ("left", "right"):
        group = zarr.open_group(implicit / child, mode="w", zarr_format=3)
        group.attrs["title"] = f"Implicit child {child}"
        group.create_array("values", shape=(3,), dtype="i2")
    (root / "empty" / "nothing").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "docs" / "README.txt").write_text("not a store")
    return root


def _graphs(cat) -> set[str]:
    return {g for g, _n in cat.graphs()}


def _store_iris(folder: pathlib.Path) -> set[str]:
    return {(folder / _store_path(i)).as_uri() for i in range(STORES)}


# ------------------------------------------------------------------ discovery itself
def test_discovery_finds_every_store_and_only_stores(folder):
    found = discover(open_store(str(folder)))
    assert found.complete and found.unseen == []
    expected = {_store_path(i) for i in range(STORES)} | {"region1/broken.zarr", "region2/implicit.zarr"}
    assert set(found.stores) == expected
    assert found.implicit == {"region2/implicit.zarr"}
    # stores are not descended into: folders listed are the folders above the stores, the
    # stores themselves (one listing each says they are) and the implicit root's children
    assert found.listings < 300


def test_bounds_choose_stores(folder):
    store = open_store(str(folder))
    top = discover(store, max_depth=1)
    assert set(top.stores) == {_store_path(i) for i in range(0, STORES, 3)}
    only = discover(store, include=("region0/*",))
    assert only.stores and all(p.startswith("region0/") for p in only.stores)
    assert only.excluded == STORES + 2 - len(only.stores)
    without = discover(store, exclude=("region1", "region2"))
    assert not any(p.startswith(("region1/", "region2/")) for p in without.stores)
    limited = discover(store, max_listings=3)
    assert not limited.complete and "raise --max-listings" in limited.unseen[0]


def test_a_store_source_is_harvested_as_named(folder):
    plain = Source(url=str(folder / _store_path(0)))
    assert expand_sources([plain]).entries == [plain]
    refused = Source(url=str(folder), discover=False)
    assert expand_sources([refused]).entries == [refused]


# ------------------------------------------------------------------ harvesting them
def test_harvest_a_folder_of_stores(db_url, folder):
    done = subprocess.run([CATALOGUE, "harvest", str(folder), "--db", db_url, "--jobs", "2"],
                          capture_output=True, text=True, timeout=900)
    # the broken store fails (exit 1) and is named; everything else is catalogued
    assert done.returncode == 1, done.stderr[-2000:]
    assert "broken.zarr/zarr.json" in done.stderr
    assert f"harvested {STORES + 1} of {STORES + 2} sources (1 failed)" in done.stderr
    implicit = (folder / "region2" / "implicit.zarr").as_uri()
    with catalogue.open(db_url) as cat:
        graphs = _graphs(cat)
        assert _store_iris(folder) | {implicit} <= graphs
        assert not any("broken" in g for g in graphs)
        assert cat.search(SearchQuery(q="discovered", limit=1)).total == STORES
        # the implicit root: one dataset, its children under their own IRIs, the root flagged
        assert cat.has_node(f"{implicit}/left/values") and cat.has_node(f"{implicit}/right")
        flagged = cat.query(f"ASK {{ GRAPH <{implicit}> {{ <{implicit}> zarr:implicit true ; zarr:member ?m }} }}")
        assert flagged.askAnswer
        assert [h.iri for h in cat.search(SearchQuery(q="implicit", limit=5)).hits] == [implicit]  # a dataset
    # a second run finds the same stores and changes nothing
    again = subprocess.run([CATALOGUE, "harvest", str(folder), "--db", db_url, "--json"],
                           capture_output=True, text=True, timeout=900)
    report = json.loads(again.stdout)
    done = [s for s in report["sources"] if s["outcome"] != "failed"]
    assert len(done) == STORES + 1 and report["failed_sources"] == 1
    assert sum(s["added"] + s["changed"] + s["removed"] for s in done) == 0


def test_prune_removes_vanished_stores_only_when_asked(sqlite_url, folder, tmp_path):
    copy = tmp_path / "archive"
    shutil.copytree(folder, copy)
    shutil.rmtree(copy / "region1" / "broken.zarr")
    with catalogue.open(sqlite_url) as cat:
        first = cat.harvest_sources([str(copy)])
        assert first.exit_code == 0 and len(first.results) == STORES + 1
        gone = [copy / _store_path(i) for i in (3, 4)]
        for path in gone:
            shutil.rmtree(path)
        kept = cat.harvest_sources([str(copy)])  # no prune: the graphs stay
        assert {p.as_uri() for p in gone} <= _graphs(cat)
        assert kept.exit_code == 0
        # an incomplete discovery prunes nothing
        cat.harvest_sources([Source(url=str(copy), prune=True, max_listings=2)])
        assert {p.as_uri() for p in gone} <= _graphs(cat)
        # out of the bounds: not touched
        cat.harvest_sources([Source(url=str(copy), prune=True, exclude=("*store003*", "*store004*"))])
        assert {p.as_uri() for p in gone} <= _graphs(cat)
        pruned = cat.harvest_sources([Source(url=str(copy), prune=True)])
        assert pruned.exit_code == 0
        assert f"harvested {STORES - 1} of {STORES - 1} sources, removed 2 that are gone (4 nodes)" in pruned.summary()
        removed = [r for r in pruned.results if r.report is not None and r.report.run.outcome == "removed"]
        assert sorted(r.source.url for r in removed) == sorted(p.as_uri() for p in gone)
        assert not {p.as_uri() for p in gone} & _graphs(cat)
        assert cat.search(SearchQuery(q="discovered", limit=1)).total == STORES - 2
        status = {s.source: s.outcome for s in cat.harvest_status()}
        assert {status[p.as_uri()] for p in gone} == {"removed"}
        # a store that comes back is harvested again
        shutil.copytree(folder / _store_path(3), gone[0])
        cat.harvest_sources([Source(url=str(copy), prune=True)])
        assert gone[0].as_uri() in _graphs(cat)


def test_sources_file_discovery_keys(tmp_path, folder):
    config = tmp_path / "sources.toml"
    config.write_text(f'[[source]]\nurl = "{folder}"\nname = "archive"\ndiscover = true\nprune = true\n'
                      f'include = ["region0/*"]\nmax_depth = 2\nmax_listings = 500\n')
    [entry] = load_sources(config)
    assert (entry.discover, entry.prune, entry.max_listings, entry.max_depth) == (True, True, 500, 2)
    expanded = expand_sources([entry])
    assert expanded.entries and all(e.url.startswith(str(folder / "region0") + "/") for e in expanded.entries)
    assert all(e.name.startswith("archive/region0/") and e.include == () for e in expanded.entries)
    config.write_text(f'[[source]]\nurl = "{folder}"\nprune = "yes"\n')
    with pytest.raises(catalogue.errors.UsageError, match=r"source\[1\]\.prune: expected true or false"):
        load_sources(config)


def test_nothing_below_is_one_clear_error(sqlite_url, folder):
    done = subprocess.run([CATALOGUE, "harvest", str(folder / "empty"), "--db", sqlite_url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "not a Zarr store, and no store found below it (2 folders listed)" in done.stderr
    assert "no Zarr metadata found" in done.stderr
    with catalogue.open(sqlite_url) as cat:  # the failed run is recorded, as for any source
        assert [s.outcome for s in cat.harvest_status()] == ["failed"]
    done = subprocess.run([CATALOGUE, "harvest", str(folder / "empty"), "--no-discover", "--db", sqlite_url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "no Zarr metadata found (expected" in done.stderr


# ------------------------------------------------------------------ S3 and HTTP
def test_harvest_a_bucket_prefix_of_stores(s3, folder, sqlite_url):
    bucket = s3.bucket()
    s3.upload(folder / "region0", f"s3://{bucket}/archive/region0")
    s3.upload(folder / "region2", f"s3://{bucket}/archive/region2")
    expected = {p for i in range(STORES) if (p := _store_path(i)).startswith(("region0/", "region2/"))}
    with catalogue.open(sqlite_url) as cat:
        batch = cat.harvest_sources([Source(url=f"s3://{bucket}/archive", storage_options=s3.storage_options)])
        assert batch.exit_code == 0, [r.error for r in batch.results if r.error]
        graphs = _graphs(cat)
        assert {f"s3://{bucket}/archive/{p}" for p in expected} <= graphs
        assert f"s3://{bucket}/archive/region2/implicit.zarr" in graphs
        assert len(batch.results) == len(expected) + 1
    # The storage options given to the whole harvest (the API's keyword) reach the discovery too
    with catalogue.open(sqlite_url + "-2") as cat:
        batch = cat.harvest_sources([f"s3://{bucket}/archive/region0"], storage_options=s3.storage_options)
        assert batch.exit_code == 0, [r.error for r in batch.results if r.error]
        assert {f"s3://{bucket}/archive/{p}" for p in expected if p.startswith("region0/")} <= _graphs(cat)


@pytest.fixture
def index_server(folder) -> Iterator[str]:
    """Python's own http.server over the folder: index pages for folders, as Apache's or
    nginx's autoindex give them."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:
        pass


def test_harvest_an_http_index_of_stores(index_server, sqlite_url):
    with catalogue.open(sqlite_url) as cat:
        batch = cat.harvest_sources([f"{index_server}/region0"])
        expected = {p for i in range(STORES) if (p := _store_path(i)).startswith("region0/")}
        assert batch.exit_code == 0, [r.error for r in batch.results if r.error]
        assert {f"{index_server}/{p}" for p in expected} <= _graphs(cat)
        assert len(batch.results) == len(expected)


# ------------------------------------------------------------------ lenient and refused
def test_lenient_documents_are_catalogued_with_findings(sqlite_url, tmp_path):
    store = tmp_path / "nczarr.zarr"
    (store / "var").mkdir(parents=True)
    (store / ".zgroup").write_text(json.dumps({"zarr_format": "2", "_nczarr_group": {"dims": {"x": 4}}}))
    (store / ".zattrs").write_text(json.dumps({"title": "NCZarr written"}))
    (store / ".zattrs~").write_text("{an editor's backup")
    (store / "var" / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f4", "compressor": None, "fill_value": None,
        "filters": None, "order": "C", "_nczarr_array": {"dimrefs": ["/x"]}}))
    (store / "var" / ".zarray.bak").write_text("{}")
    with catalogue.open(sqlite_url) as cat:
        report = cat.harvest(str(store))
        assert report.ok and report.groups == 1 and report.arrays == 1
        rules = {f.rule for f in report.validation.findings}
        assert {"format.string", "v2.nczarr"} <= rules  # NCZarr's keys in .zgroup and .zarray
        assert {f.pointer for f in report.validation.findings if f.rule == "v2.nczarr"} == {
            "/_nczarr_group", "/_nczarr_array"}
        assert not report.validation.errors  # warnings only: the nodes stay valid
        assert cat.documents(store.as_uri())[".zgroup"]["zarr_format"] == "2"  # kept as written
        # The editor's copies are not read (one is not even JSON) and each is named, beside the
        # group (its folder is listed) and beside the array (asked for by name: never listed)
        copies = {(f.path, f.file) for f in report.validation.findings if f.rule == "document.backup"}
        assert copies == {("", (store / ".zattrs~").as_uri()), ("var", (store / "var" / ".zarray.bak").as_uri())}
        assert "editor's copy of .zarray" in next(f.message for f in report.validation.findings if f.path == "var"
                                                   and f.rule == "document.backup")
        # Stored as the node's validation result, which a later harvest keeps up to date
        (store / ".zattrs~").unlink()
        (store / "var" / "#.zattrs#").write_text("{")
        again = cat.harvest(str(store))
        assert {(f.path, f.file) for f in again.validation.findings if f.rule == "document.backup"} == {
            ("var", (store / "var" / ".zarray.bak").as_uri())}  # #.zattrs# is not a name that is asked for
        assert again.run.changed == 0  # a copy is not metadata: no node changed, only the report
        rows = cat.query("""PREFIX sh: <http://www.w3.org/ns/shacl#>
            SELECT ?focus WHERE { GRAPH ?g { ?r sh:focusNode ?focus ;
                sh:sourceConstraintComponent <https://w3id.org/zarr-catalogue/rules#document.backup> } }""")
        assert {str(row[0]) for row in rows} == {store.as_uri() + "/var"}


def test_copies_of_documents_are_named_beside_v3_nodes_and_in_buckets(s3, sqlite_url, tmp_path):
    import zarr

    store = tmp_path / "edited.zarr"
    group = zarr.open_group(store, mode="w", zarr_format=3)
    group.create_array("t", shape=(4,), chunks=(2,), dtype="f4")
    group.create_group("sub").create_array("u", shape=(2,), dtype="i2")
    for name in ("zarr.json~", "zarr.json.orig", ".zarr.json.swp", "zarr.json.notes"):
        (store / name).write_text("{}")
    (store / "sub" / ".#zarr.json").write_text("")
    (store / "t" / "zarr.json.bak").write_text("{}")
    expected = {("", "zarr.json~"), ("", "zarr.json.orig"), ("", ".zarr.json.swp"), ("sub", ".#zarr.json"),
                ("t", "zarr.json.bak")}  # zarr.json.notes is somebody's file, not a copy
    with catalogue.open(sqlite_url) as cat:
        report = cat.harvest(str(store))
        found = {(f.path, unquote(f.file.rsplit("/", 1)[1])) for f in report.validation.findings
                 if f.rule == "document.backup"}
        assert found == expected
    # In a bucket the group folders are listed as on disk; array folders are not (a request each)
    bucket = s3.bucket()
    s3.upload(store, f"s3://{bucket}/edited.zarr")
    with catalogue.open(sqlite_url + "-s3") as cat:
        report = cat.harvest(f"s3://{bucket}/edited.zarr", storage_options=s3.storage_options)
        assert report.ok
        found = {(f.path, unquote(f.file.rsplit("/", 1)[1])) for f in report.validation.findings
                 if f.rule == "document.backup"}
        assert found == expected - {("t", "zarr.json.bak")}
        assert any(f.message.startswith(".#zarr.json looks like an editor's copy of zarr.json")
                   for f in report.validation.findings)
        # A copy appearing changes the bucket's state (its listing): the re-harvest sees it
        s3.filesystem().pipe_file(f"{bucket}/edited.zarr/sub/zarr.json.bak", b"{}")
        again = cat.harvest(f"s3://{bucket}/edited.zarr", storage_options=s3.storage_options)
        assert not again.unchanged and again.run.changed == 0
        assert ("sub", "zarr.json.bak") in {(f.path, unquote(f.file.rsplit("/", 1)[1]))
                                            for f in again.validation.findings if f.rule == "document.backup"}
        assert cat.harvest(f"s3://{bucket}/edited.zarr", storage_options=s3.storage_options).unchanged


def test_v3_draft_layout_is_refused_by_name(sqlite_url, tmp_path):
    store = tmp_path / "draft.zarr"
    (store / "meta").mkdir(parents=True)
    url = "https://purl.org/zarr/spec/protocol/core/3.0"
    (store / "zarr.json").write_text(json.dumps({"zarr_format": url, "metadata_encoding": url,
                                                 "metadata_key_suffix": ".json", "extensions": []}))
    (store / "meta" / "root.group.json").write_text(json.dumps({"attributes": {}}))
    done = subprocess.run([CATALOGUE, "harvest", str(store), "--db", sqlite_url], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1
    assert "pre-release Zarr v3 draft layout" in done.stderr and str(store) in done.stderr
    with catalogue.open(sqlite_url) as cat:
        assert store.as_uri() not in _graphs(cat)


# ------------------------------------------------------------------ what a prune must never remove
def _group(path: pathlib.Path, title: str, zarr_format: int = 3) -> None:
    import zarr

    group = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    group.attrs["title"] = title
    group.create_array("v", shape=(2,), dtype="i2")


def test_prune_keeps_stores_whose_names_need_escaping(sqlite_url, tmp_path):
    data = tmp_path / "data"
    names = ["run(1).zarr", "a+b.zarr", "year=2024/x y.zarr", "été.zarr", "plain.zarr"]
    for name in names:
        _group(data / name, name)
    with catalogue.open(sqlite_url) as cat:
        assert cat.harvest_sources([str(data)]).exit_code == 0
        direct = {(data / n).as_uri() for n in names}
        assert direct <= _graphs(cat)  # the IRIs a harvest of each store on its own gives
        pruned = cat.harvest_sources([Source(url=str(data), prune=True)])
        assert not [r for r in pruned.results if r.report is not None and r.report.run.outcome == "removed"]
        assert direct <= _graphs(cat)
        runs = {s.source for s in cat.harvest_status()}
        assert direct <= runs  # the run's source is the graph's IRI: one lock per store


def test_prune_keeps_graphs_inside_found_stores_and_with_no_store_found(sqlite_url, tmp_path):
    data = tmp_path / "data"
    _group(data / "big.zarr", "big")
    _group(data / "big.zarr" / "sub", "sub")
    _group(data / "other.zarr", "other")
    with catalogue.open(sqlite_url) as cat:
        cat.harvest_sources([str(data / "big.zarr" / "sub")])  # a group harvested on its own
        cat.harvest_sources([str(data)])
        before = _graphs(cat)
        cat.harvest_sources([Source(url=str(data), prune=True)])
        assert _graphs(cat) == before
        # an unmounted disk lists as an empty folder: nothing is found, nothing removed
        (tmp_path / "away").mkdir()
        data.rename(tmp_path / "away" / "data")
        data.mkdir()
        cat.harvest_sources([Source(url=str(data), prune=True)])
        assert _graphs(cat) == before


def test_withdraw_asks_again_under_the_lock(sqlite_url, tmp_path):
    from catalogue.harvest.discover import is_gone
    from catalogue.harvest.run import withdraw_source

    store = tmp_path / "back.zarr"
    _group(store, "back")
    with catalogue.open(sqlite_url) as cat:
        cat.harvest(str(store))
        assert not is_gone(str(store))
        assert withdraw_source(cat._records, str(store), store.as_uri(), still_gone=lambda: is_gone(str(store))) is None
        assert store.as_uri() in _graphs(cat)
        shutil.rmtree(store)
        assert is_gone(str(store))
        report = withdraw_source(cat._records, str(store), store.as_uri(), still_gone=lambda: is_gone(str(store)))
        assert report is not None and report.run.outcome == "removed" and store.as_uri() not in _graphs(cat)


def test_symlink_loops_are_not_followed(tmp_path):
    data = tmp_path / "data"
    _group(data / "a" / "s.zarr", "s")
    (data / "a" / "up").symlink_to("..")
    (data / "self").symlink_to(".")
    (data / "outside").symlink_to(tmp_path)
    found = discover(open_store(str(data)))
    assert found.stores == ["a/s.zarr"] and found.complete


def test_implicit_roots_as_the_reader_reads_them(sqlite_url, tmp_path):
    data = tmp_path / "data"
    _group(data / "archive.zarr" / "2024" / "s1", "deep one")  # not an implicit root: too deep
    _group(data / "shallow.zarr" / "child", "a child")  # an implicit root, found past --max-depth 1
    found = discover(open_store(str(data)), max_depth=1)
    assert found.stores == ["shallow.zarr"] and found.implicit == {"shallow.zarr"}
    found = discover(open_store(str(data)))
    assert found.stores == ["archive.zarr/2024/s1", "shallow.zarr"]
    with catalogue.open(sqlite_url) as cat:
        assert cat.harvest_sources([str(data)]).exit_code == 0
        assert {(data / "archive.zarr" / "2024" / "s1").as_uri(), (data / "shallow.zarr").as_uri()} <= _graphs(cat)
    done = subprocess.run([CATALOGUE, "harvest", str(data / "shallow.zarr"), "--no-discover", "--db", sqlite_url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "no Zarr metadata found" in done.stderr


def test_a_catalogued_store_that_lost_its_root_document_is_not_a_folder_of_stores(sqlite_url, tmp_path):
    store = tmp_path / "mystore"
    _group(store, "mine")
    _group(store / "g", "a group")
    with catalogue.open(sqlite_url) as cat:
        cat.harvest_sources([str(store)])
        (store / "zarr.json").unlink()
        batch = cat.harvest_sources([str(store)])
        assert batch.exit_code == 1 and "no Zarr metadata found" in str(batch.results[0].error)
        assert _graphs(cat) >= {store.as_uri()} and (store / "g").as_uri() not in _graphs(cat)


def test_v2_array_with_format_as_string_is_valid(sqlite_url, tmp_path):
    store = tmp_path / "s.zarr"
    (store / "a").mkdir(parents=True)
    (store / ".zgroup").write_text(json.dumps({"zarr_format": 2}))
    (store / "a" / ".zarray").write_text(json.dumps({
        "zarr_format": "2", "shape": [4], "chunks": [4], "dtype": "<f4", "compressor": None, "fill_value": None,
        "filters": None, "order": "C"}))
    with catalogue.open(sqlite_url) as cat:
        report = cat.harvest(str(store))
        assert report.ok and report.invalid == 0
        assert [f.rule for f in report.validation.findings] == ["format.string"]
