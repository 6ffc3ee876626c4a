"""Structural checks: can the catalogue model this document at all?

Failures here are harvest errors (the node is not catalogued, its previous
version is kept). They use the schemas in ``schemas/structure/`` so the
reported JSON pointer comes straight from jsonschema.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from catalogue.errors import DocumentError, join_pointer
from catalogue.harvest.documents import json_type
from catalogue.resources import schema_text


@cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_text(f"structure/{name}.json")))


def _describe(error: ValidationError) -> tuple[str, str]:
    """A (pointer suffix, message) pair that reads well on one line."""
    tokens = list(error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return join_pointer("", *tokens, missing), "missing required key"
    pointer = join_pointer("", *tokens)
    if error.validator == "const":
        return pointer, f"expected {json.dumps(error.validator_value)}, got {_short(error.instance)}"
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return pointer, f"expected {expected}, got {json_type(error.instance)}"
    if error.validator == "minimum":
        return pointer, f"expected an integer >= {error.validator_value}, got {_short(error.instance)}"
    if error.validator == "anyOf":
        return pointer, f"unexpected value {_short(error.instance)}"
    return pointer, error.message


def _short(value: Any) -> str:
    text = json.dumps(value, allow_nan=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def check(schema: str, document: Any, location: str, pointer: str = "") -> None:
    """Raise DocumentError for the first structural problem of ``document``."""
    validator = _validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        suffix, message = _describe(errors[0])
        raise DocumentError(location, message, pointer + suffix)


def check_v3(document: dict[str, Any], location: str, pointer: str = "") -> str:
    """Check a zarr.json document; return its node type."""
    node_type = document.get("node_type")
    if node_type not in ("array", "group"):
        if "node_type" not in document:
            raise DocumentError(location, "missing required key", pointer + "/node_type")
        raise DocumentError(
            location, f'expected "array" or "group", got {_short(node_type)}', pointer + "/node_type"
        )
    check(f"v3-{node_type}", document, location, pointer)
    return node_type
