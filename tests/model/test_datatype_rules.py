"""Data type and fill value rules (catalogue/model/datatypes.py), called directly.

tests/validate/test_validate.py checks that each rule fires at the right place in a
whole store; these pin the exact reason given for one value, where the boundaries are
(bit widths, hex digit counts, integer ranges) and that a v2/NumPy type string in a v3
document is recognised as such.
"""

from __future__ import annotations

import pytest

from catalogue.model.datatypes import (
    DataTypeError,
    item_size,
    parse_v3_data_type,
    v3_fill_value_problem,
)


def v3_data_type_problem(value: object) -> str | None:
    """The finding validation reports for a v3 data type (None when it is fine)."""
    try:
        parse_v3_data_type(value)
    except DataTypeError as exc:
        return exc.problem
    return None


def v3_item_size(value: object) -> int | None:
    return item_size(value, 3)


@pytest.mark.parametrize("data_type", ["bool", "int8", "uint64", "float16", "float64", "complex128", "r8", "r24",
                                       {"name": "float32"}, "numpy.datetime64"])
def test_v3_data_types_that_are_fine(data_type):
    assert v3_data_type_problem(data_type) is None


@pytest.mark.parametrize(("data_type", "problem"), [
    ("<f4", "unknown data type '<f4' (a Zarr v2/NumPy type string; v3 names types, e.g. \"uint8\")"),
    ("quaternion", "unknown data type 'quaternion'"),
    ("r12", "raw data type 'r12' must have a multiple of 8 bits"),
    (42, "expected a data type name or an object with a string name"),
    ({"configuration": {}}, "expected a data type name or an object with a string name"),
])
def test_v3_data_type_problems_say_why(data_type, problem):
    assert v3_data_type_problem(data_type) == problem


@pytest.mark.parametrize(("data_type", "size"), [("bool", 1), ("int16", 2), ("float64", 8), ("complex64", 8),
                                                 ("r24", 3), ("numpy.datetime64", None)])
def test_v3_item_size(data_type, size):
    assert v3_item_size(data_type) == size


@pytest.mark.parametrize(("data_type", "value", "problem"), [
    ("uint8", 255, None),
    ("uint8", 256, "256 is outside the range of the data type (0..255)"),
    ("int8", -129, "-129 is outside the range of the data type (-128..127)"),
    ("int32", "NaN", "NaN cannot be stored in an integer array"),
    ("int32", 1.0, "expected an integer, got 1.0"),
    ("bool", 0, "expected true or false, got 0"),
    ("float32", "NaN", None),
    ("float32", "0x7fc00000", None),
    ("float32", "0x7fc0", "hex fill value '0x7fc0' must have exactly 8 hex digits"),
    ("complex64", [1.0, "Infinity"], None),
    ("complex64", 1.0, "expected [real, imaginary], got 1.0"),
    ("r16", [0, 255], None),
    ("r16", [0, 256], "expected a list of 2 byte values (0..255), got [0, 256]"),
    ("numpy.datetime64", "NaT", None),
    ("<f4", "anything", None),  # the data type itself is what gets reported
])
def test_v3_fill_values(data_type, value, problem):
    assert v3_fill_value_problem(data_type, value) == problem
