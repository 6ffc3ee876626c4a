"""zarr-python as the reference for the catalogue's reads.

Shared by the chunk tests (reads in this process) and the packaging tests (reads
by a clean install, saved as ``.npy`` and compared here), so both hold the
catalogue to the same standard: same values (NaN equal to NaN, datetimes by
their integers, strings and bytes as Python objects) and the same shape.
"""

from __future__ import annotations

import pathlib
import warnings
from typing import Any

import numpy as np

from catalogue.harvest import load_hierarchy


def arrays_of(store: pathlib.Path) -> list[tuple[str, str]]:
    """(node path, IRI) of every non-dependent array of a store, from the store's own listing."""
    h = load_hierarchy(str(store))
    return [(p, h.iri(p)) for p, n in sorted(h.nodes.items()) if n.kind == "array" and n.primary is None]


def same(a: np.ndarray, b: Any) -> bool:
    """Whether the catalogue's read ``a`` holds what zarr-python's ``b`` holds."""
    b = np.asarray(b) if not isinstance(b, np.ndarray) else b
    if a.dtype.kind == "O" and b.dtype.kind != "O":
        b = b.astype(object)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    if a.dtype.kind in "mM":
        return bool(np.array_equal(a.view("i8"), b.view("i8")))
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        return a.tolist() == b.tolist()
    return bool(np.array_equal(a, b))


def same_dtype(mine: np.ndarray, expected: np.ndarray) -> bool:
    """Same dtype, except where zarr-python's string types (``T``, ``U``, ``O``) meet the catalogue's objects."""
    return mine.dtype == expected.dtype or expected.dtype.kind in "OTU" or mine.dtype.kind == "O"


def zarr_read(store: pathlib.Path, path: str, selection: tuple[object, ...]) -> np.ndarray:
    """zarr-python's read of the selection (negative steps, which zarr-python refuses, applied by NumPy)."""
    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        array = zarr.open_array(str(store / path) if path else str(store), mode="r")
        if any(isinstance(s, slice) and (s.step or 1) < 0 for s in selection):
            return np.asarray(array[...])[selection]
        return np.asarray(array[selection])
