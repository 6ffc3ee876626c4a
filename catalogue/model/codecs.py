"""Codecs: one array's codec chain, parsed once, for v2 and v3 alike.

A v3 ``codecs`` list holds names (the spec's short form) or ``{name,
configuration}`` objects; a v2 array has ``filters`` and a ``compressor``,
each a numcodecs ``{"id": ..., **configuration}`` object. Both parse into a
tuple of :class:`Codec` (:func:`parse_codecs`, :func:`parse_v2_codecs`); the
``sharding_indexed`` codec's configuration parses into a
:class:`ShardingCodec` (inner chunk shape, inner and index chains, where the
index is). Each ``parse_*`` raises :class:`CodecError` naming the value
received.

The stage tables say which codecs the catalogue knows: validation checks a
chain's order against them, chunk reads decode through them, pages label
them. Only metadata is modelled; no codec is instantiated here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from catalogue.errors import CatalogueError

_NUMCODECS_FILTERS = ("delta", "fixedscaleoffset", "quantize", "bitround", "astype", "packbits")
_NUMCODECS_BYTES = (
    "adler32", "blosc", "bz2", "crc32", "crc32c", "fletcher32", "gzip", "jenkins_lookup3", "lz4",
    "lzma", "shuffle", "zlib", "zstd",
)
ARRAY_TO_ARRAY = {"transpose", *(f"numcodecs.{n}" for n in _NUMCODECS_FILTERS)}
ARRAY_TO_BYTES = {"bytes", "endian", "sharding_indexed", "vlen-utf8", "vlen-bytes",
                  "numcodecs.pcodec", "numcodecs.zfpy"}
BYTES_TO_BYTES = {"gzip", "zstd", "blosc", "crc32c", *(f"numcodecs.{n}" for n in _NUMCODECS_BYTES)}
V3_CODECS = ARRAY_TO_ARRAY | ARRAY_TO_BYTES | BYTES_TO_BYTES
#: Codecs whose decoding runs arbitrary code.
UNSAFE_CODECS = {"pickle", "numcodecs.pickle"}

CodecKind = Literal["array-to-array", "array-to-bytes", "bytes-to-bytes"]


class CodecError(CatalogueError):
    """Codec metadata that is not a codec (the message names the value received)."""


def codec_name(entry: Any) -> str | None:
    """The name of a v3 codec entry (a string or a {name, configuration} object), or None."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        return entry["name"]
    return None


def codec_kind(name: str) -> CodecKind | None:
    """The v3 stage a known codec belongs to (None for a codec the catalogue does not know)."""
    if name in ARRAY_TO_ARRAY:
        return "array-to-array"
    if name in ARRAY_TO_BYTES:
        return "array-to-bytes"
    return "bytes-to-bytes" if name in BYTES_TO_BYTES else None


def normalise_codec_name(name: str) -> str:
    """A codec name for facets: lower case, without zarr-python's ``numcodecs.`` prefix."""
    return name.strip().lower().removeprefix("numcodecs.")


def inner_codec_names(configuration: Any, depth: int = 0) -> list[str]:
    """Normalised names of the codecs inside a sharding configuration (recursively), not its index codecs.

    Tolerant, for facets over whatever the metadata holds: malformed entries are skipped.
    """
    if not isinstance(configuration, dict) or depth > 8:
        return []
    out: list[str] = []
    codecs = configuration.get("codecs")
    for codec in codecs if isinstance(codecs, list) else []:
        name = codec_name(codec)
        if name is None:
            continue
        out.append(normalise_codec_name(name))
        if name == "sharding_indexed" and isinstance(codec, dict):
            out += inner_codec_names(codec.get("configuration"), depth + 1)
    return out


@dataclass(frozen=True)
class Codec:
    """One codec of a chain: its name and configuration ({} when the metadata has none)."""

    name: str
    configuration: dict[str, Any] = field(default_factory=dict)
    #: v2 only: whether the codec is one of the ``filters`` or the ``compressor``.
    v2_role: Literal["filter", "compressor"] | None = None

    @property
    def kind(self) -> CodecKind | None:
        return codec_kind(self.name)

    def to_dict(self) -> dict[str, Any]:
        """The codec as v3 metadata (v2 codecs keep their numcodecs ``id``/configuration object)."""
        return {"name": self.name, "configuration": self.configuration}


def parse_codec(entry: Any) -> Codec:
    """A v3 codec entry: a name, or an object with a string name and an optional configuration."""
    if isinstance(entry, str):
        return Codec(entry)
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        conf = entry.get("configuration") or {}
        if not isinstance(conf, dict):
            raise CodecError(f"malformed codec configuration {conf!r} of codec {entry['name']!r}")
        return Codec(entry["name"], conf)
    raise CodecError(f"malformed codec {entry!r}")


def parse_codecs(entries: Any) -> tuple[Codec, ...]:
    """A v3 codec chain (a list of codec entries)."""
    if not isinstance(entries, list):
        raise CodecError(f"a codec chain is a list, got {entries!r}")
    return tuple(parse_codec(e) for e in entries)


def parse_v2_codec(entry: Any, role: Literal["filter", "compressor"]) -> Codec:
    """A v2 filter or compressor: a numcodecs ``{"id": ..., **configuration}`` object."""
    if not (isinstance(entry, dict) and isinstance(entry.get("id"), str)):
        raise CodecError(f"malformed v2 {role} {entry!r}")
    return Codec(entry["id"], entry, role)


def parse_v2_codecs(filters: Any, compressor: Any) -> tuple[Codec, ...]:
    """A v2 array's codecs in encoding order: the filters, then the compressor."""
    if filters is not None and not isinstance(filters, list):
        raise CodecError(f"v2 filters are a list or null, got {filters!r}")
    chain = [parse_v2_codec(f, "filter") for f in filters or []]
    if compressor:
        chain.append(parse_v2_codec(compressor, "compressor"))
    return tuple(chain)


def _shape(value: Any, what: str) -> tuple[int, ...]:
    if not (isinstance(value, list) and all(type(v) is int and v >= 0 for v in value)):
        raise CodecError(f"{what} is not a list of non-negative integers: {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class ShardingCodec:
    """A ``sharding_indexed`` codec: inner chunks of a shard and where its index is."""

    chunk_shape: tuple[int, ...]
    codecs: tuple[Codec, ...]
    index_codecs: tuple[Codec, ...]
    index_location: Literal["start", "end"] = "end"

    def chunks_per_shard(self, shard_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(s // c for s, c in zip(shard_shape, self.chunk_shape, strict=True))

    def index_nbytes(self, shard_shape: tuple[int, ...]) -> int:
        """Bytes of the encoded index: 16 per inner chunk, plus 4 for a ``crc32c`` checksum."""
        entries = math.prod(self.chunks_per_shard(shard_shape))
        return 16 * entries + sum(4 for c in self.index_codecs if c.name == "crc32c")


def parse_sharding(configuration: Any) -> ShardingCodec:
    """The configuration of a ``sharding_indexed`` codec."""
    if not isinstance(configuration, dict):
        raise CodecError(f"a sharding configuration is an object, got {configuration!r}")
    location = configuration.get("index_location", "end")
    if location not in ("start", "end"):
        raise CodecError(f'index_location must be "start" or "end", got {location!r}')
    return ShardingCodec(
        chunk_shape=_shape(configuration.get("chunk_shape"), "sharding chunk_shape"),
        codecs=parse_codecs(configuration.get("codecs", [])),
        index_codecs=parse_codecs(configuration.get("index_codecs", [])),
        index_location=location,
    )
