"""Zarr v3 array and group metadata rules (the v3 core specification)."""

from __future__ import annotations

from typing import Any

from catalogue.model.datatypes import DataType, DataTypeError, parse_v3_data_type
from catalogue.model.json import short
from catalogue.validate.codecs import ChainChecker
from catalogue.validate.context import META, NodeChecker

ARRAY_KEYS = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
              "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names"}
REQUIRED = ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs")
GROUP_KEYS = {"zarr_format", "node_type", "attributes", "consolidated_metadata"}
SEPARATORS = ("/", ".")


def check_group(c: NodeChecker, meta: dict[str, Any]) -> None:
    _extensions(c, meta, GROUP_KEYS)
    if "attributes" in meta and not isinstance(meta["attributes"], dict):
        c.add("v3.attributes", META, ("attributes",), f"expected an object, got {short(meta['attributes'])}")


def check_array(c: NodeChecker, meta: dict[str, Any]) -> None:
    for key in REQUIRED:
        if key not in meta:
            c.add("v3.required", META, (key,), "missing required key")
    _extensions(c, meta, ARRAY_KEYS)
    if "attributes" in meta and not isinstance(meta["attributes"], dict):
        c.add("v3.attributes", META, ("attributes",), f"expected an object, got {short(meta['attributes'])}")
    shape = meta.get("shape")
    rank: int | None = None
    if "shape" in meta:
        if isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape):
            rank = len(shape)
        else:
            c.add("v3.shape", META, ("shape",), f"expected a list of non-negative integers, got {short(shape)}")
    data_type: DataType | None = None
    if "data_type" in meta:
        try:
            data_type = parse_v3_data_type(meta["data_type"])
        except DataTypeError as exc:
            c.add("v3.data_type", META, ("data_type",), exc.problem)
    chunk_shape = _chunk_grid(c, meta, rank) if "chunk_grid" in meta else None
    if "chunk_key_encoding" in meta:
        check_chunk_key_encoding(c, meta["chunk_key_encoding"], ("chunk_key_encoding",))
    if "fill_value" in meta and data_type is not None:
        problem = data_type.fill_problem(meta["fill_value"])
        if problem:
            c.add("v3.fill_value", META, ("fill_value",), problem)
    if "codecs" in meta:
        ChainChecker(c, data_type.item_size if data_type else None).check(meta["codecs"], ("codecs",), rank, chunk_shape)
    if "dimension_names" in meta:
        names = meta["dimension_names"]
        if names is not None:
            if not (isinstance(names, list) and all(n is None or isinstance(n, str) for n in names)):
                c.add("v3.dimension_names", META, ("dimension_names",),
                      f"expected a list of strings or nulls, got {short(names)}")
            elif rank is not None and len(names) != rank:
                c.add("v3.dimension_names.length", META, ("dimension_names",),
                      f"{len(names)} names for {rank} dimensions")
    if "storage_transformers" in meta:
        _storage_transformers(c, meta["storage_transformers"])


def _extensions(c: NodeChecker, meta: dict[str, Any], known: set[str]) -> None:
    """Unknown top-level keys are extensions: allowed only with must_understand: false."""
    for key, value in meta.items():
        if key in known:
            continue
        if isinstance(value, dict) and value.get("must_understand") is False:
            continue
        c.add("v3.extension", META, (key,), f"unknown key {key!r} (an extension must be an object with must_understand: false)")


def _chunk_grid(c: NodeChecker, meta: dict[str, Any], rank: int | None) -> list[int] | None:
    grid = meta["chunk_grid"]
    at = ("chunk_grid",)
    if not (isinstance(grid, dict) and isinstance(grid.get("name"), str)):
        c.add("v3.chunk_grid", META, at, f"expected {{name, configuration}}, got {short(grid)}")
        return None
    if grid["name"] != "regular":
        if grid.get("must_understand") is False:
            return None
        c.add("v3.chunk_grid", META, (*at, "name"), f'unsupported chunk grid {grid["name"]!r} (the specification defines "regular")')
        return None
    conf = grid.get("configuration")
    shape = conf.get("chunk_shape") if isinstance(conf, dict) else None
    if not (isinstance(shape, list) and all(type(n) is int and n >= 1 for n in shape)):
        where = (*at, "configuration", "chunk_shape") if isinstance(conf, dict) and "chunk_shape" in conf else (*at, "configuration")
        c.add("v3.chunk_grid", META, where, f"chunk_shape must be a list of positive integers, got {short(shape)}")
        return None
    if rank is not None and len(shape) != rank:
        c.add("v3.chunk_grid.rank", META, (*at, "configuration", "chunk_shape"),
              f"{len(shape)} chunk sizes for {rank} dimensions")
        return None
    return shape


def check_chunk_key_encoding(c: NodeChecker, encoding: Any, at: tuple[Any, ...], *, base: bool = False) -> None:
    """default/v2 with separator "/" or "."; prefix/suffix (dependent arrays) with a base encoding."""
    rule = "v3.chunk_key_encoding"
    if isinstance(encoding, str):
        encoding = {"name": encoding}
    if not (isinstance(encoding, dict) and isinstance(encoding.get("name"), str)):
        c.add(rule, META, at, f"expected {{name, configuration}}, got {short(encoding)}")
        return
    name = encoding["name"]
    conf = encoding.get("configuration", {})
    if not isinstance(conf, dict):
        c.add(rule, META, (*at, "configuration"), f"expected an object, got {short(conf)}")
        return
    conf_at = (*at, "configuration")
    if name in ("default", "v2"):
        for key in conf:
            if key != "separator":
                c.add(rule, META, (*conf_at, key), f"unexpected configuration key {key!r}")
        if "separator" in conf and conf["separator"] not in SEPARATORS:
            c.add(rule, META, (*conf_at, "separator"), f'separator must be "/" or ".", got {short(conf["separator"])}')
    elif name in ("prefix", "suffix") and not base:
        c.add("v3.chunk_key_encoding.proposed", META, (*at, "name"),
              f"the {name!r} chunk key encoding is proposed by the dependent-arrays convention, not part of Zarr v3")
        for key in conf:
            if key not in (name, "base_encoding"):
                c.add(rule, META, (*conf_at, key), f"unexpected configuration key {key!r} (the {name!r} encoding takes {name!r} and base_encoding)")
        if not isinstance(conf.get(name), str):
            c.add(rule, META, conf_at, f"the {name!r} encoding needs a string {name!r} in its configuration")
        if "base_encoding" in conf:
            check_chunk_key_encoding(c, conf["base_encoding"], (*conf_at, "base_encoding"), base=True)
    else:
        if encoding.get("must_understand") is False:
            return
        c.add(rule, META, (*at, "name"), f"unknown chunk key encoding {name!r}")


def _storage_transformers(c: NodeChecker, value: Any) -> None:
    at = ("storage_transformers",)
    if not isinstance(value, list):
        c.add("v3.storage_transformers", META, at, f"expected a list, got {short(value)}")
        return
    for i, entry in enumerate(value):
        if isinstance(entry, dict) and entry.get("must_understand") is False:
            continue
        c.add("v3.storage_transformers", META, (*at, i),
              "storage transformer that readers must understand; none is defined by the specification")
