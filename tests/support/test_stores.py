"""Sanity tests for the store builders (tests/support/stores.py), the committed seed
examples (tests/support/data/seed_examples/) and the demo stores (examples/)."""

from __future__ import annotations

import base64
import difflib
import importlib.util
import json
import os
import pathlib
import struct

import numpy as np
import pytest
import zarr

from tests.support import stores
from tests.support.paths import EXAMPLES, SEED_EXAMPLES, SEEDS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


METADATA_NAMES = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def walk_nodes(path: pathlib.Path) -> dict[str, str]:
    """Nodes found by walking folders (symlinks not followed): rel path -> type."""
    nodes = {}
    for folder, _dirs, files in os.walk(path):
        rel = pathlib.Path(folder).relative_to(path).as_posix()
        rel = "" if rel == "." else rel
        names = set(files)
        if "zarr.json" in names:
            doc = json.loads((pathlib.Path(folder) / "zarr.json").read_text())
            nodes[rel] = doc["node_type"]
        if ".zarray" in names:
            nodes[rel] = "array"
        elif ".zgroup" in names:
            nodes[rel] = "group"
    return nodes


def files_of(path: pathlib.Path) -> dict[str, pathlib.Path]:
    return {
        p.relative_to(path).as_posix(): p
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def chunk_files(path: pathlib.Path) -> set[str]:
    return {k for k, p in files_of(path).items() if p.name not in METADATA_NAMES}


def load(path: pathlib.Path):
    return json.loads(path.read_text(encoding="utf-8"))


def zarr_nodes(path: pathlib.Path, fmt: int) -> dict[str, str]:
    """Nodes as zarr-python sees them, with every array read in full."""
    root = zarr.open(path, mode="r", zarr_format=fmt)
    if isinstance(root, zarr.Array):
        root[...]
        return {"": "array"}
    found = {"": "group"}
    for name, node in root.members(max_depth=None):
        if isinstance(node, zarr.Array):
            node[...]
            found[name] = "array"
        else:
            found[name] = "group"
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, pathlib.Path]:
    """Every good store, built once for the read-only tests of this module."""
    root = tmp_path_factory.mktemp("good")
    return {name: build(root) for name, build in stores.GOOD_STORES.items()}


# ---------------------------------------------------------------------------
# good stores: generic checks
# ---------------------------------------------------------------------------


def test_registries_are_consistent():
    assert set(stores.GOOD_STORES) == set(stores.GOOD_NODES) == set(stores.GOOD_FORMATS)
    assert set(stores.BAD_STORES) == set(stores.BAD_EXPECTED)
    assert not set(stores.GOOD_STORES) & set(stores.BAD_STORES)
    assert len(stores.GOOD_STORES) == 9
    assert len(stores.BAD_STORES) == 10


@pytest.mark.parametrize("name", sorted(stores.GOOD_STORES))
def test_good_store_returns_its_root(name, tmp_path):
    path = stores.GOOD_STORES[name](tmp_path)
    assert path == tmp_path / f"{name}.zarr"
    assert path.is_dir()
    with pytest.raises(FileExistsError):
        stores.GOOD_STORES[name](tmp_path)


@pytest.mark.parametrize("name", sorted(stores.GOOD_STORES))
def test_good_store_walk_finds_expected_nodes(name, built):
    assert walk_nodes(built[name]) == stores.GOOD_NODES[name]


@pytest.mark.parametrize("name", sorted(stores.GOOD_STORES))
def test_good_store_opens_with_zarr_python(name, built):
    expected = stores.GOOD_NODES[name]
    fmts = stores.GOOD_FORMATS[name]
    if isinstance(fmts, int):
        assert zarr_nodes(built[name], fmts) == expected
    else:  # tensorstore_arrays: one root, two formats
        assert zarr_nodes(built[name], 2) == {"": "group", "zarr2_array": "array"}
        assert zarr_nodes(built[name], 3) == {"": "group", "zarr3_sharded": "array"}


@pytest.mark.parametrize("name", sorted(stores.GOOD_STORES))
def test_good_store_metadata_is_valid_json_and_right_format(name, built):
    fmts = stores.GOOD_FORMATS[name]
    fmts = {fmts} if isinstance(fmts, int) else set(fmts)
    for rel, p in files_of(built[name]).items():
        if p.name in {"zarr.json", ".zarray", ".zgroup"}:
            doc = load(p)
            assert doc["zarr_format"] in fmts, rel
            assert doc["zarr_format"] == (3 if p.name == "zarr.json" else 2), rel
        elif p.name in {".zattrs", ".zmetadata"}:
            assert isinstance(load(p), dict), rel


@pytest.mark.parametrize("name", sorted(stores.GOOD_STORES))
def test_good_store_is_deterministic(name, tmp_path):
    a = stores.GOOD_STORES[name](tmp_path / "a")
    b = stores.GOOD_STORES[name](tmp_path / "b")
    fa, fb = files_of(a), files_of(b)
    assert sorted(fa) == sorted(fb)
    for rel, p in fa.items():
        if p.name in METADATA_NAMES:
            assert p.read_bytes() == fb[rel].read_bytes(), rel


@pytest.mark.parametrize("name", sorted(stores.GOOD_STORES))
def test_good_store_is_small_but_has_chunks(name, built):
    chunks = chunk_files(built[name])
    assert chunks, "stores should look real: some chunks written"
    total = sum((built[name] / c).stat().st_size for c in chunks)
    assert total < 32 * 1024


# ---------------------------------------------------------------------------
# good stores: what each one is meant to contain
# ---------------------------------------------------------------------------


def test_xarray_cf_v2(built):
    import xarray as xr

    path = built["xarray_cf_v2"]
    zmeta = load(path / ".zmetadata")
    assert zmeta["zarr_consolidated_format"] == 1
    assert set(zmeta["metadata"]) == {
        ".zgroup",
        ".zattrs",
        *(f"{v}/{f}" for v in ("air", "time", "lat", "lon") for f in (".zarray", ".zattrs")),
    }
    assert zmeta["metadata"][".zattrs"] == stores.CF_GLOBAL_ATTRS
    air = load(path / "air" / ".zarray")
    assert air["fill_value"] == -9999.0  # CF _FillValue goes to the v2 fill_value
    attrs = load(path / "air" / ".zattrs")
    assert attrs["_ARRAY_DIMENSIONS"] == ["time", "lat", "lon"]
    assert attrs["standard_name"] == "air_temperature" and attrs["units"] == "K"
    assert "_FillValue" not in attrs
    assert load(path / "lat" / ".zattrs")["units"] == "degrees_north"
    assert load(path / "time" / ".zattrs")["units"] == "days since 2020-01-01"
    assert not (path / "air" / "1.0.1").exists()  # all-missing chunk left unwritten
    ds = xr.open_zarr(path, consolidated=True)
    assert ds.attrs["Conventions"] == "CF-1.8"
    assert int(ds["air"].isnull().sum()) == 2 * 5 * 4


def test_xarray_cf_v3(built):
    import xarray as xr

    path = built["xarray_cf_v3"]
    root = load(path / "zarr.json")
    assert root["node_type"] == "group"
    assert root["attributes"] == stores.CF_GLOBAL_ATTRS
    cm = root["consolidated_metadata"]
    assert cm["kind"] == "inline" and cm["must_understand"] is False
    assert sorted(cm["metadata"]) == ["air", "lat", "lon", "time"]
    assert cm["metadata"]["air"] == load(path / "air" / "zarr.json")
    air = cm["metadata"]["air"]
    assert air["dimension_names"] == ["time", "lat", "lon"]
    assert air["fill_value"] == "NaN"
    # xarray stores the CF _FillValue as base64 of float64 bytes in the attributes
    assert struct.unpack("<d", base64.b64decode(air["attributes"]["_FillValue"])) == (-9999.0,)
    assert not (path / ".zmetadata").exists()
    ds = xr.open_zarr(path, consolidated=True)
    assert ds["lon"].attrs["standard_name"] == "longitude"


def test_zarr_v3_deep(built):
    path = built["zarr_v3_deep"]
    g2 = path / "group1" / "group2"
    for p in path.rglob("zarr.json"):
        assert "consolidated_metadata" not in load(p) or load(p)["consolidated_metadata"] is None
    raw = (path / "zarr.json").read_text()
    assert "0.30000000000000004" in raw and '"one": 1.0' in raw
    assert load(path / "zarr.json")["attributes"] == stores.DEEP_ROOT_ATTRS

    sharded = load(g2 / "sharded_f64" / "zarr.json")
    (codec,) = sharded["codecs"]
    assert codec["name"] == "sharding_indexed"
    assert codec["configuration"]["index_location"] == "end"
    assert codec["configuration"]["chunk_shape"] == [4, 4]
    assert [c["name"] for c in codec["configuration"]["codecs"]] == ["bytes", "zstd"]
    assert sharded["fill_value"] == "NaN"
    assert sharded["dimension_names"] == ["y", None]
    assert (g2 / "sharded_f64" / "c" / "0" / "1").exists()
    assert not (g2 / "sharded_f64" / "c" / "1").exists()

    big = load(g2 / "bigendian_f16" / "zarr.json")
    assert big["data_type"] == "float16" and big["fill_value"] == "-Infinity"
    assert big["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "gzip", "configuration": {"level": 5}},
        {"name": "crc32c"},
    ]
    # zarr-python drops the endian configuration for 1-byte types
    assert load(g2 / "int8_gzip" / "zarr.json")["codecs"][0] == {"name": "bytes"}

    dotted = load(g2 / "bool_dotted" / "zarr.json")
    assert dotted["chunk_key_encoding"] == {"name": "default", "configuration": {"separator": "."}}
    assert {p.name for p in (g2 / "bool_dotted").iterdir()} == {"zarr.json", "c.0.0", "c.1.1"}

    scalar = load(g2 / "complex_scalar" / "zarr.json")
    assert scalar["shape"] == [] and scalar["data_type"] == "complex128"
    assert scalar["fill_value"] == ["NaN", "-Infinity"]
    assert (g2 / "complex_scalar" / "c").is_file()
    assert zarr.open_array(g2 / "complex_scalar", mode="r")[()] == 3 + 4j

    dtypes = {load(p)["data_type"] for p in g2.rglob("zarr.json") if "data_type" in load(p)}
    assert dtypes == {"float64", "float16", "int8", "bool", "complex128"}


def test_zarr_v2_plain(built):
    path = built["zarr_v2_plain"]
    assert not (path / ".zmetadata").exists()
    arrays = {p.parent.relative_to(path).as_posix(): load(p) for p in path.rglob(".zarray")}
    assert {a["dimension_separator"] for a in arrays.values()} == {"/"}
    temp = arrays["temperature"]
    assert temp["order"] == "F"
    assert temp["compressor"]["id"] == "blosc"
    assert temp["filters"] == [{"id": "delta", "dtype": "<f4", "astype": "<f4"}]
    assert temp["fill_value"] == "NaN"
    assert (path / "temperature" / "0" / "1").is_file()
    assert not (path / "temperature" / "1").exists()
    assert arrays["records"]["dtype"] == [["station", "<i4"], ["value", "<f8"]]
    rec_fill = np.frombuffer(base64.b64decode(arrays["records"]["fill_value"]), stores.RECORD_DTYPE)
    assert rec_fill[0]["station"] == -1 and rec_fill[0]["value"] == 1.5
    assert arrays["station_codes"]["dtype"] == "|S4"
    assert base64.b64decode(arrays["station_codes"]["fill_value"]) == b"N/A\x00"
    assert arrays["counts"]["fill_value"] is None
    for name in arrays:
        assert load(path / name / ".zattrs")["_ARRAY_DIMENSIONS"]
    assert load(path / "sub" / ".zgroup") == {"zarr_format": 2}
    a = zarr.open_array(path / "temperature", mode="r")
    assert a.metadata.order == "F"
    assert np.isnan(a[4:, :]).all() and not np.isnan(a[:4, :]).any()


def test_tensorstore_arrays(built):
    path = built["tensorstore_arrays"]
    assert load(path / ".zgroup") == {"zarr_format": 2}
    assert load(path / "zarr.json")["node_type"] == "group"
    v2_text = (path / "zarr2_array" / ".zarray").read_text()
    assert "\n" not in v2_text.strip()  # tensorstore writes compact JSON
    v2 = json.loads(v2_text)
    assert list(v2) == sorted(v2)  # ... with sorted keys
    assert v2["dimension_separator"] == "/" and v2["compressor"] == {"id": "zlib", "level": 4}
    assert not (path / "zarr2_array" / ".zattrs").exists()
    assert sorted(chunk_files(path / "zarr2_array")) == ["0/0", "1/1"]
    v3 = load(path / "zarr3_sharded" / "zarr.json")
    assert v3["chunk_key_encoding"] == {"name": "default"}
    raw = (path / "zarr3_sharded" / "zarr.json").read_bytes()
    assert "Zählung — 計数 🌊".encode() in raw  # raw UTF-8, not \u escapes
    (codec,) = v3["codecs"]
    assert codec["name"] == "sharding_indexed"
    assert codec["configuration"]["index_location"] == "start"
    assert sorted(chunk_files(path / "zarr3_sharded")) == ["c/0/0", "c/1/1"]
    a = zarr.open_array(path / "zarr3_sharded", mode="r")
    assert a[1, 2] == 10 and a[15, 0] == 7 and a[15, 9] == 3


def _complete(primary: dict, partial: dict, key: str) -> dict:
    """The dependent-arrays convention's partial -> complete transformation."""
    doc = {k: v for k, v in primary.items() if k != "attributes"}
    attrs = {k: v for k, v in primary["attributes"].items() if k != key}
    doc.update({k: v for k, v in partial.items() if k != "attributes"})
    doc["attributes"] = partial.get("attributes", attrs)
    return doc


def _read_dependent(array_dir: pathlib.Path, doc: dict, chunk_prefix: str) -> np.ndarray:
    """Read a dependent array with zarr-python: chunk keys under chunk_prefix are
    moved to the base encoding, which zarr-python understands."""
    from zarr.storage import MemoryStore

    cke = doc["chunk_key_encoding"]
    if cke["name"] == "prefix":
        doc = {**doc, "chunk_key_encoding": {"name": cke["configuration"]["base_encoding"]}}
    proto = zarr.core.buffer.default_buffer_prototype()
    mem = {"zarr.json": proto.buffer.from_bytes(json.dumps(doc).encode())}
    for rel, p in files_of(array_dir).items():
        if rel.startswith(chunk_prefix) and p.name != "zarr.json":
            mem[rel[len(chunk_prefix) :]] = proto.buffer.from_bytes(p.read_bytes())
    return zarr.open_array(MemoryStore(mem), mode="r")[...]


def test_dependent_arrays(built):
    path = built["dependent_arrays"]
    ms = load(path / "multiscale" / "zarr.json")
    labels = load(path / "labels" / "zarr.json")
    assert set(ms["attributes"]["dependent-arrays"]) == {"s1", "s2"}
    assert "dependent_arrays" not in ms["attributes"]
    assert set(labels["attributes"]["dependent_arrays"]) == {"coarse", "alias"}
    assert "dependent-arrays" not in labels["attributes"]
    # primaries use standard encodings (zarr-python rejects "prefix")
    assert ms["chunk_key_encoding"]["name"] == labels["chunk_key_encoding"]["name"] == "default"
    deps = ms["attributes"]["dependent-arrays"]
    assert deps["s1"]["shape"] == [32, 32] and deps["s2"]["shape"] == [16, 16]
    assert deps["s1"]["chunk_key_encoding"] != deps["s2"]["chunk_key_encoding"]
    assert "attributes" in deps["s1"] and "attributes" not in deps["s2"]

    image = ((np.mgrid[0:64, 0:64][0] + np.mgrid[0:64, 0:64][1]) * 2).astype("uint8")
    s1 = _complete(ms, deps["s1"], "dependent-arrays")
    assert s1["attributes"] == {"long_name": "2x downsampled", "scale_factor": 2}
    got = _read_dependent(path / "multiscale", s1, "s1/")
    assert got.shape == (32, 32)
    assert (got[:16, :16] == image[::2, ::2][:16, :16]).all() and (got[16:] == 0).all()
    s2 = _complete(ms, deps["s2"], "dependent-arrays")
    assert s2["attributes"] == {"long_name": "full resolution"}
    got = _read_dependent(path / "multiscale", s2, "s2/")
    assert (got == image[::4, ::4]).all()

    coarse = _complete(labels, labels["attributes"]["dependent_arrays"]["coarse"], "x")
    got = _read_dependent(path / "labels", coarse, "")
    lab = (np.arange(32 * 32).reshape(32, 32) // 100).astype("int16")
    assert (got[:8, :8] == lab[::2, ::2][:8, :8]).all() and (got[8:] == -1).all()
    prim = zarr.open_array(path / "labels", mode="r")
    assert (prim[:16, :8] == lab[:16, :8]).all()
    assert sorted(chunk_files(path / "labels")) == ["0.0", "c.0.0", "c.1.0"]


def test_lone_arrays(built):
    v3 = built["zarr_v3_lone_array"]
    assert sorted(p.name for p in v3.iterdir()) == ["c", "zarr.json"]
    assert load(v3 / "zarr.json")["node_type"] == "array"
    assert sorted(chunk_files(v3)) == ["c/0/0", "c/0/1"]
    v2 = built["zarr_v2_lone_array"]
    assert sorted(p.name for p in v2.iterdir()) == [".zarray", ".zattrs", "0.0"]
    assert load(v2 / ".zattrs")["_ARRAY_DIMENSIONS"] == ["y", "x"]
    assert zarr.open_array(v2, mode="r").attrs["units"] == "K"


def test_zarr_v3_consolidated_nested(built):
    path = built["zarr_v3_consolidated_nested"]
    root = load(path / "zarr.json")
    meta = root["consolidated_metadata"]["metadata"]
    assert sorted(meta) == ["a", "a/b", "a/b/c", "a/x", "empty"]
    assert meta["a/b/c"] == load(path / "a" / "b" / "c" / "zarr.json")
    # nested group entries carry an empty consolidated_metadata of their own ...
    for key in ("a", "a/b", "empty"):
        assert meta[key]["consolidated_metadata"]["metadata"] == {}
    # ... and the sub-groups' zarr.json files on disk carry none
    for sub in ("a", "a/b", "empty"):
        assert "consolidated_metadata" not in load(path / sub / "zarr.json")
    g = zarr.open_group(path, mode="r", use_consolidated=True)
    assert g.metadata.consolidated_metadata is not None
    assert sorted(k for k, _ in g.members(max_depth=None)) == sorted(meta)


def test_big_v3_hierarchy(tmp_path):
    path = stores.big_v3_hierarchy(tmp_path)
    nodes = walk_nodes(path)
    assert sum(t == "array" for t in nodes.values()) == 1000
    assert sum(t == "group" for t in nodes.values()) == 21  # 20 + root
    assert not chunk_files(path)
    doc = load(path / "group_003" / "var_00003" / "zarr.json")
    assert doc["attributes"]["standard_name"] == "relative_humidity"
    assert doc["dimension_names"] == ["time", "lat", "lon"]
    g = zarr.open_group(path, mode="r")
    assert len(list(g["group_000"].arrays())) == 50


def test_big_v3_hierarchy_small_and_flat(tmp_path):
    path = stores.big_v3_hierarchy(tmp_path / "s", n_arrays=7, n_groups=3)
    assert sorted(walk_nodes(path).values()).count("array") == 7
    flat = stores.big_v3_hierarchy(tmp_path / "f", n_arrays=4, n_groups=0)
    assert walk_nodes(flat) == {"": "group", **{f"var_{i:05d}": "array" for i in range(4)}}


# ---------------------------------------------------------------------------
# bad stores
# ---------------------------------------------------------------------------


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys {keys}")
    return dict(pairs)


def check_malformed_json(f: pathlib.Path):
    with pytest.raises(json.JSONDecodeError):
        json.loads(f.read_text())
    assert f.read_text().rstrip().endswith(",")


def check_wrong_types(f: pathlib.Path):
    doc = load(f)
    assert doc["shape"] == "100" and doc["node_type"] == "array"


def check_missing_key(f: pathlib.Path):
    doc = load(f)
    assert "dtype" not in doc and {"shape", "chunks", "zarr_format"} <= set(doc)


def check_huge_attributes(f: pathlib.Path):
    assert f.stat().st_size >= stores.HUGE_ATTRIBUTES_BYTES
    assert load(f)["units"] == "K"
    assert load(f.parent / ".zarray")["zarr_format"] == 2


def check_symlink_loop(f: pathlib.Path):
    assert f.is_symlink()
    assert f.resolve() == f.parent.resolve()
    assert (f / "loop" / "loop" / ".zgroup").is_file()


def check_empty_folder(f: pathlib.Path):
    assert f.is_dir() and not any(f.iterdir())


def check_not_utf8(f: pathlib.Path):
    with pytest.raises(UnicodeDecodeError):
        f.read_bytes().decode("utf-8")


def check_deeply_nested(f: pathlib.Path):
    text = f.read_text()
    assert text.count("[") == stores.DEEP_NESTING
    with pytest.raises(RecursionError):
        json.loads(text)


def check_duplicate_keys(f: pathlib.Path):
    text = f.read_text()
    assert json.loads(text) == {"units": "degC", "long_name": "temperature"}  # last one wins
    with pytest.raises(ValueError, match="duplicate"):
        json.loads(text, object_pairs_hook=_no_duplicates)


def check_bad_child(f: pathlib.Path):
    with pytest.raises(json.JSONDecodeError):
        json.loads(f.read_text())
    root = f.parent.parent
    good = zarr.open_array(root / "good", mode="r")
    assert list(good[:]) == [1, 2, 0, 0]
    assert load(root / ".zgroup") == {"zarr_format": 2}


BAD_CHECKS = {
    "malformed_json": check_malformed_json,
    "wrong_types": check_wrong_types,
    "missing_key": check_missing_key,
    "huge_attributes": check_huge_attributes,
    "symlink_loop": check_symlink_loop,
    "empty_folder": check_empty_folder,
    "not_utf8": check_not_utf8,
    "deeply_nested": check_deeply_nested,
    "duplicate_keys": check_duplicate_keys,
    "bad_child": check_bad_child,
}


def test_every_bad_store_has_a_check():
    assert set(BAD_CHECKS) == set(stores.BAD_STORES)


@pytest.mark.parametrize("name", sorted(stores.BAD_STORES))
def test_bad_store_has_its_defect(name, tmp_path):
    path = stores.BAD_STORES[name](tmp_path)
    assert path == tmp_path / f"{name}.zarr" and path.is_dir()
    rel, pointer = stores.BAD_EXPECTED[name]
    target = path / rel if rel else path
    assert target.exists() or target.is_symlink()
    assert pointer == "" or pointer.startswith("/")
    BAD_CHECKS[name](target)


@pytest.mark.parametrize("name", ["wrong_types", "missing_key"])
def test_bad_pointer_names_the_offending_member(name, tmp_path):
    path = stores.BAD_STORES[name](tmp_path)
    rel, pointer = stores.BAD_EXPECTED[name]
    member = pointer.lstrip("/")
    doc = load(path / rel)
    if name == "wrong_types":
        assert not isinstance(doc[member], list)
    else:
        assert member not in doc


@pytest.mark.parametrize("name", ["malformed_json", "wrong_types", "missing_key", "not_utf8"])
def test_zarr_python_rejects_bad_store(name, tmp_path):
    path = stores.BAD_STORES[name](tmp_path)
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        zarr.open(path, mode="r")


def test_nonexistent(tmp_path):
    path = stores.nonexistent(tmp_path)
    assert not path.exists() and path.parent == tmp_path
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------------------
# seed examples
# ---------------------------------------------------------------------------


def test_seed_building_block():
    f = SEED_EXAMPLES / "building-block" / ".zarray"
    doc = load(f)
    assert doc["fill_value"] == "NaN" and doc["filters"][0]["astype"] == "<f4"
    assert zarr.open_array(f.parent, mode="r").shape == (10000, 10000)
    if not SEEDS.is_dir():
        pytest.skip("shared/seeds not beside the repo")
    lines = (SEEDS / "geozarr-zarr-array-metadata-building-block.txt").read_text().splitlines()
    start = lines.index("```json")
    end = lines.index("```", start + 1)
    assert f.read_text() == "\n".join(lines[start + 1 : end]) + "\n"


def test_seed_zep6_v3():
    root = SEED_EXAMPLES / "zep6-v3"
    assert load(root / "zarr.json") == {
        "zarr_format": 3,
        "node_type": "group",
        "attributes": {"foo": 42, "bar": False},
    }
    arr = load(root / "array" / "zarr.json")
    assert arr["data_type"] == "|u1"
    assert arr["codecs"] == [{"name": "GZip", "configuration": {"level": 1}}]
    assert arr["storage_transformers"] is None
    assert arr["attributes"] == {"baz": [1, 2, 3]}
    assert arr["chunk_grid"]["configuration"]["chunk_shape"] == [1000, 100]
    assert walk_nodes(root) == {"": "group", "array": "array"}


def test_seed_zep6_v2():
    root = SEED_EXAMPLES / "zep6-v2"
    foo = load(root / "foo" / ".zarray")
    assert foo["filters"] == {} and foo["dimension_separator"] == "/"
    assert load(root / ".zattrs") == {"foo": 42, "bar": False}
    assert load(root / "foo" / ".zattrs") == {"baz": True}
    assert zarr_nodes_meta_only(root) == {"": "group", "foo": "array"}


def zarr_nodes_meta_only(path: pathlib.Path) -> dict[str, str]:
    g = zarr.open_group(path, mode="r", zarr_format=2)
    return {"": "group", **{k: type(v).__name__.lower() for k, v in g.members(max_depth=None)}}


def test_seed_dependent_arrays_verbatim_and_corrected():
    verbatim = (SEED_EXAMPLES / "dependent-arrays-verbatim" / "zarr.json").read_text()
    fixed = (SEED_EXAMPLES / "dependent-arrays" / "zarr.json").read_text()
    with pytest.raises(json.JSONDecodeError):
        json.loads(verbatim)
    doc = json.loads(fixed)
    assert doc["chunk_key_encoding"] == {
        "name": "prefix",
        "configuration": {"prefix": "s0/", "base_encoding": "default"},
    }
    assert doc["codecs"] == ["bytes", "gzip"]
    assert "fill_value" not in doc
    deps = doc["attributes"]["dependent_arrays"]
    assert deps["s1"]["chunk_key_encoding"]["name"] == "suffix"
    assert deps["s2"]["shape"] == [32, 32]
    # only the three documented edits
    diff = [
        line
        for line in difflib.unified_diff(verbatim.splitlines(), fixed.splitlines(), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff == [
        '-      "name": "prefix"',
        '+      "name": "prefix",',
        "-      },",
        "+      }",
        "+  },",
        "-            },                ",
        "+            }                ",
    ]
    if SEEDS.is_dir():
        seed = (SEEDS / "dependent-arrays-convention.txt").read_text()
        assert verbatim.rstrip("\n") in seed


# ---------------------------------------------------------------------------
# examples/
# ---------------------------------------------------------------------------


def _make_examples():
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples_are_committed_and_small():
    mod = _make_examples()
    total = 0
    for name in mod.NAMES:
        store = EXAMPLES / name
        assert store.is_dir(), f"run examples/make_examples.py ({name} missing)"
        total += sum(p.stat().st_size for p in files_of(store).values())
    assert total < 300 * 1024


def test_examples_regenerate_identically(tmp_path, capsys):
    mod = _make_examples()
    mod.main([str(tmp_path)])
    for name in mod.NAMES:
        new, old = files_of(tmp_path / name), files_of(EXAMPLES / name)
        assert sorted(new) == sorted(old), name
        for rel, p in new.items():
            assert p.read_bytes() == old[rel].read_bytes(), f"{name}/{rel}"


def test_examples_open():
    import xarray as xr

    v3 = xr.open_zarr(EXAMPLES / "cf_air_temperature_v3.zarr", consolidated=True)
    assert v3.attrs["Conventions"] == "CF-1.8"
    assert {"title", "summary", "keywords", "institution"} <= set(v3.attrs)
    assert v3["tas"].attrs["standard_name"] == "air_temperature"
    assert set(v3.coords) == {"time", "lat", "lon"}
    assert "consolidated_metadata" in load(EXAMPLES / "cf_air_temperature_v3.zarr" / "zarr.json")
    v2 = xr.open_zarr(EXAMPLES / "cf_sea_surface_v2.zarr", consolidated=True)
    assert v2["sst"].attrs["units"] == "K"
    assert (EXAMPLES / "cf_sea_surface_v2.zarr" / ".zmetadata").is_file()
    ocean = EXAMPLES / "ocean_model_v3.zarr"
    assert zarr_nodes(ocean, 3) == {
        "": "group",
        "grid": "group",
        "grid/depth": "array",
        "grid/land_mask": "array",
        "ocean": "group",
        "ocean/surface": "group",
        "ocean/surface/ssh": "array",
        "ocean/profiles": "group",
        "ocean/profiles/temperature": "array",
        "ocean/profiles/salinity": "array",
        "ocean/profiles/station_count": "array",
    }
    ssh = load(ocean / "ocean" / "surface" / "ssh" / "zarr.json")
    assert ssh["codecs"][0]["name"] == "sharding_indexed"
