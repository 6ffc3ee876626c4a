"""How the portal writes values: JSON bounded for display, sizes, shapes, item sizes."""

from __future__ import annotations

import json
from typing import Any

#: Characters of one attribute value shown (the rest is elided, with a count).
MAX_VALUE_CHARS = 4000


def display_json(value: Any, *, indent: int | None = None) -> str:
    """A JSON value as text (unicode kept, NaN/Infinity as zarr writes them), bounded."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return elide(text)


def elide(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit:,} more characters)"


def human_bytes(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def int_list(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    return None


def shape_text(value: Any) -> str:
    """``[6, 9, 12]`` as ``6 × 9 × 12`` (``()`` for 0-d); anything else as its JSON."""
    ints = int_list(value)
    if ints is None:
        return display_json(value)
    return " × ".join(str(v) for v in ints) if ints else "() scalar"


