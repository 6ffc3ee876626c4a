"""The codec model: v2 and v3 codec chains and the sharding codec's configuration."""

from __future__ import annotations

import pytest

from catalogue.model.codecs import (
    Codec,
    CodecError,
    ShardingCodec,
    codec_kind,
    codec_name,
    inner_codec_names,
    normalise_codec_name,
    parse_codec,
    parse_codecs,
    parse_sharding,
    parse_v2_codecs,
)


def test_v3_chain_round_trip() -> None:
    chain = parse_codecs(["bytes", {"name": "gzip", "configuration": {"level": 5}}])
    assert chain == (Codec("bytes"), Codec("gzip", {"level": 5}))
    assert [c.kind for c in chain] == ["array-to-bytes", "bytes-to-bytes"]
    assert [c.to_dict() for c in chain] == [
        {"name": "bytes", "configuration": {}}, {"name": "gzip", "configuration": {"level": 5}}]
    assert parse_codecs([c.to_dict() for c in chain]) == chain


def test_v2_codecs_filters_then_compressor() -> None:
    chain = parse_v2_codecs([{"id": "delta", "dtype": "<i4"}], {"id": "zlib", "level": 1})
    assert [(c.name, c.v2_role) for c in chain] == [("delta", "filter"), ("zlib", "compressor")]
    assert chain[1].configuration == {"id": "zlib", "level": 1}
    assert parse_v2_codecs(None, None) == ()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: parse_codec(7), "malformed codec 7"),
    (lambda: parse_codec({"name": "gzip", "configuration": 3}), "malformed codec configuration 3"),
    (lambda: parse_codecs("bytes"), "a codec chain is a list, got 'bytes'"),
    (lambda: parse_v2_codecs([{"level": 1}], None), "malformed v2 filter {'level': 1}"),
    (lambda: parse_sharding({"chunk_shape": [2, -1]}), "sharding chunk_shape is not a list of non-negative integers: [2, -1]"),
    (lambda: parse_sharding({"chunk_shape": [2], "index_location": "middle"}), "got 'middle'"),
])
def test_errors_name_the_value(call, message: str) -> None:
    with pytest.raises(CodecError) as caught:
        call()
    assert message in str(caught.value)


def test_sharding() -> None:
    sharding = parse_sharding({
        "chunk_shape": [2, 5], "codecs": ["bytes"],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"],
        "index_location": "start",
    })
    assert sharding == ShardingCodec((2, 5), (Codec("bytes"),),
                                     (Codec("bytes", {"endian": "little"}), Codec("crc32c")), "start")
    assert sharding.chunks_per_shard((4, 10)) == (2, 2)
    assert sharding.index_nbytes((4, 10)) == 16 * 4 + 4
    assert parse_sharding({"chunk_shape": [1]}).index_location == "end"


def test_names_and_kinds() -> None:
    assert codec_name("zstd") == "zstd"
    assert codec_name({"name": "blosc"}) == "blosc"
    assert codec_name({"id": "blosc"}) is None
    assert codec_kind("transpose") == "array-to-array"
    assert codec_kind("numcodecs.zlib") == "bytes-to-bytes"
    assert codec_kind("mystery") is None
    assert normalise_codec_name(" Numcodecs.Zlib") == "zlib"


def test_inner_codec_names_walk_nested_shards() -> None:
    inner = {"name": "sharding_indexed", "configuration": {"codecs": ["bytes", "numcodecs.Zlib"]}}
    assert inner_codec_names({"codecs": [inner, 5, "gzip"], "index_codecs": ["crc32c"]}) == [
        "sharding_indexed", "bytes", "zlib", "gzip"]
    assert inner_codec_names("nonsense") == []
