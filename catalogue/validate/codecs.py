"""Codec rules: the v3 codec chain rules and the v2 (numcodecs) codec ids.

Which codecs exist and at which stage of a chain each acts is the model's
(:mod:`catalogue.model.codecs`); this module checks chains against it.

Only metadata is inspected; no codec is instantiated, so no codec code runs
(``pickle`` in particular is flagged, never touched).
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise
from typing import Any

from catalogue.model.codecs import (
    ARRAY_TO_ARRAY,
    ARRAY_TO_BYTES,
    UNSAFE_CODECS,
    V3_CODECS,
    codec_name,
)
from catalogue.model.json import short
from catalogue.validate.context import META, NodeChecker

#: numcodecs ids that exist even when their optional library is not installed.
_NUMCODECS_OPTIONAL = {"msgpack2", "zfpy", "pcodec", "lz4", "blosc", "zstd", "crc32c", "json2", "pickle",
                       "vlen-utf8", "vlen-bytes", "vlen-array", "categorize", "base64", "shuffle",
                       "bitround", "quantize", "zlib", "gzip", "bz2", "lzma"}

BLOSC_CNAMES = {"lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"}
BLOSC_SHUFFLES = {"noshuffle", "shuffle", "bitshuffle"}


@cache
def numcodecs_ids() -> frozenset[str]:
    """Codec ids numcodecs registers (its registry, read without instantiating anything)."""
    from numcodecs.registry import codec_registry

    return frozenset(codec_registry) | _NUMCODECS_OPTIONAL


def _is_positive_int_list(value: Any, rank: int | None = None) -> bool:
    return (
        isinstance(value, list)
        and all(type(v) is int and v >= 1 for v in value)
        and (rank is None or len(value) == rank)
    )


class ChainChecker:
    """Checks one v3 codec chain (the array's, or a shard's inner or index chain)."""

    def __init__(self, checker: NodeChecker, item_size: int | None) -> None:
        self.c = checker
        #: Bytes per element of the chain's data type (None when unknown, variable or invalid).
        self.item_size = item_size

    def check(self, codecs: Any, tokens: tuple[Any, ...], rank: int | None, chunk_shape: list[int] | None) -> None:
        c = self.c
        if not isinstance(codecs, list):
            c.add("v3.codecs", META, tokens, f"expected a list of codecs, got {short(codecs)}")
            return
        stages: list[tuple[int, int]] = []  # (stage, index): 0 a->a, 1 a->b, 2 b->b
        for i, entry in enumerate(codecs):
            at = (*tokens, i)
            name = codec_name(entry)
            if name is None:
                c.add("v3.codecs", META, at, f"expected a codec name or {{name, configuration}}, got {short(entry)}")
                continue
            if isinstance(entry, dict):
                extra = set(entry) - {"name", "configuration", "must_understand"}
                if extra:
                    c.add("v3.codecs", META, (*at, sorted(extra)[0]), f"unexpected key in a codec of {name!r}")
                conf = entry.get("configuration", {})
                if not isinstance(conf, dict):
                    c.add("v3.codecs", META, (*at, "configuration"), f"expected an object, got {short(conf)}")
                    continue
            else:
                conf = {}
            if name in UNSAFE_CODECS:
                c.add("codec.unsafe", META, (*at, "name") if isinstance(entry, dict) else at,
                      f"codec {name!r} runs arbitrary code when data is decoded")
            if name not in V3_CODECS:
                if isinstance(entry, dict) and entry.get("must_understand") is False:
                    continue
                c.add("v3.codecs", META, (*at, "name") if isinstance(entry, dict) else at,
                      f"unknown codec {name!r} (and it does not say must_understand: false)")
                continue
            stage = 0 if name in ARRAY_TO_ARRAY else 1 if name in ARRAY_TO_BYTES else 2
            stages.append((stage, i))
            conf_at = (*at, "configuration") if isinstance(entry, dict) else at
            self._configuration(name, conf, conf_at, rank, chunk_shape)
        a2b = [i for stage, i in stages if stage == 1]
        if len(a2b) != 1:
            c.add("v3.codecs.array-to-bytes", META, tokens,
                  f"expected exactly one array-to-bytes codec (e.g. \"bytes\"), found {len(a2b)}")
        for (s1, _), (s2, i2) in pairwise(stages):
            if s2 < s1:
                kinds = ("array-to-array", "array-to-bytes", "bytes-to-bytes")
                c.add("v3.codecs.order", META, (*tokens, i2),
                      f"{kinds[s2]} codec {codec_name(codecs[i2])!r} comes after a {kinds[s1]} codec")
                break

    # ------------------------------------------------------- configurations
    def _configuration(self, name: str, conf: dict[str, Any], at: tuple[Any, ...], rank: int | None,
                       chunk_shape: list[int] | None) -> None:
        bad = self._bad
        if name in ("bytes", "endian"):
            self._keys(conf, at, {"endian"})
            endian = conf.get("endian")
            if "endian" in conf and endian not in ("little", "big"):
                bad((*at, "endian"), f'endian must be "little" or "big", got {short(endian)}')
            elif "endian" not in conf and self.item_size is not None and self.item_size > 1:
                bad(at, f"the data type has {self.item_size}-byte items, so endian is required")
        elif name == "transpose":
            self._keys(conf, at, {"order"})
            order = conf.get("order")
            if rank is not None and not (isinstance(order, list) and sorted(order) == list(range(rank))
                                         and all(type(o) is int for o in order)):
                bad((*at, "order"), f"order must be a permutation of 0..{rank - 1}, got {short(order)}")
        elif name == "gzip":
            self._keys(conf, at, {"level"})
            level = conf.get("level")
            if "level" not in conf:
                bad(at, "missing required key level")
            elif not (type(level) is int and 0 <= level <= 9):
                bad((*at, "level"), f"level must be an integer 0..9, got {short(level)}")
        elif name == "zstd":
            self._keys(conf, at, {"level", "checksum"})
            level = conf.get("level")
            if "level" not in conf:
                bad(at, "missing required key level")
            elif not (type(level) is int and -131072 <= level <= 22):
                bad((*at, "level"), f"level must be an integer -131072..22, got {short(level)}")
            if "checksum" in conf and not isinstance(conf["checksum"], bool):
                bad((*at, "checksum"), f"checksum must be true or false, got {short(conf['checksum'])}")
        elif name == "blosc":
            self._blosc(conf, at)
        elif name == "crc32c":
            self._keys(conf, at, set())
        elif name == "sharding_indexed":
            self._sharding(conf, at, rank, chunk_shape)

    def _blosc(self, conf: dict[str, Any], at: tuple[Any, ...]) -> None:
        bad = self._bad
        self._keys(conf, at, {"cname", "clevel", "shuffle", "typesize", "blocksize"})
        if conf.get("cname") not in BLOSC_CNAMES:
            bad((*at, "cname"), f"cname must be one of {sorted(BLOSC_CNAMES)}, got {short(conf.get('cname'))}")
        clevel = conf.get("clevel")
        if not (type(clevel) is int and 0 <= clevel <= 9):
            bad((*at, "clevel"), f"clevel must be an integer 0..9, got {short(clevel)}")
        shuffle = conf.get("shuffle")
        if shuffle not in BLOSC_SHUFFLES:
            bad((*at, "shuffle"), f"shuffle must be one of {sorted(BLOSC_SHUFFLES)}, got {short(shuffle)}")
        if "typesize" in conf and not (type(conf["typesize"]) is int and conf["typesize"] >= 1):
            bad((*at, "typesize"), f"typesize must be a positive integer, got {short(conf['typesize'])}")
        elif shuffle in ("shuffle", "bitshuffle") and "typesize" not in conf:
            bad(at, "typesize is required when shuffle is not noshuffle")
        if "blocksize" in conf and not (type(conf["blocksize"]) is int and conf["blocksize"] >= 0):
            bad((*at, "blocksize"), f"blocksize must be a non-negative integer, got {short(conf['blocksize'])}")

    def _sharding(self, conf: dict[str, Any], at: tuple[Any, ...], rank: int | None,
                  shard_shape: list[int] | None) -> None:
        c, bad = self.c, self._bad
        self._keys(conf, at, {"chunk_shape", "codecs", "index_codecs", "index_location"})
        inner = conf.get("chunk_shape")
        if not _is_positive_int_list(inner, rank):
            what = f"{rank} " if rank is not None else ""
            bad((*at, "chunk_shape"), f"chunk_shape must be a list of {what}positive integers, got {short(inner)}")
            inner = None
        elif shard_shape is not None and len(shard_shape) == len(inner):
            for d, (outer, sub) in enumerate(zip(shard_shape, inner, strict=True)):
                if outer % sub:
                    c.add("v3.sharding.divides", META, (*at, "chunk_shape", d),
                          f"inner chunk size {sub} does not divide the shard size {outer} (dimension {d})")
                    break
        if conf.get("index_location", "end") not in ("start", "end"):
            bad((*at, "index_location"), f'index_location must be "start" or "end", got {short(conf["index_location"])}')
        if "codecs" not in conf:
            bad(at, "missing required key codecs")
        else:
            self.check(conf["codecs"], (*at, "codecs"), rank, inner)
        if "index_codecs" not in conf:
            bad(at, "missing required key index_codecs")
        else:
            index = ChainChecker(self.c, 8)  # the index: uint64 entries
            index.check(conf["index_codecs"], (*at, "index_codecs"), None if rank is None else rank + 1, None)

    def _keys(self, conf: dict[str, Any], at: tuple[Any, ...], allowed: set[str]) -> None:
        for key in conf:
            if key not in allowed:
                self._bad((*at, key), f"unexpected configuration key {key!r}")

    def _bad(self, at: tuple[Any, ...], message: str) -> None:
        self.c.add("v3.codecs.configuration", META, at, message)
