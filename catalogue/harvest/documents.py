"""Strict parsing of Zarr metadata documents.

Python's json module is lenient in ways that would lose data silently: it
keeps only the last of two equal keys and turns recursion into a crash. Here
every such case becomes a DocumentError naming the file and, where possible,
the JSON pointer. Bare ``NaN``/``Infinity`` tokens are accepted, because
zarr-python writes them in attributes.

Nesting is limited to ``MAX_DEPTH`` levels. Real Zarr metadata nests less
than ten levels deep (sharding inside sharding included); a limit well below
Python's recursion limit keeps every later recursive step (copying, JSON
encoding, schema validation) safe from hostile documents.
"""

from __future__ import annotations

import json
from typing import Any

from catalogue.errors import DocumentError, join_pointer
from catalogue.model.json import json_type

#: Deepest nesting of arrays and objects accepted in a metadata document.
MAX_DEPTH = 256


class _DuplicateKeyDict(dict):
    """A parsed object that had a key twice; remembered so we can find its pointer."""

    duplicate: str = ""


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        marked = _DuplicateKeyDict(obj)
        marked.duplicate = dup
        return marked
    return obj


def _find_duplicate(value: Any) -> tuple[str, str] | None:
    """Pointer and key of the first object that had a duplicate key (iterative walk)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, _DuplicateKeyDict):
            return pointer, item.duplicate
        if isinstance(item, dict):
            stack.extend((v, join_pointer(pointer, k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, join_pointer(pointer, i)) for i, v in enumerate(item))
    return None


def _too_deep(value: Any) -> str | None:
    """Pointer of the first container nested deeper than MAX_DEPTH (iterative walk)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, pointer, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return pointer
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((v, join_pointer(pointer, k), depth + 1) for k, v in pairs if isinstance(v, dict | list))
    return None


def _lone_surrogate(value: Any) -> str | None:
    """Pointer of the first key or string holding a lone surrogate (iterative walk).

    ``"\\udc80"`` is valid JSON syntax but no Unicode text: no database can store it as
    UTF-8, so it would fail the harvest's write; refused here, it fails only its node."""

    def bad(text: str) -> bool:
        return any("\ud800" <= c <= "\udfff" for c in text)

    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, str):
            if bad(item):
                return pointer
        elif isinstance(item, dict):
            for k, v in item.items():
                if bad(k):
                    return join_pointer(pointer, k)
                stack.append((v, join_pointer(pointer, k)))
        elif isinstance(item, list):
            stack.extend((v, join_pointer(pointer, i)) for i, v in enumerate(item))
    return None


def parse_json(data: bytes, location: str) -> Any:
    """Parse one JSON document, or raise DocumentError saying where and why."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(location, f"not UTF-8: invalid byte at offset {exc.start}", rule="json.encoding") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    saw_duplicate = False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal saw_duplicate
        obj = _pairs_hook(pairs)
        if isinstance(obj, _DuplicateKeyDict):
            saw_duplicate = True
        return obj

    try:
        value = json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError as exc:
        raise DocumentError(
            location, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", rule="json.syntax"
        ) from exc
    except RecursionError as exc:
        raise DocumentError(location, f"nested more than {MAX_DEPTH} levels deep", rule="json.depth") from exc
    if text.count("[") + text.count("{") > MAX_DEPTH:
        too_deep = _too_deep(value)
        if too_deep is not None:
            raise DocumentError(location, f"nested more than {MAX_DEPTH} levels deep", too_deep, rule="json.depth")
    if "\\u" in text and "\\ud" in text.lower():
        lone = _lone_surrogate(value)
        if lone is not None:
            raise DocumentError(location, "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff escaped alone), "
                                "which is not Unicode text", lone, rule="json.surrogate")
    if saw_duplicate:
        found = _find_duplicate(value)
        if found:
            pointer, key = found
            raise DocumentError(location, f"duplicate key {key!r} (JSON keeps only one)", pointer, rule="json.duplicate-key")
    return value


def parse_object(data: bytes, location: str, pointer: str = "") -> dict[str, Any]:
    """Parse a document that must be a JSON object."""
    value = parse_json(data, location)
    return require_object(value, location, pointer)


def require_object(value: Any, location: str, pointer: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DocumentError(location, f"expected a JSON object, got {json_type(value)}", pointer, rule="json.not-object")
    return value
