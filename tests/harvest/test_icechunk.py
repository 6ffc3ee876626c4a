"""Icechunk repositories as sources: every branch and tag head (and, with ``--history``,
each branch's latest snapshots) catalogued as a version of one dataset in its own graph,
with DCAT 3 version links and the snapshot's PROV (id, parent, time, message); an
unchanged version costs one look at its ref; reads go through Icechunk's store (checked
against what was written); a repository with virtual chunks over a NetCDF file written by
xarray records its chunk container and reads through it (checked against xarray).

The repository is written with the ``icechunk`` package: on ``main`` five commits (the
empty initial one, then four), a ``dev`` branch from the second with a commit of its own,
and a tag ``v1.0`` on the third.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import warnings
from unittest import mock
from urllib.parse import urlencode

import numpy as np
import pytest
from rdflib import DCTERMS, PROV, XSD, Literal, Namespace, URIRef

import catalogue
from catalogue.chunks.layout import UnsupportedArray
from catalogue.rdf.rebuild import NodeNotFound

ic = pytest.importorskip("icechunk")
zarr = pytest.importorskip("zarr")

CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))
DCAT = Namespace("http://www.w3.org/ns/dcat#")
ADMS = Namespace("http://www.w3.org/ns/adms#")
ZARR = Namespace("https://w3id.org/zarr-catalogue/vocab#")
DATA = np.arange(64, dtype="f4").reshape(8, 8)


def _commit(repo, branch: str, message: str, change) -> str:
    session = repo.writable_session(branch)
    change(session.store)
    return session.commit(message)


def _retitle(title: str):
    def change(store) -> None:
        zarr.open_group(store, mode="r+").attrs["title"] = title
    return change


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("icechunk") / "climate.icechunk"
    repo = ic.Repository.create(ic.local_filesystem_storage(str(path)))

    def create(store) -> None:
        group = zarr.group(store=store, attributes={"title": "Climate, first"})
        group.create_array("temperature", shape=(8, 8), chunks=(4, 4), dtype="f4", fill_value=np.nan)

    def write(store) -> None:
        zarr.open_array(store, path="temperature", mode="r+")[:] = DATA

    def add(store) -> None:
        zarr.open_group(store, mode="r+").create_array("pressure", shape=(8,), chunks=(8,), dtype="i2")

    first = _commit(repo, "main", "create the hierarchy", create)
    second = _commit(repo, "main", "retitle", _retitle("Climate, second"))
    third = _commit(repo, "main", "write the temperatures", write)
    _commit(repo, "main", "add pressure", add)
    repo.create_branch("dev", second)
    _commit(repo, "dev", "dev work", _retitle("Climate, development"))
    repo.create_tag("v1.0", third)
    assert first
    return path


def _repo(path: pathlib.Path):
    return ic.Repository.open(ic.local_filesystem_storage(str(path)))


def _ancestry(path: pathlib.Path, branch: str) -> list:
    return list(_repo(path).ancestry(branch=branch))


def test_branches_and_tags_are_versions_of_one_dataset(repository, db_url):
    url = repository.as_uri()
    cat = catalogue.open(db_url)
    try:
        report = cat.harvest_sources([str(repository)])
        assert report.exit_code == 0, report.summary()
        graphs = {g for g, _n in cat.graphs()}
        assert graphs == {f"{url}@main", f"{url}@dev", f"{url}@v1.0"}
        titles = {}
        for ref, kind in (("main", "branch"), ("dev", "branch"), ("v1.0", "tag")):
            version = URIRef(f"{url}@{ref}")
            graph = cat.node_graph(str(version))
            head = next(iter(_repo(repository).ancestry(branch=ref) if kind == "branch"
                             else _repo(repository).ancestry(tag=ref)))
            assert (URIRef(url), DCAT.hasVersion, version) in graph
            assert (version, DCAT.isVersionOf, URIRef(url)) in graph
            assert graph.value(version, DCAT.version) == Literal(ref)
            assert graph.value(version, ZARR.versionKind) == Literal(kind)
            assert str(graph.value(version, ZARR.snapshot)) == head.id
            assert graph.value(version, PROV.wasRevisionOf) == URIRef(f"{url}@{head.parent_id}")
            assert str(graph.value(version, ADMS.versionNotes)) == head.message
            assert graph.value(version, PROV.generatedAtTime).toPython() == head.written_at
            titles[ref] = str(graph.value(version, DCTERMS.title))
        assert titles == {"main": "Climate, second", "dev": "Climate, development", "v1.0": "Climate, second"}
        # each version's own hierarchy: main has the pressure array added after the tag
        assert cat.layout(f"{url}@main/pressure").shape == (8,)
        with pytest.raises(NodeNotFound):
            cat.layout(f"{url}@v1.0/pressure")
    finally:
        cat.close()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_portal_and_dcat_show_a_datasets_versions(repository, db_url):
    """A version's page says which version it is and links the others; /catalog says it in DCAT 3."""
    from fastapi.testclient import TestClient
    from rdflib import Graph

    from catalogue.harvest.sources import Source
    from catalogue.web.app import create_app
    from catalogue.web.settings import Settings

    url = repository.as_uri()
    with catalogue.open(db_url) as cat:
        assert cat.harvest_sources([Source(url=str(repository), history=2)]).exit_code == 0
    main, dev, tag = (f"{url}@{ref}" for ref in ("main", "dev", "v1.0"))
    heads = {ref: _ancestry(repository, ref)[0] for ref in ("main", "dev")}
    with TestClient(create_app(Settings(db=db_url)), raise_server_exceptions=False) as client:
        page = client.get("/browse", params={"iri": main})
        assert page.status_code == 200, page.text[:300]
        html = page.text
        assert 'id="versions-table"' in html and "This is the branch" in html
        assert heads["main"].id in html and "add pressure" in html  # its snapshot and commit message
        for other in (dev, tag):
            assert f'href="/browse?{urlencode({"iri": other})}"' in html  # the others, linked
        assert 'aria-current="page"' in html
        # the ancestry: main's parent is catalogued (history 2), so "written over" links it
        parent = f"{url}@{heads['main'].parent_id}"
        assert f'href="/browse?{urlencode({"iri": parent})}"' in html
        assert client.get("/browse", params={"iri": parent}).status_code == 200
        # the code opens the version through Icechunk (the @ref URL is not a path zarr opens)
        assert "readonly_session(branch=\"main\")" in _snippet(html)
        # a node below the root is not a dataset page: no versions there, but its code opens the version
        below = client.get("/browse", params={"iri": f"{tag}/temperature"}).text
        assert 'id="versions-table"' not in below
        code = _snippet(below)
        assert 'readonly_session(tag="v1.0")' in code and 'path="temperature"' in code
        # ... and that code runs, reading what was written at the tag
        namespace: dict = {}
        exec(code, namespace)  # the page's own snippet, run as a user would
        assert namespace["node"].shape == (8, 8)
        np.testing.assert_array_equal(namespace["node"][:], DATA)
        catalog = client.get("/catalog", params={"format": "turtle", "page_size": 50})
        assert catalog.status_code == 200, catalog.text[:300]
    dcat = Graph().parse(data=catalog.text, format="turtle")
    for ref, iri in (("main", main), ("dev", dev), ("v1.0", tag)):
        assert (URIRef(iri), DCAT.isVersionOf, URIRef(url)) in dcat
        assert (URIRef(url), DCAT.hasVersion, URIRef(iri)) in dcat
        assert dcat.value(URIRef(iri), DCAT.version) == Literal(ref)
    assert dcat.value(URIRef(main), DCAT.previousVersion) == URIRef(parent)
    assert str(dcat.value(URIRef(dev), ADMS.versionNotes)) == "dev work"


def _snippet(html: str) -> str:
    """The Python snippet's code on a portal page, unescaped."""
    import html as html_module
    import re

    found = re.search(r'Python \(icechunk, zarr-python\).*?<pre[^>]*><code[^>]*>(.*?)</code>', html, re.S)
    assert found, "no icechunk snippet on the page"
    return html_module.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_unchanged_versions_cost_one_look_and_a_new_commit_is_seen(repository, tmp_path):
    copy = tmp_path / "copy.icechunk"
    subprocess.run(["cp", "-r", str(repository), str(copy)], check=True)
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        cat.harvest_sources([str(copy)])
        from catalogue.storage import opening as module

        opened = []
        real = module.open_icechunk
        with mock.patch.object(module, "open_icechunk", side_effect=lambda *a, **k: opened.append(a[0]) or real(*a, **k)):
            again = cat.harvest_sources([str(copy)])
        assert [r["outcome"] for r in again.as_json()["sources"]] == ["unchanged"] * 3, again.as_json()
        # one look at the repository (its refs and their snapshots), no version opened
        assert opened == [str(copy)], opened
        _commit(_repo(copy), "main", "retitle again", _retitle("Climate, third"))
        outcomes = {r["graph"]: r["outcome"] for r in cat.harvest_sources([str(copy)]).as_json()["sources"]}
        assert outcomes == {f"{copy.as_uri()}@main": "succeeded", f"{copy.as_uri()}@dev": "unchanged",
                            f"{copy.as_uri()}@v1.0": "unchanged"}
        graph = cat.node_graph(f"{copy.as_uri()}@main")
        main = URIRef(f"{copy.as_uri()}@main")
        assert str(graph.value(main, DCTERMS.title)) == "Climate, third"
        # what the previous run said of the version is replaced, not added to
        for prop in (ZARR.snapshot, PROV.generatedAtTime, PROV.wasRevisionOf, ADMS.versionNotes, DCAT.version):
            assert len(list(graph.objects(main, prop))) == 1, prop
        assert str(graph.value(main, ADMS.versionNotes)) == "retitle again"

        # a branch that moves on after the harvest is read at the snapshot catalogued
        def overwrite(store) -> None:
            zarr.open_array(store, path="temperature", mode="r+")[:] = DATA + 1

        _commit(_repo(copy), "main", "new data", overwrite)
        np.testing.assert_array_equal(cat.read(f"{copy.as_uri()}@main/temperature"), DATA)
    finally:
        cat.close()


def test_a_deleted_branch_is_pruned_only_with_prune(repository, tmp_path):
    from catalogue.harvest.sources import Source

    copy = tmp_path / "copy.icechunk"
    subprocess.run(["cp", "-r", str(repository), str(copy)], check=True)
    url = copy.as_uri()
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        cat.harvest_sources([str(copy)])
        _repo(copy).delete_branch("dev")
        cat.harvest_sources([str(copy)])  # without prune: the version stays catalogued
        assert {g for g, _n in cat.graphs()} == {f"{url}@main", f"{url}@dev", f"{url}@v1.0"}
        report = cat.harvest_sources([Source(url=str(copy), prune=True)])
        assert report.exit_code == 0, report.summary()
        assert {g for g, _n in cat.graphs()} == {f"{url}@main", f"{url}@v1.0"}
        removed = [r for r in report.as_json()["sources"] if r["outcome"] == "removed"]
        assert [r["graph"] for r in removed] == [f"{url}@dev"]
        # the dataset no longer lists the version
        versions = cat.query(f"SELECT ?v WHERE {{ <{url}> <{DCAT.hasVersion}> ?v }}")
        assert {str(v) for (v,) in versions} == {f"{url}@main", f"{url}@v1.0"}
    finally:
        cat.close()


def test_the_expansions_token_is_not_taken_from_callers(repository, tmp_path):
    """Only the expansion of a repository gives a version its token: a caller's would skip
    the check of whether the version changed."""
    from catalogue.harvest.sources import Source

    copy = tmp_path / "copy.icechunk"
    subprocess.run(["cp", "-r", str(repository), str(copy)], check=True)
    url = f"{copy.as_uri()}@main"
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        with pytest.raises(TypeError, match="seen_state"):
            cat.harvest(url, seen_state="snapshot:0")
        with pytest.raises(TypeError, match="seen_state"):
            cat.harvest_sources([url], seen_state="snapshot:0")
        assert cat.harvest(url).ok
        old = next(iter(_repo(copy).ancestry(branch="main"))).id
        _commit(_repo(copy), "main", "retitle once more", _retitle("Climate, moved on"))
        # the old head's token, as the expansion would have given it before the commit
        again = cat.harvest_sources([Source(url=url, seen_state=f"snapshot:{old}")])
        assert [r["outcome"] for r in again.as_json()["sources"]] == ["succeeded"], again.as_json()
        assert str(cat.node_graph(url).value(URIRef(url), DCTERMS.title)) == "Climate, moved on"
    finally:
        cat.close()


def test_history_catalogues_each_branchs_latest_snapshots(repository, tmp_path):
    db = str(tmp_path / "c.db")
    done = subprocess.run([CATALOGUE, "harvest", "--db", db, str(repository), "--history", "3"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "WARN" not in done.stderr  # Icechunk's own log is quiet
    graphs = subprocess.run([CATALOGUE, "graphs", "--db", db], capture_output=True, text=True).stdout
    expected = {f"{repository.as_uri()}@{ref}" for ref in ("main", "dev", "v1.0")}
    expected |= {f"{repository.as_uri()}@{s.id}" for s in _ancestry(repository, "main")[:3]}
    expected |= {f"{repository.as_uri()}@{s.id}" for s in _ancestry(repository, "dev")[:3]}
    assert {line.split("\t")[0] for line in graphs.splitlines()} == expected


def test_reads_go_through_icechunk(repository, tmp_path):
    url = repository.as_uri()
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        cat.harvest(f"{url}@v1.0")
        cat.harvest(f"{url}@dev")
        np.testing.assert_array_equal(cat.read(f"{url}@v1.0/temperature"), DATA)
        np.testing.assert_array_equal(cat.read(f"{url}@v1.0/temperature", "2:6, 1"), DATA[2:6, 1])
        assert np.isnan(cat.read(f"{url}@dev/temperature")).all()  # dev branched before the write
        resolved = cat.resolve(f"{url}@v1.0/temperature", "0:5, 0")
        # 64-byte chunks: Icechunk keeps chunks this small in the manifest itself
        assert [(c["key"], c["storage"]) for c in resolved["chunks"]] == [("c/0/0", "inline"), ("c/1/0", "inline")]
        assert resolved["fill_chunks"] == 0
        assert cat.resolve(f"{url}@dev/temperature")["fill_chunks"] == 4
        with pytest.raises(UnsupportedArray, match="Icechunk"):
            cat.tensorstore_spec(f"{url}@v1.0/temperature")
    finally:
        cat.close()


def test_read_resolve_and_tensorstore_spec_from_the_command_line(repository, tmp_path):
    """The CLI verbs over an Icechunk-backed array: read through Icechunk's store into a
    .npy file, resolve by key, and a TensorStore spec refused in one line naming why."""
    import json

    db, url = str(tmp_path / "c.db"), repository.as_uri()
    array = f"{url}@v1.0/temperature"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CATALOGUE, *args, "--db", db], capture_output=True, text=True, timeout=300)

    assert cli("harvest", f"{url}@v1.0").returncode == 0
    out = tmp_path / "t.npy"
    done = cli("read", array, "--selection", "2:6, 1", "-o", str(out))
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(out), DATA[2:6, 1])
    done = cli("resolve", array, "--selection", "0:5, 0")
    assert done.returncode == 0, done.stderr
    assert [c["key"] for c in json.loads(done.stdout)["chunks"]] == ["c/0/0", "c/1/0"]
    done = cli("tensorstore-spec", array)
    assert done.returncode != 0 and "Icechunk" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_command_that_read_through_icechunk_exits_cleanly_on_a_busy_machine(repository, tmp_path):
    """Icechunk's threads hand each read back to Python; one still doing so as the process
    exits aborted it (SIGABRT after the answer was printed: 17 of 200 runs of ``resolve``
    with both cores busy). Each run here must exit 0, with the cores kept busy."""
    db, array = str(tmp_path / "c.db"), f"{repository.as_uri()}@v1.0/temperature"
    assert subprocess.run([CATALOGUE, "harvest", f"{repository.as_uri()}@v1.0", "--db", db],
                          capture_output=True, timeout=300).returncode == 0
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        codes = [subprocess.run([CATALOGUE, "resolve", array, "--db", db], capture_output=True,
                                timeout=120).returncode for _ in range(25)]
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert codes == [0] * 25, codes


def test_virtual_chunks_are_read_through_their_container(tmp_path):
    xr = pytest.importorskip("xarray")
    h5py = pytest.importorskip("h5py")
    from zarr.codecs.numcodecs import Zlib

    archive = tmp_path / "archive"
    archive.mkdir()
    values = np.random.default_rng(1).random((2, 3, 5), dtype="f4")
    xr.Dataset({"air": (("t", "y", "x"), values)}).to_netcdf(
        archive / "air.nc", engine="h5netcdf", encoding={"air": {"chunksizes": (2, 3, 5), "compression": "gzip"}})
    with h5py.File(archive / "air.nc") as f:
        chunk = f["air"].id.get_chunk_info(0)
    prefix = archive.as_uri() + "/"
    config = ic.RepositoryConfig.default()
    config.set_virtual_chunk_container(ic.VirtualChunkContainer(prefix, ic.local_filesystem_store(str(archive))))
    path = tmp_path / "virtual.icechunk"
    repo = ic.Repository.create(ic.local_filesystem_storage(str(path)), config,
                                authorize_virtual_chunk_access=ic.containers_credentials({prefix: None}))
    session = repo.writable_session("main")
    group = zarr.group(store=session.store, attributes={"title": "Virtual"})
    with warnings.catch_warnings():  # zarr-python: numcodecs' zlib is not in the v3 spec (HDF5's gzip is)
        warnings.simplefilter("ignore")
        group.create_array("air", shape=(2, 3, 5), chunks=(2, 3, 5), dtype="f4", compressors=[Zlib(level=4)])
    session.store.set_virtual_ref("air/c/0/0/0", (archive / "air.nc").as_uri(), offset=chunk.byte_offset,
                                  length=chunk.size)
    session.commit("virtual chunks over a NetCDF file")

    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        report = cat.harvest_sources([str(path)])
        assert report.exit_code == 0, report.summary()
        version = f"{path.as_uri()}@main"
        graph = cat.node_graph(version)
        assert set(graph.objects(URIRef(version), DCTERMS.source)) == {URIRef(prefix)}
        # what reading the container takes: a local folder, no credentials said
        assert {(p, o) for _s, p, o in graph.triples((URIRef(prefix), None, None))} == {
            (ZARR.storageKind, Literal("localfilesystem"))}
        np.testing.assert_array_equal(cat.read(f"{version}/air"), values)
        # resolve says the chunk is virtual (Icechunk keeps where it is to itself)
        assert [(c["key"], c["storage"], c["fill"]) for c in cat.resolve(f"{version}/air")["chunks"]] == [
            ("c/0/0/0", "virtual", False)]
    finally:
        cat.close()


def test_a_sharded_array_resolves_its_shards_with_how_icechunk_keeps_them(tmp_path):
    path = tmp_path / "sharded.icechunk"
    repo = ic.Repository.create(ic.local_filesystem_storage(str(path)))
    session = repo.writable_session("main")
    group = zarr.group(store=session.store)
    big = np.arange(64 * 64, dtype="f8").reshape(64, 64)  # 8 KB shards: kept as files, not inline
    array = group.create_array("a", shape=(64, 64), shards=(32, 32), chunks=(16, 16), dtype="f8")
    array[:32, :] = big[:32, :]
    session.commit("half written")
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        assert cat.harvest_sources([str(path)]).exit_code == 0
        iri = f"{path.as_uri()}@main/a"
        resolved = cat.resolve(iri, "0:64, 0")
        shards = {tuple(c["shard"]["index"]): (c["shard"]["storage"], c["fill"]) for c in resolved["chunks"]}
        assert shards == {(0, 0): ("native", False), (1, 0): (None, True)}
        np.testing.assert_array_equal(cat.read(iri, "0:32, :"), big[:32, :])
    finally:
        cat.close()


def test_a_container_says_its_storage_region_and_credentials(tmp_path):
    """An S3 container is described by its kind, region, endpoint and whether it is read
    anonymously or billed to the reader; a re-harvest after the configuration changed says
    it anew (nothing of the old description is left)."""
    from catalogue.harvest import SourceReader

    path = tmp_path / "c.icechunk"
    config = ic.RepositoryConfig.default()
    config.set_virtual_chunk_container(ic.VirtualChunkContainer(
        "s3://era5-public/", ic.s3_store(region="eu-west-1", anonymous=True)))
    config.set_virtual_chunk_container(ic.VirtualChunkContainer(
        "s3://paid-archive/", ic.s3_store(region="us-east-1", endpoint_url="https://s3.example.org",
                                          requester_pays=True)))
    repo = ic.Repository.create(ic.local_filesystem_storage(str(path)), config)
    session = repo.writable_session("main")
    zarr.group(store=session.store, attributes={"title": "Containers"})
    session.commit("create")
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        assert cat.harvest_sources([str(path)]).exit_code == 0
        version = URIRef(f"{path.as_uri()}@main")
        graph = cat.node_graph(str(version))
        public, paid = URIRef("s3://era5-public/"), URIRef("s3://paid-archive/")
        assert set(graph.objects(version, DCTERMS.source)) == {public, paid}
        described = {(s, p, o) for s in (public, paid) for _s, p, o in graph.triples((s, None, None))}
        assert described == {
            (public, ZARR.storageKind, Literal("s3")), (public, ZARR.region, Literal("eu-west-1")),
            (public, ZARR.anonymousAccess, Literal(True)),
            (paid, ZARR.storageKind, Literal("s3")), (paid, ZARR.region, Literal("us-east-1")),
            (paid, ZARR.endpoint, Literal("https://s3.example.org", datatype=XSD.anyURI)),
            (paid, ZARR.requesterPays, Literal(True)),  # not anonymous: Icechunk's default, not said
        }
        # the dataset's page lists them with what reading them takes
        from catalogue.web.portal.versions import Source as Shown
        from catalogue.web.portal.versions import versions_view

        assert versions_view(cat, str(version)).sources == [
            Shown("s3://era5-public/", "s3", "eu-west-1", anonymous=True),
            Shown("s3://paid-archive/", "s3", "us-east-1", "https://s3.example.org", requester_pays=True)]
        # the paid container dropped from the configuration: a re-harvest says so
        fewer = ic.RepositoryConfig.default()
        fewer.set_virtual_chunk_container(ic.VirtualChunkContainer(
            "s3://era5-public/", ic.s3_store(region="eu-west-1", anonymous=True)))
        ic.Repository.open(ic.local_filesystem_storage(str(path)), fewer).save_config()
        # the configuration lies outside the snapshots: the version's token says it changed
        again = cat.harvest_sources([str(path)])
        assert [r["outcome"] for r in again.as_json()["sources"]] == ["succeeded"], again.as_json()
        graph = cat.node_graph(str(version))
        assert set(graph.objects(version, DCTERMS.source)) == {public}
        assert {(s, p, o) for s in (public, paid) for _s, p, o in graph.triples((s, None, None))} == {
            t for t in described if t[0] == public}
        assert SourceReader(f"{path.as_uri()}@main").store.virtual_chunk_containers()[0].prefix == str(public)
    finally:
        cat.close()


def test_a_ref_that_does_not_exist_is_one_line(repository, tmp_path):
    done = subprocess.run([CATALOGUE, "harvest", "--db", str(tmp_path / "c.db"), f"{repository}@nope"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no branch, tag or snapshot 'nope'" in lines[0], done.stderr


def test_what_is_not_a_repository_is_not_taken_for_one(tmp_path):
    from catalogue.storage.icechunk import IcechunkAccess, split_icechunk
    from catalogue.storage.opening import open_store

    store = zarr.open_group(str(tmp_path / "v2.zarr"), mode="w", zarr_format=2)
    store.create_group("refs")
    store.create_group("snapshots")
    assert split_icechunk(str(tmp_path / "v2.zarr")) is None
    assert not isinstance(open_store(str(tmp_path / "v2.zarr")), IcechunkAccess)
    (tmp_path / "proj" / "refs").mkdir(parents=True)  # a folder that merely has such folders
    (tmp_path / "proj" / "snapshots").mkdir()
    assert split_icechunk(str(tmp_path / "proj" / "data.zarr")) is None
    assert split_icechunk("s3://bucket/user@example.com/data.zarr") == (
        "s3://bucket/user", "s3://bucket/user", "example.com", "data.zarr")  # named as REPO@REF: taken at its word
    assert split_icechunk("s3://bucket/data.zarr@main") is None  # a Zarr store's name is no repository
    assert split_icechunk("s3://bucket/repo@has%20space/a") == ("s3://bucket/repo", "s3://bucket/repo", "has space", "a")


def test_a_repository_on_s3_is_found_and_read(s3, tmp_path):
    """An s3:// prefix holding a repository (moto's S3; written by icechunk itself) is taken
    for one by its listing, expanded into its versions and read with the source's options."""
    from catalogue.harvest.sources import Source

    bucket, options = s3.bucket(), s3.storage_options
    storage = ic.s3_storage(bucket=bucket, prefix="repos/climate.icechunk", endpoint_url=options["endpoint_url"],
                            allow_http=True, force_path_style=True, access_key_id=options["key"],
                            secret_access_key=options["secret"], region="us-east-1")
    repo = ic.Repository.create(storage)
    session = repo.writable_session("main")
    group = zarr.group(store=session.store, attributes={"title": "On S3"})
    group.create_array("t", shape=(4, 4), chunks=(2, 2), dtype="f4")[:] = DATA[:4, :4]
    session.commit("first")
    repo.create_tag("v1", repo.lookup_branch("main"))
    url = f"s3://{bucket}/repos/climate.icechunk"
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        report = cat.harvest_sources([Source(url=url, storage_options=options)])
        assert report.exit_code == 0, report.summary()
        assert {g for g, _n in cat.graphs()} == {f"{url}@main", f"{url}@v1"}
        np.testing.assert_array_equal(cat.read(f"{url}@v1/t", storage_options=options), DATA[:4, :4])
