"""What an array's metadata says about its chunks, in one object, for v2 and v3 alike.

Built from the metadata documents the catalogue rebuilds from the graph, so
resolving and reading never re-read metadata from the store. Everything the
readers need is decided here once: the in-memory NumPy dtype, the fill value
as a NumPy scalar, the chunk grid, the key encoding, the codec pipeline and,
for sharded arrays, the inner chunk shape and the shard index layout.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalogue.errors import CatalogueError
from catalogue.model.chunk_keys import KeyEncoding, UnsupportedEncoding
from catalogue.model.nodes import V2_ARRAY, V2_ATTRS, V3_DOCUMENT


class UnsupportedArray(CatalogueError):
    """The array's metadata names something the catalogue cannot resolve or read."""


_V3_NUMERIC = {
    "bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8", "complex64": "c8", "complex128": "c16",
}


@dataclass(frozen=True)
class Sharding:
    """A ``sharding_indexed`` codec: inner chunks of a shard and where its index is."""

    chunk_shape: tuple[int, ...]
    codecs: list[dict[str, Any]]
    index_codecs: list[dict[str, Any]]
    index_location: str  # "start" or "end"

    def chunks_per_shard(self, shard_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(s // c for s, c in zip(shard_shape, self.chunk_shape, strict=True))

    def index_nbytes(self, shard_shape: tuple[int, ...]) -> int:
        entries = math.prod(self.chunks_per_shard(shard_shape))
        return 16 * entries + sum(4 for c in self.index_codecs if c["name"] == "crc32c")


@dataclass(frozen=True)
class ArrayLayout:
    """Chunking, encoding and data type of one array."""

    iri: str
    #: URL the chunk keys are relative to: the array's own, or its primary's for a dependent array.
    base_url: str
    zarr_format: int
    shape: tuple[int, ...]
    #: The chunk grid's chunk shape (for sharded arrays: the shard shape).
    chunk_shape: tuple[int, ...]
    dtype: np.dtype
    fill_value: Any
    encoding: KeyEncoding
    #: v3: the codec chain, each {"name", "configuration"}; v2: filters then compressor as v3-like entries.
    codecs: list[dict[str, Any]]
    order: str = "C"
    sharding: Sharding | None = None
    metadata: dict[str, Any] | None = None

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunk_shape, strict=True))

    @property
    def read_chunk_shape(self) -> tuple[int, ...]:
        """The unit a read decodes: the inner chunk when sharded, else the chunk."""
        return self.sharding.chunk_shape if self.sharding else self.chunk_shape


def _named(entry: Any) -> dict[str, Any]:
    if isinstance(entry, str):
        return {"name": entry, "configuration": {}}
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        conf = entry.get("configuration") or {}
        return {"name": entry["name"], "configuration": conf}
    raise UnsupportedArray(f"malformed codec {entry!r}")


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not (isinstance(value, list) and all(type(v) is int and v >= 0 for v in value)):
        raise UnsupportedArray(f"{what} is not a list of non-negative integers: {value!r}")
    return tuple(value)


def layout_from_documents(documents: dict[str, Any], iri: str, base_url: str) -> ArrayLayout:
    """The layout of the array whose (rebuilt) metadata documents are ``documents``."""
    try:
        if V3_DOCUMENT in documents:
            return _v3(documents[V3_DOCUMENT], iri, base_url)
        if V2_ARRAY in documents:
            return _v2(documents[V2_ARRAY], documents.get(V2_ATTRS), iri, base_url)
    except UnsupportedEncoding as exc:
        raise UnsupportedArray(f"{iri}: {exc}") from exc
    raise UnsupportedArray(f"{iri} is not an array")


# ---------------------------------------------------------------------- v3
def v3_dtype(data_type: Any) -> np.dtype:
    name = data_type if isinstance(data_type, str) else data_type.get("name") if isinstance(data_type, dict) else None
    conf = data_type.get("configuration", {}) if isinstance(data_type, dict) else {}
    if name in _V3_NUMERIC:
        return np.dtype(_V3_NUMERIC[name])
    if isinstance(name, str) and name.startswith("r") and name[1:].isdigit() and int(name[1:]) % 8 == 0:
        return np.dtype(f"V{int(name[1:]) // 8}")
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        unit, scale = conf.get("unit", "generic"), conf.get("scale_factor", 1)
        code = "M8" if name == "numpy.datetime64" else "m8"
        return np.dtype(f"{code}[{scale}{unit}]" if scale != 1 else f"{code}[{unit}]")
    if name == "fixed_length_utf32":
        return np.dtype(f"<U{conf['length_bytes'] // 4}")
    if name == "null_terminated_bytes":
        return np.dtype(f"S{conf['length_bytes']}")
    if name == "raw_bytes":
        return np.dtype(f"V{conf['length_bytes']}")
    if name in ("string", "variable_length_bytes", "bytes"):
        return np.dtype(object)
    if name == "structured":
        return np.dtype([(f[0], v3_dtype(f[1])) for f in conf["fields"]])
    raise UnsupportedArray(f"data type {data_type!r} cannot be read by the catalogue")


def v3_fill(data_type: Any, dtype: np.dtype, value: Any) -> Any:
    name = data_type if isinstance(data_type, str) else data_type.get("name")
    if dtype.kind == "c":
        return np.array(complex(_float(value[0]), _float(value[1])), dtype=dtype)[()]
    if dtype.kind == "f":
        if isinstance(value, str) and value.startswith("0x"):
            return np.frombuffer(bytes.fromhex(value[2:])[::-1], dtype=dtype.newbyteorder("<"))[0]
        return np.array(_float(value), dtype=dtype)[()]
    if dtype.kind in "mM":
        return np.array("NaT", dtype=dtype)[()] if value == "NaT" else np.array(value, dtype="i8").view(dtype)[()]
    if name == "string":
        return str(value)
    if name in ("variable_length_bytes", "bytes"):
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    if dtype.kind == "V" and isinstance(value, list):
        return np.frombuffer(bytes(value), dtype=dtype)[0]
    if dtype.fields is not None or dtype.kind in "SV":
        raw = base64.b64decode(value) if isinstance(value, str) else bytes(value)
        return np.frombuffer(raw.ljust(dtype.itemsize, b"\0"), dtype=dtype)[0]
    if dtype.kind == "U":
        return np.array(value, dtype=dtype)[()]
    return np.array(value, dtype=dtype)[()]


def _float(value: Any) -> float:
    if value == "NaN":
        return float("nan")
    if value == "Infinity":
        return float("inf")
    if value == "-Infinity":
        return float("-inf")
    return float(value)


def _v3(meta: dict[str, Any], iri: str, base_url: str) -> ArrayLayout:
    shape = _ints(meta.get("shape"), "shape")
    grid = meta.get("chunk_grid")
    if not (isinstance(grid, dict) and grid.get("name") == "regular"):
        raise UnsupportedArray(f"{iri}: chunk grid {grid!r} is not a regular grid")
    chunk_shape = _ints((grid.get("configuration") or {}).get("chunk_shape"), "chunk_shape")
    if len(chunk_shape) != len(shape) or 0 in chunk_shape:
        raise UnsupportedArray(f"{iri}: chunk shape {list(chunk_shape)} does not fit shape {list(shape)}")
    dtype = v3_dtype(meta.get("data_type"))
    codecs = [_named(c) for c in meta.get("codecs", [])]
    sharding = None
    if codecs and codecs[0]["name"] == "sharding_indexed" and len(codecs) == 1:
        conf = codecs[0]["configuration"]
        sharding = Sharding(
            chunk_shape=_ints(conf.get("chunk_shape"), "sharding chunk_shape"),
            codecs=[_named(c) for c in conf.get("codecs", [])],
            index_codecs=[_named(c) for c in conf.get("index_codecs", [])],
            index_location=conf.get("index_location", "end"),
        )
        if any(s % c for s, c in zip(chunk_shape, sharding.chunk_shape, strict=True)):
            raise UnsupportedArray(f"{iri}: inner chunk shape does not divide the shard shape")
    return ArrayLayout(
        iri=iri, base_url=base_url, zarr_format=3, shape=shape, chunk_shape=chunk_shape, dtype=dtype,
        fill_value=v3_fill(meta.get("data_type"), dtype, meta.get("fill_value")),
        encoding=KeyEncoding.from_v3(meta.get("chunk_key_encoding", "default")),
        codecs=codecs, sharding=sharding, metadata=meta,
    )


# ---------------------------------------------------------------------- v2
def v2_fill(dtype: np.dtype, value: Any) -> Any:
    if value is None:
        return np.zeros((), dtype=dtype)[()] if dtype.kind != "O" else None
    if dtype.fields is not None or dtype.kind in "SV":
        raw = base64.b64decode(value)
        return np.frombuffer(raw.ljust(dtype.itemsize, b"\0"), dtype=dtype)[0]
    if dtype.kind == "c":
        if isinstance(value, list):
            return np.array(complex(_float(value[0]), _float(value[1])), dtype=dtype)[()]
        return np.array(value, dtype=dtype)[()]
    if dtype.kind == "f":
        return np.array(_float(value), dtype=dtype)[()]
    if dtype.kind in "mM":
        return np.array("NaT", dtype=dtype)[()] if value == "NaT" else np.array(value, dtype="i8").view(dtype)[()]
    if dtype.kind == "O":
        return value
    return np.array(value, dtype=dtype)[()]


def _v2_dtype(value: Any) -> np.dtype:
    def spec(v: Any) -> Any:
        if isinstance(v, str):
            return v
        return [(f[0], spec(f[1]), tuple(f[2])) if len(f) == 3 else (f[0], spec(f[1])) for f in v]

    try:
        return np.dtype(spec(value))
    except (TypeError, ValueError) as exc:
        raise UnsupportedArray(f"dtype {value!r}: {exc}") from exc


def _v2(meta: dict[str, Any], attrs: dict[str, Any] | None, iri: str, base_url: str) -> ArrayLayout:
    shape = _ints(meta.get("shape"), "shape")
    chunk_shape = _ints(meta.get("chunks"), "chunks")
    if len(chunk_shape) != len(shape) or 0 in chunk_shape:
        raise UnsupportedArray(f"{iri}: chunks {list(chunk_shape)} do not fit shape {list(shape)}")
    dtype = _v2_dtype(meta.get("dtype"))
    codecs = [{"name": f["id"], "configuration": f, "v2": "filter"} for f in meta.get("filters") or []]
    if meta.get("compressor"):
        codecs.append({"name": meta["compressor"]["id"], "configuration": meta["compressor"], "v2": "compressor"})
    order = meta.get("order", "C")
    if order not in ("C", "F"):
        raise UnsupportedArray(f"{iri}: order {order!r}")
    return ArrayLayout(
        iri=iri, base_url=base_url, zarr_format=2, shape=shape, chunk_shape=chunk_shape, dtype=dtype,
        fill_value=v2_fill(dtype, meta.get("fill_value")),
        encoding=KeyEncoding.from_v2(meta.get("dimension_separator", ".")),
        codecs=codecs, order=order, metadata=meta,
    )
