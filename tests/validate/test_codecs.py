"""The v3 codec chain rules (catalogue/validate/codecs.py), called on one chain.

A chain is checked with a ``NodeChecker`` of a real one-array store, so each finding
comes with the rule id, the RFC 6901 pointer and the message users see; the store
itself is valid, only the chain handed to the checker varies.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from catalogue.harvest import load_hierarchy
from catalogue.validate.codecs import ChainChecker
from catalogue.validate.context import NodeChecker

ARRAY = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
         "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}


@pytest.fixture
def checker(tmp_path: pathlib.Path) -> NodeChecker:
    store = tmp_path / "a.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps(ARRAY))
    h = load_hierarchy(str(store))
    return NodeChecker(h, h.nodes[""])


def findings(checker: NodeChecker, codecs: object) -> list[tuple[str, str, str]]:
    ChainChecker(checker, 1).check(codecs, ("codecs",), 1, [2])  # uint8: one byte per element
    return [(f.rule, f.pointer, f.message) for f in checker.findings]


@pytest.mark.parametrize("codecs", [
    [{"name": "bytes"}],
    [{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
    [{"name": "bytes"}, {"name": "private.codec", "must_understand": False}],
])
def test_chains_that_are_fine(checker, codecs):
    assert findings(checker, codecs) == []


@pytest.mark.parametrize(("codecs", "expected"), [
    ([{"name": "gzip", "configuration": {"level": 1}}],
     ("v3.codecs.array-to-bytes", "/codecs", 'expected exactly one array-to-bytes codec (e.g. "bytes"), found 0')),
    ([{"name": "bytes"}, {"name": "GZip"}],
     ("v3.codecs", "/codecs/1/name", "unknown codec 'GZip' (and it does not say must_understand: false)")),
    ([{"name": "bytes"}, {"name": "gzip"}],
     ("v3.codecs.configuration", "/codecs/1/configuration", "missing required key level")),
    ([{"name": "bytes", "configuration": {"endian": "middle"}}],
     ("v3.codecs.configuration", "/codecs/0/configuration/endian", 'endian must be "little" or "big", got "middle"')),
    ({"name": "bytes"}, ("v3.codecs", "/codecs", "expected a list of codecs, got {\"name\": \"bytes\"}")),
])
def test_each_broken_chain_gives_exactly_its_finding(checker, codecs, expected):
    assert findings(checker, codecs) == [expected]


def test_a_codec_out_of_order_is_named(checker):
    got = findings(checker, [{"name": "gzip", "configuration": {"level": 1}}, {"name": "bytes"}])
    assert [(rule, pointer) for rule, pointer, _ in got] == [("v3.codecs.order", "/codecs/1")]
    assert "'bytes'" in got[0][2]
