"""Quicklooks: a small picture of an array, read within a byte budget, drawn as PNG.

What is read: for an array of two or more dimensions, one 2-D plane (its last two
dimensions; index 0 along the others), at most :data:`MAX_SIDE` samples a side, from
chunks whose decoded bytes fit ``max_bytes``. Chunked storage makes a strided read cost
whole chunks, so when the plane's chunks do not all fit, an evenly spread subset of
chunk rows and columns is read and its samples are put side by side: a *mosaic* that
keeps the picture's layout (every part of the plane is represented) at a bounded cost,
with seams where skipped chunks were. A 1-D array (a coordinate) is read the same way
along its one axis. A plane whose chunks are each larger than the budget is read as evenly
spread whole rows where the chunks are stored raw (no codec but the byte order: a row is a
byte range), as kerchunk's references into NetCDF-3 and uncompressed HDF5 files keep a
variable; compressed, it cannot be drawn within the budget and the placeholder says so.
Where the array is a level of a multiscale pyramid, the coarsest
level is drawn instead (:meth:`catalogue.api.Catalogue.preview` chooses it): a pyramid
is the right way to look at a large array, and the mosaic the fallback.

How it is drawn (:mod:`.quicklook`): values between their 2nd and 98th percentiles on the
viridis colour map, fill values and NaN transparent, a colour bar with the range and the
units; a line for 1-D arrays; a placeholder saying why when there is nothing to draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from catalogue.chunks.codecs import ChunkError
from catalogue.chunks.layout import ArrayLayout
from catalogue.chunks.read import read_selection
from catalogue.storage.access import StoreAccess

__all__ = ["DEFAULT_MAX_BYTES", "MAX_SIDE", "PreviewJob", "Quicklook", "Sample", "plan", "sample", "stored_raw"]

#: Decoded chunk bytes a quicklook may read (a few MB, whatever the array's size).
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
#: Longest side of the drawn plane, in samples.
MAX_SIDE = 512
#: Runs of adjacent chunks read per axis at most: a run is one read, so tiny chunks are
#: read in a few windows of adjacent chunks rather than as thousands of single chunks.
MAX_RUNS = 16
#: Chunks read at most, whatever their size (each is a request, or a file opened).
MAX_CHUNKS = 4096


@dataclass(frozen=True)
class Axis:
    """How one drawn axis is read: the chunks taken (all, or an even spread), the step
    between samples inside them, and the array's extent and chunk length along it."""

    size: int
    chunk: int
    chunks: tuple[int, ...]
    step: int

    @property
    def complete(self) -> bool:
        return len(self.chunks) == math.ceil(self.size / self.chunk)

    def slices(self) -> list[slice]:
        """One slice per run of adjacent chunks (all chunks: one slice)."""
        out: list[slice] = []
        runs: list[list[int]] = []
        for c in self.chunks:
            if runs and runs[-1][-1] == c - 1:
                runs[-1].append(c)
            else:
                runs.append([c])
        for run in runs:
            out.append(slice(run[0] * self.chunk, min((run[-1] + 1) * self.chunk, self.size), self.step))
        return out

    def describe(self) -> str:
        if self.complete:
            return "::" + str(self.step) if self.step > 1 else ":"
        return f"{len(self.chunks)} of {math.ceil(self.size / self.chunk)} chunks" + \
            (f" ::{self.step}" if self.step > 1 else "")


@dataclass(frozen=True)
class Sample:
    """What was read: the values, what was selected (as text), and the drawn axes' plans."""

    values: np.ndarray
    selection: str
    axes: tuple[Axis, ...]


def plan(layout: ArrayLayout, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[tuple[int, ...], tuple[Axis, ...]]:
    """The indices along the leading axes and how each drawn axis is read.

    Raises ValueError when even one chunk is larger than ``max_bytes``.
    """
    shape, unit = layout.shape, layout.read_chunk_shape
    drawn = list(range(max(len(shape) - 2, 0), len(shape)))
    chunk_bytes = math.prod(unit) * max(layout.dtype.itemsize, 1)
    if chunk_bytes > max_bytes:
        raise ValueError(f"one chunk is {chunk_bytes:,} bytes decoded, more than the preview budget of {max_bytes:,}")
    counts = [math.ceil(shape[d] / unit[d]) if shape[d] else 0 for d in drawn]
    allowed = min(max_bytes // chunk_bytes, MAX_CHUNKS)
    total = math.prod(counts)
    shrink = math.sqrt(allowed / total) if total > allowed else 1.0
    taken = [max(1, math.floor(n * shrink)) if len(counts) > 1 else min(n, allowed) for n in counts]
    while math.prod(taken) > allowed:  # shrink the longer side first: tiles stay about square
        i = max(range(len(taken)), key=lambda j: taken[j])
        taken[i] = max(1, taken[i] - 1)
    for i in sorted(range(len(taken)), key=lambda j: taken[j]):  # then spend what is left
        while taken[i] < counts[i] and math.prod(taken) // taken[i] * (taken[i] + 1) <= allowed:
            taken[i] += 1
    axes = []
    for d, n, k in zip(drawn, counts, taken, strict=True):
        k = min(k, MAX_SIDE)  # more chunks than samples would leave some unread anyway
        runs = min(k, MAX_RUNS)
        width = k // runs if runs else 0
        starts = sorted({round(x) for x in np.linspace(0, n - width, runs)}) if n else []
        chosen = tuple(sorted({s + j for s in starts for j in range(width)}))
        samples = sum(min((c + 1) * unit[d], shape[d]) - c * unit[d] for c in chosen)
        axis = Axis(size=shape[d], chunk=unit[d], chunks=chosen, step=max(1, math.ceil(samples / MAX_SIDE)))
        while sum(len(range(s.start, s.stop, s.step)) for s in axis.slices()) > MAX_SIDE:  # runs round up
            axis = Axis(axis.size, axis.chunk, axis.chunks, axis.step + 1)
        axes.append(axis)
    return tuple(0 for _ in range(len(shape) - len(drawn))), tuple(axes)


def stored_raw(layout: ArrayLayout) -> np.dtype | None:
    """The data type of the chunks' bytes where they are the items as they are, C order, no
    codec but the byte order (v3: the ``bytes`` codec alone; v2: no compressor, no filters),
    so that a row of a chunk is a byte range of it; else None."""
    if layout.sharding is not None or layout.order != "C" or layout.dtype.kind not in "biuf" \
            or layout.dtype.fields is not None:
        return None
    if layout.zarr_format == 2:
        return layout.dtype if not layout.codecs else None
    if len(layout.codecs) != 1 or layout.codecs[0].name != "bytes":
        return None
    endian = layout.codecs[0].configuration.get("endian", "little")
    return layout.dtype.newbyteorder("<" if endian == "little" else ">") if layout.dtype.itemsize > 1 else layout.dtype


def _rows_of_raw_chunks(layout: ArrayLayout, store: StoreAccess, on_disk: np.dtype, max_bytes: int) -> Sample:
    """A plane whose chunks are each larger than the budget, when they are stored raw
    (:func:`stored_raw`): evenly spread whole rows of it, each read as the byte ranges of the
    chunks it crosses (kerchunk's references into NetCDF-3 and uncompressed HDF5 files keep
    a variable as one such chunk), at most ``max_bytes`` in all."""
    shape, unit, itemsize = layout.shape, layout.read_chunk_shape, on_disk.itemsize
    height, width = shape[-2], shape[-1]
    if not height or not width:
        return Sample(values=np.empty((height, width), dtype=layout.dtype), selection="", axes=())
    if width * itemsize > max_bytes:
        raise ValueError(f"one row is {width * itemsize:,} bytes, more than the preview budget of {max_bytes:,}")
    columns = range(math.ceil(width / unit[-1]))
    if len(columns) > MAX_CHUNKS:
        raise ValueError(f"a row crosses {len(columns):,} chunks, more than the {MAX_CHUNKS:,} a preview reads")
    count = max(1, min(MAX_SIDE, height, max_bytes // (width * itemsize), MAX_CHUNKS // len(columns)))
    rows = sorted({round(r) for r in np.linspace(0, height - 1, count)})
    keys, starts, ends, spans = [], [], [], []
    for r in rows:
        index = (*(0 for _ in shape[:-2]), r // unit[-2])
        # the row's first item inside its chunk (C order: leading indices 0)
        start = (r % unit[-2]) * unit[-1] * itemsize
        for c in columns:
            keys.append(layout.encoding.key((*index, c)))
            n = min(unit[-1], width - c * unit[-1])
            starts.append(start)
            ends.append(start + n * itemsize)
            spans.append(n)
    # The first range alone: a server that ignores Range sends the whole chunk for each
    # (the budget many times over), which the first answer gives away.
    got = store.read_ranges(keys[:1], starts[:1], ends[:1])
    if store.ranges_ignored:
        raise ValueError("the store sends whole chunks for byte ranges: rows of a chunk this large cannot be read "
                         "within the budget")
    got += store.read_ranges(keys[1:], starts[1:], ends[1:])
    values = np.full((len(rows), width), layout.fill_value, dtype=layout.dtype)
    for i, data in enumerate(got):
        r, c = divmod(i, len(columns))
        if data is None:
            continue
        if len(data) != spans[i] * itemsize:
            raise ChunkError(f"{store.key_url(keys[i])}: {len(data):,} bytes for a row of {spans[i] * itemsize:,} "
                             "(a truncated chunk?)")
        values[r, c * unit[-1]:c * unit[-1] + spans[i]] = np.frombuffer(data, dtype=on_disk)
    # Columns as far apart as the rows, so that the picture keeps the plane's proportions
    step = max(1, math.ceil(width / MAX_SIDE), math.ceil(height / len(rows)))
    leading = ", ".join("0" for _ in shape[:-2])
    text = (f"{leading}, " if leading else "") + f"{len(rows)} of {height} rows, " + (f"::{step}" if step > 1 else ":")
    return Sample(values=values[:, ::step], selection=text, axes=())


def sample(layout: ArrayLayout, store: StoreAccess, max_bytes: int = DEFAULT_MAX_BYTES) -> Sample:
    """Read what :func:`plan` chooses: one read per tile of adjacent chunks, put together
    (a 0-d array: its one value). A plane whose chunks are each larger than the budget is
    read as whole rows where the chunks are stored raw (:func:`_rows_of_raw_chunks`)."""
    if not layout.shape:
        return Sample(values=read_selection(layout, store, ()), selection="", axes=())
    chunk_bytes = math.prod(layout.read_chunk_shape) * max(layout.dtype.itemsize, 1)
    on_disk = stored_raw(layout) if chunk_bytes > max_bytes and len(layout.shape) >= 2 else None
    if on_disk is not None:
        return _rows_of_raw_chunks(layout, store, on_disk, max_bytes)
    leading, axes = plan(layout, max_bytes)
    grid = [axis.slices() for axis in axes]
    rows = []
    for first in grid[0]:
        if len(axes) == 1:
            rows.append(read_selection(layout, store, (*leading, first)))
            continue
        tiles = [read_selection(layout, store, (*leading, first, second)) for second in grid[1]]
        rows.append(np.concatenate(tiles, axis=1))
    values = np.concatenate(rows, axis=0) if rows else np.empty((0,) * len(axes), dtype=layout.dtype)
    text = ", ".join([*(str(i) for i in leading), *(axis.describe() for axis in axes)])
    return Sample(values=values, selection=text, axes=axes)


@dataclass(frozen=True)
class Quicklook:
    """A drawn picture; ``placeholder`` when it says why there is none (not worth caching:
    the cause may pass)."""

    png: bytes
    placeholder: bool = False


@dataclass
class PreviewJob:
    """A quicklook to draw: what the catalogue said of the array (its layout, store, units;
    or why there is nothing to draw), and the key a cache keeps the picture under (the
    array, its fingerprint, the harvest run that wrote it). :meth:`draw` reads the chunks
    and needs no database: a server runs it outside its connection pool."""

    name: str
    key: tuple[str, ...]
    coarsest: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    layout: ArrayLayout | None = None
    store: StoreAccess | None = None
    units: str | None = None
    refusal: str | None = None
    #: The latitude coordinate along the drawn rows, where there is one: a plane whose
    #: latitudes increase down the rows (south first, as many models write them) is
    #: turned so that north is up, as on a map.
    latitude: ArrayLayout | None = None
    latitude_store: StoreAccess | None = None

    def draw(self) -> Quicklook:
        """Read within the budget and draw; a placeholder saying why for anything that fails."""
        import logging

        from catalogue.chunks.quicklook import line_png, placeholder_png, plane_png

        if self.refusal is not None or self.layout is None or self.store is None:
            return Quicklook(placeholder_png(self.refusal or f"{self.name}: nothing to draw"), placeholder=True)
        try:
            got = sample(self.layout, self.store, self.max_bytes)
        except Exception as exc:  # a store or codec the reader cannot use: said in the picture
            logging.getLogger(__name__).info("preview of %s: %s", self.name, exc)
            return Quicklook(placeholder_png(str(exc).splitlines()[0] if str(exc) else type(exc).__name__), True)
        title = f"{self.name} [{got.selection}]" + (" (coarsest level)" if self.coarsest else "")
        if got.values.ndim == 0:
            return Quicklook(placeholder_png(f"{self.name} is a scalar: {got.values!r}"[:120]), placeholder=True)
        if got.values.ndim >= 2:
            values = got.values
            if self._south_first():
                values, title = values[::-1], title + " (north up)"
            return Quicklook(plane_png(values, fill=self.layout.fill_value, title=title, units=self.units))
        return Quicklook(line_png(got.values, fill=self.layout.fill_value, title=title, units=self.units))

    def _south_first(self) -> bool:
        """Whether the latitude coordinate increases along the rows (its first and last
        values: two small reads); False when it cannot be told."""
        lat, store = self.latitude, self.latitude_store
        if lat is None or store is None or len(lat.shape) != 1 or lat.shape[0] < 2:
            return False
        try:
            first, last = (float(read_selection(lat, store, (i,))) for i in (0, lat.shape[0] - 1))
        except Exception:  # a coordinate that cannot be read: drawn as stored
            return False
        return first < last
