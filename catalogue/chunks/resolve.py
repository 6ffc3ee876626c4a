"""Which chunks a selection touches, their keys and URLs, and (sharded) their byte ranges.

Resolution is vectorised: per dimension, the chunk indices the selection
hits (``selection.Dim.chunk_indices``); the chunks are their cartesian
product, keys are built per dimension and concatenated (``keys``), and
presence is one listing of the store checked with a set. Only sharded arrays
need more I/O: each touched shard's index is read (one range request) to
find the inner chunks' byte ranges. In a kerchunk/VirtualiZarr reference set
(:mod:`catalogue.storage.references`) a chunk's URL is the archive file it refers to,
with its byte range (``offset``, ``length``), or ``"inline": true``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalogue.chunks.codecs import MISSING, ChunkError, decode_shard_index
from catalogue.chunks.layout import ArrayLayout
from catalogue.chunks.selection import Dim, normalise, parse, result_shape
from catalogue.model.paths import quote_path
from catalogue.storage.access import StoreAccess
from catalogue.storage.icechunk import IcechunkAccess
from catalogue.storage.references import ReferenceAccess


@dataclass
class Resolution:
    """The chunks (inner chunks, when sharded) a selection touches."""

    layout: ArrayLayout
    dims: list[Dim]
    #: Per dimension, the indices of the touched read-unit chunks (inner chunks when sharded).
    axes: list[np.ndarray]

    @property
    def count(self) -> int:
        return int(np.prod([len(a) for a in self.axes])) if self.axes else 1

    def indices(self) -> np.ndarray:
        """(count, rank) grid indices of the touched chunks, in C order."""
        rank = len(self.axes)
        if rank == 0:
            return np.zeros((1, 0), dtype=np.int64)
        grids = np.meshgrid(*self.axes, indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1)

    def shard_axes(self) -> list[np.ndarray]:
        """Per dimension, the shard (outer chunk) index of each touched inner chunk."""
        sharding = self.layout.sharding
        if sharding is None:
            return self.axes
        ratio = [s // c for s, c in zip(self.layout.chunk_shape, sharding.chunk_shape, strict=True)]
        return [a // r for a, r in zip(self.axes, ratio, strict=True)]

    def keys(self) -> np.ndarray:
        """Keys of the touched chunks (of their shards, when sharded), in C order."""
        if self.layout.sharding is None:
            return self.layout.encoding.grid_keys(self.axes)
        return self.layout.encoding.grid_keys(self.shard_axes())


def resolve_selection(layout: ArrayLayout, selection: str | tuple[object, ...] | None) -> Resolution:
    items = parse(selection) if isinstance(selection, str) or selection is None else selection
    dims = normalise(items, layout.shape)
    unit = layout.read_chunk_shape
    axes = [d.chunk_indices(c) for d, c in zip(dims, unit, strict=True)]
    return Resolution(layout, dims, axes)


def describe(resolution: Resolution, store: StoreAccess, selection_text: str | None) -> dict[str, Any]:
    """The JSON ``catalogue resolve`` prints, with the chunk entries in a list."""
    out = describe_streaming(resolution, store, selection_text)
    out["chunks"] = list(out["chunks"])
    out["fill_chunks"] = sum(1 for c in out["chunks"] if c["fill"])
    return out


def describe_streaming(resolution: Resolution, store: StoreAccess, selection_text: str | None) -> dict[str, Any]:
    """The same, with ``chunks`` an iterator (a million entries need not sit in memory) and no ``fill_chunks``."""
    layout = resolution.layout
    out: dict[str, Any] = {
        "array": layout.iri,
        "zarr_format": layout.zarr_format,
        "shape": list(layout.shape),
        "dtype": str(layout.dtype),
        "chunk_shape": list(layout.read_chunk_shape),
        "selection": selection_text or "",
        "selection_shape": list(result_shape(resolution.dims)),
        "chunk_count": resolution.count,
    }
    if layout.sharding is not None:
        out["shard_shape"] = list(layout.chunk_shape)
        out["chunks"] = _sharded_entries(resolution, store)
    elif isinstance(store, ReferenceAccess):
        out["chunks"] = _referenced_entries(resolution, store)
    else:
        out["chunks"] = _plain_entries(resolution, store)
    return out


def _referenced_entries(resolution: Resolution, store: ReferenceAccess) -> Iterator[dict[str, Any]]:
    """Chunks of a reference set: where each one's bytes are in its archive file."""
    for index, key in zip(resolution.indices().tolist(), resolution.keys().tolist(), strict=True):
        where = store.location(key)
        entry: dict[str, Any] = {"index": index, "key": key}
        if where is not None:
            entry.update(where.as_json())
        entry["fill"] = where is None
        yield entry


def _plain_entries(resolution: Resolution, store: StoreAccess) -> Iterator[dict[str, Any]]:
    keys = resolution.keys()
    present = store.list_keys()
    url = _url_maker(resolution, store)
    # An Icechunk version says how each chunk is kept (native, virtual, inline), not where
    kept = store.chunk_storage if isinstance(store, IcechunkAccess) else None
    for index, key in zip(resolution.indices().tolist(), keys.tolist(), strict=True):
        entry = {
            "index": index,
            "key": key,
            "url": url(key),
            "fill": None if present is None else key not in present,
        }
        if kept is not None:
            entry["storage"] = kept(index) if not entry["fill"] else None
        yield entry


def _url_maker(resolution: Resolution, store: StoreAccess) -> Callable[[str], str]:
    """Chunk URLs: keys of the standard encodings need no escaping, so skip it unless an affix does."""
    encoding = resolution.layout.encoding
    affixes = encoding.prefix + encoding.suffix
    if quote_path(affixes) != affixes:
        return store.key_url
    base = store.url
    return lambda key: f"{base}/{key}"


def shard_indexes(resolution: Resolution, store: StoreAccess, shard_keys: list[str]) -> dict[str, np.ndarray | None]:
    """Each distinct shard's decoded index (None for an absent shard), read with one range each."""
    layout = resolution.layout
    sharding = layout.sharding
    assert sharding is not None
    n = sharding.index_nbytes(layout.chunk_shape)
    distinct = sorted(set(shard_keys))
    if sharding.index_location == "start":
        raw = store.read_ranges(distinct, [0] * len(distinct), [n] * len(distinct))
    else:
        raw = store.read_ranges(distinct, [-n] * len(distinct), [None] * len(distinct))
    out: dict[str, np.ndarray | None] = {}
    for key, data in zip(distinct, raw, strict=True):
        if data is None:
            out[key] = None
            continue
        if len(data) != n:
            raise ChunkError(f"{store.key_url(key)}: shard index is {len(data)} bytes, expected {n} (truncated shard?)")
        try:
            out[key] = decode_shard_index(data, sharding, layout.chunk_shape)
        except ChunkError as exc:
            raise ChunkError(f"{store.key_url(key)}: {exc}") from exc
    return out


def _sharded_entries(resolution: Resolution, store: StoreAccess) -> Iterator[dict[str, Any]]:
    layout = resolution.layout
    sharding = layout.sharding
    assert sharding is not None
    per_shard = np.array(sharding.chunks_per_shard(layout.chunk_shape), dtype=np.int64)
    indices = resolution.indices()
    shard_keys = resolution.keys().tolist()
    indexes = shard_indexes(resolution, store, shard_keys)
    url = _url_maker(resolution, store)
    # An Icechunk version keeps each shard as a chunk (native, virtual, inline)
    kept = store.chunk_storage if isinstance(store, IcechunkAccess) else None
    for inner, key in zip(indices, shard_keys, strict=True):
        shard = inner // per_shard if len(per_shard) else inner
        local = tuple((inner - shard * per_shard).tolist())
        index = indexes[key]
        entry: dict[str, Any] = {
            "index": inner.tolist(),
            "shard": {"index": shard.tolist(), "key": key, "url": url(key)},
            "position": list(local),
        }
        if kept is not None:
            entry["shard"]["storage"] = kept(shard.tolist()) if index is not None else None
        if index is None:
            entry.update(byte_range=None, fill=True)
        else:
            offset, nbytes = index[local]
            if offset == MISSING and nbytes == MISSING:
                entry.update(byte_range=None, fill=True)
            else:
                entry.update(byte_range=[int(offset), int(offset) + int(nbytes)], fill=False)
        yield entry
