"""Metadata documents → JSON-LD (through the catalogue context) → RDF triples.

The catalogue context maps the Zarr metadata keys themselves (``shape``,
``data_type``, ``codecs``, ``dtype``, ``compressor`` ...) to the vocabulary,
so a metadata document plus the context is already almost JSON-LD. "Almost",
because plain JSON-LD processing would lose data in five ways, each handled
here before pyld sees the document:

1. Unmapped keys vanish on expansion → keys the vocabulary has no property
   for go, together, into one ``extra_fields`` rdf:JSON literal.
2. ``@json`` values are canonicalised (JCS): key order, ``1.0`` versus ``1``,
   large integers and NaN tokens are lost → attributes and configurations are
   typed ``rdf:JSON`` with a lexical form written here, exactly.
3. pyld rewrites ``xsd:double`` lexical forms with 16 significant digits
   (0.30000000000000004 becomes 0.3) and integers of 1e21 and more as doubles
   → fill values are written as explicit ``xsd:integer``/``xsd:decimal``
   lexical forms, which pyld passes through untouched.
4. ``null`` drops the key and ``@list`` drops null items → a null becomes the
   rdf:JSON literal ``"null"``.
5. A value of an unexpected type (a string where a list belongs) would be
   misread → it is written as an rdf:JSON literal under the same property,
   so the converter is total: every JSON object converts, and rebuilds.

Everything derived for search (chunk shape of a v3 regular grid, v2 codec
chain and chunk key encoding, CF/ACDD attributes) is marked as such in
``vocabulary`` and ignored when rebuilding.

JSON-LD → RDF has two paths with the same triples (tests compare them as graphs):
:mod:`catalogue.rdf.fast_jsonld` writes these node objects' triples directly; pyld
(:func:`jsonld_triples`) is the reference, and converts any batch the fast path
refuses (``Unsupported``). The environment variable ``CATALOGUE_JSONLD=pyld``
makes every conversion use pyld, to compare or to rule the fast path out.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from decimal import Decimal
from math import isfinite
from typing import Any

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node as RDFNode

from catalogue.model.nodes import Hierarchy, Node
from catalogue.rdf import fast_jsonld
from catalogue.rdf.contexts import CATALOGUE_CONTEXT_IRI, document_loader

Triple = tuple[RDFNode, RDFNode, RDFNode]

#: The environment variable that selects the JSON-LD → RDF path: "pyld" forces the reference.
JSONLD_ENV = "CATALOGUE_JSONLD"
log = logging.getLogger(__name__)

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_JSON = "rdf:JSON"

#: Keys of v3 metadata with a property of their own (the rest go to extra_fields).
V3_KEYS = {
    "zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
    "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names",
}
V2_ARRAY_KEYS = {
    "zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order",
    "filters", "dimension_separator",
}
V2_GROUP_KEYS = {"zarr_format"}

#: Attributes lifted to well-known properties, by attribute name.
LIFTED_ATTRIBUTES = ("title", "summary", "institution", "long_name", "standard_name", "units")


# ------------------------------------------------------------------ values
def json_text(value: Any) -> str:
    """The exact JSON text of a parsed value (key order, float/int kept).

    Non-ASCII stays readable; lone surrogates (legal in JSON escapes, illegal
    in UTF-8) force \\u escapes so the text can be stored.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=True)
    return text


def json_literal(value: Any) -> dict[str, str]:
    return {"@value": json_text(value), "@type": RDF_JSON}


def decimal_text(value: float) -> str:
    """A finite float as an exact xsd:decimal lexical form (shortest round-trip digits)."""
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"


def scalar(value: Any) -> Any:
    """A JSON value as an explicit JSON-LD value object that survives pyld exactly."""
    if isinstance(value, bool):
        return {"@value": "true" if value else "false", "@type": "xsd:boolean"}
    if isinstance(value, int):
        return {"@value": str(value), "@type": "xsd:integer"}
    if isinstance(value, float) and isfinite(value):
        return {"@value": decimal_text(value), "@type": "xsd:decimal"}
    if isinstance(value, str):
        return {"@value": value}
    return json_literal(value)


def _is_int(value: Any) -> bool:
    """A JSON integer pyld writes exactly (it turns |n| >= 1e21 into a double)."""
    return type(value) is int and -(2**63) <= value < 2**64


def _is_int_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_int(v) for v in value)


def _put_list(out: dict[str, Any], term: str, iri: str, value: Any, item: Any = None) -> None:
    """A list-valued key: an rdf:List when it is a list, else an rdf:JSON fallback."""
    if isinstance(value, list) and (item is None or all(item(v) for v in value)):
        out[term] = value
    else:
        out[iri] = json_literal(value)


def _put_named_list(out: dict[str, Any], term: str, iri: str, value: Any) -> None:
    """A list of named configurations (codecs, storage transformers), or an rdf:JSON fallback."""
    if isinstance(value, list):
        out[term] = [named_configuration(v) for v in value]
    else:
        out[iri] = json_literal(value)


def named_configuration(value: Any) -> Any:
    """A v3 extension point value: ``"name"`` or ``{"name", "configuration", ...}``."""
    if isinstance(value, str):
        return {"name": value, "short_form": {"@value": "true", "@type": "xsd:boolean"}}
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        out: dict[str, Any] = {"name": value["name"]}
        if "configuration" in value:
            out["configuration"] = json_text(value["configuration"])
        rest = {k: v for k, v in value.items() if k not in ("name", "configuration")}
        if rest:
            out["extra_fields"] = json_text(rest)
        return out
    return json_literal(value)


def v2_codec(value: Any, label: str) -> Any:
    """A v2 codec object ``{"id": ..., **config}`` as a named configuration node."""
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        rest = {k: v for k, v in value.items() if k != "id"}
        return {"@id": label, "id": value["id"], "configuration": json_text(rest)}
    return json_literal(value)


# ---------------------------------------------------------- JSON-LD nodes
def _lift(attrs: dict[str, Any] | None, out: dict[str, Any]) -> None:
    """Copy common CF/ACDD attributes to well-known properties for search."""
    if not attrs:
        return
    for key in LIFTED_ATTRIBUTES:
        value = attrs.get(key)
        if isinstance(value, str) and value.strip():
            out[key] = value
    keywords = attrs.get("keywords")
    if isinstance(keywords, str):
        words = [w.strip() for w in keywords.replace(";", ",").split(",")]
    elif isinstance(keywords, list):
        words = [w.strip() for w in keywords if isinstance(w, str)]
    else:
        words = []
    words = [w for w in dict.fromkeys(words) if w]
    if words:
        out["keywords"] = words


def _shape_type_fill(meta: dict[str, Any], out: dict[str, Any], type_key: str) -> None:
    """The keys both versions share: shape, the data type (``data_type``/``dtype``), fill_value.

    Every key may be missing: invalid documents are catalogued as they are
    (validation flags them), and an absent key simply has no triple.
    """
    if "shape" in meta:
        _put_list(out, "shape", "zarr:shape", meta["shape"], _is_int)
    if type_key in meta:
        dt = meta[type_key]
        out[type_key] = dt if isinstance(dt, str) else json_literal(dt)
    if "fill_value" in meta:
        out["fill_value"] = scalar(meta["fill_value"])


def _v3_array(meta: dict[str, Any], out: dict[str, Any]) -> None:
    _shape_type_fill(meta, out, "data_type")
    if "chunk_grid" in meta:
        grid = meta["chunk_grid"]
        out["chunk_grid"] = named_configuration(grid)
        if isinstance(grid, dict) and grid.get("name") == "regular":
            conf = grid.get("configuration")
            shape = conf.get("chunk_shape") if isinstance(conf, dict) else None
            if _is_int_list(shape):
                out["chunk_shape"] = shape
    if "chunk_key_encoding" in meta:
        out["chunk_key_encoding"] = named_configuration(meta["chunk_key_encoding"])
    if "codecs" in meta:
        _put_named_list(out, "codecs", "zarr:codecs", meta["codecs"])
    if "storage_transformers" in meta:
        _put_named_list(out, "storage_transformers", "zarr:storageTransformers", meta["storage_transformers"])
    if "dimension_names" in meta:
        names = meta["dimension_names"]
        if isinstance(names, list):
            out["dimension_names"] = [n if isinstance(n, str) else json_literal(n) for n in names]
        else:
            out["zarr:dimensionNames"] = json_literal(names)


def _v2_array(meta: dict[str, Any], attrs: dict[str, Any] | None, out: dict[str, Any], label: str) -> None:
    _shape_type_fill(meta, out, "dtype")
    if "chunks" in meta:
        _put_list(out, "chunks", "zarr:chunkShape", meta["chunks"], _is_int)
    codec_refs = []
    if "filters" in meta:
        filters = meta["filters"]
        if isinstance(filters, list):
            out["filters"] = [v2_codec(f, f"_:{label}-filter{i}") for i, f in enumerate(filters)]
            codec_refs += [{"@id": f["@id"]} for f in out["filters"] if "@id" in f]
        else:
            out["zarr:filters"] = json_literal(filters)
    if "compressor" in meta:
        compressor = meta["compressor"]
        if not isinstance(compressor, dict):
            out["zarr:compressor"] = json_literal(compressor)
        else:
            out["compressor"] = v2_codec(compressor, f"_:{label}-compressor")
            if "@id" in out["compressor"]:
                codec_refs.append({"@id": out["compressor"]["@id"]})
    for key, term in (("order", "order"), ("dimension_separator", "dimension_separator")):
        if key in meta:
            value = meta[key]
            out[term] = value if isinstance(value, str) else json_literal(value)
    # Derived, for search and chunk resolution: the v2 chunk key encoding and codec chain.
    separator = meta.get("dimension_separator", ".")
    if separator in (".", "/"):
        out["chunk_key_encoding"] = {"name": "v2", "configuration": json_text({"separator": separator})}
    out["codecs"] = codec_refs
    dims = (attrs or {}).get("_ARRAY_DIMENSIONS")
    if isinstance(dims, list) and all(isinstance(d, str) for d in dims):
        out["dimension_names"] = dims


def node_jsonld(
    node: Node,
    iri: str,
    *,
    member_iris: Iterable[str] = (),
    dependent_iris: dict[str, str] | None = None,
    primary_iri: str | None = None,
    is_root: bool = False,
    label: str = "n",
) -> dict[str, Any]:
    """The JSON-LD node object of one node, in compact form against the catalogue context.

    ``label`` prefixes the node's explicit blank node labels, so node objects
    converted together in one document never share a blank node.
    """
    meta = node.metadata
    out: dict[str, Any] = {"@id": iri, "node_type": node.kind}
    types = []
    if is_root:
        types.append("Dataset")
    if primary_iri is not None:
        types.append("DependentArray")
        out["primary_array"] = primary_iri
    if types:
        out["@type"] = types
    out["path"] = node.path
    if node.implicit:
        out["implicit"] = True
    zf = meta.get("zarr_format")
    out["zarr_format"] = zf if type(zf) is int else json_literal(zf)
    if node.kind == "array":
        if node.zarr_format == 3:
            _v3_array(meta, out)
        else:
            _v2_array(meta, node.attributes, out, label)
    known = V3_KEYS if node.zarr_format == 3 else (V2_ARRAY_KEYS if node.kind == "array" else V2_GROUP_KEYS)
    extra = {k: v for k, v in meta.items() if k not in known}
    if extra:
        out["extra_fields"] = json_text(extra)
    if node.zarr_format == 3:
        if "attributes" in meta:
            attrs = meta["attributes"]
            out["attributes"] = json_text(attrs) if isinstance(attrs, dict) else json_literal(attrs)
    elif ".zattrs" in node.documents:
        out["attributes"] = json_text(node.documents[".zattrs"])
    _lift(node.attributes, out)
    members = list(member_iris)
    if members:
        out["member"] = members
    if dependent_iris:
        out["dependent_arrays"] = dependent_iris
    return out


# ------------------------------------------------------------- pyld → rdflib
def _term(obj: dict[str, str], bnodes: dict[str, BNode], cache: dict[tuple, RDFNode]) -> RDFNode:
    kind = obj["type"]
    if kind == "blank node":
        label = obj["value"]
        if label not in bnodes:
            bnodes[label] = BNode()
        return bnodes[label]
    key = (kind, obj["value"], obj.get("datatype"), obj.get("language"))
    term = cache.get(key)
    if term is not None:
        return term
    if kind == "IRI":
        term = URIRef(obj["value"])
    elif obj.get("language"):
        term = Literal(obj["value"], lang=obj["language"], normalize=False)
    elif key[2] is None or key[2] == XSD_STRING:
        term = Literal(obj["value"], normalize=False)
    else:
        term = Literal(obj["value"], datatype=URIRef(key[2]), normalize=False)
    cache[key] = term
    return term


def jsonld_triples(document: dict[str, Any]) -> list[Triple]:
    """Run a JSON-LD document through pyld's toRDF and return rdflib triples.

    Blank nodes get fresh rdflib labels, so triples of separately converted
    documents never share a blank node by accident.
    """
    from pyld import jsonld  # the reference path: imported when a batch needs it (~0.14 s)

    dataset = jsonld.to_rdf(document, {"documentLoader": document_loader})
    bnodes: dict[str, BNode] = {}
    cache: dict[tuple, RDFNode] = {}
    triples: list[Triple] = []
    for graph in dataset.values():
        for t in graph:
            triples.append(
                (_term(t["subject"], bnodes, cache), _term(t["predicate"], bnodes, cache), _term(t["object"], bnodes, cache))
            )
    return triples


#: Nodes converted per call: one pyld call processes the context once, so batching
#: saves most of pyld's per-document cost; the bound keeps memory flat.
BATCH_NODES = 256


def nodes_triples(nodes: list[dict[str, Any]]) -> list[Triple]:
    """The triples of compact node objects: the fast path, or pyld for a batch it refuses."""
    if os.environ.get(JSONLD_ENV) != "pyld":
        try:
            return fast_jsonld.node_triples(nodes)
        except fast_jsonld.Unsupported as refusal:
            log.debug("JSON-LD fast path refused a batch (%s): pyld converts it", refusal)
    return jsonld_triples({"@context": CATALOGUE_CONTEXT_IRI, "@graph": nodes})


def _node_document(h: Hierarchy, node: Node, members: Iterable[str], index: int = 0) -> dict[str, Any]:
    return node_jsonld(
        node,
        h.iri(node.path),
        member_iris=[h.iri(p) for p in members],
        dependent_iris={h.nodes[p].name: h.iri(p) for p in node.dependents if p in h.nodes} or None,
        primary_iri=h.iri(node.primary) if node.primary is not None else None,
        is_root=node.path == "",
        label=f"n{index}",
    )


def node_triples(h: Hierarchy, node: Node, members: Iterable[str] | None = None) -> list[Triple]:
    """The triples describing one node of a hierarchy."""
    return nodes_triples([_node_document(h, node, node.members if members is None else members)])


def hierarchy_triples(h: Hierarchy, member_filter: set[str] | None = None, paths: set[str] | None = None) -> Iterator[Triple]:
    """All triples of a hierarchy (or of the nodes at ``paths`` only), converted in batches of nodes.

    ``member_filter``, when given, restricts membership links to those child
    paths (the harvester passes the children that end up catalogued).
    """
    batch: list[dict[str, Any]] = []
    for index, node in enumerate(h.nodes.values()):
        if paths is not None and node.path not in paths:
            continue
        members = node.members if member_filter is None else [m for m in node.members if m in member_filter]
        batch.append(_node_document(h, node, members, index))
        if len(batch) >= BATCH_NODES:
            yield from nodes_triples(batch)
            batch = []
    if batch:
        yield from nodes_triples(batch)
