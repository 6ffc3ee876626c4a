"""Zarr v2 array and group rules: the GeoZarr profile schema plus what no schema says."""

from __future__ import annotations

from typing import Any

from catalogue.model.codecs import UNSAFE_CODECS
from catalogue.model.datatypes import DataType, DataTypeError, parse_v2_dtype
from catalogue.model.json import short
from catalogue.validate.codecs import numcodecs_ids
from catalogue.validate.context import META, NodeChecker
from catalogue.validate.rules import RULES
from catalogue.validate.schemas import geozarr_validator, schema_errors

#: Schema keyword -> rule of the upstream profile.
_UPSTREAM = {"type": "type", "required": "required", "minItems": "minItems", "enum": "enum"}


#: What NCZarr (the NetCDF library's Zarr dialect) adds to .zgroup and .zarray: its own
#: structure (dimensions, variable types), which a Zarr reader ignores without loss.
NCZARR_PREFIX = "_nczarr_"


def _nczarr(c: NodeChecker, meta: dict[str, Any]) -> None:
    """One warning per NCZarr key, whatever the profile: the schemas' findings about those
    keys (and the ZOM's, at the same pointer) are left out."""
    for key in meta:
        if key.startswith(NCZARR_PREFIX):
            c.add("v2.nczarr", META, (key,), f"NCZarr's key {key!r}, not Zarr v2's (kept, ignored by other readers)")


def check_group(c: NodeChecker, meta: dict[str, Any]) -> None:
    _nczarr(c, meta)
    for key in meta:
        if key != "zarr_format" and not key.startswith(NCZARR_PREFIX):
            c.add("v2.group", META, (key,), f"unexpected key {key!r} (.zgroup holds only zarr_format)")


def check_array(c: NodeChecker, meta: dict[str, Any], profile: str) -> None:
    _nczarr(c, meta)
    _profile(c, meta, profile)
    rank = None
    shape = meta.get("shape")
    if isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape):
        rank = len(shape)
    chunks = meta.get("chunks")
    if rank is not None and isinstance(chunks, list) and len(chunks) != rank:
        c.add("v2.chunks.rank", META, ("chunks",), f"{len(chunks)} chunk sizes for {rank} dimensions")
    dtype: DataType | None = None
    if isinstance(meta.get("dtype"), str | list):
        try:
            dtype = parse_v2_dtype(meta["dtype"])
        except DataTypeError as exc:
            c.add("v2.dtype", META, ("dtype",), exc.problem)
    fill = meta.get("fill_value")
    if dtype is not None and "fill_value" in meta and not isinstance(fill, dict):
        problem = dtype.fill_problem(fill)
        if problem:
            c.add("v2.fill_value", META, ("fill_value",), problem)
    compressor = meta.get("compressor")
    if isinstance(compressor, dict):
        _codec(c, compressor, ("compressor",))
    filters = meta.get("filters")
    if isinstance(filters, list):
        if not filters:
            c.add("v2.filters.empty", META, ("filters",), "an empty list; the v2 specification writes null for no filters")
        for i, f in enumerate(filters):
            if isinstance(f, dict):
                _codec(c, f, ("filters", i))


def _profile(c: NodeChecker, meta: dict[str, Any], profile: str) -> None:
    for tokens, keyword, message in schema_errors(geozarr_validator(profile), meta):
        if list(tokens) == ["zarr_format"] and meta.get("zarr_format") == "2":
            continue  # the digit as a string: format.string says so, as a warning
        if tokens and str(tokens[0]).startswith(NCZARR_PREFIX):
            continue  # NCZarr's own key: v2.nczarr says so, as a warning
        if profile == "upstream":
            rule = f"geozarr-upstream.{_UPSTREAM.get(keyword, 'other')}"
        elif keyword == "required":
            rule = "v2.required"
        elif keyword == "additionalProperties":
            rule = "v2.unknown-key"
        else:
            rule = f"v2.{tokens[0]}" if tokens and f"v2.{tokens[0]}" in RULES else "v2.unknown-key"
        c.add(rule, META, tokens, message)


def _codec(c: NodeChecker, codec: dict[str, Any], at: tuple[Any, ...]) -> None:
    codec_id = codec.get("id")
    if not isinstance(codec_id, str):
        return  # the schema reports it
    if codec_id in UNSAFE_CODECS:
        c.add("codec.unsafe", META, (*at, "id"), f"codec {codec_id!r} runs arbitrary code when data is decoded")
    if codec_id not in numcodecs_ids():
        c.add("v2.codec.unknown", META, (*at, "id"), f"codec id {short(codec_id)} is not known to numcodecs")
