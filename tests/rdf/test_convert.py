"""Conversion metadata → JSON-LD → RDF, and back: the traps it must beat.

Each known trap of plain JSON-LD processing gets a test showing the trap is
real (so the test would notice if a pyld upgrade changed the ground) and a
test showing the catalogue's conversion survives it.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyld import jsonld
from rdflib import RDF, XSD, Graph, Literal, URIRef

from catalogue.model.nodes import (
    V2_ARRAY,
    V2_ATTRS,
    V2_GROUP,
    V3_DOCUMENT,
    Hierarchy,
    Location,
    Node,
)
from catalogue.rdf.contexts import ILIAD_CONTEXT_IRI, document_loader
from catalogue.rdf.convert import hierarchy_triples, node_jsonld
from catalogue.rdf.iliad import zarray_triples
from catalogue.rdf.rebuild import rebuild_documents
from catalogue.rdf.vocabulary import ZARR
from tests.support.jsonvalues import assert_json_equal

ROOT = "file:///data/store.zarr"

V3_ARRAY = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [100, 100],
    "data_type": "float64",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "NaN",
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
    "attributes": {"units": "K", "scale_factor": 1.0, "nested": [[1, [2, None]], {"a": None}]},
    "dimension_names": ["y", None],
}

V2_ZARRAY = {
    "zarr_format": 2,
    "shape": [10000, 10000],
    "chunks": [1000, 1000],
    "dtype": "<f8",
    "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
    "fill_value": "NaN",
    "order": "C",
    "filters": [{"id": "delta", "dtype": "<f8", "astype": "<f4"}],
}


def _v3(doc: dict, path: str = "a") -> Node:
    kind = doc.get("node_type", "array")
    return Node(path=path, kind=kind, zarr_format=3, documents={V3_DOCUMENT: doc}, locations={V3_DOCUMENT: Location("x")})


def _v2(doc: dict, attrs: dict | None = None, path: str = "a") -> Node:
    main = V2_ARRAY if "shape" in doc else V2_GROUP
    docs = {main: doc}
    if attrs is not None:
        docs[V2_ATTRS] = attrs
    return Node(path=path, kind="array" if main == V2_ARRAY else "group", zarr_format=2, documents=docs,
                locations={main: Location("x")})


def roundtrip(node: Node) -> tuple[dict, Graph]:
    h = Hierarchy(url=ROOT, zarr_format=node.zarr_format, nodes={node.path: node})
    graph = Graph()
    for t in hierarchy_triples(h):
        graph.add(t)
    return rebuild_documents(graph, h.iri(node.path)), graph


def list_items(graph: Graph, head) -> list:
    return list(graph.items(head))


# ------------------------------------------------------------------ traps
def test_trap_iliad_context_turns_shape_into_a_set():
    triples = zarray_triples(V2_ZARRAY, ROOT + "/a", verbatim=True)
    shape = [o for _, p, o in triples if str(p) == "http:/w3id.org/iliad/zarr/shape"]
    assert shape == [Literal(10000)] or len(set(shape)) == 1  # [10000, 10000] → one value, order gone


def test_catalogue_context_keeps_shape_order_and_duplicates():
    _, graph = roundtrip(_v2(V2_ZARRAY))
    head = graph.value(URIRef(ROOT + "/a"), ZARR.shape)
    assert [int(x) for x in list_items(graph, head)] == [10000, 10000]
    assert all(x.datatype == XSD.integer for x in list_items(graph, head))


def test_trap_unmapped_keys_vanish_on_expansion():
    doc = {"@context": ILIAD_CONTEXT_IRI, "@id": ROOT + "/a", **V2_ZARRAY, "dimension_separator": "/"}
    nquads = jsonld.to_rdf(doc, {"format": "application/n-quads", "documentLoader": document_loader})
    assert "dimension_separator" not in nquads and "astype" not in nquads


def test_unknown_keys_are_kept_as_extra_fields():
    doc = copy.deepcopy(V3_ARRAY)
    doc["my_extension"] = {"must_understand": False, "x": [1, 2.5]}
    doc["codecs"][1]["must_understand"] = False
    rebuilt, graph = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)
    assert graph.value(URIRef(ROOT + "/a"), ZARR.extraFields).datatype == RDF.JSON


def test_trap_pyld_json_literals_are_canonicalised():
    """pyld's @json (JCS) rewrites 1.0 as 1 and sorts keys: unusable for lossless attributes."""
    ctx = {"a": {"@id": "http://x/a", "@type": "@json"}}
    nquads = jsonld.to_rdf({"@context": ctx, "@id": "http://x/s", "a": {"z": 1.0, "b": 2}}, {"format": "application/n-quads"})
    assert '{\\"b\\":2,\\"z\\":1}' in nquads


def test_trap_pyld_doubles_lose_precision():
    ctx = {"v": {"@id": "http://x/v", "@type": "http://www.w3.org/2001/XMLSchema#double"}}
    nquads = jsonld.to_rdf({"@context": ctx, "@id": "http://x/s", "v": 0.30000000000000004}, {"format": "application/n-quads"})
    value = nquads.split('"')[1]
    assert float(value) != 0.30000000000000004


def test_exported_jsonld_keeps_json_nulls_and_nested_lists():
    """Reported pyld trap: framing drops nulls and flattens nested lists in @json values.

    pyld 3.3 no longer shows it in our probes, and the catalogue never frames:
    export compacts, and attributes are rdf:JSON literals whose text is ours.
    This pins the guarantee that matters: exported JSON-LD keeps them.
    """
    from catalogue.rdf.export import compact_jsonld

    _, graph = roundtrip(_v3(V3_ARRAY))
    doc = compact_jsonld((s, p, o, URIRef(ROOT)) for s, p, o in graph)
    nodes = doc.get("@graph", [doc])
    array = next(n for n in nodes if n.get("@id") == ROOT + "/a")
    assert_json_equal(array["attributes"], V3_ARRAY["attributes"])
    assert array["shape"] == ["100", "100"] and array["@type"] == "Array"


def test_attributes_survive_exactly():
    rebuilt, graph = roundtrip(_v3(V3_ARRAY))
    assert_json_equal(rebuilt[V3_DOCUMENT], V3_ARRAY)
    lit = graph.value(URIRef(ROOT + "/a"), ZARR.attributes)
    assert lit.datatype == RDF.JSON and '"scale_factor":1.0' in str(lit)


def test_fill_value_float_keeps_all_digits():
    doc = dict(V3_ARRAY, fill_value=0.30000000000000004)
    rebuilt, graph = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)
    lit = graph.value(URIRef(ROOT + "/a"), ZARR.fillValue)
    assert lit.datatype == XSD.decimal and str(lit) == "0.30000000000000004"


@pytest.mark.parametrize("fill", [0, -1, 2**64 - 1, 10**30, 1.0, -0.0, 1e-300, 1e300, True, False, "NaN", "Infinity",
                                  "-Infinity", "0x7fc00000", "AAAAAICHw8A=", [1.0, 2.0], ["NaN", "-Infinity"], None])
def test_fill_values_round_trip(fill):
    doc = dict(V3_ARRAY, fill_value=fill)
    rebuilt, _ = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)


def test_nulls_in_v2_arrays_are_kept():
    doc = dict(V2_ZARRAY, compressor=None, filters=None, fill_value=None)
    rebuilt, graph = roundtrip(_v2(doc, {}))
    assert_json_equal(rebuilt, {V2_ARRAY: doc, V2_ATTRS: {}})
    assert graph.value(URIRef(ROOT + "/a"), ZARR.compressor) == Literal("null", datatype=RDF.JSON)


def test_v2_codecs_are_queryable_named_configurations():
    _, graph = roundtrip(_v2(V2_ZARRAY, {"_ARRAY_DIMENSIONS": ["y", "x"]}))
    node = URIRef(ROOT + "/a")
    names = [str(graph.value(c, ZARR.name)) for c in graph.items(graph.value(node, ZARR.codecs))]
    assert names == ["delta", "blosc"]
    assert [str(x) for x in graph.items(graph.value(node, ZARR.dimensionNames))] == ["y", "x"]
    cke = graph.value(node, ZARR.chunkKeyEncoding)
    assert str(graph.value(cke, ZARR.name)) == "v2"


def test_missing_zattrs_is_not_invented():
    rebuilt, _ = roundtrip(_v2(V2_ZARRAY))
    assert set(rebuilt) == {V2_ARRAY}


def test_short_form_codecs_and_null_storage_transformers():
    doc = dict(V3_ARRAY, codecs=["bytes", {"name": "gzip"}, {"name": "crc32c", "configuration": {}}],
               storage_transformers=None, data_type="|u1")
    rebuilt, _ = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)


def test_wrongly_typed_values_still_round_trip():
    """The converter is total: values of unexpected types fall back to rdf:JSON."""
    doc = dict(V3_ARRAY, chunk_key_encoding=5, dimension_names="xy", codecs=[1, "x"], data_type={"name": "numpy.datetime64",
               "configuration": {"unit": "s"}})
    rebuilt, _ = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)


def test_cf_and_acdd_attributes_are_lifted():
    attrs = {"title": "T", "summary": "S", "keywords": "a, b; c", "institution": "I", "long_name": "L",
             "standard_name": "air_temperature", "units": "K"}
    _, graph = roundtrip(_v2({"zarr_format": 2}, attrs, path=""))
    q = """SELECT ?t ?d ?p ?l ?sn ?u WHERE { ?n dct:title ?t ; dct:description ?d ; dct:publisher ?p ;
           rdfs:label ?l ; zarr:standardName ?sn ; zarr:units ?u }"""
    from catalogue.rdf.vocabulary import PREFIXES

    rows = list(graph.query(q, initNs=PREFIXES))
    assert [tuple(map(str, r)) for r in rows] == [("T", "S", "I", "L", "air_temperature", "K")]
    keywords = sorted(str(k) for k in graph.objects(URIRef(ROOT), URIRef("http://www.w3.org/ns/dcat#keyword")))
    assert keywords == ["a", "b", "c"]
    assert (URIRef(ROOT), RDF.type, URIRef("http://www.w3.org/ns/dcat#Dataset")) in graph


def test_jsonld_document_is_compact_zarr_metadata():
    """The JSON-LD step really is the metadata document read through the catalogue context."""
    doc = node_jsonld(_v3(V3_ARRAY), ROOT + "/a")
    assert doc["shape"] == [100, 100] and doc["node_type"] == "array" and doc["chunk_shape"] == [10, 10]


# ------------------------------------------------------- property-based
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attrs=st.dictionaries(st.text(max_size=10), json_values, max_size=6), fill=json_values,
       extra=st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in V3_ARRAY), json_values, max_size=3),
       config=json_values)
def test_any_json_round_trips(attrs, fill, extra, config):
    doc = dict(V3_ARRAY, attributes=attrs, fill_value=fill, **extra)
    doc["codecs"] = [{"name": "x", "configuration": config}]
    rebuilt, _ = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)


@settings(max_examples=60, deadline=None)
@given(attrs=st.dictionaries(st.text(max_size=10), json_values, max_size=6), fill=json_values)
def test_any_v2_json_round_trips(attrs, fill):
    doc = dict(V2_ZARRAY, fill_value=fill)
    rebuilt, _ = roundtrip(_v2(doc, attrs))
    assert_json_equal(rebuilt, {V2_ARRAY: doc, V2_ATTRS: attrs})


_V3_KEYS = sorted(set(V3_ARRAY) - {"zarr_format", "node_type"})
_V2_KEYS = sorted(set(V2_ZARRAY) - {"zarr_format"} | {"dimension_separator"})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drop=st.sets(st.sampled_from(_V3_KEYS)), replace=st.dictionaries(st.sampled_from(_V3_KEYS), json_values, max_size=3))
def test_invalid_v3_documents_round_trip(drop, replace):
    """Invalid arrays are catalogued as they are (validation flags them): missing keys, any value types."""
    doc = {k: v for k, v in V3_ARRAY.items() if k not in drop}
    doc.update(replace)
    rebuilt, _ = roundtrip(_v3(doc))
    assert_json_equal(rebuilt[V3_DOCUMENT], doc)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drop=st.sets(st.sampled_from(_V2_KEYS)), replace=st.dictionaries(st.sampled_from(_V2_KEYS), json_values, max_size=3))
def test_invalid_v2_documents_round_trip(drop, replace):
    doc = {k: v for k, v in V2_ZARRAY.items() if k not in drop}
    doc.update(replace)
    node = Node(path="a", kind="array", zarr_format=2, documents={V2_ARRAY: doc}, locations={V2_ARRAY: Location("x")})
    rebuilt, _ = roundtrip(node)
    assert_json_equal(rebuilt, {V2_ARRAY: doc})


def test_json_literal_texts_parse_back():
    _, graph = roundtrip(_v3(V3_ARRAY))
    for lit in graph.objects(None, None):
        if isinstance(lit, Literal) and lit.datatype == RDF.JSON:
            json.loads(str(lit))
