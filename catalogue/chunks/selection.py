"""NumPy basic indexing on one array: parse ``"0:10,5,:"`` and map it onto the chunk grid.

Supported, as in NumPy: integers (negative count from the end), slices with
any non-zero step (negative steps reverse), ``...`` once, and fewer entries
than dimensions (the rest are ``:``). Out-of-bounds integers and too many
indices are errors; slices clip, as NumPy's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from catalogue.errors import UsageError

_INT = r"[+-]?\d+"
_SLICE = re.compile(rf"^\s*({_INT})?\s*:\s*({_INT})?\s*(?::\s*({_INT})?\s*)?$")


class SelectionError(UsageError):
    """A selection that does not parse or does not fit the array."""


@dataclass(frozen=True)
class Dim:
    """One dimension of a selection: the selected indices along it, lazily.

    ``index`` is set for an integer (the dimension is dropped from the
    result); otherwise ``start``, ``stop``, ``step`` are normalised as by
    ``slice.indices`` and ``count`` is the number of indices selected.
    """

    length: int
    start: int
    stop: int
    step: int
    count: int
    index: int | None = None

    def indices(self) -> np.ndarray:
        return np.arange(self.start, self.stop, self.step, dtype=np.int64)

    def chunk_indices(self, chunk: int) -> np.ndarray:
        """Sorted indices of the chunks holding at least one selected element."""
        if self.count == 0:
            return np.empty(0, dtype=np.int64)
        first = self.start if self.step > 0 else self.start + (self.count - 1) * self.step
        last = self.start + (self.count - 1) * self.step if self.step > 0 else self.start
        if abs(self.step) <= chunk:  # a step no larger than a chunk skips no chunk in between
            return np.arange(first // chunk, last // chunk + 1, dtype=np.int64)
        return np.unique(self.indices() // chunk)


def parse(text: str) -> tuple[object, ...]:
    """``"0:10, 5, ..."`` -> ``(slice(0, 10), 5, Ellipsis)``."""
    if text is None or not text.strip():
        return ()
    items: list[object] = []
    for part in text.split(","):
        token = part.strip()
        if token == "...":
            items.append(Ellipsis)
        elif re.fullmatch(_INT, token):
            items.append(int(token))
        else:
            m = _SLICE.match(part)
            if not m:
                raise SelectionError(f"cannot parse selection item {part.strip()!r} (use ints, start:stop:step and ...)")
            start, stop, step = (int(g) if g is not None else None for g in m.groups())
            if step == 0:
                raise SelectionError("slice step cannot be zero")
            items.append(slice(start, stop, step))
    return tuple(items)


def normalise(selection: tuple[object, ...], shape: tuple[int, ...]) -> list[Dim]:
    """One Dim per array dimension, with NumPy's rules and clear errors."""
    ellipses = sum(1 for s in selection if s is Ellipsis)
    if ellipses > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    explicit = len(selection) - ellipses
    if explicit > len(shape):
        raise SelectionError(f"too many indices: {explicit} for an array of {len(shape)} dimensions")
    if ellipses:
        at = selection.index(Ellipsis)
        fill = (slice(None),) * (len(shape) - explicit)
        selection = selection[:at] + fill + selection[at + 1:]
    selection = selection + (slice(None),) * (len(shape) - len(selection))
    dims = []
    for axis, (item, length) in enumerate(zip(selection, shape, strict=True)):
        if isinstance(item, int):
            index = item + length if item < 0 else item
            if not 0 <= index < length:
                raise SelectionError(f"index {item} is out of bounds for axis {axis} with size {length}")
            dims.append(Dim(length, index, index + 1, 1, 1, index))
        else:
            assert isinstance(item, slice)
            start, stop, step = item.indices(length)
            dims.append(Dim(length, start, stop, step, len(range(start, stop, step))))
    return dims


def result_shape(dims: list[Dim]) -> tuple[int, ...]:
    return tuple(d.count for d in dims if d.index is None)
