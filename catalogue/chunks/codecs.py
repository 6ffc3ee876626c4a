"""Decoding one chunk: v3 codec chains and v2 filters + compressor.

Compression and checksums are numcodecs' (gzip, zstd, blosc, crc32c and any
``numcodecs.*`` codec, v2 compressors and filters), and so are the v3
array-to-bytes codecs ``numcodecs.zfpy`` and ``numcodecs.pcodec``; the ``bytes``
codec (endianness) and ``transpose`` are NumPy views; ``sharding_indexed`` is decoded here too, its
index (``decode_shard_index``, which the resolver reads by range) and, met
inside a chain (nested sharding), a whole shard (``decode_shard``). Every
failure is a ``ChunkError`` naming the chunk; nothing is silently filled.
``pickle`` is refused: decoding it would run code taken from the store.

The ``sharding_indexed`` codec: a shard holds ``chunks_per_shard`` inner
chunks and an index: one ``(offset, nbytes)`` pair of little-endian uint64
per inner chunk, in C order, encoded by ``index_codecs`` (typically
``bytes`` then ``crc32c``, the checksum verified here) and stored at the
``start`` or the ``end`` of the shard. ``2**64 - 1`` in both fields marks an
inner chunk that is absent (it reads as the fill value). Its configuration
is the model's :class:`~catalogue.model.codecs.ShardingCodec`.

A few numcodecs codecs need a package numcodecs does not install
(``OPTIONAL_PACKAGES``); numcodecs registers such a codec only when that
package imports, so a read that meets one without it says which package to
install instead of numcodecs' bare "codec not available".
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from catalogue.errors import CatalogueError
from catalogue.model.codecs import (
    ARRAY_TO_BYTES,
    UNSAFE_CODECS,
    Codec,
    CodecError,
    ShardingCodec,
    parse_sharding,
)

#: An absent inner chunk's index entry (offset and nbytes alike).
MISSING = np.uint64(2**64 - 1)

#: numcodecs codec id -> (the package its numcodecs implementation imports, how to install it).
#: ``crc32c`` (zarr-python's default shard index checksum) needs ``google-crc32c``, a runtime
#: dependency of the catalogue, so it is only missing from an install made with ``--no-deps``.
#: The others are optional extras (pyproject): each extra pins versions that numcodecs can
#: import (a bare ``pip install zfpy`` brings zfpy 1.0.1.post0, which breaks numcodecs' import).
OPTIONAL_PACKAGES: dict[str, tuple[str, str]] = {
    "crc32c": ("google-crc32c", "pip install google-crc32c"),
    "zfpy": ("zfpy", "pip install 'zarr-catalogue[zfpy]'"),
    "pcodec": ("pcodec", "pip install 'zarr-catalogue[pcodec]'"),
    "msgpack2": ("msgpack", "pip install 'zarr-catalogue[msgpack]'"),
}


class ChunkError(CatalogueError):
    """A chunk that cannot be decoded (truncated, corrupt, bad checksum, unknown codec)."""


def _numcodec(name: str, configuration: dict[str, Any]) -> Any:
    """A numcodecs codec from a v3 name (``gzip``, ``numcodecs.delta`` ...) and configuration.

    Built once per distinct configuration: a read decodes many chunks with the same codecs.
    """
    return _cached_numcodec(name, json.dumps(configuration, sort_keys=True))


@lru_cache(maxsize=256)
def _cached_numcodec(name: str, configuration_json: str) -> Any:
    from numcodecs import get_codec

    configuration = json.loads(configuration_json)
    codec_id = name.removeprefix("numcodecs.")
    if codec_id in ("pickle",):
        raise ChunkError(f"codec {name!r} runs arbitrary code when decoding; refusing to decode it")
    config = {k: v for k, v in configuration.items() if k != "id"}
    if codec_id == "blosc":  # v3 names shuffle modes; numcodecs' decode reads them from the blosc header
        config = {}
    if codec_id == "zstd":
        config = {"level": config.get("level", 0), "checksum": config.get("checksum", False)}
    try:
        return get_codec({"id": codec_id, **config})
    except Exception as exc:  # numcodecs raises ValueError/KeyError/TypeError for unknown ids and configs
        missing = _missing_package(codec_id)
        if missing is not None:
            raise ChunkError(f"codec {name!r} {missing}") from exc
        raise ChunkError(f"unknown or unsupported codec {name!r}: {exc}") from exc


def _missing_package(codec_id: str) -> str | None:
    """What to install when ``codec_id`` is an optional numcodecs codec left unregistered.

    numcodecs registers these codecs at import only if their package imports, so an
    unregistered one means the package is missing (or too old for numcodecs to import).
    """
    from numcodecs.registry import codec_registry

    if codec_id not in OPTIONAL_PACKAGES or codec_id in codec_registry:
        return None
    package, install = OPTIONAL_PACKAGES[codec_id]
    return f"needs the package {package}: {install}"


def _decode_through(data: Any, codecs: Sequence[Codec]) -> Any:
    """Run numcodecs decoders in the given order; any failure is a ChunkError naming the codec."""
    buf = data
    for codec in codecs:
        if codec.name in UNSAFE_CODECS:
            raise ChunkError(f"codec {codec.name!r} runs arbitrary code when decoding; refusing to decode it")
        try:
            buf = _numcodec(codec.name, codec.configuration).decode(buf)
        except ChunkError:
            raise
        except Exception as exc:
            raise ChunkError(f"{codec.name}: {exc}") from exc
    return buf


def decode_v3(data: bytes, codecs: Sequence[Codec], shape: tuple[int, ...], dtype: np.dtype,
              fill_value: Any = None) -> np.ndarray:
    """Decode one encoded chunk (bytes) through a v3 chain into an array of ``shape``.

    ``fill_value`` fills the absent inner chunks of a nested shard.
    """
    split = next((i for i, c in enumerate(codecs) if c.name in ARRAY_TO_BYTES), None)
    if split is None:
        raise ChunkError("the codec chain has no array-to-bytes codec")
    a2a, a2b, b2b = codecs[:split], codecs[split], codecs[split + 1:]
    for codec in a2a:
        if codec.name != "transpose" and not codec.name.startswith("numcodecs."):
            raise ChunkError(f"unknown array-to-array codec {codec.name!r}")
    buf = _decode_through(data, list(reversed(b2b)))
    encoded_shape = shape
    for codec in a2a:
        if codec.name == "transpose":
            order = codec.configuration["order"]
            encoded_shape = tuple(encoded_shape[i] for i in order)
    arr = _array_to_bytes(a2b, bytes(buf) if not isinstance(buf, bytes) else buf, encoded_shape, dtype, fill_value)
    for codec in reversed(a2a):
        if codec.name == "transpose":
            arr = np.transpose(arr, np.argsort(codec.configuration["order"]))
        else:
            try:
                arr = np.asarray(_numcodec(codec.name, codec.configuration).decode(arr)).reshape(arr.shape)
            except Exception as exc:
                raise ChunkError(f"{codec.name}: {exc}") from exc
    return arr


def _array_to_bytes(codec: Codec, data: bytes, shape: tuple[int, ...], dtype: np.dtype,
                    fill_value: Any) -> np.ndarray:
    name, conf = codec.name, codec.configuration
    n = math.prod(shape)
    if name in ("bytes", "endian"):
        on_disk = dtype
        if dtype.itemsize > 1 and dtype.kind not in "SVO" and dtype.fields is None:
            on_disk = dtype.newbyteorder("<" if conf.get("endian", "little") == "little" else ">")
        elif dtype.fields is not None and conf.get("endian") == "big":
            on_disk = dtype.newbyteorder(">")
        if len(data) != n * dtype.itemsize:
            raise ChunkError(f"decoded {len(data)} bytes, expected {n * dtype.itemsize} for {n} items of {dtype}")
        return np.frombuffer(data, dtype=on_disk).reshape(shape)
    if name in ("vlen-utf8", "vlen-bytes"):
        from numcodecs import VLenBytes, VLenUTF8

        try:
            items = (VLenUTF8() if name == "vlen-utf8" else VLenBytes()).decode(data)
        except Exception as exc:
            raise ChunkError(f"{name}: {exc}") from exc
        if items.size != n:
            raise ChunkError(f"{name}: decoded {items.size} items, expected {n}")
        return items.reshape(shape)
    if name == "sharding_indexed":
        try:
            sharding = parse_sharding(conf)
        except CodecError as exc:
            raise ChunkError(str(exc)) from exc
        return decode_shard(data, sharding, shape, dtype, fill_value)
    if name.startswith("numcodecs.") and name in ARRAY_TO_BYTES:  # zfpy, pcodec: the model's table
        return _numcodecs_array(name, conf, data, shape, dtype)
    raise ChunkError(f"unsupported array-to-bytes codec {name!r}")


def _numcodecs_array(name: str, conf: dict[str, Any], data: bytes, shape: tuple[int, ...],
                     dtype: np.dtype) -> np.ndarray:
    """``numcodecs.zfpy``/``numcodecs.pcodec``: the codec's own header gives the items, in C order."""
    codec = _numcodec(name, conf)
    try:
        items = np.asarray(codec.decode(data))
    except Exception as exc:
        raise ChunkError(f"{name}: {exc}") from exc
    if items.size != math.prod(shape) or items.dtype.newbyteorder("=") != dtype.newbyteorder("="):
        raise ChunkError(f"{name}: decoded {items.size} items of {items.dtype}, expected {math.prod(shape)} of {dtype}")
    return items.astype(dtype, copy=False).reshape(shape)


def decode_v2(data: bytes, codecs: Sequence[Codec], shape: tuple[int, ...], dtype: np.dtype, order: str) -> np.ndarray:
    """Decode one v2 chunk: the compressor, then the filters in reverse, then a C or F array."""
    compressor = [c for c in codecs if c.v2_role == "compressor"]
    filters = [c for c in codecs if c.v2_role == "filter"]
    buf = _decode_through(data, compressor + list(reversed(filters)))
    n = math.prod(shape)
    if dtype.kind == "O" or (isinstance(buf, np.ndarray) and buf.dtype == dtype):
        arr = np.asarray(buf)
        if arr.size != n:
            raise ChunkError(f"decoded {arr.size} items, expected {n}")
        return arr.reshape(shape, order=order)
    raw = memoryview(buf).cast("B") if not isinstance(buf, bytes | bytearray) else buf
    if len(raw) != n * dtype.itemsize:
        raise ChunkError(f"decoded {len(raw)} bytes, expected {n * dtype.itemsize} for {n} items of {dtype}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape, order=order)


# ------------------------------------------------------------------ sharding
def decode_shard_index(data: bytes, sharding: ShardingCodec, shard_shape: tuple[int, ...]) -> np.ndarray:
    """The shard index as an array of shape ``chunks_per_shard + (2,)`` (offset, nbytes)."""
    per_shard = sharding.chunks_per_shard(shard_shape)
    try:
        return decode_v3(data, sharding.index_codecs, (*per_shard, 2), np.dtype("u8"))
    except ChunkError as exc:
        raise ChunkError(f"shard index: {exc}") from exc


def index_slice(sharding: ShardingCodec, shard_shape: tuple[int, ...], shard_size: int) -> slice:
    n = sharding.index_nbytes(shard_shape)
    if shard_size < n:
        raise ChunkError(f"shard of {shard_size} bytes is shorter than its index ({n} bytes)")
    return slice(0, n) if sharding.index_location == "start" else slice(shard_size - n, shard_size)


def decode_shard(data: bytes, sharding: ShardingCodec, shard_shape: tuple[int, ...], dtype: np.dtype,
                 fill_value: Any = None) -> np.ndarray:
    """A whole shard held in memory (nested sharding), decoded into one array."""
    index = decode_shard_index(data[index_slice(sharding, shard_shape, len(data))], sharding, shard_shape)
    inner = sharding.chunk_shape
    out = np.full(shard_shape, fill_value if fill_value is not None else np.zeros((), dtype)[()], dtype=dtype)
    for position in np.ndindex(*index.shape[:-1]):
        offset, nbytes = index[position]
        if offset == MISSING and nbytes == MISSING:
            continue
        chunk = inner_chunk(data, int(offset), int(nbytes))
        region = tuple(slice(p * c, (p + 1) * c) for p, c in zip(position, inner, strict=True))
        out[region] = decode_v3(chunk, sharding.codecs, inner, dtype, fill_value)
    return out


def inner_chunk(data: bytes, offset: int, nbytes: int) -> bytes:
    if offset + nbytes > len(data):
        raise ChunkError(f"inner chunk at bytes {offset}..{offset + nbytes} lies beyond the shard's {len(data)} bytes")
    return data[offset: offset + nbytes]
