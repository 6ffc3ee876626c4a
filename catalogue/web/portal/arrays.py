"""An array's layout as the portal shows it, read from its rebuilt metadata documents.

Any JSON is tolerated: a malformed value is shown as its JSON, never an error.
Codec kinds and item sizes are the model's readings
(:mod:`catalogue.model.codecs`, :mod:`catalogue.model.datatypes`, which validation
checks too), so the page describes exactly what validation accepts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from catalogue.model.chunk_grids import RegularChunkGrid
from catalogue.model.codecs import codec_kind, codec_name
from catalogue.model.datatypes import item_size

from .graph_digest import NodeInfo
from .values import display_json, elide, human_bytes, int_list, shape_text


@dataclass
class CodecView:
    name: str
    configuration: str = ""
    role: str = ""
    #: For sharding: the chunk shape inside each shard, the inner codecs and the index codecs.
    inner_chunks: str = ""
    codecs: list[CodecView] = field(default_factory=list)
    index_codecs: list[CodecView] = field(default_factory=list)
    index_location: str = ""


@dataclass
class AttributeRow:
    key: str
    text: str
    #: Not a plain string: shown as JSON.
    is_json: bool
    multiline: bool


@dataclass
class Dimension:
    name: str
    size: str
    chunk: str


@dataclass
class ArrayView:
    """One array's layout, read from its rebuilt metadata documents (any JSON tolerated)."""

    info: NodeInfo
    zarr_format: int | None
    shape: str
    chunks: str
    #: The shard shape when sharded (``chunks`` then names the innermost chunk shape).
    shards: str = ""
    inner_levels: list[str] = field(default_factory=list)
    dtype: str = ""
    fill_value: str = ""
    codecs: list[CodecView] = field(default_factory=list)
    dimensions: list[Dimension] = field(default_factory=list)
    dimension_names: list[str] = field(default_factory=list)
    chunk_key_encoding: str = ""
    order: str = ""
    storage_transformers: str = ""
    n_chunks: int | None = None
    n_shards: int | None = None
    nbytes: int | None = None
    units: str = ""
    standard_name: str = ""
    long_name: str = ""
    attributes: list[AttributeRow] = field(default_factory=list)
    primary: NodeInfo | None = None
    dependents: list[NodeInfo] = field(default_factory=list)
    #: Path relative to the group page listing it.
    relative: str = ""

    @property
    def size(self) -> str:
        return human_bytes(self.nbytes)

    @property
    def codec_summary(self) -> str:
        return " → ".join(c.name for c in self.codecs) or "none"


def attributes_of(docs: dict[str, Any] | None) -> dict[str, Any] | Any:
    if not docs:
        return {}
    if "zarr.json" in docs:
        return docs["zarr.json"].get("attributes", {}) if isinstance(docs["zarr.json"], dict) else {}
    return docs.get(".zattrs", {})


def attribute_rows(attrs: Any) -> list[AttributeRow]:
    """The attributes as table rows: strings as text, anything else as JSON."""
    if not isinstance(attrs, dict):
        text = display_json(attrs, indent=2)
        return [AttributeRow("(not an object)", text, True, "\n" in text)]
    rows = []
    for key, value in attrs.items():
        if isinstance(value, str):
            rows.append(AttributeRow(str(key), elide(value), False, "\n" in value or len(value) > 120))
        else:
            compact = display_json(value)
            text = compact if len(compact) <= 80 else display_json(value, indent=2)
            rows.append(AttributeRow(str(key), text, True, "\n" in text))
    return rows


def _named(value: Any) -> tuple[str, Any]:
    """A v3 named configuration (or short-form name) as (name, configuration); a malformed name as its JSON."""
    name = codec_name(value)
    if name is None:
        name = display_json(value.get("name") if isinstance(value, dict) else value)
    return name, value.get("configuration") if isinstance(value, dict) else None


#: The model's codec stages as the page's arrows.
_ARROWS = {"array-to-array": "array → array", "array-to-bytes": "array → bytes", "bytes-to-bytes": "bytes → bytes"}


def _role(name: str) -> str:
    """The codec's stage, as the model knows it ("" for a codec it does not know)."""
    kind = codec_kind(name)
    return _ARROWS[kind] if kind else ""


def _v3_codecs(value: Any, levels: list[str], depth: int = 0) -> list[CodecView]:
    if not isinstance(value, list):
        return [CodecView(name=display_json(value), role="(not a list)")] if value is not None else []
    out = []
    for item in value[:50]:
        name, conf = _named(item)
        codec = CodecView(name=name, role=_role(name))
        if name == "sharding_indexed" and isinstance(conf, dict) and depth < 8:
            codec.inner_chunks = shape_text(conf.get("chunk_shape"))
            levels.append(codec.inner_chunks)
            codec.codecs = _v3_codecs(conf.get("codecs"), levels, depth + 1)
            codec.index_codecs = _v3_codecs(conf.get("index_codecs"), [], depth + 1)
            codec.index_location = str(conf.get("index_location", "end"))
        elif conf is not None:
            codec.configuration = display_json(conf)
        out.append(codec)
    return out


def _v2_codec(value: Any, role: str) -> CodecView:
    if isinstance(value, dict):
        conf = {k: v for k, v in value.items() if k != "id"}
        ident = value.get("id")
        return CodecView(name=ident if isinstance(ident, str) else display_json(ident), role=role,
                         configuration=display_json(conf) if conf else "")
    return CodecView(name=display_json(value), role=role)


def _grid_count(shape: list[int] | None, chunks: list[int] | None) -> int | None:
    if shape is None or chunks is None or any(c < 0 for c in chunks):
        return None
    grid = RegularChunkGrid(tuple(chunks))
    return grid.chunk_count(tuple(shape)) if grid.fits(tuple(shape)) else None


def array_view(info: NodeInfo, docs: dict[str, Any] | None) -> ArrayView:
    """An array's layout from its documents; malformed values are shown as their JSON."""
    if docs and isinstance(docs.get("zarr.json"), dict):
        meta = docs["zarr.json"]
        zarr_format: int | None = 3
        grid_name, grid_conf = _named(meta.get("chunk_grid"))
        chunk_shape = grid_conf.get("chunk_shape") if isinstance(grid_conf, dict) else grid_conf
        levels: list[str] = []
        codecs = _v3_codecs(meta.get("codecs"), levels)
        names = meta.get("dimension_names")
        cke_name, cke_conf = _named(meta.get("chunk_key_encoding"))
        separator = cke_conf.get("separator") if isinstance(cke_conf, dict) else None
        cke = cke_name + (f" (separator {separator!s})" if separator is not None else "")
        if "chunk_key_encoding" not in meta:
            cke = ""
        dtype_value = meta.get("data_type")
        dtype = dtype_value if isinstance(dtype_value, str) else display_json(dtype_value)
        order = ""
        transformers = meta.get("storage_transformers")
        transformers_text = display_json(transformers) if transformers else ""
        if grid_name not in ("regular", "") and grid_conf is None:
            chunk_shape = None
    elif docs and isinstance(docs.get(".zarray"), dict):
        meta = docs[".zarray"]
        zarr_format = 2
        chunk_shape = meta.get("chunks")
        levels = []
        codecs = [_v2_codec(f, "filter") for f in meta.get("filters") or []] if isinstance(
            meta.get("filters") or [], list) else [_v2_codec(meta.get("filters"), "filter")]
        if meta.get("compressor") is not None:
            codecs.append(_v2_codec(meta["compressor"], "compressor"))
        attrs = docs.get(".zattrs")
        names = attrs.get("_ARRAY_DIMENSIONS") if isinstance(attrs, dict) else None
        separator = meta.get("dimension_separator", ".")
        cke = f"v2 (separator {separator!s})"
        dtype_value = meta.get("dtype")
        dtype = dtype_value if isinstance(dtype_value, str) else display_json(dtype_value)
        order = str(meta.get("order", "")) if meta.get("order") is not None else ""
        transformers_text = ""
    else:
        return ArrayView(info=info, zarr_format=None, shape="", chunks="")
    shape = meta.get("shape")
    shape_ints = int_list(shape)
    chunk_ints = int_list(chunk_shape)
    view = ArrayView(
        info=info, zarr_format=zarr_format, shape=shape_text(shape) if "shape" in meta else "",
        chunks=shape_text(chunk_shape) if chunk_shape is not None else "",
        dtype=dtype, fill_value=display_json(meta.get("fill_value")) if "fill_value" in meta else "",
        codecs=codecs, chunk_key_encoding=cke, order=order, storage_transformers=transformers_text,
    )
    if levels:  # sharded: the grid's chunks are shards; the innermost level is the read unit
        view.shards = view.chunks
        view.inner_levels = levels
        view.chunks = levels[-1]
        view.n_shards = _grid_count(shape_ints, chunk_ints)
        inner = int_list(_innermost(meta.get("codecs")))
        view.n_chunks = _grid_count(shape_ints, inner) if inner else None
    else:
        view.n_chunks = _grid_count(shape_ints, chunk_ints)
    if isinstance(names, list):
        view.dimension_names = [n if isinstance(n, str) else display_json(n) for n in names]
    if shape_ints is not None:
        itemsize = item_size(dtype_value, zarr_format)
        if itemsize is not None:
            view.nbytes = math.prod(shape_ints) * itemsize
        chunk_cells = int_list(_innermost(meta.get("codecs"))) if levels else chunk_ints
        for i, size in enumerate(shape_ints):
            name = view.dimension_names[i] if i < len(view.dimension_names) else f"dim_{i}"
            chunk = str(chunk_cells[i]) if chunk_cells and i < len(chunk_cells) else ""
            view.dimensions.append(Dimension(name=name, size=str(size), chunk=chunk))
    attrs_all = attributes_of(docs)
    view.attributes = attribute_rows(attrs_all)
    if isinstance(attrs_all, dict):
        for key, attr in (("units", "units"), ("standard_name", "standard_name"), ("long_name", "long_name")):
            if isinstance(attrs_all.get(key), str):
                setattr(view, attr, attrs_all[key])
    return view


def _innermost(codecs: Any, depth: int = 0) -> Any:
    """The chunk shape of the innermost sharding level of a v3 codec chain (None if unsharded)."""
    if not isinstance(codecs, list) or depth > 8:
        return None
    for item in codecs:
        name, conf = _named(item)
        if name == "sharding_indexed" and isinstance(conf, dict):
            deeper = _innermost(conf.get("codecs"), depth + 1)
            return deeper if deeper is not None else conf.get("chunk_shape")
    return None
