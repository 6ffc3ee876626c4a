"""Chunk grids: how an array's shape is cut into chunks.

Zarr v3 names its grid (``{"name": "regular", "configuration": {"chunk_shape":
[...]}}``, the only grid the specification defines); a v2 array's ``chunks``
is a regular grid's chunk shape. Both parse into a :class:`RegularChunkGrid`
(:func:`parse_chunk_grid`, :func:`parse_v2_chunks`); the parsers raise
:class:`ChunkGridError` naming the value received. For sharded arrays this
grid's chunks are the shards; the inner chunks are the sharding codec's
(:class:`~catalogue.model.codecs.ShardingCodec`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from catalogue.errors import CatalogueError


class ChunkGridError(CatalogueError):
    """A chunk grid or shape that is not one (the message names the value received)."""


def parse_shape(value: Any, what: str = "shape") -> tuple[int, ...]:
    """A list of non-negative integers (an array's shape, a chunk shape) as a tuple."""
    if not (isinstance(value, list) and all(type(v) is int and v >= 0 for v in value)):
        raise ChunkGridError(f"{what} is not a list of non-negative integers: {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class RegularChunkGrid:
    """Chunks of one shape; the last chunk of a dimension may reach past the array's end."""

    chunk_shape: tuple[int, ...]

    def fits(self, shape: tuple[int, ...]) -> bool:
        """Whether the grid can cut an array of ``shape`` (same rank, no empty chunk)."""
        return len(self.chunk_shape) == len(shape) and 0 not in self.chunk_shape

    def grid_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Chunks per dimension of an array of ``shape``."""
        return tuple(-(-s // c) for s, c in zip(shape, self.chunk_shape, strict=True))

    def chunk_count(self, shape: tuple[int, ...]) -> int:
        """How many chunks an array of ``shape`` has."""
        return math.prod(self.grid_shape(shape))

    def to_dict(self) -> dict[str, Any]:
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}


def parse_chunk_grid(value: Any) -> RegularChunkGrid:
    """A v3 ``chunk_grid`` (only the regular grid is defined)."""
    if not (isinstance(value, dict) and value.get("name") == "regular"):
        raise ChunkGridError(f"chunk grid {value!r} is not a regular grid")
    return RegularChunkGrid(parse_shape((value.get("configuration") or {}).get("chunk_shape"), "chunk_shape"))


def parse_v2_chunks(value: Any) -> RegularChunkGrid:
    """A v2 ``chunks`` list."""
    return RegularChunkGrid(parse_shape(value, "chunks"))
