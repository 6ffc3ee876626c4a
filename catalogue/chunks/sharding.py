"""The ``sharding_indexed`` codec: shard indexes and inner chunks.

A shard holds ``chunks_per_shard`` inner chunks and an index: one
``(offset, nbytes)`` pair of little-endian uint64 per inner chunk, in C
order, encoded by ``index_codecs`` (typically ``bytes`` then ``crc32c``, the
checksum verified here) and stored at the ``start`` or the ``end`` of the
shard. ``2**64 - 1`` in both fields marks an inner chunk that is absent (it
reads as the fill value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from catalogue.chunks.codecs import ChunkError, decode_v3

MISSING = np.uint64(2**64 - 1)


def index_nbytes(conf: dict[str, Any], shard_shape: tuple[int, ...]) -> int:
    inner = tuple(conf["chunk_shape"])
    entries = math.prod(s // c for s, c in zip(shard_shape, inner, strict=True))
    return 16 * entries + sum(4 for c in _named_list(conf.get("index_codecs", [])) if c["name"] == "crc32c")


def _named_list(codecs: list[Any]) -> list[dict[str, Any]]:
    return [{"name": c, "configuration": {}} if isinstance(c, str) else
            {"name": c["name"], "configuration": c.get("configuration") or {}} for c in codecs]


def decode_index(data: bytes, conf: dict[str, Any], shard_shape: tuple[int, ...]) -> np.ndarray:
    """The shard index as an array of shape ``chunks_per_shard + (2,)`` (offset, nbytes)."""
    inner = tuple(conf["chunk_shape"])
    per_shard = tuple(s // c for s, c in zip(shard_shape, inner, strict=True))
    try:
        return decode_v3(data, _named_list(conf.get("index_codecs", [])), (*per_shard, 2), np.dtype("u8"))
    except ChunkError as exc:
        raise ChunkError(f"shard index: {exc}") from exc


def index_slice(conf: dict[str, Any], shard_shape: tuple[int, ...], shard_size: int) -> slice:
    n = index_nbytes(conf, shard_shape)
    if shard_size < n:
        raise ChunkError(f"shard of {shard_size} bytes is shorter than its index ({n} bytes)")
    return slice(0, n) if conf.get("index_location", "end") == "start" else slice(shard_size - n, shard_size)


def decode_shard(data: bytes, conf: dict[str, Any], shard_shape: tuple[int, ...], dtype: np.dtype,
                 fill_value: Any = None) -> np.ndarray:
    """A whole shard held in memory (nested sharding), decoded into one array."""
    index = decode_index(data[index_slice(conf, shard_shape, len(data))], conf, shard_shape)
    inner = tuple(conf["chunk_shape"])
    codecs = _named_list(conf.get("codecs", []))
    out = np.full(shard_shape, fill_value if fill_value is not None else np.zeros((), dtype)[()], dtype=dtype)
    for position in np.ndindex(*index.shape[:-1]):
        offset, nbytes = index[position]
        if offset == MISSING and nbytes == MISSING:
            continue
        chunk = inner_chunk(data, int(offset), int(nbytes))
        region = tuple(slice(p * c, (p + 1) * c) for p, c in zip(position, inner, strict=True))
        out[region] = decode_v3(chunk, codecs, inner, dtype, fill_value)
    return out


def inner_chunk(data: bytes, offset: int, nbytes: int) -> bytes:
    if offset + nbytes > len(data):
        raise ChunkError(f"inner chunk at bytes {offset}..{offset + nbytes} lies beyond the shard's {len(data)} bytes")
    return data[offset: offset + nbytes]
