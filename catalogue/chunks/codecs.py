"""Decoding one chunk: v3 codec chains and v2 filters + compressor.

Compression and checksums are numcodecs' (gzip, zstd, blosc, crc32c and any
``numcodecs.*`` codec, v2 compressors and filters), and so are the v3
array-to-bytes codecs ``numcodecs.zfpy`` and ``numcodecs.pcodec``; the ``bytes``
codec (endianness) and ``transpose`` are NumPy views; ``sharding_indexed`` met
inside a chain (nested sharding) is decoded by ``sharding``. Every failure is
a ``ChunkError`` naming the chunk; nothing is silently filled. ``pickle`` is
refused: decoding it would run code taken from the store.

A few numcodecs codecs need a package numcodecs does not install
(``OPTIONAL_PACKAGES``); numcodecs registers such a codec only when that
package imports, so a read that meets one without it says which package to
install instead of numcodecs' bare "codec not available".
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

import numpy as np

from catalogue.errors import CatalogueError

UNSAFE = {"pickle", "numcodecs.pickle"}
_BYTES_TO_BYTES_V3 = {"gzip": "gzip", "zstd": "zstd", "blosc": "blosc", "crc32c": "crc32c"}
_ARRAY_TO_ARRAY = {"transpose"}
_NUMCODECS_ARRAY_TO_BYTES = {"numcodecs.zfpy", "numcodecs.pcodec"}
_ARRAY_TO_BYTES = {"bytes", "endian", "vlen-utf8", "vlen-bytes", "sharding_indexed", *_NUMCODECS_ARRAY_TO_BYTES}

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
    codec_id = name[len("numcodecs."):] if name.startswith("numcodecs.") else _BYTES_TO_BYTES_V3.get(name, name)
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


def _decode_through(data: Any, codecs: list[dict[str, Any]]) -> Any:
    """Run numcodecs decoders in the given order; any failure is a ChunkError naming the codec."""
    buf = data
    for codec in codecs:
        if codec["name"] in UNSAFE:
            raise ChunkError(f"codec {codec['name']!r} runs arbitrary code when decoding; refusing to decode it")
        try:
            buf = _numcodec(codec["name"], codec["configuration"]).decode(buf)
        except ChunkError:
            raise
        except Exception as exc:
            raise ChunkError(f"{codec['name']}: {exc}") from exc
    return buf


def decode_v3(data: bytes, codecs: list[dict[str, Any]], shape: tuple[int, ...], dtype: np.dtype,
              fill_value: Any = None) -> np.ndarray:
    """Decode one encoded chunk (bytes) through a v3 chain into an array of ``shape``.

    ``fill_value`` fills the absent inner chunks of a nested shard.
    """
    split = next((i for i, c in enumerate(codecs) if c["name"] in _ARRAY_TO_BYTES), None)
    if split is None:
        raise ChunkError("the codec chain has no array-to-bytes codec")
    a2a, a2b, b2b = codecs[:split], codecs[split], codecs[split + 1:]
    for codec in a2a:
        if codec["name"] not in _ARRAY_TO_ARRAY and not codec["name"].startswith("numcodecs."):
            raise ChunkError(f"unknown array-to-array codec {codec['name']!r}")
    buf = _decode_through(data, list(reversed(b2b)))
    encoded_shape = shape
    for codec in a2a:
        if codec["name"] == "transpose":
            order = codec["configuration"]["order"]
            encoded_shape = tuple(encoded_shape[i] for i in order)
    arr = _array_to_bytes(a2b, bytes(buf) if not isinstance(buf, bytes) else buf, encoded_shape, dtype, fill_value)
    for codec in reversed(a2a):
        if codec["name"] == "transpose":
            arr = np.transpose(arr, np.argsort(codec["configuration"]["order"]))
        else:
            try:
                arr = np.asarray(_numcodec(codec["name"], codec["configuration"]).decode(arr)).reshape(arr.shape)
            except Exception as exc:
                raise ChunkError(f"{codec['name']}: {exc}") from exc
    return arr


def _array_to_bytes(codec: dict[str, Any], data: bytes, shape: tuple[int, ...], dtype: np.dtype,
                    fill_value: Any) -> np.ndarray:
    name, conf = codec["name"], codec["configuration"]
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
        from catalogue.chunks.sharding import decode_shard

        return decode_shard(data, conf, shape, dtype, fill_value)
    if name in _NUMCODECS_ARRAY_TO_BYTES:
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


def decode_v2(data: bytes, codecs: list[dict[str, Any]], shape: tuple[int, ...], dtype: np.dtype, order: str) -> np.ndarray:
    """Decode one v2 chunk: the compressor, then the filters in reverse, then a C or F array."""
    compressor = [c for c in codecs if c.get("v2") == "compressor"]
    filters = [c for c in codecs if c.get("v2") == "filter"]
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
