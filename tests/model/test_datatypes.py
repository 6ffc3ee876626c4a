"""The data type model: v2 and v3 data types parsed once, with item sizes, NumPy dtypes and fill values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from catalogue.model.datatypes import (
    DataType,
    DataTypeError,
    item_size,
    parse_data_type,
    parse_v2_dtype,
    parse_v3_data_type,
    v3_vocabulary_name,
)


@pytest.mark.parametrize(("value", "size", "numpy"), [
    ("bool", 1, "?"), ("int16", 2, "i2"), ("uint64", 8, "u8"), ("float32", 4, "f4"),
    ("complex128", 16, "c16"), ("r24", 3, "V3"),
])
def test_v3_core_types(value: str, size: int, numpy: str) -> None:
    data_type = parse_v3_data_type(value)
    assert data_type == DataType(3, value, value)
    assert data_type.item_size == size
    assert data_type.numpy == np.dtype(numpy)


def test_v3_extension_types_have_no_core_item_size_but_a_numpy_dtype() -> None:
    value = {"name": "fixed_length_utf32", "configuration": {"length_bytes": 16}}
    data_type = parse_v3_data_type(value)
    assert data_type.name == "fixed_length_utf32"
    assert data_type.configuration == {"length_bytes": 16}
    assert data_type.item_size is None
    assert data_type.numpy == np.dtype("<U4")
    structured = parse_v3_data_type(
        {"name": "structured", "configuration": {"fields": [["a", "int8"], ["b", "float64"]]}})
    assert structured.numpy == np.dtype([("a", "i1"), ("b", "f8")])


@pytest.mark.parametrize(("value", "message"), [
    ("<f4", "unknown data type '<f4' (a Zarr v2/NumPy type string"),
    ("wibble", "unknown data type 'wibble'"),
    ("r12", "raw data type 'r12' must have a multiple of 8 bits"),
    (42, "expected a data type name or an object with a string name, got 42"),
])
def test_v3_errors_name_the_value(value: object, message: str) -> None:
    with pytest.raises(DataTypeError) as caught:
        parse_v3_data_type(value)
    assert str(caught.value).startswith(message)


def test_v3_type_numpy_cannot_hold_is_an_error() -> None:
    data_type = parse_v3_data_type({"name": "fixed_length_utf32"})  # no length_bytes
    with pytest.raises(DataTypeError, match="cannot be read by the catalogue"):
        data_type.numpy  # noqa: B018


@pytest.mark.parametrize(("value", "size", "numpy"), [
    ("<f8", 8, "<f8"), ("|u1", 1, "u1"), ("<M8[ns]", 8, "<M8[ns]"), ("|O", None, "O"),
    ([["a", "<i4"], ["b", "<f8", [2]]], 20, [("a", "<i4"), ("b", "<f8", (2,))]),
])
def test_v2_dtypes(value: object, size: int | None, numpy: object) -> None:
    data_type = parse_v2_dtype(value)
    assert data_type.zarr_format == 2
    assert data_type.name == (value if isinstance(value, str) else "structured")
    assert data_type.item_size == size
    assert data_type.numpy == np.dtype(numpy)


@pytest.mark.parametrize(("value", "message"), [
    ("f8", '"f8" is not a NumPy type string'),
    ("<i", '"<i" has no item size'),
    ([["a", "<i4"], ["a", "<i4"]], "field name 'a' appears twice, got "),
    ({}, "expected a type string or a non-empty structured dtype list, got {}"),
])
def test_v2_errors_name_the_value(value: object, message: str) -> None:
    with pytest.raises(DataTypeError) as caught:
        parse_v2_dtype(value)
    assert str(caught.value).startswith(message)


def test_fill_values_parse_to_numpy_scalars() -> None:
    assert math.isnan(parse_v3_data_type("float32").fill("NaN"))
    assert parse_v3_data_type("float32").fill("0x3f800000") == np.float32(1.0)
    assert parse_v3_data_type("complex64").fill([1, "Infinity"]) == complex(1, math.inf)
    assert parse_v3_data_type("r16").fill([1, 2]).tobytes() == b"\x01\x02"
    assert parse_v2_dtype("<i2").fill(None) == 0
    assert parse_v2_dtype("|S3").fill("YWI=") == b"ab"


def test_fill_problems() -> None:
    assert parse_v3_data_type("uint8").fill_problem(256) == "256 is outside the range of the data type (0..255)"
    assert parse_v3_data_type("int8").fill_problem("NaN") == "NaN cannot be stored in an integer array"
    assert parse_v3_data_type("float16").fill_problem("0x1") == "hex fill value '0x1' must have exactly 4 hex digits"
    assert parse_v2_dtype("<f4").fill_problem(None) is None
    assert parse_v2_dtype("|b1").fill_problem(1) == "expected true or false, got 1"


def test_tolerant_item_size_and_facet_vocabulary() -> None:
    assert item_size("<f4", 2) == 4
    assert item_size("float64", 3) == 8
    assert item_size("nonsense", 3) is None
    assert item_size(["bad"], 2) is None
    assert parse_data_type("<u2", 2).item_size == 2
    assert v3_vocabulary_name("<f4") == "float32"
    assert v3_vocabulary_name("|O", ["vlen-utf8"]) == "string"
    assert v3_vocabulary_name('[["a", "<i4"]]') == "structured"
    assert v3_vocabulary_name("float32") == "float32"
