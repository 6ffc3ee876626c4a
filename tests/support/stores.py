"""Zarr stores for tests, demos and benchmarks.

Every ``build_xxx(root)`` writes one store under ``root`` (a folder named
``<name>.zarr``) and returns that store's root folder.  The good stores are
written by the real clients (zarr-python 3.1, xarray, tensorstore); only what a
client cannot produce is written by hand, and each such file is marked
"hand-made" below.

All builders are deterministic: fixed names, seeded data, fixed attribute
values.  Metadata documents are byte-identical between runs.  Chunk files are
byte-identical too, except gzip chunks written by zarr-python/numcodecs, whose
gzip header carries the current time (``GzipFile`` without ``mtime``).

Registries:

* ``GOOD_STORES``: name -> builder, each producing a valid hierarchy.
* ``GOOD_NODES``: name -> {node path relative to the store root ("" for the
  root): "group" | "array"} for every node a walk of the folders finds
  (for ``tensorstore_arrays`` the root is both a v2 and a v3 group: see there).
* ``BAD_STORES``: name -> builder of a deliberately broken store.
* ``BAD_EXPECTED``: name -> (relative path of the failing file or folder,
  JSON pointer).  The pointer is "" when the failure happens before or while
  parsing (not JSON, not UTF-8, too big, too deep, duplicate keys, symlink
  loop, no metadata at all), and points at the offending member when the
  document parses but fails validation (wrong type, missing required key:
  the pointer names the member that is missing).

``big_hierarchy``/``big_v3_hierarchy`` (benchmarks), ``build_client_variety``
(validation) and ``build_optional_codecs`` (chunk reads) are not in ``GOOD_STORES``.
``nonexistent(root)`` returns a path that does not exist.
"""

from __future__ import annotations

import json
import os
import pathlib
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

Builder = Callable[[pathlib.Path], pathlib.Path]

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the warnings the clients emit for things we do on purpose
    (consolidated metadata in v3, both .zgroup and zarr.json at one root...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _fresh(root: pathlib.Path, name: str) -> pathlib.Path:
    """Return root/name, which must not exist yet (builders never overwrite)."""
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    if path.exists() or path.is_symlink():
        raise FileExistsError(path)
    return path


def _write_json(path: pathlib.Path, doc: Any, indent: int | None = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent) + "\n", encoding="utf-8")


def _copy_chunks(
    source: dict[str, Any], dest: pathlib.Path, rename: Callable[[str], str]
) -> list[str]:
    """Copy the chunk entries of a zarr-python MemoryStore dict into dest,
    renaming each key; metadata entries are skipped.  Returns the new keys."""
    written = []
    for key in sorted(source):
        if key.endswith(("zarr.json", ".zarray", ".zattrs", ".zgroup")):
            continue
        new = rename(key)
        target = dest / new
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source[key].to_bytes())
        written.append(new)
    return written


# ---------------------------------------------------------------------------
# xarray CF datasets
# ---------------------------------------------------------------------------

CF_GLOBAL_ATTRS = {
    "title": "Synthetic 2 m air temperature",
    "summary": "Four days of synthetic near-surface air temperature on a coarse "
    "global grid, written by xarray for the zarr-catalogue tests.",
    "keywords": "air temperature, surface, synthetic, test",
    "institution": "zarr-catalogue test suite",
    "Conventions": "CF-1.8",
}


def cf_air_dataset():
    """The small CF dataset shared by the two xarray builders.

    air(time=4, lat=5, lon=8) float32 in K, chunks (2, 5, 4); the eastern half
    of the last two days is missing, so with zarr-python's default
    ``write_empty_chunks=False`` the chunk (1, 0, 1) is never written.
    """
    import pandas as pd
    import xarray as xr

    rng = np.random.default_rng(20240101)
    time = pd.date_range("2020-01-01", periods=4, freq="D")
    lat = np.linspace(-60.0, 60.0, 5, dtype="float32")
    lon = np.linspace(0.0, 315.0, 8, dtype="float32")
    base = 288.0 - 30.0 * (np.abs(lat)[:, None] / 60.0) + 0.0 * lon[None, :]
    air = (base[None, :, :] + rng.normal(0.0, 2.0, (4, 5, 8))).astype("float32")
    air = np.round(air, 2)
    air[2:, :, 4:] = np.nan
    ds = xr.Dataset(
        {
            "air": (
                ("time", "lat", "lon"),
                air,
                {
                    "standard_name": "air_temperature",
                    "long_name": "Air temperature at 2 m",
                    "units": "K",
                },
            )
        },
        coords={
            "time": ("time", time, {"standard_name": "time", "long_name": "time"}),
            "lat": (
                "lat",
                lat,
                {"standard_name": "latitude", "long_name": "latitude", "units": "degrees_north"},
            ),
            "lon": (
                "lon",
                lon,
                {"standard_name": "longitude", "long_name": "longitude", "units": "degrees_east"},
            ),
        },
        attrs=dict(CF_GLOBAL_ATTRS),
    )
    ds["air"].encoding = {"_FillValue": np.float32(-9999.0), "chunks": (2, 5, 4)}
    ds["time"].encoding = {"units": "days since 2020-01-01", "calendar": "standard"}
    return ds


def build_xarray_cf_v2(root: pathlib.Path) -> pathlib.Path:
    """xarray -> Zarr v2 with consolidated .zmetadata (one-line JSON)."""
    path = _fresh(root, "xarray_cf_v2.zarr")
    with _quiet():
        cf_air_dataset().to_zarr(path, mode="w-", zarr_format=2, consolidated=True)
    return path


def build_xarray_cf_v3(root: pathlib.Path) -> pathlib.Path:
    """xarray -> Zarr v3 with inline consolidated_metadata in the root zarr.json."""
    path = _fresh(root, "xarray_cf_v3.zarr")
    with _quiet():
        cf_air_dataset().to_zarr(path, mode="w-", zarr_format=3, consolidated=True)
    return path


# ---------------------------------------------------------------------------
# zarr-python v3, three levels deep
# ---------------------------------------------------------------------------

DEEP_ROOT_ATTRS = {
    "title": "Deep v3 hierarchy — Zürich 東京 🌊",
    "nested": [[1, [2, None]], [], ["a", [True, False]]],
    "missing": None,
    "one": 1.0,
    "point_three": 0.1 + 0.2,  # 0.30000000000000004
    "big_int": 2**53 + 1,
    "mapping": {"empty": {}, "list_of_maps": [{"k": "v"}, {"k": None}]},
}


def build_zarr_v3_deep(root: pathlib.Path) -> pathlib.Path:
    """zarr-python v3: root/group1/group2/<arrays>, no consolidated metadata."""
    import zarr
    from zarr.codecs import BytesCodec, Crc32cCodec, GzipCodec, ZstdCodec

    path = _fresh(root, "zarr_v3_deep.zarr")
    rng = np.random.default_rng(3)
    with _quiet():
        g = zarr.open_group(path, mode="w-", zarr_format=3, attributes=DEEP_ROOT_ATTRS)
        g1 = g.create_group("group1", attributes={"level": 1, "description": "first level"})
        g2 = g1.create_group("group2", attributes={"level": 2, "ratio": 0.5, "tags": []})

        # sharding_indexed (index at the end), inner zstd, fill NaN, a null dimension name
        sharded = g2.create_array(
            "sharded_f64",
            shape=(16, 16),
            chunks=(4, 4),
            shards=(8, 8),
            dtype="float64",
            compressors=[ZstdCodec(level=3)],
            fill_value=float("nan"),
            dimension_names=["y", None],
            attributes={"units": "m", "long_name": "sharded float64"},
        )
        sharded[:8, :12] = rng.normal(size=(8, 12))  # shards (0,0) and (0,1); row 1 unwritten

        # big-endian bytes codec + gzip + crc32c, float16, fill -Infinity
        big = g2.create_array(
            "bigendian_f16",
            shape=(12,),
            chunks=(4,),
            dtype="float16",
            serializer=BytesCodec(endian="big"),
            compressors=[GzipCodec(level=5), Crc32cCodec()],
            fill_value=float("-inf"),
            dimension_names=["t"],
        )
        big[:8] = np.arange(8, dtype="float16") / 4

        # int8 with gzip
        i8 = g2.create_array(
            "int8_gzip",
            shape=(6, 6),
            chunks=(3, 3),
            dtype="int8",
            compressors=[GzipCodec(level=1)],
            fill_value=-1,
        )
        i8[:3, :3] = rng.integers(-100, 100, (3, 3), dtype="int8")

        # bool with "." separated chunk keys: c.0.0, c.1.1
        flags = g2.create_array(
            "bool_dotted",
            shape=(4, 4),
            chunks=(2, 2),
            dtype="bool",
            chunk_key_encoding={"name": "default", "separator": "."},
            fill_value=False,
            attributes={"flag_meanings": "off on"},
        )
        flags[:2, :2] = True
        flags[2:, 2:] = [[True, False], [False, True]]

        # 0-d complex128 with a complex fill value of NaN and -Infinity parts
        scalar = g2.create_array(
            "complex_scalar",
            shape=(),
            dtype="complex128",
            fill_value=complex(float("nan"), float("-inf")),
            attributes={"note": "0-d array, chunk key 'c'"},
        )
        scalar[()] = 3 + 4j
    return path


# ---------------------------------------------------------------------------
# zarr-python v2 format, no .zmetadata
# ---------------------------------------------------------------------------

RECORD_DTYPE = [("station", "<i4"), ("value", "<f8")]


def build_zarr_v2_plain(root: pathlib.Path) -> pathlib.Path:
    """zarr-python zarr_format=2 hierarchy, dimension_separator "/", no .zmetadata."""
    import zarr
    from numcodecs import Blosc, Delta

    path = _fresh(root, "zarr_v2_plain.zarr")
    slash = {"name": "v2", "separator": "/"}
    rng = np.random.default_rng(2)
    with _quiet():
        g = zarr.open_group(
            path,
            mode="w-",
            zarr_format=2,
            attributes={"title": "Plain v2 hierarchy", "history": "written by zarr-python"},
        )
        temp = g.create_array(
            "temperature",
            shape=(8, 6),
            chunks=(4, 3),
            dtype="<f4",
            order="F",
            compressors=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE),
            filters=[Delta(dtype="<f4")],
            fill_value=float("nan"),
            chunk_key_encoding=slash,
            attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "units": "degC"},
        )
        temp[:4, :] = np.round(rng.normal(15.0, 3.0, (4, 6)), 1)  # chunks 0/0, 0/1

        codes = g.create_array(
            "station_codes",
            shape=(6,),
            chunks=(3,),
            dtype="|S4",
            fill_value=b"N/A\x00",  # written as base64 "Ti9BAA=="
            chunk_key_encoding=slash,
            attributes={"_ARRAY_DIMENSIONS": ["station"]},
        )
        codes[:3] = [b"ABCD", b"EFGH", b"IJ"]

        records = g.create_array(
            "records",
            shape=(5,),
            chunks=(5,),
            dtype=RECORD_DTYPE,
            fill_value=np.array((-1, 1.5), dtype=RECORD_DTYPE)[()],  # base64 fill
            chunk_key_encoding=slash,
            attributes={"_ARRAY_DIMENSIONS": ["record"]},
        )
        records[:] = np.array([(i, i * 0.5) for i in range(5)], dtype=RECORD_DTYPE)

        counts = g.create_array(
            "counts",
            shape=(4,),
            chunks=(2,),
            dtype="<i8",
            fill_value=None,  # "fill_value": null
            chunk_key_encoding=slash,
            attributes={"_ARRAY_DIMENSIONS": ["station_pair"]},
        )
        counts[:2] = [10, 20]

        sub = g.create_group("sub", attributes={"description": "nested subgroup"})
        depth = sub.create_array(
            "depth",
            shape=(3, 4),
            chunks=(3, 2),
            dtype="<u2",
            chunk_key_encoding=slash,
            attributes={"_ARRAY_DIMENSIONS": ["z", "x"], "units": "m", "positive": "down"},
        )
        depth[:, :2] = [[5, 10], [15, 20], [25, 30]]
    return path


# ---------------------------------------------------------------------------
# tensorstore
# ---------------------------------------------------------------------------


def build_tensorstore_arrays(root: pathlib.Path) -> pathlib.Path:
    """A tensorstore ``zarr`` (v2) array and a tensorstore ``zarr3`` sharded array
    (index_location "start") side by side in one folder.

    A v2 array cannot be a member of a v3 group and vice versa, so the root is
    a group in BOTH formats (zarr-python writes .zgroup/.zattrs and zarr.json):
    read as v2 its only member is ``zarr2_array``, read as v3 its only member
    is ``zarr3_sharded``.  zarr-python prefers v3 when both exist (with a
    warning).  tensorstore writes compact, key-sorted JSON with raw UTF-8
    (zarr-python writes indented JSON with \\uXXXX escapes), no .zattrs for the
    v2 array, and ``chunk_key_encoding`` without a configuration.
    """
    import tensorstore as ts
    import zarr

    path = _fresh(root, "tensorstore_arrays.zarr")
    with _quiet():
        zarr.open_group(
            path,
            mode="w-",
            zarr_format=3,
            attributes={"title": "tensorstore arrays", "writer": "tensorstore"},
        )
        zarr.open_group(
            path,
            mode="a",
            zarr_format=2,
            attributes={"title": "tensorstore arrays", "writer": "tensorstore"},
        )
    v2 = ts.open(
        {
            "driver": "zarr",
            "kvstore": {"driver": "file", "path": str(path / "zarr2_array")},
            "metadata": {
                "shape": [10, 12],
                "chunks": [5, 6],
                "dtype": "<i2",
                "compressor": {"id": "zlib", "level": 4},
                "fill_value": -1,
                "order": "C",
                "dimension_separator": "/",
            },
        },
        create=True,
    ).result()
    v2[:5, :6] = np.arange(30, dtype="<i2").reshape(5, 6)
    v2[5:, 6:] = np.arange(30, dtype="<i2").reshape(5, 6) * 2

    v3 = ts.open(
        {
            "driver": "zarr3",
            "kvstore": {"driver": "file", "path": str(path / "zarr3_sharded")},
            "metadata": {
                "shape": [16, 16],
                "data_type": "uint16",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
                "chunk_key_encoding": {"name": "default"},
                "fill_value": 7,
                "codecs": [
                    {
                        "name": "sharding_indexed",
                        "configuration": {
                            "chunk_shape": [4, 4],
                            "codecs": [
                                {"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "gzip", "configuration": {"level": 5}},
                            ],
                            "index_codecs": [
                                {"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "crc32c"},
                            ],
                            "index_location": "start",
                        },
                    }
                ],
                "dimension_names": ["y", "x"],
                "attributes": {
                    "source": "tensorstore zarr3 driver",
                    "units": "counts",
                    "long_name": "Zählung — 計数 🌊",  # tensorstore writes raw UTF-8
                },
            },
        },
        create=True,
    ).result()
    v3[:8, :8] = np.arange(64, dtype="uint16").reshape(8, 8)
    v3[8:, 8:12] = np.full((8, 4), 3, dtype="uint16")
    return path


# ---------------------------------------------------------------------------
# dependent arrays convention
# ---------------------------------------------------------------------------

# zarr-python 3.1 only registers the "default" and "v2" chunk key encodings and
# refuses an array whose zarr.json names "prefix" (ValueError: Unknown chunk key
# encoding).  So the PRIMARY arrays use standard encodings (default "/" for
# "multiscale", default "." for "labels") and the proposed "prefix" encoding
# only appears inside the dependent (partial) documents in the attributes.

MULTISCALE_DEPENDENTS = {
    "s1": {
        "shape": [32, 32],
        "chunk_key_encoding": {
            "name": "prefix",
            "configuration": {"prefix": "s1/", "base_encoding": "default"},
        },
        "attributes": {"long_name": "2x downsampled", "scale_factor": 2},
    },
    "s2": {
        "shape": [16, 16],
        "chunk_key_encoding": {
            "name": "prefix",
            "configuration": {"prefix": "s2/", "base_encoding": "default"},
        },
    },
}

LABELS_DEPENDENTS = {
    # v2 "." keys ("0.0") never collide with default "." keys ("c.0.0")
    "coarse": {
        "shape": [16, 16],
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
        "attributes": {"long_name": "coarse labels"},
    },
    # a copy of the primary that differs only in its key separator: "c/0/0" never
    # collides with the primary's "c.0.0" (an empty partial {} would: see test_validate)
    "alias": {"chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}},
}


def build_dependent_arrays(root: pathlib.Path) -> pathlib.Path:
    """v3 group with two primary arrays declaring dependent arrays in attributes.

    ``multiscale`` uses the ``dependent-arrays`` key (as the convention text
    says), ``labels`` uses ``dependent_arrays`` (as the convention's example
    JSON spells it).  Dependent chunks are written next to the primary chunks
    under their own keys (s1/c/0/0, s2/c/0/0, 0.0).
    """
    import zarr
    from zarr.codecs import GzipCodec
    from zarr.storage import MemoryStore

    path = _fresh(root, "dependent_arrays.zarr")
    with _quiet():
        g = zarr.open_group(
            path,
            mode="w-",
            zarr_format=3,
            attributes={"title": "dependent arrays convention"},
        )
        yy, xx = np.mgrid[0:64, 0:64]
        image = ((xx + yy) * 2).astype("uint8")
        prim = g.create_array(
            "multiscale",
            shape=(64, 64),
            chunks=(16, 16),
            dtype="uint8",
            compressors=[GzipCodec(level=1)],
            fill_value=0,
            dimension_names=["a", "b"],
            attributes={
                "long_name": "full resolution",
                "dependent-arrays": MULTISCALE_DEPENDENTS,
            },
        )
        prim[:32, :32] = image[:32, :32]  # c/0/0 c/0/1 c/1/0 c/1/1
        for name, factor in (("s1", 2), ("s2", 4)):
            mem: dict[str, Any] = {}
            dep = zarr.create_array(
                MemoryStore(mem),
                shape=(64 // factor, 64 // factor),
                chunks=(16, 16),
                dtype="uint8",
                compressors=[GzipCodec(level=1)],
                fill_value=0,
            )
            dep[:16, :16] = image[::factor, ::factor][:16, :16]
            _copy_chunks(mem, path / "multiscale", lambda k, n=name: f"{n}/{k}")

        labels = g.create_array(
            "labels",
            shape=(32, 32),
            chunks=(8, 8),
            dtype="int16",
            chunk_key_encoding={"name": "default", "separator": "."},
            fill_value=-1,
            dimension_names=["y", "x"],
            attributes={"long_name": "labels", "dependent_arrays": LABELS_DEPENDENTS},
        )
        lab = (np.arange(32 * 32).reshape(32, 32) // 100).astype("int16")
        labels[:16, :8] = lab[:16, :8]  # c.0.0 c.1.0
        mem = {}
        dep = zarr.create_array(
            MemoryStore(mem),
            shape=(16, 16),
            chunks=(8, 8),
            dtype="int16",
            chunk_key_encoding={"name": "v2", "separator": "."},
            fill_value=-1,
        )
        dep[:8, :8] = lab[::2, ::2][:8, :8]
        _copy_chunks(mem, path / "labels", lambda k: k)  # "0.0"
    return path


# ---------------------------------------------------------------------------
# lone arrays
# ---------------------------------------------------------------------------


def build_zarr_v3_lone_array(root: pathlib.Path) -> pathlib.Path:
    """Store whose root is a single v3 array (zarr.json with node_type array)."""
    import zarr

    path = _fresh(root, "zarr_v3_lone_array.zarr")
    with _quiet():
        a = zarr.create_array(
            path,
            shape=(10, 10),
            chunks=(5, 5),
            dtype="float32",
            fill_value=0.0,
            zarr_format=3,
            dimension_names=["y", "x"],
            attributes={
                "standard_name": "surface_altitude",
                "long_name": "Surface altitude",
                "units": "m",
            },
        )
        a[:5, :] = np.linspace(0, 100, 50, dtype="float32").reshape(5, 10)  # 2 of 4 chunks
    return path


def build_zarr_v2_lone_array(root: pathlib.Path) -> pathlib.Path:
    """Store whose root is a single v2 array (.zarray + .zattrs)."""
    import zarr

    path = _fresh(root, "zarr_v2_lone_array.zarr")
    with _quiet():
        a = zarr.create_array(
            path,
            shape=(10, 10),
            chunks=(5, 5),
            dtype="<f8",
            fill_value=float("nan"),
            zarr_format=2,
            attributes={
                "_ARRAY_DIMENSIONS": ["y", "x"],
                "standard_name": "sea_surface_temperature",
                "units": "K",
            },
        )
        a[:5, :5] = np.full((5, 5), 290.5)  # chunk 0.0 only
    return path


# ---------------------------------------------------------------------------
# consolidated v3, nested
# ---------------------------------------------------------------------------


def build_zarr_v3_consolidated_nested(root: pathlib.Path) -> pathlib.Path:
    """zarr-python v3, nested groups, then ``zarr.consolidate_metadata``.

    Only the root zarr.json carries consolidated_metadata; its ``metadata``
    is keyed by flat paths ("a", "a/b", "a/b/c", ...).  Group entries inside
    it carry an empty ``consolidated_metadata`` of their own.
    """
    import zarr

    path = _fresh(root, "zarr_v3_consolidated_nested.zarr")
    with _quiet():
        g = zarr.open_group(path, mode="w-", zarr_format=3, attributes={"title": "consolidated"})
        a = g.create_group("a", attributes={"level": 1})
        b = a.create_group("b", attributes={"level": 2})
        c = b.create_array(
            "c",
            shape=(4,),
            chunks=(2,),
            dtype="int32",
            dimension_names=["n"],
            attributes={"long_name": "deepest array"},
        )
        c[:2] = [1, 2]
        x = a.create_array("x", shape=(3, 3), chunks=(3, 3), dtype="float64", fill_value=1.0)
        x[:] = np.eye(3)
        g.create_group("empty")
        zarr.consolidate_metadata(path)
    return path


# ---------------------------------------------------------------------------
# client variety: many codecs, data types and layouts, each as its client writes it
# ---------------------------------------------------------------------------


def build_client_variety(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """Stores covering the codecs, data types, fill values and layouts the clients write.

    Returns name -> store root: ``zarr_v3`` and ``zarr_v2`` (zarr-python groups of
    arrays: blosc/zstd/gzip/crc32c/none, transpose, sharding (nested too), big-endian, F order,
    0-d, empty, bool, complex, NaN/inf fills, strings, bytes, datetimes,
    structured, numcodecs filters), ``xarray_v2``/``xarray_v3`` (CF variables
    with a grid mapping and coordinates) and one folder per tensorstore array
    (``ts3_*``/``ts2_*``, including sharding with the index at the start).
    Every array gets a little data, so chunk files exist. Not in GOOD_STORES:
    its node list is long and it is only needed by validation (and chunk) tests.
    """
    import numcodecs
    import pandas as pd
    import tensorstore as ts
    import xarray as xr
    import zarr
    from zarr.codecs import (
        BloscCodec,
        BytesCodec,
        Crc32cCodec,
        ShardingCodec,
        ShardingCodecIndexLocation,
        TransposeCodec,
        ZstdCodec,
    )

    base = _fresh(root, "client_variety")
    out: dict[str, pathlib.Path] = {}
    with _quiet():
        g = zarr.open_group(base / "zarr_v3.zarr", mode="w-", zarr_format=3)
        v3_arrays: list[tuple[str, dict[str, Any]]] = [
            ("blosc", {"shape": (10, 10), "chunks": (5, 5), "dtype": "f4",
                       "compressors": [BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")]}),
            ("zstd", {"shape": (10,), "chunks": (5,), "dtype": "i8", "compressors": [ZstdCodec(level=3, checksum=True)],
                      "fill_value": -1}),
            ("crc32c", {"shape": (5,), "dtype": "i4", "compressors": [Crc32cCodec()]}),
            ("uncompressed", {"shape": (5,), "dtype": "i4", "compressors": None}),
            ("big_endian", {"shape": (10,), "chunks": (5,), "dtype": ">f8", "fill_value": float("nan")}),
            ("minus_inf", {"shape": (10,), "chunks": (5,), "dtype": "f8", "fill_value": float("-inf")}),
            ("transpose", {"shape": (4, 6), "chunks": (2, 3), "dtype": "u2", "filters": [TransposeCodec(order=(1, 0))]}),
            ("sharded", {"shape": (16, 16), "chunks": (4, 4), "shards": (8, 8), "dtype": "u1"}),
            ("zero_d", {"shape": (), "dtype": "f4", "fill_value": 1.5}),
            ("empty", {"shape": (0, 5), "chunks": (1, 5), "dtype": "i4"}),
            ("boolean", {"shape": (5,), "dtype": "bool", "fill_value": True}),
            ("complex", {"shape": (5,), "dtype": "c16", "fill_value": complex(1, -2)}),
            ("complex_nan", {"shape": (5,), "dtype": "c8", "fill_value": complex(float("nan"), 0)}),
            ("float16", {"shape": (5,), "dtype": "f2", "fill_value": 0.5}),
            ("uint64_max", {"shape": (5,), "dtype": "u8", "fill_value": 2**64 - 1}),
            ("string", {"shape": (5,), "dtype": str}),
            ("variable_bytes", {"shape": (5,), "dtype": "variable_length_bytes"}),
            ("fixed_unicode", {"shape": (5,), "dtype": "<U4"}),
            ("fixed_bytes", {"shape": (5,), "dtype": "S4"}),
            ("datetime", {"shape": (5,), "dtype": "datetime64[ns]"}),
            ("timedelta", {"shape": (5,), "dtype": "timedelta64[s]"}),
            ("structured", {"shape": (5,), "dtype": [("a", "i4"), ("b", "f8")]}),
        ]
        for name, kwargs in v3_arrays:
            g.create_array(name, **kwargs)
        # sharding inside sharding, the inner shards' index at their start
        inner = ShardingCodec(chunk_shape=(2, 2), codecs=[BytesCodec(), ZstdCodec(level=1)],
                              index_location=ShardingCodecIndexLocation.start)
        g.create_array("nested_sharded", shape=(16, 16), chunks=(8, 8), dtype="i4", compressors=None,
                       serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[inner]), fill_value=-1)
        g["nested_sharded"][:12, :] = np.arange(12 * 16).reshape(12, 16)
        g["blosc"][:5, :5] = 1.0
        g["sharded"][:8, :8] = 7
        g["zero_d"][()] = 2.5
        out["zarr_v3"] = base / "zarr_v3.zarr"

        h = zarr.open_group(base / "zarr_v2.zarr", mode="w-", zarr_format=2)
        v2_arrays: list[tuple[str, dict[str, Any]]] = [
            ("f_order", {"shape": (4, 6), "chunks": (2, 3), "dtype": "<f8", "order": "F"}),
            ("big_endian", {"shape": (10,), "chunks": (5,), "dtype": ">i4", "fill_value": 7}),
            ("zero_d", {"shape": (), "dtype": "f4", "fill_value": 1.5}),
            ("boolean", {"shape": (5,), "dtype": "bool", "fill_value": True}),
            ("complex", {"shape": (5,), "dtype": "c16", "fill_value": complex(1, -2)}),
            ("string", {"shape": (5,), "dtype": str}),
            ("fixed_unicode", {"shape": (5,), "dtype": "<U4", "fill_value": "ab"}),
            ("fixed_bytes", {"shape": (5,), "dtype": "S4", "fill_value": b"ab"}),
            ("structured", {"shape": (5,), "dtype": [("a", "i4"), ("b", "f8")]}),
            ("datetime", {"shape": (5,), "dtype": "M8[ns]"}),
            ("slash_keys", {"shape": (4, 4), "chunks": (2, 2), "dtype": "i2",
                            "chunk_key_encoding": {"name": "v2", "separator": "/"}}),
            ("delta_blosc", {"shape": (10,), "chunks": (5,), "dtype": "<f8",
                             "filters": [numcodecs.Delta(dtype="<f8", astype="<f4")],
                             "compressors": numcodecs.Blosc(cname="lz4")}),
            ("scale_offset_zstd", {"shape": (10,), "chunks": (5,), "dtype": "<f8",
                                   "filters": [numcodecs.FixedScaleOffset(offset=1, scale=10, dtype="<f8", astype="u1")],
                                   "compressors": numcodecs.Zstd()}),
            ("nan_fill", {"shape": (5,), "dtype": "f8", "fill_value": float("nan")}),
            ("inf_fill", {"shape": (5,), "dtype": "f8", "fill_value": float("inf")}),
            ("no_fill", {"shape": (5,), "dtype": "f8", "fill_value": None}),
            ("empty", {"shape": (0,), "chunks": (1,), "dtype": "i4"}),
            ("categorize", {"shape": (5,), "dtype": "U3",
                            "filters": [numcodecs.Categorize(labels=["a", "b"], dtype="U3")]}),
        ]
        for name, kwargs in v2_arrays:
            h.create_array(name, **kwargs)
        h["f_order"][:2, :3] = np.arange(6).reshape(2, 3)
        out["zarr_v2"] = base / "zarr_v2.zarr"

        ds = xr.Dataset(
            {
                "t": (("time", "x"), np.zeros((3, 2)),
                      {"units": "K", "standard_name": "air_temperature", "grid_mapping": "crs"}),
                "crs": ((), 0, {"grid_mapping_name": "latitude_longitude"}),
            },
            coords={"time": pd.date_range("2020-01-01", periods=3), "x": [1.0, 2.0], "label": ("x", ["a", "b"])},
        )
        for fmt in (2, 3):
            ds.to_zarr(base / f"xarray_v{fmt}.zarr", zarr_format=fmt, mode="w-")
            out[f"xarray_v{fmt}"] = base / f"xarray_v{fmt}.zarr"

    for driver, prefix in (("zarr3", "ts3"), ("zarr", "ts2")):
        for dtype in ("uint16", "float32", "bool", "complex64", "int64"):
            path = base / f"{prefix}_{dtype}"
            t = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(path)}, "create": True},
                        dtype=getattr(ts, dtype), shape=[10, 20]).result()
            t[:2, :3].write(np.ones((2, 3), dtype=dtype)).result()
            out[f"{prefix}_{dtype}"] = path
    sharded = base / "ts3_sharded_index_start"
    ts.open({
        "driver": "zarr3", "kvstore": {"driver": "file", "path": str(sharded)}, "create": True,
        "metadata": {
            "shape": [16, 16], "data_type": "int16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [4, 4], "index_location": "start",
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "zstd", "configuration": {"level": 1}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}],
        },
    }).result()[:8, :8].write(np.full((8, 8), 3, dtype="int16")).result()
    out["ts3_sharded_index_start"] = sharded
    blosc = base / "ts2_blosc_slash"
    ts.open({
        "driver": "zarr", "kvstore": {"driver": "file", "path": str(blosc)}, "create": True,
        "metadata": {"shape": [10, 4], "chunks": [5, 2], "dtype": "<f4", "dimension_separator": "/",
                     "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}},
    }).result()[:5, :2].write(np.ones((5, 2), dtype="float32")).result()
    out["ts2_blosc_slash"] = blosc
    return out


# ---------------------------------------------------------------------------
# codecs that need a package numcodecs does not install
# ---------------------------------------------------------------------------

#: The values of ``build_optional_codecs``' ``v2_msgpack`` array, which zarr-python 3 cannot read.
MSGPACK_VALUES = ["α", "bc", "", "d"]


def build_optional_codecs(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """One lone array per codec whose numcodecs implementation needs an extra package.

    Returns name -> store root: ``v2_zfpy``/``v3_zfpy`` (package zfpy),
    ``v2_pcodec``/``v3_pcodec`` (pcodec), ``v2_msgpack`` (msgpack) and
    ``v3_crc32c``/``v3_sharded`` (google-crc32c: a crc32c chunk checksum, and
    zarr-python's default shard index checksum). Writing them needs the dev
    extras; each array holds data, so reading it decodes with the codec.
    ``v2_msgpack`` is hand-made: zarr-python 3 neither writes nor reads the
    ``msgpack2`` object codec (zarr-python 2 wrote it), so it is a zarr-python
    string array whose filter and chunk are replaced by numcodecs' MsgPack.
    """
    import numcodecs
    import zarr
    from zarr.codecs import Crc32cCodec
    from zarr.codecs import numcodecs as numcodecs_v3

    base = _fresh(root, "optional_codecs")
    data = np.linspace(-1, 1, 48, dtype="f8").reshape(6, 8)
    out: dict[str, pathlib.Path] = {}
    with _quiet():  # zarr-python warns that numcodecs codecs are not in the v3 specification
        arrays: dict[str, dict[str, Any]] = {
            "v3_zfpy": {"zarr_format": 3, "compressors": None,
                        "serializer": numcodecs_v3.ZFPY(mode=4, tolerance=-1, rate=-1, precision=-1)},
            "v3_pcodec": {"zarr_format": 3, "compressors": None, "serializer": numcodecs_v3.PCodec(level=8)},
            "v2_zfpy": {"zarr_format": 2, "compressors": numcodecs.ZFPY(mode=4)},
            "v2_pcodec": {"zarr_format": 2, "compressors": numcodecs.PCodec(level=8)},
            "v3_crc32c": {"zarr_format": 3, "compressors": [Crc32cCodec()]},
            "v3_sharded": {"zarr_format": 3, "shards": (4, 8)},
        }
        for name, kwargs in arrays.items():
            a = zarr.create_array(base / f"{name}.zarr", shape=(6, 8), chunks=(2, 4), dtype="f8",
                                  fill_value=float("nan"), **kwargs)
            a[:4] = data[:4]
            out[name] = base / f"{name}.zarr"
        path = base / "v2_msgpack.zarr"
        zarr.create_array(path, shape=(4,), chunks=(4,), dtype=str, zarr_format=2, compressors=None)
    msgpack = numcodecs.get_codec({"id": "msgpack2"})
    meta = json.loads((path / ".zarray").read_text(encoding="utf-8"))
    meta["filters"] = [msgpack.get_config()]  # hand-made
    _write_json(path / ".zarray", meta)
    (path / "0").write_bytes(msgpack.encode(np.array(MSGPACK_VALUES, dtype=object)))  # hand-made
    out["v2_msgpack"] = path
    return out


# ---------------------------------------------------------------------------
# benchmark hierarchy
# ---------------------------------------------------------------------------

_BIG_VARIABLES = [
    ("air_temperature", "Air temperature", "K"),
    ("eastward_wind", "Eastward wind", "m s-1"),
    ("northward_wind", "Northward wind", "m s-1"),
    ("relative_humidity", "Relative humidity", "%"),
    ("precipitation_flux", "Precipitation", "kg m-2 s-1"),
    ("surface_air_pressure", "Surface pressure", "Pa"),
]


def big_hierarchy(root: pathlib.Path, n_arrays: int = 1000, n_groups: int = 20, zarr_format: int = 3) -> pathlib.Path:
    """Hierarchy for benchmarks: n_groups groups under the root holding n_arrays
    arrays in total (spread evenly; at the root if n_groups == 0), in Zarr v3
    (``big_v3_hierarchy.zarr``) or v2 (``big_v2_hierarchy.zarr``, dimension names
    as xarray's ``_ARRAY_DIMENSIONS``). Metadata only, no chunk data; written
    with ``zarr.create_hierarchy``."""
    import zarr
    from zarr.core.group import GroupMetadata
    from zarr.core.metadata import ArrayV2Metadata, ArrayV3Metadata
    from zarr.storage import LocalStore

    path = _fresh(root, f"big_v{zarr_format}_hierarchy.zarr")
    array_metadata = ArrayV3Metadata if zarr_format == 3 else ArrayV2Metadata
    template = zarr.create_array(
        {}, shape=(365, 90, 180), chunks=(30, 90, 180), dtype="float32", zarr_format=zarr_format
    ).metadata.to_dict()
    nodes: dict[str, Any] = {
        "": GroupMetadata(
            zarr_format=zarr_format,
            attributes={**CF_GLOBAL_ATTRS, "title": "Benchmark hierarchy"},
        )
    }
    groups = [f"group_{i:03d}" for i in range(n_groups)]
    for name in groups:
        nodes[name] = GroupMetadata(
            zarr_format=zarr_format, attributes={"title": f"Group {name}", "Conventions": "CF-1.8"}
        )
    dims = ["time", "lat", "lon"]
    for i in range(n_arrays):
        std, long_name, units = _BIG_VARIABLES[i % len(_BIG_VARIABLES)]
        doc = dict(template)
        attributes = {
            "standard_name": std,
            "long_name": f"{long_name} #{i}",
            "units": units,
            "cell_methods": "time: mean",
        }
        if zarr_format == 3:
            doc["dimension_names"] = dims
        else:
            attributes = {"_ARRAY_DIMENSIONS": dims, **attributes}
        doc["attributes"] = attributes
        prefix = f"{groups[i % n_groups]}/" if groups else ""
        nodes[f"{prefix}var_{i:05d}"] = array_metadata.from_dict(doc)
    with _quiet():
        for _ in zarr.create_hierarchy(store=LocalStore(path), nodes=nodes):
            pass
    return path


def big_v3_hierarchy(root: pathlib.Path, n_arrays: int = 1000, n_groups: int = 20) -> pathlib.Path:
    """The v3 benchmark hierarchy (see big_hierarchy)."""
    return big_hierarchy(root, n_arrays, n_groups, zarr_format=3)


def add_coordinates(path: pathlib.Path) -> int:
    """Give every group of a :func:`big_hierarchy` (the root too) CF coordinate arrays
    ``time`` (365 days), ``lat`` (90) and ``lon`` (180), with values, so that a harvest
    finds an extent for every array: what the extents benchmark measures. Returns the
    number of coordinate arrays written."""
    import numpy as np
    import zarr

    group = zarr.open_group(path, mode="r+")
    targets = [group, *(g for _, g in group.groups())]
    axes = {
        "time": (np.arange(365, dtype="float64"), {"units": "days since 2020-01-01", "calendar": "standard",
                                                    "standard_name": "time", "axis": "T"}),
        "lat": (np.linspace(-89, 89, 90), {"units": "degrees_north", "standard_name": "latitude", "axis": "Y"}),
        "lon": (np.linspace(-179, 179, 180), {"units": "degrees_east", "standard_name": "longitude", "axis": "X"}),
    }
    for target in targets:
        for name, (values, attrs) in axes.items():
            array = target.create_array(name, shape=values.shape, dtype=values.dtype, chunks=values.shape,
                                        dimension_names=[name] if target.metadata.zarr_format == 3 else None,
                                        attributes=attrs)
            array[:] = values
    return 3 * len(targets)


# ---------------------------------------------------------------------------
# bad stores (all hand-made)
# ---------------------------------------------------------------------------

_GOOD_V2_ARRAY = {
    "zarr_format": 2,
    "shape": [10],
    "chunks": [5],
    "dtype": "<f8",
    "compressor": None,
    "fill_value": "NaN",
    "order": "C",
    "filters": None,
}


def build_malformed_json(root: pathlib.Path) -> pathlib.Path:
    """Root .zarray with a trailing comma and then truncated."""
    path = _fresh(root, "malformed_json.zarr")
    path.mkdir()
    (path / ".zarray").write_text(
        '{\n  "zarr_format": 2,\n  "shape": [10],\n  "chunks": [5],\n  "dtype": "<f8",\n',
        encoding="utf-8",
    )
    return path


def build_wrong_types(root: pathlib.Path) -> pathlib.Path:
    """Root v3 array zarr.json whose shape is the string "100"."""
    path = _fresh(root, "wrong_types.zarr")
    _write_json(
        path / "zarr.json",
        {
            "zarr_format": 3,
            "node_type": "array",
            "shape": "100",
            "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0.0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {},
        },
    )
    return path


def build_missing_key(root: pathlib.Path) -> pathlib.Path:
    """Root v2 .zarray without "dtype"."""
    path = _fresh(root, "missing_key.zarr")
    doc = {k: v for k, v in _GOOD_V2_ARRAY.items() if k != "dtype"}
    _write_json(path / ".zarray", doc)
    return path


HUGE_ATTRIBUTES_BYTES = 10 * 1024 * 1024


def build_huge_attributes(root: pathlib.Path) -> pathlib.Path:
    """Root v2 array whose .zattrs is a valid JSON object of >= 10 MiB."""
    path = _fresh(root, "huge_attributes.zarr")
    _write_json(path / ".zarray", _GOOD_V2_ARRAY)
    entry = "x" * 1000
    n = HUGE_ATTRIBUTES_BYTES // (len(entry) + 8) + 1  # each item: 8 digits + entry + 3
    with (path / ".zattrs").open("w", encoding="utf-8") as fh:
        fh.write('{"units": "K", "padding": [')
        fh.write(",".join(f'"{i:08d}{entry}"' for i in range(n)))
        fh.write("]}\n")
    return path


def build_symlink_loop(root: pathlib.Path) -> pathlib.Path:
    """Valid v2 group with one array and a subfolder ``loop`` that is a
    symlink to the group itself (loop/.zgroup, loop/loop/... resolve forever)."""
    path = _fresh(root, "symlink_loop.zarr")
    _write_json(path / ".zgroup", {"zarr_format": 2})
    _write_json(path / ".zattrs", {"title": "group with a symlink loop"})
    _write_json(path / "data" / ".zarray", _GOOD_V2_ARRAY)
    os.symlink(".", path / "loop", target_is_directory=True)
    return path


def build_empty_folder(root: pathlib.Path) -> pathlib.Path:
    """An existing folder with nothing in it."""
    path = _fresh(root, "empty_folder.zarr")
    path.mkdir()
    return path


def build_not_utf8(root: pathlib.Path) -> pathlib.Path:
    """Root v3 group zarr.json containing Latin-1 bytes (invalid UTF-8)."""
    path = _fresh(root, "not_utf8.zarr")
    path.mkdir()
    (path / "zarr.json").write_bytes(
        b'{\n  "zarr_format": 3,\n  "node_type": "group",\n'
        b'  "attributes": {"title": "caf\xe9 \xff\xfe"}\n}\n'
    )
    return path


DEEP_NESTING = 10_000


def build_deeply_nested(root: pathlib.Path) -> pathlib.Path:
    """Root v2 group whose .zattrs holds 10,000 nested lists (valid JSON,
    beyond Python's default recursion limit: json.loads raises RecursionError)."""
    path = _fresh(root, "deeply_nested.zarr")
    _write_json(path / ".zgroup", {"zarr_format": 2})
    (path / ".zattrs").write_text(
        '{"deep": ' + "[" * DEEP_NESTING + "]" * DEEP_NESTING + "}\n", encoding="utf-8"
    )
    return path


def build_duplicate_keys(root: pathlib.Path) -> pathlib.Path:
    """Root v2 group whose .zattrs has the key "units" twice."""
    path = _fresh(root, "duplicate_keys.zarr")
    _write_json(path / ".zgroup", {"zarr_format": 2})
    (path / ".zattrs").write_text(
        '{\n  "units": "K",\n  "long_name": "temperature",\n  "units": "degC"\n}\n',
        encoding="utf-8",
    )
    return path


def build_bad_child(root: pathlib.Path) -> pathlib.Path:
    """Valid v2 group with a valid array ``good`` (with a chunk) and an array
    ``broken`` whose .zarray is malformed.  ``good`` must still be catalogued."""
    import zarr

    path = _fresh(root, "bad_child.zarr")
    with _quiet():
        g = zarr.open_group(path, mode="w-", zarr_format=2, attributes={"title": "bad child"})
        good = g.create_array(
            "good",
            shape=(4,),
            chunks=(2,),
            dtype="<i4",
            attributes={"_ARRAY_DIMENSIONS": ["n"], "long_name": "good array"},
        )
        good[:2] = [1, 2]
    (path / "broken").mkdir()
    (path / "broken" / ".zarray").write_text(
        '{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4",, "order": "C"}\n',
        encoding="utf-8",
    )
    return path


def nonexistent(root: pathlib.Path) -> pathlib.Path:
    """A path under root that does not exist (nothing is created)."""
    path = pathlib.Path(root) / "does-not-exist.zarr"
    if path.exists() or path.is_symlink():
        raise FileExistsError(path)
    return path


# ---------------------------------------------------------------------------
# registries
# ---------------------------------------------------------------------------

GOOD_STORES: dict[str, Builder] = {
    "xarray_cf_v2": build_xarray_cf_v2,
    "xarray_cf_v3": build_xarray_cf_v3,
    "zarr_v3_deep": build_zarr_v3_deep,
    "zarr_v2_plain": build_zarr_v2_plain,
    "tensorstore_arrays": build_tensorstore_arrays,
    "dependent_arrays": build_dependent_arrays,
    "zarr_v3_lone_array": build_zarr_v3_lone_array,
    "zarr_v2_lone_array": build_zarr_v2_lone_array,
    "zarr_v3_consolidated_nested": build_zarr_v3_consolidated_nested,
}

_CF_NODES = {"": "group", "air": "array", "time": "array", "lat": "array", "lon": "array"}

GOOD_NODES: dict[str, dict[str, str]] = {
    "xarray_cf_v2": dict(_CF_NODES),
    "xarray_cf_v3": dict(_CF_NODES),
    "zarr_v3_deep": {
        "": "group",
        "group1": "group",
        "group1/group2": "group",
        "group1/group2/sharded_f64": "array",
        "group1/group2/bigendian_f16": "array",
        "group1/group2/int8_gzip": "array",
        "group1/group2/bool_dotted": "array",
        "group1/group2/complex_scalar": "array",
    },
    "zarr_v2_plain": {
        "": "group",
        "temperature": "array",
        "station_codes": "array",
        "records": "array",
        "counts": "array",
        "sub": "group",
        "sub/depth": "array",
    },
    # root is a group in both formats; zarr2_array is v2, zarr3_sharded is v3
    "tensorstore_arrays": {"": "group", "zarr2_array": "array", "zarr3_sharded": "array"},
    "dependent_arrays": {"": "group", "multiscale": "array", "labels": "array"},
    "zarr_v3_lone_array": {"": "array"},
    "zarr_v2_lone_array": {"": "array"},
    "zarr_v3_consolidated_nested": {
        "": "group",
        "a": "group",
        "a/b": "group",
        "a/b/c": "array",
        "a/x": "array",
        "empty": "group",
    },
}

GOOD_FORMATS: dict[str, int | tuple[int, int]] = {
    "xarray_cf_v2": 2,
    "xarray_cf_v3": 3,
    "zarr_v3_deep": 3,
    "zarr_v2_plain": 2,
    "tensorstore_arrays": (2, 3),
    "dependent_arrays": 3,
    "zarr_v3_lone_array": 3,
    "zarr_v2_lone_array": 2,
    "zarr_v3_consolidated_nested": 3,
}

BAD_STORES: dict[str, Builder] = {
    "malformed_json": build_malformed_json,
    "wrong_types": build_wrong_types,
    "missing_key": build_missing_key,
    "huge_attributes": build_huge_attributes,
    "symlink_loop": build_symlink_loop,
    "empty_folder": build_empty_folder,
    "not_utf8": build_not_utf8,
    "deeply_nested": build_deeply_nested,
    "duplicate_keys": build_duplicate_keys,
    "bad_child": build_bad_child,
}

BAD_EXPECTED: dict[str, tuple[str, str]] = {
    "malformed_json": (".zarray", ""),
    "wrong_types": ("zarr.json", "/shape"),
    "missing_key": (".zarray", "/dtype"),
    "huge_attributes": (".zattrs", ""),
    "symlink_loop": ("loop", ""),
    "empty_folder": ("", ""),
    "not_utf8": ("zarr.json", ""),
    "deeply_nested": (".zattrs", ""),
    "duplicate_keys": (".zattrs", ""),
    "bad_child": ("broken/.zarray", ""),
}


#: Bad stores whose documents parse but break the Zarr rules: since validation
#: (issue 4) they are catalogued, flagged invalid, with this rule reported.
READABLE_BUT_INVALID: dict[str, str] = {
    "wrong_types": "v3.shape",
    "missing_key": "v2.required",
}


def build_all(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """Build every good and bad store under root; returns name -> store path."""
    out = {}
    for name, builder in {**GOOD_STORES, **BAD_STORES}.items():
        out[name] = builder(root)
    return out
