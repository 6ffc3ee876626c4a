"""Normal forms the index searches by: folded text, Zarr v3 data type names, codec names.

See :mod:`catalogue.discovery.index` for what each means to a search.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from catalogue.model.codecs import codec_name

_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Case- and accent-insensitive form: NFKD, combining marks dropped, case folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def tokenize(text: str | None) -> list[str]:
    """The search tokens of ``text``: runs of letters and digits of its folded form."""
    return _WORD.findall(fold(text)) if text else []


_V2_DTYPE = re.compile(r"^[<>|=]?([biufcmMOSUV])(\d*)(?:\[\w+\])?$")
_V2_NUMERIC = {"i": "int", "u": "uint", "f": "float", "c": "complex"}


def normalise_dtype(value: str | None, codecs: Iterable[str] = ()) -> str | None:
    """A data type in the Zarr v3 vocabulary (``<f4`` → ``float32``); see :mod:`catalogue.discovery.index`.

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
    m = _V2_DTYPE.match(text)
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


def normalise_codec(name: str) -> str:
    """A codec name for facets: lower case, without zarr-python's ``numcodecs.`` prefix."""
    name = name.strip().lower()
    return name.removeprefix("numcodecs.")


def inner_codecs(configuration: Any, depth: int = 0) -> list[str]:
    """Names of the codecs inside a parsed sharding configuration (recursively), not its index codecs."""
    if not isinstance(configuration, dict) or depth > 8:
        return []
    out: list[str] = []
    codecs = configuration.get("codecs")
    for codec in codecs if isinstance(codecs, list) else []:
        name = codec_name(codec)
        if name is None:
            continue
        out.append(normalise_codec(name))
        if name == "sharding_indexed" and isinstance(codec, dict):
            out += inner_codecs(codec.get("configuration"), depth + 1)
    return out


def json_value(text: str | None) -> Any:
    """``text`` parsed as JSON (None when absent or malformed)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_time(text: str) -> datetime | None:
    """An xsd:dateTime lexical form as an aware UTC datetime (naive ones are taken as UTC)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
