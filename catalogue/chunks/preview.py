"""Quicklooks: a small picture of an array, read within a byte budget, drawn as PNG.

What is read: for an array of two or more dimensions, one 2-D plane (its last two
dimensions; index 0 along the others) sampled with a stride that keeps the picture at
most :data:`MAX_SIDE` pixels a side and the chunks decoded within ``max_bytes``: while
the chunks a stride touches would be more than that, the stride grows to whole chunks,
so that only every m-th chunk row and column is read. A 1-D array (a coordinate) is read
whole within the same budget, else strided. Where the array is a level of a multiscale
pyramid, the coarsest level is drawn instead (:meth:`catalogue.api.Catalogue.preview`
chooses it). Nothing here touches more than the budget, whatever the array's size.

How it is drawn (:mod:`.quicklook`): values between their 2nd and 98th percentiles on the
viridis colour map, fill values and NaN transparent, a colour bar with the range and the
units; a line for 1-D arrays; a placeholder saying why when there is nothing to draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from catalogue.chunks.layout import ArrayLayout
from catalogue.chunks.read import read_selection
from catalogue.storage.access import StoreAccess

__all__ = ["DEFAULT_MAX_BYTES", "MAX_SIDE", "Sample", "plan", "sample"]

#: Decoded chunk bytes a quicklook may read (a few MB, whatever the array's size).
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
#: Longest side of the drawn plane, in samples.
MAX_SIDE = 512


@dataclass(frozen=True)
class Sample:
    """What was read: the values, the selection text, and the steps taken per drawn axis."""

    values: np.ndarray
    selection: str
    steps: tuple[int, ...]


def plan(layout: ArrayLayout, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[tuple[object, ...], tuple[int, ...]]:
    """The selection to read (slices and indices) and the steps along the drawn axes.

    Raises ValueError when even one chunk is larger than ``max_bytes``.
    """
    shape, unit = layout.shape, layout.read_chunk_shape
    itemsize = max(layout.dtype.itemsize, 1)
    drawn = list(range(max(len(shape) - 2, 0), len(shape)))
    chunk_bytes = math.prod(unit) * itemsize
    if chunk_bytes > max_bytes:
        raise ValueError(f"one chunk is {chunk_bytes:,} bytes decoded, more than the preview budget of {max_bytes:,}")
    steps = [max(1, math.ceil(shape[d] / MAX_SIDE)) for d in drawn]

    def touched(steps: list[int]) -> int:
        count = 1
        for d, step in zip(drawn, steps, strict=True):
            picks = range(0, shape[d], step)
            count *= len({i // unit[d] for i in picks})
        return count

    multiple = 1
    while touched(steps) * chunk_bytes > max_bytes:
        multiple += 1
        steps = [max(step, unit[d] * multiple) for d, step in zip(drawn, steps, strict=True)]
        if all(step >= shape[d] for d, step in zip(drawn, steps, strict=True)):
            break
    selection: list[object] = [0] * (len(shape) - len(drawn))
    selection += [slice(None, None, step) for step in steps]
    return tuple(selection), tuple(steps)


def sample(layout: ArrayLayout, store: StoreAccess, max_bytes: int = DEFAULT_MAX_BYTES) -> Sample:
    """Read what :func:`plan` chooses."""
    selection, steps = plan(layout, max_bytes)
    values = read_selection(layout, store, selection)
    return Sample(values=values, selection=_text(selection), steps=steps)


def _text(selection: tuple[object, ...]) -> str:
    parts = []
    for item in selection:
        if isinstance(item, slice):
            parts.append("::" + str(item.step) if item.step and item.step != 1 else ":")
        else:
            parts.append(str(item))
    return ", ".join(parts)
