"""Strict equality of parsed JSON values, for the lossless round-trip tests.

Python's ``==`` says ``1 == 1.0 == True`` and ``nan != nan``; a catalogue that
turned a float fill value into an integer, or a boolean into 1, would pass
such a test. Here types must match exactly, NaN equals NaN, -0.0 differs from
0.0, and the first difference is reported with its JSON pointer.
"""

from __future__ import annotations

import math
from typing import Any


def first_difference(a: Any, b: Any, pointer: str = "") -> str | None:
    """The pointer and reason of the first difference, or None when equal."""
    if type(a) is not type(b):
        return f"{pointer or '/'}: {type(a).__name__} {a!r} != {type(b).__name__} {b!r}"
    if isinstance(a, float):
        if math.isnan(a) and math.isnan(b):
            return None
        if a != b or math.copysign(1, a) != math.copysign(1, b):
            return f"{pointer or '/'}: {a!r} != {b!r}"
        return None
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return f"{pointer or '/'}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            diff = first_difference(a[key], b[key], f"{pointer}/{key}")
            if diff:
                return diff
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{pointer or '/'}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = first_difference(x, y, f"{pointer}/{i}")
            if diff:
                return diff
        return None
    return None if a == b else f"{pointer or '/'}: {a!r} != {b!r}"


def assert_json_equal(actual: Any, expected: Any) -> None:
    diff = first_difference(actual, expected)
    assert diff is None, f"JSON values differ at {diff}"
