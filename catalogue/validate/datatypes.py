"""Data types and fill values: what each Zarr version allows, checked without NumPy arrays.

Nothing here allocates data: dtype strings are parsed by ``numpy.dtype``
(which never executes anything) only to learn item sizes and kinds, and fill
values are checked arithmetically (range of integers, width of hex floats,
length of base64 bytes).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import numpy as np

# ----------------------------------------------------------------- Zarr v3
V3_INTEGERS = {f"{s}int{b}": (s == "", b) for s in ("", "u") for b in (8, 16, 32, 64)}
V3_FLOATS = {"float16": 2, "float32": 4, "float64": 8}
V3_COMPLEX = {"complex64": 4, "complex128": 8}  # bytes of each component
#: Extension data types registered by zarr-python 3.1 (``zarr.core.dtype``).
V3_EXTENSIONS = {
    "string", "bytes", "variable_length_bytes", "fixed_length_utf32", "null_terminated_bytes",
    "raw_bytes", "structured", "numpy.datetime64", "numpy.timedelta64",
}
_RAW = re.compile(r"^r([1-9][0-9]*)$")
_V2_LIKE = re.compile(r"^[<>|=]?[biufcmMOSUV][0-9]*")
SPECIAL_FLOATS = ("NaN", "Infinity", "-Infinity")


def v3_data_type_name(value: Any) -> str | None:
    """The name of a v3 data_type (a string or a {name, configuration} object)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return value["name"]
    return None


def v3_data_type_problem(value: Any) -> str | None:
    """Why a v3 data_type is not acceptable, or None."""
    name = v3_data_type_name(value)
    if name is None:
        return "expected a data type name or an object with a string name"
    if name == "bool" or name in V3_INTEGERS or name in V3_FLOATS or name in V3_COMPLEX:
        return None
    raw = _RAW.match(name)
    if raw:
        return None if int(raw.group(1)) % 8 == 0 else f"raw data type {name!r} must have a multiple of 8 bits"
    if name in V3_EXTENSIONS:
        return None
    if _V2_LIKE.match(name):
        return f"unknown data type {name!r} (a Zarr v2/NumPy type string; v3 names types, e.g. \"uint8\")"
    return f"unknown data type {name!r}"


def v3_item_size(value: Any) -> int | None:
    """Bytes per element of a fixed-size core data type (None for extensions)."""
    name = v3_data_type_name(value)
    if name == "bool":
        return 1
    if name in V3_INTEGERS:
        return V3_INTEGERS[name][1] // 8
    if name in V3_FLOATS:
        return V3_FLOATS[name]
    if name in V3_COMPLEX:
        return 2 * V3_COMPLEX[name]
    raw = _RAW.match(name or "")
    if raw and int(raw.group(1)) % 8 == 0:
        return int(raw.group(1)) // 8
    return None


def _float_fill_problem(value: Any, nbytes: int) -> str | None:
    if type(value) in (int, float):
        if isinstance(value, float) and not math.isfinite(value):
            return None  # bare NaN/Infinity tokens: accepted by the parser, as zarr-python writes them
        return None
    if value in SPECIAL_FLOATS:
        return None
    if isinstance(value, str) and value.startswith("0x"):
        digits = value[2:]
        if len(digits) == 2 * nbytes and all(c in "0123456789abcdefABCDEF" for c in digits):
            return None
        return f"hex fill value {value!r} must have exactly {2 * nbytes} hex digits"
    return f'expected a number, "NaN", "Infinity", "-Infinity" or a hex string, got {short(value)}'


def _int_fill_problem(value: Any, signed: bool, bits: int) -> str | None:
    if type(value) is not int:
        if (isinstance(value, float) and math.isnan(value)) or value == "NaN":
            return "NaN cannot be stored in an integer array"
        return f"expected an integer, got {short(value)}"
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    if not lo <= value <= hi:
        return f"{value} is outside the range of the data type ({lo}..{hi})"
    return None


def v3_fill_value_problem(data_type: Any, value: Any) -> str | None:
    """Why ``value`` is not a fill value of ``data_type``, or None (extensions: lenient)."""
    name = v3_data_type_name(data_type)
    if name is None or v3_data_type_problem(data_type) is not None:
        return None  # the data type itself is reported
    if name == "bool":
        return None if isinstance(value, bool) else f"expected true or false, got {short(value)}"
    if name in V3_INTEGERS:
        signed, bits = V3_INTEGERS[name]
        return _int_fill_problem(value, signed, bits)
    if name in V3_FLOATS:
        return _float_fill_problem(value, V3_FLOATS[name])
    if name in V3_COMPLEX:
        if not (isinstance(value, list) and len(value) == 2):
            return f"expected [real, imaginary], got {short(value)}"
        for part in value:
            problem = _float_fill_problem(part, V3_COMPLEX[name])
            if problem:
                return problem
        return None
    raw = _RAW.match(name)
    if raw:
        n = int(raw.group(1)) // 8
        if isinstance(value, list) and len(value) == n and all(type(b) is int and 0 <= b <= 255 for b in value):
            return None
        return f"expected a list of {n} byte values (0..255), got {short(value)}"
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        if type(value) is int or value == "NaT":
            return None
        return f'expected an integer or "NaT", got {short(value)}'
    if value is None:
        return "fill_value must not be null"
    return None


# ----------------------------------------------------------------- Zarr v2
_V2_TYPESTR = re.compile(r"^[<>|]([biufcmMOSUV])([0-9]*)(\[[A-Za-z0-9]+\])?$")


def v2_dtype(value: Any) -> tuple[np.dtype | None, str | None]:
    """Parse a v2 dtype (a type string or a structured list): (dtype, problem)."""
    try:
        spec = _v2_spec(value)
        dtype = np.dtype(spec)
    except _Bad as exc:
        return None, str(exc)
    except (TypeError, ValueError, OverflowError, MemoryError) as exc:
        return None, f"not a valid dtype: {exc}"
    return dtype, None


class _Bad(Exception):
    pass


def _v2_spec(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        m = _V2_TYPESTR.match(value)
        if not m:
            raise _Bad(f"{short(value)} is not a NumPy type string like \"<f8\", \"|u1\" or \"<M8[ns]\"")
        kind, size, unit = m.groups()
        if unit and kind not in "mM":
            raise _Bad(f"{short(value)}: only datetime and timedelta types take a [unit]")
        if not size and kind not in "OSUV":
            raise _Bad(f"{short(value)} has no item size")
        if len(size) > 9:
            raise _Bad(f"{short(value)}: item size too large")
        return value
    if isinstance(value, list) and value and depth < 8:
        fields = []
        names = set()
        for item in value:
            if not (isinstance(item, list) and len(item) in (2, 3) and isinstance(item[0], str)):
                raise _Bad("a structured dtype is a list of [name, dtype] or [name, dtype, shape]")
            if item[0] in names:
                raise _Bad(f"field name {item[0]!r} appears twice")
            names.add(item[0])
            field = (item[0], _v2_spec(item[1], depth + 1))
            if len(item) == 3:
                shape = item[2]
                if not (isinstance(shape, list) and all(type(n) is int and 0 <= n < 2**31 for n in shape)):
                    raise _Bad(f"field {item[0]!r}: shape must be a list of non-negative integers")
                field += (tuple(shape),)
            fields.append(field)
        return fields
    raise _Bad("expected a type string or a non-empty structured dtype list")


def v2_fill_value_problem(dtype: np.dtype, value: Any) -> str | None:
    """Why ``value`` is not a v2 fill value for ``dtype``, or None (null is always allowed)."""
    if value is None:
        return None
    kind = dtype.kind
    if dtype.fields is not None or kind in "SV":
        return _base64_problem(value, dtype.itemsize)
    if kind == "b":
        return None if isinstance(value, bool) else f"expected true or false, got {short(value)}"
    if kind in "iu":
        return _int_fill_problem(value, kind == "i", dtype.itemsize * 8)
    if kind == "f":
        problem = _float_fill_problem(value, dtype.itemsize)
        if problem and isinstance(value, str) and value.startswith("0x"):
            return problem
        return None if problem is None else f'expected a number, "NaN", "Infinity" or "-Infinity", got {short(value)}'
    if kind == "c":
        if isinstance(value, list) and len(value) == 2:
            if all(_float_fill_problem(p, dtype.itemsize // 2) is None for p in value):
                return None
        elif type(value) in (int, float):
            return None
        return f"expected [real, imaginary], got {short(value)}"
    if kind in "mM":
        return None if type(value) is int or value == "NaT" else f'expected an integer or "NaT", got {short(value)}'
    if kind == "U":
        return None if isinstance(value, str) else f"expected a string, got {short(value)}"
    return None  # object dtypes: the object codec decides


def _base64_problem(value: Any, itemsize: int) -> str | None:
    if not isinstance(value, str):
        return f"expected a base64 string, got {short(value)}"
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return f"{short(value)} is not valid base64"
    if len(raw) > itemsize:
        return f"decodes to {len(raw)} bytes, more than the item size ({itemsize})"
    return None


def short(value: Any) -> str:
    """A value as short JSON text for messages."""
    import json

    try:
        text = json.dumps(value, allow_nan=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
