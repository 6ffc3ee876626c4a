"""Rebuild a node's metadata documents from the graph alone.

The inverse of ``convert``: every property written for a metadata key is
decoded back to that key's JSON value; derived and lifted properties are
ignored. The result equals the harvested documents as JSON values, including
key presence, nulls, integers versus floats, NaN and Infinity, nested
attributes and unicode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rdflib import RDF, XSD, Graph, Literal, URIRef
from rdflib.term import Node as RDFNode

from catalogue.errors import CatalogueError, UsageError
from catalogue.model.nodes import (
    V2_ARRAY,
    V2_ATTRS,
    V2_GROUP,
    V3_DOCUMENT,
    Hierarchy,
    Location,
    Node,
)
from catalogue.rdf.vocabulary import ZARR


class NodeNotFound(UsageError):
    """No catalogued node has that IRI (a usage error: exit code 2)."""


class GraphInconsistent(CatalogueError):
    """The triples of a node cannot be decoded (several values for one key, a broken list)."""


def decode_literal(lit: Literal) -> Any:
    """The JSON value a literal written by ``convert`` stands for."""
    lexical = str(lit)
    dt = lit.datatype
    if dt == RDF.JSON:
        return json.loads(lexical)
    if dt == XSD.integer:
        return int(lexical)
    if dt in (XSD.decimal, XSD.double, XSD.float):
        return float(lexical)
    if dt == XSD.boolean:
        return lexical in ("true", "1")
    return lexical


class _Decoder:
    def __init__(self, graph: Graph) -> None:
        self.g = graph

    def one(self, subject: RDFNode, prop: URIRef) -> RDFNode | None:
        values = list(self.g.objects(subject, prop))
        if len(values) > 1:
            raise GraphInconsistent(f"{subject}: {len(values)} values for {prop}, expected one")
        return values[0] if values else None

    def items(self, head: RDFNode) -> list[RDFNode]:
        out: list[RDFNode] = []
        seen = set()
        while head != RDF.nil:
            if head in seen:
                raise GraphInconsistent(f"cyclic rdf:List at {head}")
            seen.add(head)
            first = self.one(head, RDF.first)
            if first is None:
                raise GraphInconsistent(f"broken rdf:List at {head}")
            out.append(first)
            head = self.one(head, RDF.rest)
            if head is None:
                raise GraphInconsistent("rdf:List without rdf:nil")
        return out

    def value(self, node: RDFNode, item: Callable[[RDFNode], Any] | None = None) -> Any:
        """A scalar literal, an rdf:JSON value, or an rdf:List (items via ``item``)."""
        if isinstance(node, Literal):
            return decode_literal(node)
        if node == RDF.nil or self.one(node, RDF.first) is not None:
            decode = item or self.value
            return [decode(i) for i in self.items(node)]
        raise GraphInconsistent(f"cannot decode {node} as a JSON value")

    def named(self, node: RDFNode) -> Any:
        """A v3 named configuration (or a literal fallback)."""
        if isinstance(node, Literal):
            return decode_literal(node)
        name = self.one(node, ZARR.name)
        if name is None:
            return self.value(node)
        short = self.one(node, ZARR.shortForm)
        if short is not None and decode_literal(short) is True:
            return str(name)
        out: dict[str, Any] = {"name": str(name)}
        conf = self.one(node, ZARR.configuration)
        if conf is not None:
            out["configuration"] = self.value(conf)
        extra = self.one(node, ZARR.extraFields)
        if extra is not None:
            out.update(self.value(extra))
        return out

    def v2_codec(self, node: RDFNode) -> Any:
        """A v2 codec object ``{"id": ..., **configuration}`` (or a literal fallback)."""
        if isinstance(node, Literal):
            return decode_literal(node)
        out: dict[str, Any] = {"id": str(self.one(node, ZARR.name))}
        conf = self.one(node, ZARR.configuration)
        if conf is not None:
            out.update(self.value(conf))
        return out

    def named_list(self, node: RDFNode, item: Callable[[RDFNode], Any]) -> Any:
        if isinstance(node, Literal):
            return decode_literal(node)
        return [item(i) for i in self.items(node)]


def _fill(decoder: _Decoder, subject: URIRef, out: dict[str, Any], spec: list[tuple[str, URIRef, Callable[[RDFNode], Any]]]) -> None:
    for key, prop, decode in spec:
        node = decoder.one(subject, prop)
        if node is not None:
            out[key] = decode(node)


def node_kind(graph: Graph, iri: str) -> str:
    types = set(graph.objects(URIRef(iri), RDF.type))
    if ZARR.Array in types:
        return "array"
    if ZARR.Group in types:
        return "group"
    raise NodeNotFound(f"no node {iri} in the catalogue")


def rebuild_documents(graph: Graph, iri: str) -> dict[str, Any]:
    """The metadata documents of node ``iri``: ``{"zarr.json": ...}`` or v2 ``.zarray``/``.zgroup`` + ``.zattrs``."""
    subject = URIRef(iri)
    kind = node_kind(graph, iri)
    d = _Decoder(graph)
    zf_node = d.one(subject, ZARR.zarrFormat)
    zarr_format = d.value(zf_node) if zf_node is not None else None
    value = d.value
    named = d.named

    def named_list(n: RDFNode) -> Any:
        return d.named_list(n, named)

    def v2_list(n: RDFNode) -> Any:
        return d.named_list(n, d.v2_codec)

    doc: dict[str, Any] = {}
    if zarr_format is not None:
        doc["zarr_format"] = zarr_format
    attrs_node = d.one(subject, ZARR.attributes)
    extra_node = d.one(subject, ZARR.extraFields)
    if zarr_format in (2, "2"):  # "2" as a string: let through by the gate, kept as written
        if kind == "array":
            _fill(d, subject, doc, [
                ("shape", ZARR.shape, value),
                ("chunks", ZARR.chunkShape, value),
                ("dtype", ZARR.dataType, value),
                ("compressor", ZARR.compressor, d.v2_codec),
                ("fill_value", ZARR.fillValue, value),
                ("order", ZARR.order, value),
                ("filters", ZARR.filters, v2_list),
                ("dimension_separator", ZARR.dimensionSeparator, value),
            ])
        if extra_node is not None:
            doc.update(value(extra_node))
        docs = {V2_ARRAY if kind == "array" else V2_GROUP: doc}
        if attrs_node is not None:
            docs[V2_ATTRS] = value(attrs_node)
        return docs
    doc["node_type"] = kind
    if kind == "array":
        _fill(d, subject, doc, [
            ("shape", ZARR.shape, value),
            ("data_type", ZARR.dataType, value),
            ("chunk_grid", ZARR.chunkGrid, named),
            ("chunk_key_encoding", ZARR.chunkKeyEncoding, named),
            ("fill_value", ZARR.fillValue, value),
            ("codecs", ZARR.codecs, named_list),
        ])
    if attrs_node is not None:
        doc["attributes"] = value(attrs_node)
    if kind == "array":
        _fill(d, subject, doc, [
            ("storage_transformers", ZARR.storageTransformers, named_list),
            ("dimension_names", ZARR.dimensionNames, value),
        ])
    if extra_node is not None:
        doc.update(value(extra_node))
    return {V3_DOCUMENT: doc}


def metadata_output(documents: dict[str, Any]) -> dict[str, Any]:
    """What ``catalogue metadata`` prints: the zarr.json for v3, the documents map for v2."""
    if V3_DOCUMENT in documents:
        return documents[V3_DOCUMENT]
    return documents


def rebuild_hierarchy(graph: Graph, url: str) -> Hierarchy:
    """The hierarchy catalogued in ``graph`` (rooted at ``url``), rebuilt from triples alone.

    Documents are rebuilt exactly; each gets the location it has in a store
    laid out file by file (``<node IRI>/zarr.json`` ...). Dependent arrays are
    not read from their own triples but expanded again from their primary's
    attributes, as the harvester does, so validation sees the same nodes.
    """
    from catalogue.model.dependent import expand_dependent_arrays

    h = Hierarchy(url=url, zarr_format=3)
    members: list[tuple[str, str]] = []
    for subject in set(graph.subjects(ZARR.path, None)):
        if not isinstance(subject, URIRef) or (subject, RDF.type, ZARR.DependentArray) in graph:
            continue
        iri = str(subject)
        path = str(graph.value(subject, ZARR.path))
        docs = rebuild_documents(graph, iri)
        zarr_format = 3 if V3_DOCUMENT in docs else 2
        locations = {name: Location(f"{iri}/{name}") for name in docs}
        implicit = (subject, ZARR.implicit, Literal(True)) in graph
        h.nodes[path] = Node(path, node_kind(graph, iri), zarr_format, docs, locations,  # type: ignore[arg-type]
                             implicit=implicit)
        members += [(path, str(m)) for m in graph.objects(subject, ZARR.member)]
    paths = {h.iri(p): p for p in h.nodes}
    for parent, member_iri in members:
        if member_iri in paths:
            h.nodes[parent].members.append(paths[member_iri])
    if h.root is not None:
        h.zarr_format = h.root.zarr_format
    expand_dependent_arrays(h)
    for node in h.nodes.values():
        node.members.sort()
    return h
