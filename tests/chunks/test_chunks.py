"""Chunk resolution and reading from the catalogue, checked against zarr-python and TensorStore.

Every array of the fixtures (written by zarr-python, xarray and tensorstore)
is read whole and through random selections, and compared with what
zarr-python (and, where it opens the array, TensorStore) reads; resolution
must list exactly the chunk files on disk, the rest as fill chunks. Codecs
needing a package numcodecs does not install (zfpy, pcodec, msgpack2, crc32c)
read the same with it, and without it fail on one line naming the package.
"""

from __future__ import annotations

import json
import pathlib
import random
import shutil
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import catalogue
from catalogue.chunks.codecs import ChunkError
from catalogue.chunks.selection import SelectionError, normalise, parse
from catalogue.cli import main
from catalogue.harvest import load_hierarchy
from catalogue.model.chunk_keys import KeyEncoding
from tests.support import stores
from tests.support.zarr_reference import arrays_of, same, same_dtype, zarr_read

METADATA_FILES = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def catalogued(tmp_path_factory) -> tuple[str, dict[str, pathlib.Path]]:
    """One SQLite catalogue holding the client-variety stores and the good stores."""
    root = tmp_path_factory.mktemp("chunks")
    found = stores.build_client_variety(root / "variety")
    found.update({name: build(root / "good") for name, build in stores.GOOD_STORES.items()})
    db = str(root / "catalogue.db")
    with catalogue.open(db) as cat:
        for store in found.values():
            cat.harvest(str(store))
    return db, found


def random_selection(rng: random.Random, shape: tuple[int, ...]) -> str:
    """A random NumPy basic-indexing selection, as text: ints, slices with steps (negative too), '...'."""
    parts = []
    for n in shape:
        kind = rng.choice(["int", "slice", "step", "neg", "all"]) if n else "all"
        if kind == "int":
            parts.append(str(rng.randrange(-n, n)))
        elif kind == "slice":
            a = rng.randrange(0, n)
            parts.append(f"{a}:{rng.randrange(a, n + 1)}")
        elif kind == "step":
            parts.append(f"{rng.randrange(0, n)}::{rng.randint(1, 4)}")
        elif kind == "neg":
            parts.append(f"::-{rng.randint(1, 3)}")
        else:
            parts.append(":")
    if parts and rng.random() < 0.3:
        cut = rng.randrange(len(parts))
        parts = [*parts[:cut], "..."]
    return ",".join(parts)


STORE_NAMES = [
    *sorted(stores.GOOD_STORES),
    "zarr_v3", "zarr_v2", "xarray_v2", "xarray_v3",
    *(f"ts{v}_{t}" for v in (2, 3) for t in ("uint16", "float32", "bool", "complex64", "int64")),
    "ts3_sharded_index_start", "ts2_blosc_slash",
]


# ------------------------------------------------------- reads vs zarr-python
@pytest.mark.parametrize("name", STORE_NAMES)
def test_reads_equal_zarr_python_whole_and_in_random_selections(name, catalogued):
    db, found = catalogued
    store = found[name]
    rng = random.Random(name)
    compared = 0
    with catalogue.open(db) as cat:
        for path, iri in arrays_of(store):
            if name == "dependent_arrays" and path in ("multiscale",):
                pass  # a plain v3 array for zarr-python: its dependents are checked below
            whole = cat.read(iri)
            expected = zarr_read(store, path, (Ellipsis,))
            assert same(whole, expected), (path, whole, expected)
            assert same_dtype(whole, expected), path
            shape = expected.shape
            for _ in range(3 if shape else 1):
                text = random_selection(rng, shape)
                mine = cat.read(iri, text)
                theirs = zarr_read(store, path, parse(text))
                assert same(mine, theirs), (path, text, mine, theirs)
            compared += 1
    assert compared >= 1


TENSORSTORE_KINDS = {"b", "i", "u", "f", "c"}


@pytest.mark.parametrize("name", ["zarr_v3", "zarr_v2", "xarray_v3", "ts3_sharded_index_start", "ts2_blosc_slash",
                                  "ts3_int64", "ts2_complex64", "zarr_v3_deep", "zarr_v2_plain"])
def test_tensorstore_spec_opens_the_same_values(name, catalogued):
    ts = pytest.importorskip("tensorstore")
    db, found = catalogued
    checked = 0
    with catalogue.open(db) as cat:
        for path, iri in arrays_of(found[name]):
            mine = cat.read(iri)
            if mine.dtype.kind not in TENSORSTORE_KINDS or mine.dtype.byteorder == ">":
                continue
            for assume in (False, True):
                spec = cat.tensorstore_spec(iri, assume_metadata=assume)
                assert spec["driver"] == ("zarr3" if cat.layout(iri).zarr_format == 3 else "zarr")
                assert ("metadata" in spec) is assume
                try:
                    theirs = ts.open(spec).result().read().result()
                except ValueError as exc:  # TensorStore's own limits (e.g. codecs it lacks) are not ours
                    if "not supported" in str(exc).lower() or "invalid" in str(exc).lower():
                        continue
                    raise
                assert same(mine, np.asarray(theirs)), (path, assume)
                checked += 1
    assert checked >= 1


def test_dependent_arrays_read_at_every_level(catalogued):
    """multiscale s1, s2 (prefix encodings under the primary's folder) hold the downsampled image."""
    db, found = catalogued
    store = found["dependent_arrays"]
    base = store.absolute().as_uri()
    yy, xx = np.mgrid[0:64, 0:64]
    image = ((xx + yy) * 2).astype("uint8")
    with catalogue.open(db) as cat:
        s0 = cat.read(f"{base}/multiscale")
        expected = np.zeros((64, 64), "uint8")
        expected[:32, :32] = image[:32, :32]
        assert same(s0, expected)
        for name, factor in (("s1", 2), ("s2", 4)):
            n = 64 // factor
            expected = np.zeros((n, n), "uint8")
            expected[:16, :16] = image[::factor, ::factor][:16, :16]
            iri = f"{base}/multiscale/{name}"
            assert same(cat.read(iri), expected), name
            assert same(cat.read(iri, "3:20:2, ::-1"), expected[3:20:2, ::-1])
            keys = {c["key"] for c in cat.resolve(iri)["chunks"] if not c["fill"]}
            assert keys == {f"{name}/c/0/0"}
            spec = cat.tensorstore_spec(iri)
            assert spec["assume_metadata"] and spec["kvstore"]["path"].endswith(f"/multiscale/{name}/")
            ts = pytest.importorskip("tensorstore")
            assert same(np.asarray(ts.open(spec).result().read().result()), expected)
        coarse = cat.read(f"{base}/labels/coarse")  # v2 key encoding "0.0" next to the primary's "c.0.0"
        lab = (np.arange(32 * 32).reshape(32, 32) // 100).astype("int16")
        expected = np.full((16, 16), -1, "int16")
        expected[:8, :8] = lab[::2, ::2][:8, :8]
        assert same(coarse, expected)


# ---------------------------------------------------------------- resolution
def disk_chunks(folder: pathlib.Path, skip_prefixes: tuple[str, ...] = ()) -> set[str]:
    out = set()
    for path in folder.rglob("*"):
        if path.is_file() and path.name not in METADATA_FILES:
            key = path.relative_to(folder).as_posix()
            if not key.startswith(skip_prefixes):
                out.add(key)
    return out


@pytest.mark.parametrize("name", ["zarr_v3", "zarr_v2", "xarray_v2", "xarray_v3", "ts2_blosc_slash", "ts3_uint16",
                                  "zarr_v3_deep", "zarr_v2_plain", "zarr_v3_lone_array"])
def test_resolve_lists_exactly_the_chunk_files_on_disk_and_fill_for_the_rest(name, catalogued):
    db, found = catalogued
    store = found[name]
    h = load_hierarchy(str(store))
    with catalogue.open(db) as cat:
        for path, iri in arrays_of(store):
            layout = cat.layout(iri)
            if layout.sharding is not None:
                continue
            result = cat.resolve(iri)
            folder = store / path if path else store
            children = tuple(f"{h.nodes[m].name}/" for m in h.nodes.get(path).members) if path in h.nodes else ()
            on_disk = disk_chunks(folder, children)
            present = {c["key"] for c in result["chunks"] if not c["fill"]}
            assert present == on_disk, path
            assert result["chunk_count"] == len(result["chunks"]) == int(np.prod(layout.grid_shape))
            assert result["fill_chunks"] == len(result["chunks"]) - len(present)
            for chunk in result["chunks"]:
                assert chunk["url"] == f"{folder.absolute().as_uri()}/{chunk['key']}"


def test_resolve_sharded_gives_shard_byte_ranges_that_decode(catalogued):
    db, found = catalogued
    with catalogue.open(db) as cat:
        for name, path in (("ts3_sharded_index_start", ""), ("zarr_v3", "sharded"), ("tensorstore_arrays", "zarr3_sharded")):
            store = found[name]
            iri = store.absolute().as_uri() + (f"/{path}" if path else "")
            layout = cat.layout(iri)
            result = cat.resolve(iri)
            assert result["shard_shape"] == list(layout.chunk_shape)
            folder = store / path if path else store
            shard_files = disk_chunks(folder)
            assert {c["shard"]["key"] for c in result["chunks"] if not c["fill"]} <= shard_files
            filled = [c for c in result["chunks"] if not c["fill"]]
            assert filled, name
            for chunk in filled:
                start, end = chunk["byte_range"]
                size = (folder / chunk["shard"]["key"]).stat().st_size
                assert 0 <= start < end <= size
            # index at the start: the first inner chunk comes after the index
            if layout.sharding.index_location == "start":
                assert min(c["byte_range"][0] for c in filled) >= 16 * int(np.prod(layout.sharding.chunks_per_shard(layout.chunk_shape)))


def test_resolve_a_selection_touches_only_its_chunks(catalogued):
    db, found = catalogued
    iri = (found["zarr_v3"] / "blosc").absolute().as_uri()  # 10x10 in 5x5 chunks
    with catalogue.open(db) as cat:
        result = cat.resolve(iri, "6:, :3")
        assert [c["index"] for c in result["chunks"]] == [[1, 0]]
        assert result["selection_shape"] == [4, 3]
        assert [c["index"] for c in cat.resolve(iri, "::-6, 4")["chunks"]] == [[0, 0], [1, 0]]
        zero_d = (found["zarr_v3"] / "zero_d").absolute().as_uri()
        assert [c["key"] for c in cat.resolve(zero_d)["chunks"]] == ["c"]
        v2_zero_d = (found["zarr_v2"] / "zero_d").absolute().as_uri()
        assert [c["key"] for c in cat.resolve(v2_zero_d, "...")["chunks"]] == ["0"]
        with pytest.raises(SelectionError, match="out of bounds for axis 0 with size 10"):
            cat.resolve(iri, "10")
        with pytest.raises(SelectionError, match="too many indices"):
            cat.resolve(iri, "1,2,3")


# ------------------------------------------------------------------- keys
def test_key_encodings():
    assert KeyEncoding.from_v3({"name": "default"}).key((1, 23, 45)) == "c/1/23/45"
    assert KeyEncoding.from_v3({"name": "default", "configuration": {"separator": "."}}).key((1, 23, 45)) == "c.1.23.45"
    assert KeyEncoding.from_v3("default").key(()) == "c"
    assert KeyEncoding.from_v3({"name": "v2"}).key((1, 2)) == "1.2"
    assert KeyEncoding.from_v3({"name": "v2", "configuration": {"separator": "/"}}).key(()) == "0"
    assert KeyEncoding.from_v2("/").key((3, 4)) == "3/4"
    nested = KeyEncoding.from_v3({"name": "prefix", "configuration": {"prefix": "s1/", "base_encoding": {
        "name": "suffix", "configuration": {"suffix": ".bin", "base_encoding": {"name": "v2"}}}}})
    assert nested.key((0, 7)) == "s1/0.7.bin"


@given(rank=st.integers(0, 4), data=st.data(),
       encoding=st.sampled_from([{"name": "default"}, {"name": "default", "configuration": {"separator": "."}},
                                 {"name": "v2"}, {"name": "v2", "configuration": {"separator": "/"}},
                                 {"name": "prefix", "configuration": {"prefix": "s2/", "base_encoding": "default"}},
                                 {"name": "suffix", "configuration": {"suffix": "~x", "base_encoding": "v2"}}]))
def test_grid_keys_match_single_keys_and_decode_back(rank, data, encoding):
    enc = KeyEncoding.from_v3(encoding)
    axes = [np.array(sorted(data.draw(st.sets(st.integers(0, 120), min_size=1, max_size=4)))) for _ in range(rank)]
    keys = enc.grid_keys(axes).tolist()
    expected = [enc.key(idx) for idx in np.ndindex(*[len(a) for a in axes])]
    expected = [enc.key(tuple(int(axes[d][i]) for d, i in enumerate(idx))) for idx in np.ndindex(*[len(a) for a in axes])]
    assert keys == expected
    for key, idx in zip(keys, np.ndindex(*[len(a) for a in axes]), strict=True):
        assert enc.decode(key, rank) == tuple(int(axes[d][i]) for d, i in enumerate(idx))


@settings(deadline=None)  # some examples have thousands of tiny chunks
@given(shape=st.lists(st.integers(0, 30), min_size=0, max_size=3), data=st.data())
def test_selection_placement_matches_numpy(shape, data):
    """A synthetic array split in chunks and reassembled by the reader's placement equals NumPy indexing."""
    from catalogue.chunks.read import _index, _placement

    shape = tuple(shape)
    chunks = tuple(data.draw(st.integers(1, 7)) for _ in shape)
    rng = random.Random(data.draw(st.integers(0, 10**6)))
    text = random_selection(rng, shape) if shape else ""
    items = parse(text)
    try:
        expected = np.arange(int(np.prod(shape)) or 0).reshape(shape)[items]
    except IndexError:
        with pytest.raises(SelectionError):
            normalise(items, shape)
        return
    dims = normalise(items, shape)
    source = np.arange(int(np.prod(shape)) or 0).reshape(shape)
    out = np.full(tuple(d.count for d in dims), -1)
    axes = [d.chunk_indices(c) for d, c in zip(dims, chunks, strict=True)]
    for index in np.ndindex(*[len(a) for a in axes]):
        grid = tuple(int(axes[d][i]) for d, i in enumerate(index))
        region = tuple(slice(g * c, (g + 1) * c) for g, c in zip(grid, chunks, strict=True))
        chunk = source[region]
        pad = [(0, c - s) for c, s in zip(chunks, chunk.shape, strict=True)]
        chunk = np.pad(chunk, pad, constant_values=-2) if pad else chunk
        placed = [_placement(d, c, g) for d, c, g in zip(dims, chunks, grid, strict=True)]
        out[tuple(p[0] for p in placed)] = chunk[_index([p[1] for p in placed])]
    result = out.reshape(tuple(d.count for d in dims if d.index is None))
    assert np.array_equal(result, expected)


# ---------------------------------------------------------------- corruption
def _copy(found: dict[str, pathlib.Path], name: str, tmp_path: pathlib.Path) -> pathlib.Path:
    return pathlib.Path(shutil.copytree(found[name], tmp_path / found[name].name))


def test_corrupt_chunks_are_errors_naming_the_key_never_fill(catalogued, tmp_path):
    _, found = catalogued
    store = _copy(found, "zarr_v3", tmp_path)
    db = str(tmp_path / "c.db")
    with catalogue.open(db) as cat:
        cat.harvest(str(store))
        base = store.absolute().as_uri()
        # truncated zstd/blosc chunk
        chunk = store / "blosc" / "c" / "0" / "0"
        chunk.write_bytes(chunk.read_bytes()[:10])
        with pytest.raises(ChunkError, match=r"blosc/c/0/0"):
            cat.read(f"{base}/blosc")
        # crc32c mismatch
        crc_chunks = [p for p in (store / "crc32c").rglob("*") if p.is_file() and p.name != "zarr.json"]
        if not crc_chunks:
            import zarr

            zarr.open_array(str(store / "crc32c"), mode="r+")[:] = np.arange(5)
            crc_chunks = [p for p in (store / "crc32c").rglob("*") if p.is_file() and p.name != "zarr.json"]
        data = bytearray(crc_chunks[0].read_bytes())
        data[0] ^= 0xFF
        crc_chunks[0].write_bytes(bytes(data))
        with pytest.raises(ChunkError, match=r"crc32c/c/0.*checksum"):
            cat.read(f"{base}/crc32c")
        # truncated shard
        shard = store / "sharded" / "c" / "0" / "0"
        shard.write_bytes(shard.read_bytes()[:-8])
        with pytest.raises(ChunkError, match=r"sharded/c/0/0"):
            cat.read(f"{base}/sharded")
    code, _, err = run("read", f"{base}/blosc", "-o", str(tmp_path / "x.npy"), "--db", db)
    assert code == 1 and err.startswith("error: ") and "blosc/c/0/0" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.npy").exists()


def test_unknown_and_unsafe_codecs_are_clear_errors(tmp_path):
    import zarr

    store = tmp_path / "codecs.zarr"
    a = zarr.create_array(str(store), shape=(4,), chunks=(2,), dtype="i4", zarr_format=3)
    a[:] = np.arange(4)
    doc = json.loads((store / "zarr.json").read_text())
    doc["codecs"].append({"name": "lz5", "configuration": {}})
    (store / "zarr.json").write_text(json.dumps(doc))
    v2 = tmp_path / "pickle.zarr"
    b = zarr.create_array(str(v2), shape=(2,), chunks=(2,), dtype="i4", zarr_format=2)
    b[:] = 1
    meta = json.loads((v2 / ".zarray").read_text())
    meta["filters"] = [{"id": "pickle", "protocol": 5}]
    (v2 / ".zarray").write_text(json.dumps(meta))
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(str(store))
        cat.harvest(str(v2))
        with pytest.raises(ChunkError, match="lz5"):
            cat.read(store.absolute().as_uri())
        with pytest.raises(ChunkError, match=r"pickle.*arbitrary code"):
            cat.read(v2.absolute().as_uri())


# --------------------------------------------------- optional codec packages
@pytest.fixture(scope="module")
def optional_codecs(tmp_path_factory) -> tuple[str, dict[str, pathlib.Path]]:
    """The stores of codecs needing a package numcodecs does not install, in one catalogue."""
    root = tmp_path_factory.mktemp("optional")
    found = stores.build_optional_codecs(root)
    db = str(root / "catalogue.db")
    with catalogue.open(db) as cat:
        for store in found.values():
            cat.harvest(str(store))
    return db, found


def test_optional_codecs_read_equal_zarr_python(optional_codecs):
    """With their packages installed (the dev extras), zfpy, pcodec, msgpack2 and crc32c decode, v2 and v3."""
    db, found = optional_codecs
    with catalogue.open(db) as cat:
        for name, store in found.items():
            iri = store.absolute().as_uri()
            mine = cat.read(iri)
            if name == "v2_msgpack":  # zarr-python 3 cannot read msgpack2: the values encoded are the reference
                expected = np.array(stores.MSGPACK_VALUES, dtype=object)
                assert same(mine, expected) and same(cat.read(iri, "::-2"), expected[::-2]), mine
                continue
            expected = zarr_read(store, "", (Ellipsis,))
            assert same(mine, expected) and same_dtype(mine, expected), (name, mine, expected)
            assert same(cat.read(iri, "1:5, ::-3"), expected[1:5, ::-3]), name


#: What the reads below say when the packages are missing: the codec, the package, how to install it.
MISSING_PACKAGE = {
    "v2_zfpy": "codec 'zfpy' needs the package zfpy: pip install 'zarr-catalogue[zfpy]'",
    "v3_zfpy": "codec 'numcodecs.zfpy' needs the package zfpy: pip install 'zarr-catalogue[zfpy]'",
    "v2_pcodec": "codec 'pcodec' needs the package pcodec: pip install 'zarr-catalogue[pcodec]'",
    "v3_pcodec": "codec 'numcodecs.pcodec' needs the package pcodec: pip install 'zarr-catalogue[pcodec]'",
    "v2_msgpack": "codec 'msgpack2' needs the package msgpack: pip install 'zarr-catalogue[msgpack]'",
    "v3_crc32c": "codec 'crc32c' needs the package google-crc32c: pip install google-crc32c",
    "v3_sharded": "codec 'crc32c' needs the package google-crc32c: pip install google-crc32c",
}
#: Run first in a fresh interpreter: a None entry in sys.modules makes ``import name`` fail
#: exactly as when the package is not installed, so numcodecs leaves those codecs unregistered.
WITHOUT_CODEC_PACKAGES = """
import sys
for name in ("zfpy", "pcodec", "msgpack", "google_crc32c", "crc32c"):
    sys.modules[name] = None
"""
READ_EACH = """
import json
import catalogue
from catalogue.chunks.codecs import ChunkError
from numcodecs.registry import codec_registry

found = {"registered": sorted(codec_registry)}
with catalogue.open(sys.argv[1]) as cat:
    for name, iri in json.loads(sys.argv[2]).items():
        for what, call in (("read", cat.read), ("resolve", cat.resolve)):
            try:
                call(iri)
                found[f"{name} {what}"] = None
            except ChunkError as exc:
                found[f"{name} {what}"] = str(exc)
print(json.dumps(found))
"""


def test_missing_codec_packages_are_one_line_errors_naming_the_package(optional_codecs, tmp_path):
    """Without zfpy, pcodec, msgpack or google-crc32c, a read names the package to install, on one line."""
    db, found = optional_codecs
    iris = {name: store.absolute().as_uri() for name, store in found.items()}
    proc = subprocess.run([sys.executable, "-c", WITHOUT_CODEC_PACKAGES + READ_EACH, db, json.dumps(iris)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert not {"zfpy", "pcodec", "msgpack2", "crc32c"} & set(got["registered"]), got["registered"]
    for name, message in MISSING_PACKAGE.items():
        error = got[f"{name} read"]
        assert error is not None and error.endswith(message) and "\n" not in error, (name, error)
        assert error.startswith(iris[name]), (name, error)  # and it names the chunk (or shard)
    # resolving reads only shard indexes: their crc32c needs the package, plain chunks need nothing
    assert got["v3_sharded resolve"].endswith(MISSING_PACKAGE["v3_sharded"]), got["v3_sharded resolve"]
    assert got["v3_zfpy resolve"] is None and got["v2_msgpack resolve"] is None

    target = tmp_path / "z.npy"
    cli = WITHOUT_CODEC_PACKAGES + "from catalogue.cli import main\nmain()\n"
    proc = subprocess.run([sys.executable, "-c", cli, "read", iris["v3_zfpy"], "-o", str(target), "--db", db],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.strip().endswith(MISSING_PACKAGE["v3_zfpy"]), proc.stderr
    assert not target.exists()


# ---------------------------------------------------------------------- CLI
def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_resolve_read_and_tensorstore_spec(catalogued, tmp_path):
    db, found = catalogued
    iri = (found["zarr_v2"] / "f_order").absolute().as_uri()
    code, out, _ = run("resolve", iri, "--selection", "0:2, 1:", "--db", db)
    result: dict[str, Any] = json.loads(out)
    assert code == 0 and [c["key"] for c in result["chunks"]] == ["0.0", "0.1"]
    with catalogue.open(db) as cat:
        assert result == cat.resolve(iri, "0:2, 1:")  # the streamed JSON is the API's result
    for indent in ("0", "4"):
        code, out, _ = run("resolve", iri, "--indent", indent, "--db", db)
        assert json.loads(out)["fill_chunks"] == 3 and len(json.loads(out)["chunks"]) == 4  # one chunk written
    target = tmp_path / "f.npy"
    code, _, err = run("read", iri, "--selection", "::-1, 2", "-o", str(target), "--db", db)
    assert code == 0 and "shape [4]" in err
    assert same(np.load(target), zarr_read(found["zarr_v2"], "f_order", (slice(None, None, -1), 2)))
    code, out, _ = run("tensorstore-spec", iri, "--assume-metadata", "--db", db)
    spec = json.loads(out)
    assert code == 0 and spec["driver"] == "zarr" and spec["metadata"]["order"] == "F" and spec["assume_metadata"]
    assert run("resolve", iri, "--selection", "9, 0", "--db", db)[0] == 2
    assert run("resolve", iri, "--selection", "a:b", "--db", db)[0] == 2
    assert run("read", iri + "/nope", "-o", str(target), "--db", db)[0] == 2


def test_tensorstore_kvstores_for_each_url_scheme():
    from catalogue.chunks.layout import UnsupportedArray
    from catalogue.chunks.tensorstore import kvstore

    assert kvstore("file:///data/a%20b.zarr/t") == {"driver": "file", "path": "/data/a b.zarr/t/"}
    assert kvstore("https://example.org/z.zarr/t") == {"driver": "http", "base_url": "https://example.org/z.zarr/t/"}
    assert kvstore("s3://bucket/z.zarr/t") == {"driver": "s3", "bucket": "bucket", "path": "z.zarr/t/"}
    with pytest.raises(UnsupportedArray, match="ftp"):
        kvstore("ftp://host/x")
