"""Reading a selection: fetch only the touched chunks (or shard byte ranges), decode, assemble.

Shard indexes are fetched in one batched call; then a bounded thread pool
runs tasks of a few chunks each: fetch them through the store layer (one
call, so remote stores fetch them concurrently), decode (numcodecs releases
the GIL while decompressing) and copy each into its place in the result.
Fetching, decoding and copying of different tasks overlap. Absent chunks (files, or inner chunks marked absent in a shard
index) are the fill value; a chunk that exists but cannot be decoded is an
error naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from catalogue.chunks.codecs import MISSING, ChunkError, decode_v2, decode_v3
from catalogue.chunks.layout import ArrayLayout
from catalogue.chunks.resolve import Resolution, resolve_selection, shard_indexes
from catalogue.chunks.selection import Dim, result_shape
from catalogue.storage.access import StoreAccess

#: Chunks per pool task, fetched in one store call: few enough that fetching, decoding
#: and copying overlap across threads, enough that remote stores fetch several at once.
TASK_CHUNKS = 4


def _placement(dim: Dim, chunk: int, c: int) -> tuple[slice, Any]:
    """Where chunk ``c`` of one dimension goes in the result, and which of its elements."""
    lo, hi = c * chunk, (c + 1) * chunk
    if dim.step > 0:
        first = max(dim.start, dim.start + -(-(lo - dim.start) // dim.step) * dim.step)
        j0 = (first - dim.start) // dim.step
        last = min(hi - 1, dim.start + (dim.count - 1) * dim.step)
        j1 = (last - dim.start) // dim.step
        return slice(j0, j1 + 1), slice(first - lo, last - lo + 1, dim.step)
    step = -dim.step
    # values go down from start; the first one inside [lo, hi) is the largest <= hi - 1
    top = min(hi - 1, dim.start)
    top = dim.start - -(-(dim.start - top) // step) * step
    j0 = (dim.start - top) // step
    bottom = max(lo, dim.start - (dim.count - 1) * step)
    j1 = (dim.start - bottom) // step
    values = np.arange(top, bottom - 1, -step) - lo
    return slice(j0, j1 + 1), values


def read_selection(layout: ArrayLayout, store: StoreAccess, selection: str | tuple[object, ...] | None,
                   *, workers: int | None = None) -> np.ndarray:
    """The selected data as a NumPy array, exactly as NumPy's basic indexing would give it."""
    resolution = resolve_selection(layout, selection)
    dims = resolution.dims
    full_shape = tuple(d.count for d in dims)
    out = np.full(full_shape, layout.fill_value, dtype=layout.dtype) if layout.dtype.kind != "O" else \
        _object_full(full_shape, layout.fill_value)
    if resolution.count and all(full_shape):
        unit = layout.read_chunk_shape
        jobs = _jobs(resolution, store)
        decode = _decoder(layout, unit)

        def task(batch: list[Job]) -> None:
            """Fetch, decode and place a few chunks: threads overlap I/O, decoding and copying."""
            for job, data in zip(batch, _fetch(store, batch), strict=True):
                chunk = _decode_one(decode, job, data)
                if chunk is None:
                    continue
                out_region, in_region = [], []
                for dim, size, c in zip(dims, unit, job[0], strict=True):
                    o, i = _placement(dim, size, c)
                    out_region.append(o)
                    in_region.append(i)
                out[tuple(out_region)] = chunk[_index(in_region)]  # regions of distinct chunks never overlap

        batches = [jobs[i: i + TASK_CHUNKS] for i in range(0, len(jobs), TASK_CHUNKS)]
        if len(batches) == 1:  # a few chunks (a coordinate array's one): no thread to start and hand over to
            task(batches[0])
        else:
            with ThreadPoolExecutor(max_workers=workers or min(8, os.cpu_count() or 1)) as pool:
                for _ in pool.map(task, batches):  # re-raises the first error, naming its chunk
                    pass
    # Integer indices drop their dimension (each has one element); all-integer selections
    # give a 0-d array rather than NumPy's scalar, so the result is always an ndarray.
    return out.reshape(result_shape(dims))


def _index(parts: list[Any]) -> tuple[Any, ...]:
    """Slices as they are; arrays (negative steps) combined with np.ix_ semantics."""
    if all(isinstance(p, slice) for p in parts):
        return tuple(parts)
    arrays = [np.arange(p.start, p.stop, p.step) if isinstance(p, slice) else p for p in parts]
    return np.ix_(*arrays)


def _object_full(shape: tuple[int, ...], fill: Any) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.fill(fill)
    return out


# A job: (chunk grid index, key, url, start, end, what) with start/end a byte range or None.
Job = tuple[tuple[int, ...], str, str, int | None, int | None, str]


def _jobs(resolution: Resolution, store: StoreAccess) -> list[Job]:
    layout = resolution.layout
    indices = [tuple(i) for i in resolution.indices().tolist()]
    keys = resolution.keys().tolist()
    if layout.sharding is None:
        return [(i, k, store.key_url(k), None, None, store.key_url(k)) for i, k in zip(indices, keys, strict=True)]
    per_shard = layout.sharding.chunks_per_shard(layout.chunk_shape)
    indexes = shard_indexes(resolution, store, keys)
    jobs: list[Job] = []
    for index, key in zip(indices, keys, strict=True):
        shard_index = indexes[key]
        if shard_index is None:
            continue
        local = tuple(i % p for i, p in zip(index, per_shard, strict=True))
        offset, nbytes = shard_index[local]
        if offset == MISSING and nbytes == MISSING:
            continue
        start, end = int(offset), int(offset) + int(nbytes)
        jobs.append((index, key, store.key_url(key), start, end,
                     f"{store.key_url(key)} (inner chunk {list(local)}, bytes {start}..{end})"))
    return jobs


def _fetch(store: StoreAccess, batch: list[Job]) -> list[bytes | None]:
    data = store.read_ranges([j[1] for j in batch], [j[3] for j in batch], [j[4] for j in batch])
    for job, payload in zip(batch, data, strict=True):
        if job[3] is not None and (payload is None or len(payload) != job[4] - job[3]):
            got = "nothing" if payload is None else f"{len(payload)} bytes"
            raise ChunkError(f"{job[5]}: the shard ends early ({got} read; truncated shard?)")
    return data


def _decoder(layout: ArrayLayout, unit: tuple[int, ...]) -> Callable[[bytes], np.ndarray]:
    if layout.zarr_format == 2:
        return lambda data: decode_v2(data, layout.codecs, unit, layout.dtype, layout.order)
    codecs = layout.sharding.codecs if layout.sharding else layout.codecs
    return lambda data: decode_v3(data, codecs, unit, layout.dtype, layout.fill_value)


def _decode_one(decode: Callable[[bytes], np.ndarray], job: Job, data: bytes | None) -> np.ndarray | None:
    if data is None:
        return None
    try:
        return decode(data)
    except ChunkError as exc:
        raise ChunkError(f"{job[5]}: {exc}") from exc
