"""Quicklooks: the read stays within its byte budget whatever the array's size (checked on
the plan for a 10^10-element array, and by counting the chunk files a real read opens),
the picture shows the values with fill values transparent, 1-D arrays are lines, a
pyramid is drawn from its coarsest level, an array that cannot be read is a placeholder
picture, and the web route serves PNG (cached by fingerprint) and the portal shows it.
"""

from __future__ import annotations

import io
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import catalogue
from catalogue.chunks.layout import layout_from_documents
from catalogue.chunks.preview import MAX_CHUNKS, MAX_RUNS, MAX_SIDE, plan

PIL = pytest.importorskip("PIL.Image")
zarr = pytest.importorskip("zarr")
CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))


def _picture(png: bytes):
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return PIL.open(io.BytesIO(png)).convert("RGBA")


def _layout(shape, chunks, dtype="float32"):
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN", "codecs": [{"name": "bytes"}]}
    return layout_from_documents({"zarr.json": meta}, "file:///x", "file:///x")


@pytest.mark.parametrize(("shape", "chunks", "budget"), [
    ((100_000, 100_000), (1000, 1000), 8 * 1024 * 1024),      # 40 GB of float32, 4 MB chunks
    ((365, 7200, 3600), (1, 600, 600), 4 * 1024 * 1024),      # a year of daily 0.05-degree grids
    ((50, 4096, 4096), (50, 256, 256), 64 * 1024 * 1024),     # chunks that span the leading axis
    ((10_000_000,), (100_000,), 2 * 1024 * 1024),             # a long 1-D coordinate
    ((64, 64), (64, 64), 8 * 1024 * 1024),                    # small: read whole
    ((8760, 500), (1, 500), 8 * 1024 * 1024),                 # one row per chunk: runs, not single chunks
    ((3000, 3000), (1, 1), 8 * 1024 * 1024),                  # tiny chunks: a bounded number of reads
])
def test_the_plan_stays_within_the_budget(shape, chunks, budget):
    layout = _layout(shape, chunks)
    leading, axes = plan(layout, budget)
    drawn = list(range(max(len(shape) - 2, 0), len(shape)))
    assert leading == (0,) * (len(shape) - len(drawn))
    touched = 1
    for d, axis in zip(drawn, axes, strict=True):
        samples = sum(len(range(s.start, s.stop, s.step)) for s in axis.slices())
        assert 0 < samples <= MAX_SIDE
        assert samples >= min(MAX_SIDE, len(axis.chunks) * chunks[d]) // 2  # the budget is used, not wasted
        covered = {i // chunks[d] for s in axis.slices() for i in range(s.start, s.stop, s.step)}
        assert covered == set(axis.chunks)
        if len(axis.chunks) > 1:  # spread over the whole axis
            assert axis.chunks[0] == 0 and axis.chunks[-1] == math.ceil(shape[d] / chunks[d]) - 1
        touched *= len(axis.chunks)
    assert touched * math.prod(chunks) * 4 <= budget
    assert touched <= MAX_CHUNKS and all(len(axis.slices()) <= MAX_RUNS for axis in axes)
    if math.prod(shape) * 4 <= budget and math.prod(math.ceil(s / c) for s, c in zip(shape, chunks, strict=True)) <= MAX_CHUNKS:
        assert all(axis.complete for axis in axes)


def test_a_chunk_larger_than_the_budget_is_refused():
    with pytest.raises(ValueError, match="preview budget"):
        plan(_layout((10_000, 10_000), (5000, 5000)), 1024 * 1024)


@pytest.fixture(scope="module")
def catalogued(tmp_path_factory):
    root = tmp_path_factory.mktemp("preview") / "grid.zarr"
    group = zarr.open_group(str(root), mode="w", zarr_format=3)
    data = np.add.outer(np.arange(1200, dtype="f4"), np.arange(1600, dtype="f4"))
    data[:300, :400] = np.nan  # a corner of fill values
    array = group.create_array("field", shape=data.shape, chunks=(100, 100), dtype="f4", fill_value=np.nan,
                               attributes={"units": "K"})
    array[:] = data
    line = group.create_array("lat", shape=(1200,), chunks=(1200,), dtype="f8", attributes={"units": "degrees_north"})
    line[:] = np.linspace(-90, 90, 1200)
    broken = group.create_array("broken", shape=(10, 10), chunks=(10, 10), dtype="f4")
    broken[:] = 1.0
    (root / "broken" / "c" / "0" / "0").write_bytes(b"not what the codecs wrote")
    db = root.parent / "c.db"
    with catalogue.open(str(db)) as cat:
        cat.harvest(str(root))
    return root, db


def test_a_plane_with_fill_values_transparent_within_the_budget(catalogued, monkeypatch):
    root, db = catalogued
    opened: list[str] = []
    import fsspec.implementations.local as local

    original = local.LocalFileSystem.cat_file

    def counting(self, path, start=None, end=None, **kwargs):
        opened.append(path)
        return original(self, path, start=start, end=end, **kwargs)

    def ranges(self, paths, starts, ends, on_error="raise", **kwargs):
        out = []
        for path, start, end in zip(paths, starts, ends, strict=True):
            try:
                out.append(counting(self, path, start, end))
            except OSError as exc:  # fsspec's on_error="return": absent chunks are fill
                if on_error != "return":
                    raise
                out.append(exc)
        return out

    monkeypatch.setattr(local.LocalFileSystem, "cat_file", counting)
    monkeypatch.setattr(local.LocalFileSystem, "cat_ranges", ranges)
    budget = 100 * 100 * 4 * 20  # twenty chunks of the 192
    with catalogue.open(str(db)) as cat:
        picture = _picture(cat.preview(f"{root.as_uri()}/field", max_bytes=budget))
    chunk_reads = [p for p in opened if "/field/c/" in p]
    assert 0 < len(chunk_reads) <= 20
    alpha = np.asarray(picture)[..., 3]
    assert (alpha == 0).any() and (alpha == 255).any()  # the NaN corner, and values
    assert picture.width >= 256


def test_lines_placeholders_and_the_command(catalogued, tmp_path):
    root, db = catalogued
    with catalogue.open(str(db)) as cat:
        line = _picture(cat.preview(f"{root.as_uri()}/lat"))
        assert line.height < line.width  # a line plot, not a plane
        placeholder = _picture(cat.preview(f"{root.as_uri()}/broken"))
        assert placeholder.height == 60  # "No preview" and why
        group = _picture(cat.preview(root.as_uri()))
        assert group.height == 60
    out = tmp_path / "field.png"
    done = subprocess.run([CATALOGUE, "preview", "--db", str(db), f"{root.as_uri()}/field", "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _picture(out.read_bytes()).width >= 256
    missing = subprocess.run([CATALOGUE, "preview", "--db", str(db), f"{root.as_uri()}/nope", "-o", str(out)],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "no node" in missing.stderr


def test_a_pyramid_is_drawn_from_its_coarsest_level(tmp_path):
    pytest.importorskip("ome_zarr")
    from tests.validate.test_ome import _image

    image = _image(tmp_path / "image.ome.zarr", "0.5")
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(str(image))
        assert cat.preview_array(image.as_uri()) == f"{image.as_uri()}/s2"
        assert cat.preview_array(f"{image.as_uri()}/s0") == f"{image.as_uri()}/s2"
        assert cat.preview_array(f"{image.as_uri()}/labels/cells/s0").startswith(f"{image.as_uri()}/labels/cells/s")
        picture = _picture(cat.preview(image.as_uri()))
        assert picture.height > 60


def test_the_web_route_and_the_portal(catalogued):
    from starlette.testclient import TestClient

    from catalogue.web.app import create_app
    from catalogue.web.settings import Settings

    root, db = catalogued
    with TestClient(create_app(Settings(db=str(db)))) as client:
        iri = f"{root.as_uri()}/field"
        first = client.get("/node/preview.png", params={"iri": iri})
        assert first.status_code == 200 and first.headers["content-type"] == "image/png"
        assert client.get("/node/preview.png", params={"iri": iri}).content == first.content
        assert len(client.app.state.previews._items) == 1  # cached by IRI and fingerprint
        broken = client.get("/node/preview.png", params={"iri": f"{root.as_uri()}/broken"})
        assert broken.status_code == 200 and _picture(broken.content).height == 60
        assert client.get("/node/preview.png", params={"iri": f"{root.as_uri()}/nope"}).status_code == 404
        page = client.get("/browse", params={"iri": iri}).text
        assert "/node/preview.png?iri=" in page and 'alt="Quicklook of' in page


def test_a_map_is_drawn_north_up_whichever_way_its_latitudes_run(tmp_path):
    """Many models write latitudes south first: the rows are turned so that north is up,
    as they are where the latitudes run north first already; without a latitude
    coordinate the plane is drawn as stored."""
    pictures = {}
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        for name, lat in (("south_first", np.linspace(-80, 80, 9)), ("north_first", np.linspace(80, -80, 9)),
                          ("no_coordinate", np.linspace(-80, 80, 9))):
            root = zarr.open_group(str(tmp_path / f"{name}.zarr"), mode="w", zarr_format=3)
            dims = ("lat", "lon") if name != "no_coordinate" else ("y", "x")
            if name != "no_coordinate":
                coord = root.create_array("lat", shape=(9,), dtype="f8", dimension_names=("lat",))
                coord[:] = lat
                coord.attrs.update({"standard_name": "latitude", "units": "degrees_north"})
            field = root.create_array("field", shape=(9, 12), chunks=(9, 12), dtype="f4", dimension_names=dims)
            field[:] = np.repeat(lat[:, None], 12, axis=1).astype("f4")  # the value is the latitude
            cat.harvest(str(tmp_path / f"{name}.zarr"))
            pictures[name] = np.asarray(_picture(cat.preview(f"{(tmp_path / f'{name}.zarr').as_uri()}/field")))

    def top_is_north(pixels) -> bool:
        """The plane's top rows brighter than its bottom ones (viridis: high values, here
        the northern latitudes, are yellow; low ones purple), down the middle column."""
        column = pixels[:, pixels.shape[1] // 2]
        white = (column[:, :3] == 255).all(axis=1)
        top = int(np.argmin(white))                  # the first row of the plane, below the title
        bottom = top + int(np.argmax(white[top:])) - 1  # its last, above the colour bar's margin
        return int(column[top + 2, 1]) > int(column[bottom - 2, 1])

    assert top_is_north(pictures["south_first"]) and top_is_north(pictures["north_first"])
    assert not top_is_north(pictures["no_coordinate"])


def test_a_read_past_the_query_timeout_is_a_placeholder_and_not_kept(tmp_path):
    """The web route reads chunks within the server's query timeout: a store answering too
    slowly gets the placeholder picture at once (200, never an error page), which is not
    cached, so the same request draws the array once the store answers in time."""
    from starlette.testclient import TestClient

    from catalogue.web.app import create_app
    from catalogue.web.settings import Settings
    from tests.support.servers import http_server

    served = tmp_path / "served"
    group = zarr.open_group(served / "slow.zarr", mode="w", zarr_format=3)
    group.create_array("field", shape=(64, 64), chunks=(32, 32), dtype="f4")[:] = (
        np.arange(64 * 64, dtype="f4").reshape(64, 64))
    zarr.consolidate_metadata(str(served / "slow.zarr"))  # a static HTTP server cannot be listed
    db = tmp_path / "c.db"
    with http_server(served) as server:
        url = f"{server.url}/slow.zarr"
        with catalogue.open(str(db)) as cat:
            assert cat.harvest(url).ok
        with TestClient(create_app(Settings(db=str(db), query_timeout=0.5))) as client:
            server.delay = 1.5  # each chunk request answered after 1.5 s
            slow = client.get("/node/preview.png", params={"iri": f"{url}/field"})
            assert slow.status_code == 200 and _picture(slow.content).height == 60  # the placeholder
            assert not client.app.state.previews._items
            server.delay = 0.0
            drawn = client.get("/node/preview.png", params={"iri": f"{url}/field"})
            assert drawn.status_code == 200 and _picture(drawn.content).height > 60
            assert len(client.app.state.previews._items) == 1


def test_a_raw_chunk_larger_than_the_budget_is_read_as_rows(tmp_path):
    """One chunk of 2.9 MB, stored raw, under a budget of 256 KB: evenly spread whole rows,
    each a byte range of the chunk, within the budget; compressed, it is a placeholder."""
    from catalogue.chunks.preview import sample, stored_raw

    data = np.add.outer(np.arange(900, dtype="f4"), np.arange(800, dtype="f4") / 1000)
    root = tmp_path / "raw.zarr"
    group = zarr.open_group(str(root), mode="w", zarr_format=3)
    group.create_array("big", shape=data.shape, chunks=data.shape, dtype="f4", compressors=None)[:] = data
    group.create_array("squeezed", shape=data.shape, chunks=data.shape, dtype="f4")[:] = data  # zstd
    wide = group.create_array("wide", shape=(4, 3, 900, 800), chunks=(2, 3, 450, 800), dtype=">f8",
                              compressors=None)
    wide[0, 0] = data
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        assert cat.harvest(str(root)).ok
        budget = 256 * 1024
        layout = cat.layout(f"{root.as_uri()}/big")
        assert stored_raw(layout) is not None
        got = sample(layout, cat._chunk_store(layout), budget)
        rows = sorted({round(r) for r in np.linspace(0, 899, budget // (800 * 4))})
        step = math.ceil(900 / len(rows))  # the columns as far apart as the rows: proportions kept
        np.testing.assert_array_equal(got.values, data[rows, ::step])
        assert len(rows) * 800 * 4 <= budget and got.selection == f"{len(rows)} of 900 rows, ::{step}"
        picture = _picture(cat.preview(f"{root.as_uri()}/big", max_bytes=budget))
        assert picture.width >= 256 and np.asarray(picture)[..., 3].max() == 255
        # big-endian doubles in chunks spanning two leading axes: plane (0, 0), rows across two chunk rows
        layout = cat.layout(f"{root.as_uri()}/wide")
        got = sample(layout, cat._chunk_store(layout), budget)
        rows = sorted({round(r) for r in np.linspace(0, 899, budget // (800 * 8))})
        np.testing.assert_array_equal(got.values, data[rows, ::math.ceil(900 / len(rows))])
        # compressed: nothing smaller than the chunk can be read
        assert stored_raw(cat.layout(f"{root.as_uri()}/squeezed")) is None
        assert cat.preview_job(f"{root.as_uri()}/squeezed", max_bytes=budget).draw().placeholder
        assert not cat.preview_job(f"{root.as_uri()}/big", max_bytes=budget).draw().placeholder


def test_a_netcdf3_variable_through_kerchunk_is_drawn_within_the_budget(tmp_path):
    """kerchunk keeps a NetCDF-3 variable as one raw big-endian chunk: drawn from rows read
    as byte ranges of the archive file, through the references."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("scipy")
    netcdf3 = pytest.importorskip("kerchunk.netCDF3")
    import json

    from catalogue.chunks.preview import sample

    data = np.add.outer(np.arange(600, dtype="f4"), np.arange(700, dtype="f4") / 1000)
    nc = tmp_path / "field.nc"
    xr.Dataset({"t": (("y", "x"), data)}).to_netcdf(nc, engine="scipy", format="NETCDF3_64BIT")
    refs = tmp_path / "field.json"
    refs.write_text(json.dumps(netcdf3.NetCDF3ToZarr(str(nc), inline_threshold=0).translate()))
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        assert cat.harvest(str(refs)).ok
        iri = f"{refs.as_uri()}/t"
        layout = cat.layout(iri)
        assert layout.chunk_shape == (600, 700) and layout.dtype.byteorder == ">"
        budget = 128 * 1024
        got = sample(layout, cat._chunk_store(layout), budget)
        rows = sorted({round(r) for r in np.linspace(0, 599, budget // (700 * 4))})
        np.testing.assert_array_equal(got.values, data[rows, ::math.ceil(600 / len(rows))])
        picture = _picture(cat.preview(iri, max_bytes=budget))
        assert np.asarray(picture)[..., 3].max() == 255 and picture.width >= 256


def test_rows_of_raw_chunks_from_servers_that_ignore_ranges_are_refused_in_one_request(tmp_path):
    """A server that answers a byte range with the whole file would send the whole chunk for
    each row (the budget many times over); through references, cutting the range out of the
    file at the chunk's offsets would draw the wrong bytes. Both give a placeholder after
    the first request; with ranges honoured, the same references are drawn."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("scipy")
    netcdf3 = pytest.importorskip("kerchunk.netCDF3")
    import json

    from tests.support import servers

    data = np.add.outer(np.arange(600, dtype="f4"), np.arange(700, dtype="f4") / 1000)
    xr.Dataset({"t": (("y", "x"), data)}).to_netcdf(tmp_path / "field.nc", engine="scipy", format="NETCDF3_64BIT")
    root = tmp_path / "raw.zarr"
    zarr.open_group(str(root), mode="w", zarr_format=3).create_array(
        "big", shape=data.shape, chunks=data.shape, dtype="f4", compressors=None)[:] = data
    budget = 128 * 1024
    with servers.http_server(tmp_path) as control:
        refs = tmp_path / "field.json"
        refs.write_text(json.dumps(netcdf3.NetCDF3ToZarr(f"{control.url}/field.nc", inline_threshold=0).translate()))
        with catalogue.open(str(tmp_path / "c.db")) as cat:
            assert cat.harvest(str(refs)).ok and cat.harvest(f"{control.url}/raw.zarr", nodes=["big"]).ok
            for iri, path in ((f"{refs.as_uri()}/t", "field.nc"), (f"{control.url}/raw.zarr/big", "raw.zarr/big/c/0/0")):
                control.ignore_ranges, control.counts[path] = False, 0
                assert not cat.preview_job(iri, max_bytes=budget).draw().placeholder
                assert control.counts[path] > 1  # a request a row
                control.ignore_ranges, control.counts[path] = True, 0
                drawn = cat.preview_job(iri, max_bytes=budget).draw()
                assert drawn.placeholder and control.counts[path] == 1, (iri, control.counts[path])


def test_rows_of_raw_chunks_are_bounded_in_requests_too(tmp_path, monkeypatch):
    """A request a row and chunk column: rows are fewer where a row crosses many chunks, and
    a row crossing more chunks than a preview reads is a placeholder."""
    from catalogue.chunks import preview

    data = np.arange(400 * 320, dtype="f4").reshape(400, 320)
    root = tmp_path / "narrow.zarr"
    zarr.open_group(str(root), mode="w", zarr_format=3).create_array(
        "cols", shape=data.shape, chunks=(400, 10), dtype="f4", compressors=None)[:] = data
    monkeypatch.setattr(preview, "MAX_CHUNKS", 64)
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        assert cat.harvest(str(root)).ok
        layout = cat.layout(f"{root.as_uri()}/cols")
        got = preview.sample(layout, cat._chunk_store(layout), 8 * 1024)  # chunks of 16 KB
        assert got.values.shape[0] == 2  # 64 requests / 32 chunk columns
        np.testing.assert_array_equal(got.values, data[[0, 399], ::200])
        monkeypatch.setattr(preview, "MAX_CHUNKS", 16)
        assert cat.preview_job(f"{root.as_uri()}/cols", max_bytes=8 * 1024).draw().placeholder
