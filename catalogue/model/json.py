"""JSON typing: what kind of JSON value a parsed document holds, in words for messages.

Every parser of Zarr metadata (documents, validation, the model's ``parse_*``
helpers) names the value it received in its errors; these helpers keep that
wording one and the same everywhere.
"""

from __future__ import annotations

import json
from typing import Any


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def short(value: Any) -> str:
    """A value as short JSON text for messages."""
    try:
        text = json.dumps(value, allow_nan=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
