"""The compiled twins of the shipped schemas (jsonschema-rs) only ever make a valid document faster.

``schema_errors`` skips jsonschema for a document the twin finds valid, so the one thing
that must never happen is the twin calling valid what jsonschema rejects: a finding would
be lost. Checked for every shipped schema on the documents of every good store and the
seed examples, and on Hypothesis's mutations of them (strings ending in a newline, NaN,
huge integers, booleans where numbers go, keys removed and added).
"""

from __future__ import annotations

import copy
import json
import math
import pathlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogue.harvest import SourceReader
from catalogue.model.zom import node_zom
from catalogue.validate import geozarr as geozarr_rules
from catalogue.validate import ome as ome_rules
from catalogue.validate.profiles import PROFILES
from catalogue.validate.schemas import (
    compiled_twin,
    geozarr_validator,
    schema_errors,
    zom_validator,
)
from tests.support.paths import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.zarr"))


def shipped_validators() -> dict[str, Any]:
    """Every validator the validation runs, by a readable name."""
    found: dict[str, Any] = {}
    for zarr_format in (2, 3):
        for kind in ("array", "group"):
            found[f"zom-v{zarr_format}-{kind}"] = zom_validator(zarr_format, kind)
    for profile in PROFILES:
        found[f"zarray-{profile}"] = geozarr_validator(profile)
    for known in geozarr_rules.GEOZARR_CONVENTIONS:
        found[f"convention-{known.key}"] = geozarr_rules.convention_validator(known)
    for version, files in ome_rules._FILES.items():
        for name in files:
            found[f"ngff-{version}-{name}"] = ome_rules._validator(version, name)
    return found


VALIDATORS = shipped_validators()
TWINNED = {name: v for name, v in VALIDATORS.items() if compiled_twin(v) is not None}


def _documents(roots: list[pathlib.Path]) -> list[Any]:
    """What the validators see of every node below ``roots``: ZOMs, metadata documents, attributes."""
    out: list[Any] = []
    for root in roots:
        try:
            h = SourceReader(str(root)).load()
        except Exception:  # a store that is no hierarchy contributes nothing
            continue
        for node in h.nodes.values():
            out += [node_zom(h, node), dict(node.metadata)]
            if node.attributes:
                out.append(node.attributes)
                out.append({"zarr_format": node.zarr_format, "node_type": node.kind, "attributes": node.attributes})
                out += [v for v in node.attributes.values() if isinstance(v, dict | list)]
    return out


@pytest.fixture(scope="module")
def corpus(good_stores: dict[str, pathlib.Path]) -> list[Any]:
    docs = _documents([*good_stores.values(), *EXAMPLES])
    assert len(docs) > 100
    return docs


def _twin_says_valid_but_jsonschema_does_not(validator: Any, doc: Any) -> list[Any] | None:
    twin = compiled_twin(validator)
    try:
        valid = twin is not None and twin.is_valid(doc)
    except Exception:  # schema_errors then asks jsonschema too
        valid = False
    if not valid:
        return None
    errors = list(schema_errors(validator, doc, use_twin=False))
    return errors or None


def test_every_shipped_schema_has_a_twin():
    # The NGFF schemas refer to each other by URL: given the bundled documents, nothing is fetched.
    assert set(TWINNED) == set(VALIDATORS)


def test_the_twin_never_passes_what_jsonschema_rejects_on_real_documents(corpus):
    passed = 0
    for doc in corpus:
        for name, validator in TWINNED.items():
            wrong = _twin_says_valid_but_jsonschema_does_not(validator, doc)
            assert wrong is None, f"{name}: the twin calls valid {json.dumps(doc)[:300]}, jsonschema says {wrong}"
            passed += compiled_twin(validator).is_valid(doc)
    assert passed > 100  # the fast path is exercised, not only the fallback


TRICKY = st.one_of(
    st.sampled_from(["", "abc\n", "a/b", "/abs", "a/../b", "0x1F", "EPSG:4326\n", "EPSG:4326", "NaN", "Infinity",
                     "little", "bytes", "float64", "<f8", "regular", "default", "C", "zstd"]),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1.0, 0.5, 2**31, 2**63, 2**64, 2**70, -(2**63) - 1,
                     True, False, None, 0, -1, 3]),
    st.text(max_size=8), st.integers(), st.floats(allow_nan=True),
    st.lists(st.integers(-2, 2**64), max_size=4), st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += _paths(value, (*prefix, i))
    return out


def _mutated(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for token in path[:-1]:
        parent = parent[token]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "add" and isinstance(parent, dict):
        parent[f"{last}_extra"] = value
    elif action == "append" and isinstance(parent[last], list):
        parent[last].append(value)
    else:
        parent[last] = value
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_twin_never_passes_what_jsonschema_rejects_on_mutated_documents(corpus, data):
    doc = data.draw(st.sampled_from(corpus))
    path = data.draw(st.sampled_from(_paths(doc)))
    action = data.draw(st.sampled_from(["replace", "delete", "add", "append"]))
    value = data.draw(TRICKY)
    mutated = _mutated(doc, path, action, value)
    for name, validator in TWINNED.items():
        wrong = _twin_says_valid_but_jsonschema_does_not(validator, mutated)
        assert wrong is None, f"{name}: the twin calls valid {mutated!r:.300}, jsonschema says {wrong}"


def test_where_the_engines_differ_jsonschema_has_the_last_word():
    """Python's ``$`` matches before a final newline, ECMA's does not: the twin rejects
    such a code, jsonschema (the reference) accepts it, and so do the findings."""
    known = next(k for k in geozarr_rules.GEOZARR_CONVENTIONS if k.key == "proj")
    validator = geozarr_rules.convention_validator(known)

    def document(code: str) -> dict[str, Any]:
        return {"zarr_format": 3, "node_type": "group",
                "attributes": {"proj:code": code, "zarr_conventions": [{"uuid": known.uuid, "name": "proj:"}]}}

    assert compiled_twin(validator).is_valid(document("EPSG:4326"))
    assert list(schema_errors(validator, document("EPSG:4326"))) == []
    assert not compiled_twin(validator).is_valid(document("EPSG:4326\n"))
    assert list(schema_errors(validator, document("EPSG:4326\n"))) == []
    wrong = document("EPSG 4326")
    assert [t for t, _k, _m in schema_errors(validator, wrong)] == [("attributes", "proj:code")]
    assert list(schema_errors(validator, wrong)) == list(schema_errors(validator, wrong, use_twin=False))


def test_what_only_python_has_goes_to_jsonschema():
    """jsonschema-rs takes a tuple for an array and gives NaN no type at all: such
    documents are judged by jsonschema, so its errors are not lost."""
    from jsonschema import Draft202012Validator

    not_a_number = Draft202012Validator({"not": {"type": "number"}})
    assert compiled_twin(not_a_number).is_valid(math.nan)  # the twin alone would pass it
    assert list(schema_errors(not_a_number, math.nan)) != []
    arrays = Draft202012Validator({"type": "object", "properties": {"shape": {"type": "array"}}})
    assert compiled_twin(arrays).is_valid({"shape": (2, 3)})
    assert [t for t, _k, _m in schema_errors(arrays, {"shape": (2, 3)})] == [("shape",)]


def test_a_validator_asserting_formats_has_no_twin():
    from jsonschema import Draft202012Validator, FormatChecker

    checking = Draft202012Validator({"type": "string", "format": "date"}, format_checker=FormatChecker())
    assert compiled_twin(checking) is None
    assert list(schema_errors(checking, "not a date")) != []
