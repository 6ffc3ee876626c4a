"""kerchunk and VirtualiZarr references as sources: JSON (versions 0 and 1) and parquet
reference sets over NetCDF files written by xarray (h5netcdf), harvested into their own
graphs, with the archive files recorded (``dct:source``), each chunk resolved to its
archive's URL and byte range (checked against h5py's own chunk index, not kerchunk's),
read through the references (checked against xarray reading the NetCDF files), over a
local folder, a loopback HTTP server and moto's S3; bad reference files refused in one
line with the catalogue as it was.
"""

from __future__ import annotations

import copy
import json
import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from rdflib import DCTERMS, URIRef

import catalogue
from catalogue.chunks.layout import UnsupportedArray
from catalogue.errors import CatalogueError
from tests.support import servers

pytest.importorskip("kerchunk")
h5py = pytest.importorskip("h5py")
xr = pytest.importorskip("xarray")

CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))
PARTS = 2


def _netcdf(path: pathlib.Path, part: int) -> None:
    rng = np.random.default_rng(part)
    ds = xr.Dataset(
        {"air": (("time", "lat", "lon"), rng.random((4, 3, 5), dtype="f4"),
                 {"units": "K", "standard_name": "air_temperature", "long_name": "Air temperature"})},
        coords={
            "time": ("time", np.arange(4) + 4 * part, {"units": "days since 2000-01-01", "standard_name": "time"}),
            "lat": ("lat", [10.0, 20.0, 30.0], {"units": "degrees_north", "standard_name": "latitude"}),
            "lon": ("lon", np.linspace(0.0, 40.0, 5), {"units": "degrees_east", "standard_name": "longitude"}),
        },
        attrs={"title": f"Air temperature, part {part}"},
    )
    ds.to_netcdf(path, engine="h5netcdf", encoding={"air": {"chunksizes": (2, 3, 5), "compression": "gzip"}})


def _references(path: pathlib.Path, url: str | None = None, inline: int = 0) -> dict:
    from kerchunk.hdf import SingleHdf5ToZarr

    refs = SingleHdf5ToZarr(str(path), inline_threshold=inline).translate()
    if url is not None:  # the same references, pointing at another copy of the file
        for value in refs["refs"].values():
            if isinstance(value, list) and value and value[0] == str(path):
                value[0] = url
    return refs


@pytest.fixture(scope="module")
def refs(tmp_path_factory) -> pathlib.Path:
    from kerchunk.combine import MultiZarrToZarr
    from kerchunk.df import refs_to_dataframe

    root = tmp_path_factory.mktemp("references")
    singles = []
    for part in range(PARTS):
        _netcdf(root / f"air{part}.nc", part)
        singles.append(_references(root / f"air{part}.nc"))
    (root / "air0.json").write_text(json.dumps(singles[0]))                  # version 1
    (root / "air1_v0.json").write_text(json.dumps(singles[1]["refs"]))       # version 0: the bare mapping
    combined = MultiZarrToZarr(copy.deepcopy(singles), concat_dims=["time"], inline_threshold=0).translate()
    (root / "combined.json").write_text(json.dumps(combined))
    with warnings.catch_warnings():  # kerchunk writes through pandas' deprecated fastparquet engine
        warnings.simplefilter("ignore")
        refs_to_dataframe(combined, str(root / "combined.parq"), record_size=4)
        # every chunk inline (small chunks, kerchunk's default threshold): no archive at all
        inlined = [_references(root / f"air{part}.nc", inline=10_000) for part in range(PARTS)]
        inline = MultiZarrToZarr(inlined, concat_dims=["time"], inline_threshold=10_000).translate()
        refs_to_dataframe(inline, str(root / "inline.parq"), record_size=4)
    return root


@pytest.fixture(scope="module")
def expected(refs) -> np.ndarray:
    """The air temperature of both files along time, as xarray reads the NetCDF files."""
    parts = [xr.open_dataset(refs / f"air{p}.nc", engine="h5netcdf") for p in range(PARTS)]
    try:
        return xr.concat(parts, "time").air.values
    finally:
        for ds in parts:
            ds.close()


def _h5_chunks(path: pathlib.Path) -> dict[str, tuple[int, int]]:
    """Chunk key -> (byte offset, size), from HDF5's own chunk index (h5py)."""
    out = {}
    with h5py.File(path) as f:
        dataset = f["air"]
        for i in range(dataset.id.get_num_chunks()):
            info = dataset.id.get_chunk_info(i)
            key = ".".join(str(o // c) for o, c in zip(info.chunk_offset, dataset.chunks, strict=True))
            out[key] = (info.byte_offset, info.size)
    return out


# ------------------------------------------------------------------ harvest and model
def test_reference_sets_are_harvested_as_stores(refs, db_url, expected):
    cat = catalogue.open(db_url)
    try:
        sources = ["air0.json", "air1_v0.json", "combined.json", "combined.parq"]
        for name in sources:
            report = cat.harvest(str(refs / name))
            assert report.ok and report.arrays == 4 and report.groups == 1, name
            assert report.graph == (refs / name).as_uri()
        assert {g for g, _n in cat.graphs()} == {(refs / n).as_uri() for n in sources}
        # node IRIs are below the reference file; dct:source names the archive files
        for name, parts in (("air0.json", [0]), ("air1_v0.json", [1]), ("combined.json", [0, 1]),
                            ("combined.parq", [0, 1])):
            graph = cat.node_graph((refs / name).as_uri())
            assert set(graph.objects(URIRef((refs / name).as_uri()), DCTERMS.source)) == {
                URIRef((refs / f"air{p}.nc").as_uri()) for p in parts}, name
            layout = cat.layout(f"{(refs / name).as_uri()}/air")
            assert layout.shape == (4 * len(parts), 3, 5)
        # where and when, from the coordinate arrays read through the references
        extent = cat.extent((refs / "combined.parq").as_uri())
        assert extent is not None and extent.bbox is not None
        assert (extent.bbox.west, extent.bbox.south) == pytest.approx((-5.0, 5.0))
        assert extent.period is not None and extent.period.end[:10] == "2000-01-08"
        # a re-harvest of an unchanged reference set reads nothing more
        for name in sources:
            assert cat.harvest(str(refs / name)).unchanged, name
    finally:
        cat.close()


def test_reference_files_in_a_folder_of_stores_are_discovered(refs, tmp_path):
    """JSON reference sets (versions 0 and 1) and parquet folders below a folder that is no
    store are found by discovery, beside a Zarr store; other JSON files are not taken for
    reference sets, and a prune removes a reference set that is gone."""
    import shutil

    from catalogue.harvest.sources import Source

    folder = tmp_path / "archive"
    shutil.copytree(refs, folder / "refs")
    (folder / "notes.json").write_text(json.dumps({"type": "FeatureCollection", "features": []}))
    (folder / "refs" / "big.json").write_text(json.dumps({"title": "x" * 100_000, "zarr.json": "late"}))
    zarr = pytest.importorskip("zarr")
    zarr.open_group(str(folder / "plain.zarr"), mode="w", zarr_format=3).attrs["title"] = "plain"
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        report = cat.harvest_sources([Source(url=str(folder), prune=True)])
        assert report.exit_code == 0, report.summary()
        graphs = {g for g, _n in cat.graphs()}
        base = (folder / "refs").as_uri()
        assert graphs == {f"{base}/{n}" for n in ("air0.json", "air1_v0.json", "combined.json", "combined.parq",
                                                  "inline.parq")} | {(folder / "plain.zarr").as_uri()}
        (folder / "refs" / "air1_v0.json").unlink()
        cat.harvest_sources([Source(url=str(folder), prune=True)])
        assert f"{base}/air1_v0.json" not in {g for g, _n in cat.graphs()}


def test_resolve_gives_each_chunks_archive_and_byte_range(refs, tmp_path):
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        for name in ("combined.json", "combined.parq"):
            cat.harvest(str(refs / name))
            result = cat.resolve(f"{(refs / name).as_uri()}/air")
            assert result["chunk_count"] == 4 and result["fill_chunks"] == 0
            for entry in result["chunks"]:
                time_chunk = entry["index"][0]
                part, local = divmod(time_chunk, 2)
                nc = refs / f"air{part}.nc"
                assert entry["url"] == nc.as_uri()
                assert (entry["offset"], entry["length"]) == _h5_chunks(nc)[f"{local}.0.0"], entry
            partial = cat.resolve(f"{(refs / name).as_uri()}/air", "5, 0, 0")
            assert [c["key"] for c in partial["chunks"]] == ["2.0.0"]
    finally:
        cat.close()


def test_reads_go_through_the_references(refs, tmp_path, expected):
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        for name in ("combined.json", "combined.parq"):
            cat.harvest(str(refs / name))
            iri = f"{(refs / name).as_uri()}/air"
            np.testing.assert_array_equal(cat.read(iri), expected)
            np.testing.assert_array_equal(cat.read(iri, "3:6, 1, ::2"), expected[3:6, 1, ::2])
        cat.harvest(str(refs / "air1_v0.json"))
        np.testing.assert_array_equal(cat.read(f"{(refs / 'air1_v0.json').as_uri()}/air"), expected[4:])
        with pytest.raises(UnsupportedArray, match="TensorStore cannot open"):
            cat.tensorstore_spec(f"{(refs / 'combined.json').as_uri()}/air")
    finally:
        cat.close()


def test_a_reference_set_with_every_chunk_inline(refs, tmp_path, expected):
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        report = cat.harvest(str(refs / "inline.parq"))
        assert report.ok and report.arrays == 4
        graph = cat.node_graph((refs / "inline.parq").as_uri())
        assert list(graph.objects(URIRef((refs / "inline.parq").as_uri()), DCTERMS.source)) == []
        iri = f"{(refs / 'inline.parq').as_uri()}/air"
        np.testing.assert_array_equal(cat.read(iri), expected)
        assert all(c.get("inline") for c in cat.resolve(iri)["chunks"])
    finally:
        cat.close()


def test_a_missing_archive_file_is_an_error_not_fill(refs, tmp_path):
    for name in ("air0.nc", "air0.json"):
        (tmp_path / name).write_bytes((refs / name).read_bytes())
    moved = json.loads((tmp_path / "air0.json").read_text())
    moved["refs"] = {k: ([str(tmp_path / "air0.nc"), *v[1:]] if isinstance(v, list) else v)
                     for k, v in moved["refs"].items()}
    (tmp_path / "air0.json").write_text(json.dumps(moved))
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        cat.harvest(str(tmp_path / "air0.json"))
        (tmp_path / "air0.nc").unlink()
        with pytest.raises(CatalogueError, match=r"air0\.nc"):
            cat.read(f"{(tmp_path / 'air0.json').as_uri()}/air")
    finally:
        cat.close()


# ------------------------------------------------------------------ over the network
def test_references_served_over_http(refs, tmp_path, expected):
    served = tmp_path / "served"
    served.mkdir()
    for part in range(PARTS):
        (served / f"air{part}.nc").write_bytes((refs / f"air{part}.nc").read_bytes())
    with servers.http_server(served) as http:
        moved = _references(refs / "air0.nc", f"{http.url}/air0.nc")
        (served / "air0.json").write_text(json.dumps(moved))
        url = f"{http.url}/air0.json"
        cat = catalogue.open(str(tmp_path / "c.db"))
        try:
            report = cat.harvest(url)
            assert report.ok and report.graph == url and report.arrays == 4
            graph = cat.node_graph(url)
            assert set(graph.objects(URIRef(url), DCTERMS.source)) == {URIRef(f"{http.url}/air0.nc")}
            np.testing.assert_array_equal(cat.read(f"{url}/air"), expected[:4])
            assert cat.harvest(url).unchanged
            # rewritten with the same size: harvested again, not taken as unchanged
            time.sleep(1.1)
            rewritten = json.dumps(moved, sort_keys=True)
            assert len(rewritten) == len((served / "air0.json").read_text())
            (served / "air0.json").write_text(rewritten)
            assert not cat.harvest(url).unchanged
            # a remote reference set may not point into this machine's files
            (served / "local.json").write_text(json.dumps(_references(refs / "air0.nc")))
            with pytest.raises(CatalogueError, match="refers to the local file"):
                cat.harvest(f"{http.url}/local.json")
            assert f"{http.url}/local.json" not in {g for g, _n in cat.graphs()}
        finally:
            cat.close()


def test_references_and_archives_on_s3(refs, tmp_path, s3, expected):
    bucket = s3.bucket()
    fs = s3.filesystem()
    for part in range(PARTS):
        fs.pipe_file(f"{bucket}/nc/air{part}.nc", (refs / f"air{part}.nc").read_bytes())
    moved = _references(refs / "air0.nc", f"s3://{bucket}/nc/air0.nc")
    fs.pipe_file(f"{bucket}/refs/air0.json", json.dumps(moved).encode())
    url = f"s3://{bucket}/refs/air0.json"
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        report = cat.harvest(url, storage_options=s3.storage_options)
        assert report.ok and report.graph == url
        graph = cat.node_graph(url)
        assert set(graph.objects(URIRef(url), DCTERMS.source)) == {URIRef(f"s3://{bucket}/nc/air0.nc")}
        data = cat.read(f"{url}/air", storage_options=s3.storage_options)
        np.testing.assert_array_equal(data, expected[:4])
        chunks = cat.resolve(f"{url}/air", storage_options=s3.storage_options)["chunks"]
        assert {c["url"] for c in chunks} == {f"s3://{bucket}/nc/air0.nc"}
    finally:
        cat.close()


# ------------------------------------------------------------------ the command line
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CATALOGUE, *args], capture_output=True, text=True)


def test_cli_harvest_resolve_read_and_refusals(refs, tmp_path, expected):
    db = str(tmp_path / "c.db")
    done = _cli("harvest", "--db", db, str(refs / "combined.parq"))
    assert done.returncode == 0, done.stderr
    iri = f"{(refs / 'combined.parq').as_uri()}/air"
    resolved = _cli("resolve", "--db", db, iri, "--selection", "0")
    assert resolved.returncode == 0, resolved.stderr
    entry = json.loads(resolved.stdout)["chunks"][0]
    assert entry["url"] == (refs / "air0.nc").as_uri() and entry["length"] > 0
    out = tmp_path / "air.npy"
    read = _cli("read", "--db", db, iri, "-o", str(out))
    assert read.returncode == 0, read.stderr
    np.testing.assert_array_equal(np.load(out), expected)
    spec = _cli("tensorstore-spec", "--db", db, iri)
    assert spec.returncode != 0 and "TensorStore cannot open" in spec.stderr

    # bad reference files: one line naming the file, non-zero exit, the catalogue as it was
    before = _cli("graphs", "--db", db).stdout
    (tmp_path / "broken.json").write_text('{"version": 1, "refs": {')
    (tmp_path / "notzarr.json").write_text('{"version": 1, "refs": {"a": "b"}}')
    for name, message in (("broken.json", "invalid JSON"), ("notzarr.json", "none of its 1 keys")):
        failed = _cli("harvest", "--db", db, str(tmp_path / name))
        assert failed.returncode != 0
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1 and name in lines[0] and message in lines[0], failed.stderr
        assert "Traceback" not in failed.stderr
    assert _cli("graphs", "--db", db).stdout == before
