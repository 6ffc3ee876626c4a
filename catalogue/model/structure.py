"""The gate: can the catalogue model this document at all?

Only three things are required, because only they decide *what* the
catalogue writes and how it rebuilds it: the document is a JSON object (the
parser sees to that), its ``zarr_format`` is the version its file name says
(``zarr.json`` is 3, ``.zarray``/``.zgroup`` are 2), and a v3 document's
``node_type`` is ``"array"`` or ``"group"``. A document that fails here is a
harvest error: the node is not catalogued and keeps its previous version.

Everything else (missing keys, wrong types, unknown codecs, fill values that
do not fit) is a *finding* of ``catalogue.validate``: such nodes are
catalogued as they are and flagged invalid, because a catalogue must show
what exists.
"""

from __future__ import annotations

import json
from typing import Any

from catalogue.errors import DocumentError


def _short(value: Any) -> str:
    text = json.dumps(value, allow_nan=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def check_format(document: dict[str, Any], expected: int, location: str, pointer: str = "") -> None:
    """Raise unless ``document["zarr_format"]`` is ``expected`` (or, leniently, its digit as a
    string: validation reports that as ``format.string``)."""
    rule = f"v{expected}.zarr_format"
    if "zarr_format" not in document:
        raise DocumentError(location, "missing required key", pointer + "/zarr_format", rule=rule)
    value = document["zarr_format"]
    # "2" as a string (some writers) is unambiguous: let through, and validation says so.
    if value == str(expected):
        return
    if type(value) is not int or value != expected:
        raise DocumentError(location, f"expected {expected}, got {_short(value)}", pointer + "/zarr_format", rule=rule)


def check_v3(document: dict[str, Any], location: str, pointer: str = "") -> str:
    """Check a zarr.json document passes the gate; return its node type."""
    check_format(document, 3, location, pointer)
    node_type = document.get("node_type")
    if node_type not in ("array", "group"):
        if "node_type" not in document:
            raise DocumentError(location, "missing required key", pointer + "/node_type", rule="v3.node_type")
        raise DocumentError(
            location, f'expected "array" or "group", got {_short(node_type)}', pointer + "/node_type",
            rule="v3.node_type",
        )
    return node_type
