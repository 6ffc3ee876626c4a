"""Data types and fill values: one array's element type, parsed once, for v2 and v3 alike.

A :class:`DataType` is parsed at the JSON boundary from a v3 ``data_type``
(a name or a ``{name, configuration}`` object) or a v2 ``dtype`` (a NumPy
type string or a structured list) by :func:`parse_v3_data_type`,
:func:`parse_v2_dtype` or :func:`parse_data_type`; each raises
:class:`DataTypeError` with the value received. Validation checks the rules
on it (``fill_problem``), chunk reads ask it for the in-memory NumPy dtype
and the fill value as a NumPy scalar, and pages ask it for the item size.

Nothing here allocates data: dtype strings are parsed by ``numpy.dtype``
(which never executes anything) only to learn item sizes and kinds, and fill
values are checked arithmetically (range of integers, width of hex floats,
length of base64 bytes).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from catalogue.errors import CatalogueError
from catalogue.model.json import short

if TYPE_CHECKING:  # NumPy loads where a dtype is parsed: reading the catalogue (queries, search) needs none
    import numpy as np


class DataTypeError(CatalogueError):
    """A data type that is not one of its Zarr version's, or that NumPy cannot hold.

    ``problem`` is the reason alone (validation reports it as its finding text);
    the message adds the value received when the reason does not already name it.
    """

    def __init__(self, problem: str, value: Any = None, *, named: bool = True) -> None:
        self.problem = problem
        super().__init__(problem if named else f"{problem}, got {short(value)}")


# ----------------------------------------------------------------- Zarr v3
V3_INTEGERS = {f"{s}int{b}": (s == "", b) for s in ("", "u") for b in (8, 16, 32, 64)}
V3_FLOATS = {"float16": 2, "float32": 4, "float64": 8}
V3_COMPLEX = {"complex64": 4, "complex128": 8}  # bytes of each component
#: Extension data types registered by zarr-python 3.1 (``zarr.core.dtype``).
V3_EXTENSIONS = {
    "string", "bytes", "variable_length_bytes", "fixed_length_utf32", "null_terminated_bytes",
    "raw_bytes", "structured", "numpy.datetime64", "numpy.timedelta64",
}
#: The v3 core types as NumPy type codes (native byte order: what a read decodes into).
V3_NUMPY = {
    "bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8", "complex64": "c8", "complex128": "c16",
}
_RAW = re.compile(r"^r([1-9][0-9]*)$")
_V2_LIKE = re.compile(r"^[<>|=]?[biufcmMOSUV][0-9]*")
SPECIAL_FLOATS = ("NaN", "Infinity", "-Infinity")


def data_type_name(value: Any) -> str | None:
    """The name of a v3 data_type (a string or a {name, configuration} object)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return value["name"]
    return None


@dataclass(frozen=True)
class DataType:
    """One array's data type as its metadata wrote it, with what each reader needs of it."""

    zarr_format: Literal[2, 3]
    #: The v3 name ("float32", "r16", "structured" ...); for v2 the type string or "structured".
    name: str
    #: The value as written in the metadata (v3 ``data_type``, v2 ``dtype``).
    value: Any = field(compare=False)
    #: v2 only: the NumPy dtype the type string or structured list parses to.
    v2_numpy: np.dtype | None = field(default=None, compare=False)

    @property
    def configuration(self) -> dict[str, Any]:
        """A v3 extension type's configuration ({} for names and v2 types)."""
        conf = self.value.get("configuration") if isinstance(self.value, dict) else None
        return conf if isinstance(conf, dict) else {}

    @property
    def item_size(self) -> int | None:
        """Bytes per element of a fixed-size type (None for variable-length and v3 extensions)."""
        if self.zarr_format == 2:
            dt = self.v2_numpy
            return None if dt is None or dt.hasobject or dt.itemsize == 0 else int(dt.itemsize)
        return _v3_item_size(self.name)

    @cached_property
    def numpy(self) -> np.dtype:
        """The in-memory NumPy dtype a chunk decodes into (DataTypeError when there is none)."""
        if self.v2_numpy is not None:
            return self.v2_numpy
        try:
            return _v3_numpy(self.value)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataTypeError(f"data type {self.value!r} cannot be read by the catalogue") from exc

    def fill_problem(self, value: Any) -> str | None:
        """Why ``value`` is not a fill value of this type, or None (v3 extensions: lenient)."""
        if self.zarr_format == 2:
            assert self.v2_numpy is not None
            return v2_fill_value_problem(self.v2_numpy, value)
        return v3_fill_value_problem(self.value, value)

    def fill(self, value: Any) -> Any:
        """The JSON fill value as a NumPy scalar of :attr:`numpy` (what absent chunks read as)."""
        if self.zarr_format == 2:
            return _v2_fill(self.numpy, value)
        return _v3_fill(self.name, self.numpy, value)


def parse_v3_data_type(value: Any) -> DataType:
    """A v3 ``data_type``; DataTypeError says why it is not one."""
    name = data_type_name(value)
    if name is None:
        raise DataTypeError("expected a data type name or an object with a string name", value, named=False)
    if not (name == "bool" or name in V3_INTEGERS or name in V3_FLOATS or name in V3_COMPLEX
            or name in V3_EXTENSIONS):
        raw = _RAW.match(name)
        if raw:
            if int(raw.group(1)) % 8:
                raise DataTypeError(f"raw data type {name!r} must have a multiple of 8 bits")
        elif _V2_LIKE.match(name):
            raise DataTypeError(
                f"unknown data type {name!r} (a Zarr v2/NumPy type string; v3 names types, e.g. \"uint8\")")
        else:
            raise DataTypeError(f"unknown data type {name!r}")
    return DataType(3, name, value)


def parse_v2_dtype(value: Any) -> DataType:
    """A v2 ``dtype`` (a type string or a structured list); DataTypeError says why it is not one."""
    import numpy as np
    try:
        spec = _v2_spec(value)
        dtype = np.dtype(spec)
    except _Bad as exc:
        raise DataTypeError(str(exc), value, named=isinstance(value, str)) from None
    except (TypeError, ValueError, OverflowError, MemoryError) as exc:
        raise DataTypeError(f"not a valid dtype: {exc}", value, named=False) from None
    return DataType(2, value if isinstance(value, str) else "structured", value, dtype)


def parse_data_type(value: Any, zarr_format: int) -> DataType:
    """The data type of an array of either version (v3 ``data_type``, v2 ``dtype``)."""
    return parse_v2_dtype(value) if zarr_format == 2 else parse_v3_data_type(value)


def item_size(value: Any, zarr_format: int | None) -> int | None:
    """Bytes per element when a data type says (None for variable-length, unknown and invalid types).

    For pages that size arrays whatever their metadata holds: the same reading
    as validation's, so exactly the types validation accepts are sized.
    """
    try:
        return parse_data_type(value, 2 if zarr_format == 2 else 3).item_size
    except DataTypeError:
        return None


def _v3_item_size(name: str) -> int | None:
    if name == "bool":
        return 1
    if name in V3_INTEGERS:
        return V3_INTEGERS[name][1] // 8
    if name in V3_FLOATS:
        return V3_FLOATS[name]
    if name in V3_COMPLEX:
        return 2 * V3_COMPLEX[name]
    raw = _RAW.match(name)
    if raw and int(raw.group(1)) % 8 == 0:
        return int(raw.group(1)) // 8
    return None


def _v3_numpy(data_type: Any) -> np.dtype:
    import numpy as np
    name = data_type_name(data_type)
    conf = data_type.get("configuration", {}) if isinstance(data_type, dict) else {}
    if name in V3_NUMPY:
        return np.dtype(V3_NUMPY[name])
    if isinstance(name, str) and name.startswith("r") and name[1:].isdigit() and int(name[1:]) % 8 == 0:
        return np.dtype(f"V{int(name[1:]) // 8}")
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        unit, scale = conf.get("unit", "generic"), conf.get("scale_factor", 1)
        code = "M8" if name == "numpy.datetime64" else "m8"
        return np.dtype(f"{code}[{scale}{unit}]" if scale != 1 else f"{code}[{unit}]")
    if name == "fixed_length_utf32":
        return np.dtype(f"<U{conf['length_bytes'] // 4}")
    if name == "null_terminated_bytes":
        return np.dtype(f"S{conf['length_bytes']}")
    if name == "raw_bytes":
        return np.dtype(f"V{conf['length_bytes']}")
    if name in ("string", "variable_length_bytes", "bytes"):
        return np.dtype(object)
    if name == "structured":
        return np.dtype([(f[0], _v3_numpy(f[1])) for f in conf["fields"]])
    raise ValueError(name)


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
    name = data_type_name(data_type)
    if name is None:
        return None
    try:
        parse_v3_data_type(data_type)
    except DataTypeError:
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


def _v3_fill(name: str, dtype: np.dtype, value: Any) -> Any:
    import numpy as np
    if dtype.kind == "c":
        return np.array(complex(_float(value[0]), _float(value[1])), dtype=dtype)[()]
    if dtype.kind == "f":
        if isinstance(value, str) and value.startswith("0x"):
            return np.frombuffer(bytes.fromhex(value[2:])[::-1], dtype=dtype.newbyteorder("<"))[0]
        return np.array(_float(value), dtype=dtype)[()]
    if dtype.kind in "mM":
        return np.array("NaT", dtype=dtype)[()] if value == "NaT" else np.array(value, dtype="i8").view(dtype)[()]
    if name == "string":
        return str(value)
    if name in ("variable_length_bytes", "bytes"):
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    if dtype.kind == "V" and isinstance(value, list):
        return np.frombuffer(bytes(value), dtype=dtype)[0]
    if dtype.fields is not None or dtype.kind in "SV":
        raw = base64.b64decode(value) if isinstance(value, str) else bytes(value)
        return np.frombuffer(raw.ljust(dtype.itemsize, b"\0"), dtype=dtype)[0]
    if dtype.kind == "U":
        return np.array(value, dtype=dtype)[()]
    return np.array(value, dtype=dtype)[()]


def _float(value: Any) -> float:
    if value == "NaN":
        return float("nan")
    if value == "Infinity":
        return float("inf")
    if value == "-Infinity":
        return float("-inf")
    return float(value)


# ----------------------------------------------------------------- Zarr v2
_V2_TYPESTR = re.compile(r"^[<>|]([biufcmMOSUV])([0-9]*)(\[[A-Za-z0-9]+\])?$")


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
            entry = (item[0], _v2_spec(item[1], depth + 1))
            if len(item) == 3:
                shape = item[2]
                if not (isinstance(shape, list) and all(type(n) is int and 0 <= n < 2**31 for n in shape)):
                    raise _Bad(f"field {item[0]!r}: shape must be a list of non-negative integers")
                entry += (tuple(shape),)
            fields.append(entry)
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


def _v2_fill(dtype: np.dtype, value: Any) -> Any:
    import numpy as np
    if value is None:
        return np.zeros((), dtype=dtype)[()] if dtype.kind != "O" else None
    if dtype.fields is not None or dtype.kind in "SV":
        raw = base64.b64decode(value)
        return np.frombuffer(raw.ljust(dtype.itemsize, b"\0"), dtype=dtype)[0]
    if dtype.kind == "c":
        if isinstance(value, list):
            return np.array(complex(_float(value[0]), _float(value[1])), dtype=dtype)[()]
        return np.array(value, dtype=dtype)[()]
    if dtype.kind == "f":
        return np.array(_float(value), dtype=dtype)[()]
    if dtype.kind in "mM":
        return np.array("NaT", dtype=dtype)[()] if value == "NaT" else np.array(value, dtype="i8").view(dtype)[()]
    if dtype.kind == "O":
        return value
    return np.array(value, dtype=dtype)[()]


# ------------------------------------------------------- facet vocabulary
_V2_LOOSE = re.compile(r"^[<>|=]?([biufcmMOSUV])(\d*)(?:\[\w+\])?$")
_V2_NUMERIC = {"i": "int", "u": "uint", "f": "float", "c": "complex"}


def v3_vocabulary_name(value: str | None, codecs: Iterable[str] = ()) -> str | None:
    """A data type in the Zarr v3 vocabulary (``<f4`` → ``float32``), for search facets.

    ``value`` is the ``zarr:dataType`` lexical form: a name, or JSON (a v3 extension
    object, a v2 structured list). ``codecs`` (normalised names) tell what a v2
    object dtype holds. v3 names and anything unknown are returned as written.
    """
    if value is None:
        return None
    text = value.strip()
    if text.startswith(("{", "[")):
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        if isinstance(parsed, list):
            return "structured"
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            return str(parsed["name"])
        return text
    m = _V2_LOOSE.match(text)
    if not m:
        return text
    kind, size = m.group(1), int(m.group(2) or 0)
    if kind in _V2_NUMERIC and size:
        return f"{_V2_NUMERIC[kind]}{8 * size}"
    if kind == "b" and size in (0, 1):
        return "bool"
    simple = {"M": "numpy.datetime64", "m": "numpy.timedelta64", "U": "fixed_length_utf32",
              "S": "null_terminated_bytes"}
    if kind in simple:
        return simple[kind]
    if kind == "V" and size:
        return f"r{8 * size}"
    if kind == "O":
        names = set(codecs)
        if "vlen-utf8" in names:
            return "string"
        if "vlen-bytes" in names:
            return "variable_length_bytes"
        return "object"
    return text
