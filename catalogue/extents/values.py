"""Coordinate values read through ``chunks/``, under one byte budget per hierarchy.

Extents need a few coordinate values (the first and last of an axis, its bounds, a 2-D
latitude field), and a harvest must not turn into a download: every read is charged to
a budget of decoded bytes (``DEFAULT_VALUE_BYTES`` per hierarchy, configurable). A 1-D
axis longer than two chunks is read as its first and last chunks only, which is all a
monotonic axis needs; whole arrays (bounds, 2-D latitudes and longitudes) are read only
when they fit what is left. What is skipped, and why, is a finding: an extent that is
missing because of the cap must not look like a store that says nothing.

Decoded bytes rather than stored bytes are counted because they are known before the
read (shape times item size), so the cap is decided up front, and they bound the memory
a read takes too.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from catalogue.chunks.layout import ArrayLayout, UnsupportedArray, layout_from_documents
from catalogue.chunks.read import read_selection
from catalogue.errors import CatalogueError
from catalogue.model.nodes import Hierarchy, Node
from catalogue.storage.access import StoreAccess
from catalogue.validate.findings import Finding

__all__ = ["DEFAULT_VALUE_BYTES", "Axis", "ValueReader"]

#: Decoded coordinate bytes read per hierarchy by default (16 MiB).
DEFAULT_VALUE_BYTES: Final = 16 * 2**20


@dataclass(frozen=True)
class Axis:
    """The values of a 1-D coordinate read for its extent: all of them (``complete``), or
    the first and last chunks joined, the last starting at ``split``.

    ``monotonic`` is checked on what was read: +1 increasing, -1 decreasing, 0 neither.
    """

    path: str
    values: np.ndarray
    length: int
    complete: bool
    split: int | None = None

    @property
    def monotonic(self) -> int:
        values = self.values
        if values.size < 2 or not np.all(np.isfinite(values)):
            return 0 if values.size >= 2 else 1
        diffs = np.diff(values)
        if np.all(diffs > 0):
            return 1
        if np.all(diffs < 0):
            return -1
        return 0

    @property
    def first(self) -> float:
        return float(self.values[0])

    @property
    def last(self) -> float:
        return float(self.values[-1])


@dataclass
class ValueReader:
    """Reads coordinate arrays of ``hierarchy`` from ``store`` and charges ``budget``.

    ``store`` is None when only metadata is available (a rebuilt hierarchy): every read
    then gives None without a finding, since nothing was skipped by choice.
    """

    hierarchy: Hierarchy
    store: StoreAccess | None
    budget: int = DEFAULT_VALUE_BYTES
    spent: int = 0
    #: ``(path, elements)`` of every read made, for people and tests checking the cap.
    reads: list[tuple[str, int]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    _layouts: dict[str, ArrayLayout | None] = field(default_factory=dict)
    _reported: set[tuple[str, str]] = field(default_factory=set)

    @property
    def left(self) -> int:
        return max(self.budget - self.spent, 0)

    def axis(self, path: str) -> Axis | None:
        """A 1-D coordinate's values: whole when it has at most two chunks, else its first
        and last chunks; None (with a finding) when unreadable or over the budget."""
        layout = self.layout(path)
        if layout is None:
            return None
        if len(layout.shape) != 1:
            return None
        (length,), (chunk,) = layout.shape, layout.read_chunk_shape
        if length == 0:
            return None
        if length <= 2 * chunk:
            values = self._read(path, layout, None, length, "the whole coordinate")
            return None if values is None else Axis(path, values, length, True)
        tail = (length - 1) // chunk * chunk
        wanted = chunk + (length - tail)
        values = self._read(path, layout, [(0, chunk), (tail, length)], wanted, "its first and last chunks")
        return None if values is None else Axis(path, values, length, False, split=chunk)

    def whole(self, path: str, why: str = "the whole array") -> np.ndarray | None:
        """Every value of the array at ``path``; None (with a finding) when unreadable or
        over the budget."""
        layout = self.layout(path)
        if layout is None:
            return None
        return self._read(path, layout, None, int(np.prod(layout.shape, dtype=np.int64)), why)

    def layout(self, path: str) -> ArrayLayout | None:
        """The array's layout from its harvested metadata (None, with a finding, when the
        catalogue cannot read such an array)."""
        if self.store is None:
            return None
        if path not in self._layouts:
            node = self.hierarchy.nodes.get(path)
            layout = None
            if node is not None and node.kind == "array":
                try:
                    layout = layout_from_documents(node.documents, self.hierarchy.iri(path), self.hierarchy.iri(path))
                except UnsupportedArray as exc:
                    self._finding(node, "extent.values-unreadable", f"coordinate values of /{path} cannot be read: {exc}")
            self._layouts[path] = layout
        return self._layouts[path]

    # ------------------------------------------------------------------ reading
    def _read(self, path: str, layout: ArrayLayout, parts: list[tuple[int, int]] | None, elements: int,
              what: str) -> np.ndarray | None:
        node = self.hierarchy.nodes[path]
        if layout.dtype.kind not in "iuf":
            self._finding(node, "extent.values-unreadable",
                          f"coordinate /{path} has data type {layout.dtype}, not numbers; its values are not used")
            return None
        cost = elements * layout.dtype.itemsize
        if cost > self.left:
            self._finding(node, "extent.values-budget",
                          f"{what} of /{path} ({cost:,} bytes) were not read: {self.left:,} of the "
                          f"{self.budget:,}-byte budget for coordinate values are left")
            return None
        self.spent += cost
        self.reads.append((path, elements))
        assert self.store is not None
        store = _array_store(self.store, path)
        try:
            if parts is None:
                data = read_selection(layout, store, None, workers=1)
            else:
                data = np.concatenate([read_selection(layout, store, (slice(a, b),), workers=1) for a, b in parts])
        except (CatalogueError, ValueError, OSError) as exc:
            self._finding(node, "extent.values-unreadable", f"coordinate values of /{path} cannot be read: {exc}")
            return None
        return _unpacked(data, node.attributes or {})

    def _finding(self, node: Node, rule: str, message: str) -> None:
        if (node.path, message) in self._reported:
            return
        self._reported.add((node.path, message))
        self.findings.append(Finding(node.path, node.location.url, node.location.pointer, rule, message))


def _array_store(store: StoreAccess, path: str) -> StoreAccess:
    """The same store rooted at the array, where its chunk keys are relative to."""
    if not path:
        return store
    url = store.key_url(path)
    root = url if store.root == store.url else posixpath.join(store.root, path)
    return dataclasses.replace(store, root=root, url=url)


def _unpacked(data: np.ndarray, attributes: dict[str, Any]) -> np.ndarray:
    """Values as float64, ``_FillValue``/``missing_value`` as NaN, ``scale_factor`` and
    ``add_offset`` applied (CF §8.1): what a CF reader means by the coordinate."""
    values = data.astype(np.float64)
    for key in ("_FillValue", "missing_value"):
        missing = attributes.get(key)
        for value in missing if isinstance(missing, list) else [missing]:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[data == value] = np.nan
    scale, offset = attributes.get("scale_factor", 1), attributes.get("add_offset", 0)
    if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale != 1:
        values *= scale
    if isinstance(offset, (int, float)) and not isinstance(offset, bool) and offset != 0:
        values += offset
    return values
