"""What an array's metadata says about its chunks, in one object, for v2 and v3 alike.

Built from the metadata documents the catalogue rebuilds from the graph, so
resolving and reading never re-read metadata from the store. Everything the
readers need is decided here once: the in-memory NumPy dtype, the fill value
as a NumPy scalar, the chunk grid, the key encoding, the codec pipeline and,
for sharded arrays, the inner chunk shape and the shard index layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from catalogue.errors import CatalogueError
from catalogue.model.chunk_grids import (
    ChunkGridError,
    RegularChunkGrid,
    parse_chunk_grid,
    parse_shape,
    parse_v2_chunks,
)
from catalogue.model.chunk_keys import KeyEncoding, UnsupportedEncoding
from catalogue.model.codecs import (
    Codec,
    CodecError,
    ShardingCodec,
    parse_codecs,
    parse_sharding,
    parse_v2_codecs,
)
from catalogue.model.datatypes import DataType, DataTypeError, parse_data_type
from catalogue.model.nodes import V2_ARRAY, V2_ATTRS, V3_DOCUMENT


class UnsupportedArray(CatalogueError):
    """The array's metadata names something the catalogue cannot resolve or read."""


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
    #: v3: the codec chain; v2: the filters then the compressor.
    codecs: tuple[Codec, ...]
    order: str = "C"
    sharding: ShardingCodec | None = None
    metadata: dict[str, Any] | None = None

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return RegularChunkGrid(self.chunk_shape).grid_shape(self.shape)

    @property
    def read_chunk_shape(self) -> tuple[int, ...]:
        """The unit a read decodes: the inner chunk when sharded, else the chunk."""
        return self.sharding.chunk_shape if self.sharding else self.chunk_shape


def _data_type(value: Any, zarr_format: int) -> DataType:
    """The array's data type, NumPy dtype included; UnsupportedArray when there is none."""
    try:
        data_type = parse_data_type(value, zarr_format)
        data_type.numpy  # noqa: B018 - resolved here, so reads never meet a type they cannot hold
    except DataTypeError as exc:
        if zarr_format == 2:
            raise UnsupportedArray(f"dtype {value!r}: {exc}") from exc
        raise UnsupportedArray(f"data type {value!r} cannot be read by the catalogue") from exc
    return data_type


def _fitted(iri: str, shape: tuple[int, ...], grid: RegularChunkGrid, mismatch: str) -> tuple[int, ...]:
    """The chunk shape; UnsupportedArray (``mismatch`` filled in) unless the grid cuts ``shape``."""
    if not grid.fits(shape):
        raise UnsupportedArray(f"{iri}: " + mismatch.format(chunks=list(grid.chunk_shape), shape=list(shape)))
    return grid.chunk_shape


def layout_from_documents(documents: dict[str, Any], iri: str, base_url: str) -> ArrayLayout:
    """The layout of the array whose (rebuilt) metadata documents are ``documents``."""
    try:
        if V3_DOCUMENT in documents:
            return _v3(documents[V3_DOCUMENT], iri, base_url)
        if V2_ARRAY in documents:
            return _v2(documents[V2_ARRAY], documents.get(V2_ATTRS), iri, base_url)
    except (ChunkGridError, UnsupportedEncoding, CodecError) as exc:
        raise UnsupportedArray(f"{iri}: {exc}") from exc
    raise UnsupportedArray(f"{iri} is not an array")


# ---------------------------------------------------------------------- v3
def _v3(meta: dict[str, Any], iri: str, base_url: str) -> ArrayLayout:
    shape = parse_shape(meta.get("shape"))
    chunk_shape = _fitted(iri, shape, parse_chunk_grid(meta.get("chunk_grid")),
                          "chunk shape {chunks} does not fit shape {shape}")
    data_type = _data_type(meta.get("data_type"), 3)
    codecs = parse_codecs(meta.get("codecs", []))
    sharding = None
    if len(codecs) == 1 and codecs[0].name == "sharding_indexed":
        sharding = parse_sharding(codecs[0].configuration)
        if any(s % c for s, c in zip(chunk_shape, sharding.chunk_shape, strict=True)):
            raise UnsupportedArray(f"{iri}: inner chunk shape does not divide the shard shape")
    encoding = KeyEncoding.from_v3(meta.get("chunk_key_encoding", "default"))
    return _layout(meta, iri, base_url, 3, shape, chunk_shape, data_type, encoding, codecs, sharding=sharding)


# ---------------------------------------------------------------------- v2
def _v2(meta: dict[str, Any], attrs: dict[str, Any] | None, iri: str, base_url: str) -> ArrayLayout:
    shape = parse_shape(meta.get("shape"))
    chunk_shape = _fitted(iri, shape, parse_v2_chunks(meta.get("chunks")), "chunks {chunks} do not fit shape {shape}")
    data_type = _data_type(meta.get("dtype"), 2)
    codecs = parse_v2_codecs(meta.get("filters"), meta.get("compressor"))
    order = meta.get("order", "C")
    if order not in ("C", "F"):
        raise UnsupportedArray(f"{iri}: order {order!r}")
    encoding = KeyEncoding.from_v2(meta.get("dimension_separator", "."))
    return _layout(meta, iri, base_url, 2, shape, chunk_shape, data_type, encoding, codecs, order=order)


def _layout(
    meta: dict[str, Any], iri: str, base_url: str, zarr_format: int, shape: tuple[int, ...],
    chunk_shape: tuple[int, ...], data_type: DataType, encoding: KeyEncoding, codecs: Any, **more: Any,
) -> ArrayLayout:
    """The layout from the parts both formats share (the fill value decoded for the data type)."""
    return ArrayLayout(
        iri=iri, base_url=base_url, zarr_format=zarr_format, shape=shape, chunk_shape=chunk_shape,
        dtype=data_type.numpy, fill_value=data_type.fill(meta.get("fill_value")), encoding=encoding,
        codecs=codecs, metadata=meta, **more,
    )
