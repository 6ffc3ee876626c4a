"""The chunk grid model, quote_path and JSON typing."""

from __future__ import annotations

import pytest

from catalogue.model.chunk_grids import (
    ChunkGridError,
    RegularChunkGrid,
    parse_chunk_grid,
    parse_v2_chunks,
)
from catalogue.model.json import json_type, short
from catalogue.model.paths import quote_path


def test_regular_grid_round_trip() -> None:
    value = {"name": "regular", "configuration": {"chunk_shape": [10, 3]}}
    grid = parse_chunk_grid(value)
    assert grid == RegularChunkGrid((10, 3))
    assert grid.to_dict() == value
    assert grid.grid_shape((25, 3)) == (3, 1)
    assert grid.chunk_count((25, 3)) == 3
    assert grid.fits((25, 3)) and not grid.fits((25,)) and not RegularChunkGrid((0,)).fits((1,))
    assert parse_v2_chunks([4]) == RegularChunkGrid((4,))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: parse_chunk_grid({"name": "rectilinear"}), "chunk grid {'name': 'rectilinear'} is not a regular grid"),
    (lambda: parse_chunk_grid({"name": "regular", "configuration": {"chunk_shape": "x"}}),
     "chunk_shape is not a list of non-negative integers: 'x'"),
    (lambda: parse_v2_chunks([1.5]), "chunks is not a list of non-negative integers: [1.5]"),
])
def test_errors_name_the_value(call, message: str) -> None:
    with pytest.raises(ChunkGridError) as caught:
        call()
    assert str(caught.value) == message


def test_quote_path_and_json_typing() -> None:
    assert quote_path("a b/c#d") == "a%20b/c%23d"
    assert quote_path("x:y@z") == "x:y@z"
    assert [json_type(v) for v in (None, True, 1, "s", [], {})] == [
        "null", "a boolean", "a number", "a string", "an array", "an object"]
    assert short("x" * 100).endswith("...") and len(short("x" * 100)) == 60
