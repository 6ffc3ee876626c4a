"""The shipped JSON Schemas, compiled once, and their errors as findings.

Two schema families run here:

* the building block's ``zarr_array_metadata`` schema for v2 ``.zarray``
  documents, in one of two profiles: ``corrected`` (the default,
  ``schemas/zarr_array_metadata.yaml``) or ``upstream`` (the published file,
  verbatim, ``schemas/zarr_array_metadata.upstream.yaml``);
* the ZEP 6 ZOM schemas (``schemas/zom/``), corrected, applied to each node's
  ZOM. The verbatim ZEP 6 schemas are shipped beside them for reference.

Schemas never fetch anything: every ``$ref`` is local, and a registry with no
retrieval function is used, so a ``$ref`` in a document being validated is
just data.

jsonschema interprets a schema afresh for every document; on a 1,000-array harvest
that was most of the validation. Each validator therefore has a compiled twin from
jsonschema-rs, asked first: a document it finds valid has no errors to describe. A
document it finds invalid, or cannot judge, goes through jsonschema, whose errors
(paths, keywords, the order they come in) are the findings. The twin can only make a
valid document faster: where the two engines differ (Python's ``re`` and Rust's
regexes on ``$`` before a newline, say), it must never call valid what jsonschema
rejects, which ``tests/validate/test_fast_schemas.py`` checks on every shipped schema.
Documents holding what only Python has (tuples, NaN, infinities, other types) and
validators that assert formats are left to jsonschema.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Iterator
from functools import cache
from itertools import islice
from typing import TYPE_CHECKING, Any

import yaml

from catalogue.model.json import json_type, short
from catalogue.resources import schema_text

if TYPE_CHECKING:
    # imported where a validator is built: a process that never validates (the web
    # server, a query) need not pay for jsonschema (~0.1 s)
    from jsonschema import Draft7Validator, Draft202012Validator
    from jsonschema.exceptions import ValidationError

log = logging.getLogger(__name__)

_GEOZARR_FILES = {"corrected": "zarr_array_metadata.yaml", "upstream": "zarr_array_metadata.upstream.yaml"}


@cache
def geozarr_validator(profile: str) -> Draft7Validator:
    from jsonschema import Draft7Validator
    from referencing import Registry

    schema = yaml.safe_load(schema_text(_GEOZARR_FILES[profile]))
    return Draft7Validator(schema, registry=Registry())


@cache
def zom_validator(zarr_format: int, kind: str) -> Draft7Validator | Draft202012Validator:
    """A validator for one ZOM node (array or group) of the corrected ZEP 6 schema."""
    from jsonschema import Draft7Validator, Draft202012Validator
    from referencing import Registry

    schema = json.loads(schema_text(f"zom/zom-v{zarr_format}.json"))
    # The node's definition becomes the root (keeping the definitions its $refs point
    # into), so that schema_errors can take its properties one at a time.
    if zarr_format == 3:
        node = schema["$defs"]["ArraySpec" if kind == "array" else "GroupSpec"]
        return Draft202012Validator({**node, "$defs": schema["$defs"]}, registry=Registry())
    node = schema["definitions"]["Array" if kind == "array" else "Group"]
    return Draft7Validator({**node, "definitions": schema["definitions"]}, registry=Registry())


#: Schema errors looked at per top-level key. jsonschema yields errors lazily,
#: in a deterministic order; a hostile document with a million wrong list
#: items must not cost a million errors, nor hide the other keys' errors.
MAX_ERRORS_PER_KEY = 20


def schema_errors(validator: Draft7Validator | Draft202012Validator, instance: Any, *,
                  use_twin: bool = True) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    """(path tokens, keyword, message) of the errors, at most MAX_ERRORS_PER_KEY per top-level key.

    A document the compiled twin (:func:`compiled_twin`) finds valid has none. Otherwise
    an object schema's properties are validated one by one (each capped), then the
    object's own keywords (required, additionalProperties ...) with every property schema
    replaced by ``true``. ``use_twin=False``: jsonschema alone (the reference the
    twin is tested against).
    """
    if use_twin and _valid_by_twin(validator, instance):
        return
    schema = validator.schema
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not (isinstance(instance, dict) and isinstance(properties, dict)):
        for error in islice(validator.iter_errors(instance), MAX_ERRORS_PER_KEY):
            yield from _describe(error)
        return
    shallow = validator.evolve(schema={**schema, "properties": dict.fromkeys(properties, True)})
    for error in islice(shallow.iter_errors(instance), MAX_ERRORS_PER_KEY):
        yield from _describe(error)
    for key, subschema in properties.items():
        if key in instance:
            yield from _property_errors(validator, key, subschema, instance[key])


_TWINS: dict[int, tuple[Any, Any]] = {}
_TWINS_LOCK = threading.Lock()
_RS_CLASSES = {"Draft7Validator": "Draft7Validator", "Draft202012Validator": "Draft202012Validator"}


def compiled_twin(validator: Draft7Validator | Draft202012Validator,
                  resources: list[tuple[str, Any]] | None = None) -> Any | None:
    """jsonschema-rs's validator of the same schema and draft, formats not asserted (as
    jsonschema without a format checker), references never fetched; None when it cannot
    compile the schema (a reference it would have to fetch, a regex it does not know).

    ``resources`` (URI, schema) are the documents the schema refers to, as given to the
    validator's registry; pass them on the first call, right where the validator is made.
    Kept per validator (the shipped validators are made once per process); the validator
    itself is kept beside its twin, so that its ``id`` is not reused."""
    with _TWINS_LOCK:
        held = _TWINS.get(id(validator))
        if held is not None and held[0] is validator:
            return held[1]
    twin = None
    name = _RS_CLASSES.get(type(validator).__name__)
    # A validator asserting formats judges what the twin (formats off) would not.
    if name is not None and getattr(validator, "format_checker", None) is None:
        import jsonschema_rs

        def refuse(uri: str) -> Any:
            raise ValueError(f"not fetched: {uri}")

        try:
            registry = jsonschema_rs.Registry(resources, retriever=refuse) if resources else None
            twin = getattr(jsonschema_rs, name)(validator.schema, validate_formats=False, retriever=refuse,
                                                registry=registry)
        except Exception as exc:  # any refusal means: no twin, jsonschema alone
            log.debug("no compiled twin for a %s schema: %s", name, exc)
    with _TWINS_LOCK:
        _TWINS[id(validator)] = (validator, twin)
    return twin


def _valid_by_twin(validator: Draft7Validator | Draft202012Validator, instance: Any) -> bool:
    twin = compiled_twin(validator)
    if twin is None or not _plain_json(instance):
        return False
    try:
        return bool(twin.is_valid(instance))
    except Exception:  # a value it cannot take (a huge integer?): jsonschema judges
        return False


def _plain_json(instance: Any) -> bool:
    """Whether ``instance`` is what a JSON text parses to, where the two engines agree:
    no tuple (jsonschema-rs takes one for an array, jsonschema does not) and no NaN or
    infinity (jsonschema-rs gives them no type at all, so ``not``/``if`` come out
    differently). Anything else goes to jsonschema."""
    stack = [instance]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is float:
            if value != value or value in (math.inf, -math.inf):
                return False
        elif kind not in (str, int, bool) and value is not None:
            return False
    return True


#: Errors of recently seen (schema, key, value) triples. The arrays of one
#: hierarchy repeat the same chunk grids, codec chains and fill values, and
#: jsonschema's interpretation costs far more than the JSON text of a value.
_MEMO: dict[tuple[int, str, str], list[tuple[tuple[Any, ...], str, str]]] = {}
_MEMO_SIZE = 4096


def _property_errors(validator: Draft7Validator | Draft202012Validator, key: str, subschema: Any, value: Any) -> list[tuple[tuple[Any, ...], str, str]]:
    if isinstance(value, dict | list) and key != "attributes":
        memo_key = (id(validator), key, json.dumps(value, allow_nan=True))
        found = _MEMO.get(memo_key)
        if found is not None:
            return found
    else:
        memo_key = None
    errors = [
        described
        for error in islice(validator.descend(value, subschema, path=key, schema_path=key), MAX_ERRORS_PER_KEY)
        for described in _describe(error)
    ]
    if memo_key is not None:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[memo_key] = errors
    return errors


def _describe(error: ValidationError) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    tokens = tuple(error.absolute_path)
    keyword = str(error.validator)
    if keyword == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        for key in error.validator_value:
            if key not in instance:
                yield (*tokens, key), keyword, "missing required key"
        return
    if keyword == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        for key in error.instance:
            if key not in allowed:
                yield (*tokens, key), keyword, f"unexpected key {key!r}"
        return
    if keyword == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        yield tokens, keyword, f"expected {expected}, got {json_type(error.instance)}"
        return
    if keyword in ("const", "enum"):
        allowed = [error.validator_value] if keyword == "const" else error.validator_value
        yield tokens, keyword, f"expected one of {short(allowed)}, got {short(error.instance)}"
        return
    if keyword == "minItems":
        yield tokens, keyword, f"expected at least {error.validator_value} item(s), got {len(error.instance)}"
        return
    if keyword == "minimum":
        yield tokens, keyword, f"expected a number >= {error.validator_value}, got {short(error.instance)}"
        return
    if keyword in ("anyOf", "oneOf"):
        yield tokens, keyword, f"unexpected value {short(error.instance)}"
        return
    yield tokens, keyword, error.message if len(error.message) <= 200 else error.message[:197] + "..."
