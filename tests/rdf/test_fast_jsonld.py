"""The fast JSON-LD → RDF path gives exactly pyld's triples (as graphs: blank nodes aside).

Evidence: (a) every store the test-suite builds, read with ``load_hierarchy``, converts
to the same graph (and the same number of triples) both ways; (b) so do generated
hierarchies with arbitrary metadata, and generated node objects that use every
construct of the catalogue context with any value (Hypothesis); (c) what the fast path
refuses (``Unsupported``) is converted by pyld, giving pyld's answer, and
``CATALOGUE_JSONLD=pyld`` forces pyld.
"""

from __future__ import annotations

import copy
import itertools
import os
import pathlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.compare import graph_diff, isomorphic, to_isomorphic

from catalogue.errors import CatalogueError
from catalogue.harvest import load_hierarchy
from catalogue.model.nodes import (
    V2_ARRAY,
    V2_ATTRS,
    V2_GROUP,
    V3_DOCUMENT,
    Hierarchy,
    Location,
    Node,
)
from catalogue.rdf import convert, fast_jsonld
from catalogue.rdf.contexts import CATALOGUE_CONTEXT_IRI, catalogue_context
from tests.support import cf_stores, convention_stores, stores
from tests.support.measurements import report_measurement
from tests.support.paths import EXAMPLES, SEED_EXAMPLES

Triples = list[tuple[Any, Any, Any]]


# ------------------------------------------------------------------ helpers
@contextmanager
def reference_path() -> Iterator[None]:
    """pyld only, through ``CATALOGUE_JSONLD=pyld`` (the fast path must not even be called)."""
    refuse = mock.patch.object(fast_jsonld, "node_triples", side_effect=AssertionError("fast path called"))
    with mock.patch.dict(os.environ, {convert.JSONLD_ENV: "pyld"}), refuse:
        yield


@contextmanager
def fast_path_only() -> Iterator[None]:
    """The default path, failing if any batch falls back to pyld."""
    with mock.patch.dict(os.environ), mock.patch.object(convert, "jsonld_triples", side_effect=AssertionError("fell back")):
        os.environ.pop(convert.JSONLD_ENV, None)
        yield


def _comparable(term: Any) -> Any:
    """The term, or for text with lone surrogates (rdflib.compare cannot hash them) a stand-in."""
    text = str(term)
    if isinstance(term, BNode) or not any("\ud800" <= c <= "\udfff" for c in text):
        return term
    escaped = "surrogates:" + text.encode("utf-8", "surrogatepass").hex()
    if isinstance(term, URIRef):
        return URIRef(escaped)
    return Literal(escaped, datatype=term.datatype, lang=term.language, normalize=False)


def pieces(triples: Triples) -> dict[Any, Graph]:
    """The graph cut into the closures of its IRI subjects (their blank nodes, transitively).

    rdflib.compare is slow on one graph with thousands of look-alike blank nodes (the
    lists of a big hierarchy); compared closure by closure, the graphs are isomorphic
    exactly when every closure is, as no blank node may belong to two closures.
    """
    by_subject: dict[Any, list] = {}
    for t in triples:
        by_subject.setdefault(t[0], []).append(tuple(_comparable(x) for x in t))
    out: dict[Any, Graph] = {}
    owner: dict[BNode, Any] = {}
    for root in [s for s in by_subject if not isinstance(s, BNode)]:
        g = out[root] = Graph()
        todo, reached = [root], {root}
        while todo:
            for t in by_subject.get(todo.pop(), ()):
                g.add(t)
                if isinstance(t[2], BNode) and t[2] not in reached:
                    reached.add(t[2])
                    assert owner.setdefault(t[2], root) == root, f"{t[2]} in two closures"
                    todo.append(t[2])
    out[None] = Graph()  # blank nodes no IRI reaches
    for t in (t for s, ts in by_subject.items() if isinstance(s, BNode) and s not in owner for t in ts):
        out[None].add(t)
    return out


def assert_same_graph(fast: Triples, ref: Triples, *, count: bool = True) -> None:
    if count:  # pyld never repeats a triple for catalogue node objects; neither may we
        assert len(fast) == len(ref), (len(fast), len(ref))
    p_fast, p_ref = pieces(fast), pieces(ref)
    assert p_fast.keys() == p_ref.keys()
    for root, g_fast in p_fast.items():
        g_ref = p_ref[root]
        if not isomorphic(g_fast, g_ref):
            _, only_fast, only_ref = graph_diff(to_isomorphic(g_fast), to_isomorphic(g_ref))
            pytest.fail(f"graphs of {root} differ\nonly fast:\n{sorted(only_fast)[:10]}\nonly pyld:\n{sorted(only_ref)[:10]}")


def compare_hierarchy(h: Hierarchy, *, per_node: bool = True) -> int:
    """Whole hierarchy, a subset as the incremental writer asks, and (``per_node``) every node alone."""
    paths, catalogued = set(list(h.nodes)[::2]), set(list(h.nodes)[1::2])
    conversions = [lambda: list(convert.hierarchy_triples(h)),
                   lambda: list(convert.hierarchy_triples(h, member_filter=catalogued, paths=paths))]
    conversions += [lambda n=n: convert.node_triples(h, n) for n in h.nodes.values()] if per_node else []
    counts = []
    for conversion in conversions:
        with reference_path():
            ref = conversion()
        with fast_path_only():
            assert_same_graph(conversion(), ref)
        counts.append(len(ref))
    return counts[0]


# ------------------------------------------------------- (a) every test store
def _convention_stores(root: pathlib.Path) -> list[pathlib.Path]:
    cs = convention_stores
    return [build(root) for build in (cs.build_utm, cs.build_pyramid, cs.build_eopf, cs.build_acdd, cs.build_plain,
                                      cs.build_absurd_transform, cs.build_bad_crs, cs.build_lat95)]


def _big_stores(root: pathlib.Path) -> list[pathlib.Path]:
    v2 = stores.big_hierarchy(root / "v2", 40, 4, zarr_format=2)
    stores.add_coordinates(v2)
    return [v2, stores.big_v3_hierarchy(root / "v3", 40, 4)]


def _ome_images(root: pathlib.Path) -> list[pathlib.Path]:
    from tests.validate.test_ome import _image

    return [_image(root / f"image{v}.ome.zarr", v) for v in ("0.4", "0.5")]


def _reference_sets(root: pathlib.Path) -> list[str]:
    """kerchunk JSON over a NetCDF file written by xarray, as version 1 and version 0."""
    import json

    from tests.harvest.test_references import _netcdf, _references

    _netcdf(root / "air.nc", 0)
    refs = _references(root / "air.nc")
    (root / "air.json").write_text(json.dumps(refs))
    (root / "air_v0.json").write_text(json.dumps(refs["refs"]))
    return [str(root / "air.json"), str(root / "air_v0.json")]


def _lenient_and_implicit(root: pathlib.Path) -> list[pathlib.Path]:
    """NCZarr's extra keys with the format as a string, and an implicit root (v3)."""
    import json

    import zarr

    nczarr = root / "nczarr.zarr"
    (nczarr / "var").mkdir(parents=True)
    (nczarr / ".zgroup").write_text(json.dumps({"zarr_format": "2", "_nczarr_group": {"dims": {"x": 4}}}))
    (nczarr / ".zattrs").write_text(json.dumps({"title": "NCZarr written"}))
    (nczarr / "var" / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f4", "compressor": None, "fill_value": None,
        "filters": None, "order": "C", "_nczarr_array": {"dimrefs": ["/x"]}}))
    implicit = root / "implicit.zarr"
    for child in ("left", "right"):
        group = zarr.open_group(implicit / child, mode="w", zarr_format=3)
        group.attrs["title"] = f"Implicit child {child}"
        group.create_array("values", shape=(3,), dtype="i2")
    return [nczarr, implicit]


def _icechunk_versions(root: pathlib.Path) -> list[str]:
    """Two versions (a branch and a tag) of an Icechunk repository."""
    import icechunk as ic
    import zarr

    path = root / "climate.icechunk"
    repo = ic.Repository.create(ic.local_filesystem_storage(str(path)))
    session = repo.writable_session("main")
    group = zarr.group(store=session.store, attributes={"title": "Climate"})
    group.create_array("temperature", shape=(8, 8), chunks=(4, 4), dtype="f4", fill_value=float("nan"))
    repo.create_tag("v1", session.commit("create"))
    return [f"{path}@main", f"{path}@v1"]


SOURCES = {
    "bad": lambda root: [build(root) for build in stores.BAD_STORES.values()],
    "client_variety": lambda root: list(stores.build_client_variety(root).values()),
    "optional_codecs": lambda root: list(stores.build_optional_codecs(root).values()),
    "cf": lambda root: [build(root, f) for build in cf_stores.CF_STORES.values() for f in (2, 3)],
    "conventions": _convention_stores,
    "big": _big_stores,
    "examples": lambda root: sorted(EXAMPLES.glob("*.zarr")),
    "seed_examples": lambda root: sorted(p for p in SEED_EXAMPLES.iterdir() if p.is_dir()),
    "ome": _ome_images,
    "references": _reference_sets,
    "lenient_implicit": _lenient_and_implicit,
    "icechunk": _icechunk_versions,
}


@pytest.mark.parametrize("group", ["good", *SOURCES])
def test_every_test_store_converts_to_pyld_triples(group, good_stores, tmp_path):
    sources = list(good_stores.values()) if group == "good" else SOURCES[group](tmp_path)
    hierarchies = nodes = triples = 0
    for source in sources:
        try:
            h = load_hierarchy(str(source))
        except CatalogueError:  # a bad store with nothing readable (no document, a symlink loop)
            continue
        if not h.nodes:
            continue
        hierarchies += 1
        nodes += len(h.nodes)
        triples += compare_hierarchy(h, per_node=len(h.nodes) <= 40)  # node alone: the big ones too slow
    assert hierarchies >= {"bad": 3, "seed_examples": 4}.get(group, len(sources))
    report_measurement(f"fast JSON-LD = pyld on {group}: {hierarchies} hierarchies, {nodes} nodes, {triples} triples")


# ------------------------------------------------------- (b) generated metadata
texts = st.text(max_size=8) | st.sampled_from(["\udc80lone", "a\ud800", "", " ", "é", "🙂", '"\\'])
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), texts,
    st.sampled_from([-0.0, 1e300, 5e-324, 1.0, 0.30000000000000004, 10**30, -(10**25), 2**64, 2**63, -(2**63) - 1]),
)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(texts, c, max_size=3), max_leaves=6
)
extras = st.dictionaries(texts, json_values, max_size=2)
ints = st.integers(0, 2**64 - 1) | st.integers(-(2**70), 2**70)
shapes = st.lists(ints, max_size=4) | json_values
dtypes = st.one_of(
    st.sampled_from(["float64", "int8", "uint64", "bool", "complex128", "r16", "string", "<f8", ">i4", "|u1",
                     "|S5", "<U3", "|b1", "<M8[ns]"]),
    st.lists(st.tuples(texts, st.sampled_from(["<i4", "<f8"])).map(list), min_size=1, max_size=3),
    st.fixed_dictionaries({"name": st.just("numpy.datetime64"), "configuration": json_values}),
    json_values,
)
fill_values = st.one_of(
    json_scalars, st.sampled_from(["NaN", "Infinity", "-Infinity", "0x7fc00000", "AAAAAICHw8A="]),
    st.lists(json_scalars, max_size=3), json_values,
)
named = st.one_of(
    texts,
    st.fixed_dictionaries({"name": texts}, optional={"configuration": json_values, "must_understand": st.booleans(),
                                                     "extra": json_values}),
    json_values,
)
chunk_grids = st.fixed_dictionaries(
    {"name": st.just("regular"), "configuration": st.fixed_dictionaries({"chunk_shape": shapes})}
) | named
lifted = st.fixed_dictionaries({}, optional={
    **{key: texts | json_values for key in convert.LIFTED_ATTRIBUTES},
    "keywords": texts | st.lists(texts | json_scalars, max_size=4) | json_values,
    "_ARRAY_DIMENSIONS": st.lists(texts, max_size=3) | json_values,
})
attributes = st.builds(lambda a, b: {**a, **b}, st.dictionaries(texts, json_values, max_size=3), lifted)


def documents(required: dict, optional: dict) -> st.SearchStrategy[dict]:
    return st.builds(lambda doc, extra: {**extra, **doc}, st.fixed_dictionaries(required, optional=optional), extras)


v3_array = documents({}, {
    "zarr_format": st.just(3) | json_values, "node_type": st.just("array") | json_values, "shape": shapes,
    "data_type": dtypes, "chunk_grid": chunk_grids, "chunk_key_encoding": named, "fill_value": fill_values,
    "codecs": st.lists(named, max_size=4) | json_values, "attributes": attributes | json_values,
    "storage_transformers": st.lists(named, max_size=2) | json_values,
    "dimension_names": st.lists(texts | st.none(), max_size=4) | json_values,
})
v3_group = documents({}, {"zarr_format": st.just(3) | json_values, "node_type": st.just("group"),
                          "attributes": attributes | json_values})
v2_codec = st.builds(lambda id_, conf: {**conf, "id": id_}, texts, st.dictionaries(texts, json_values, max_size=3))
v2_array = documents({}, {
    "zarr_format": st.just(2) | json_values, "shape": shapes, "chunks": shapes, "dtype": dtypes,
    "compressor": st.none() | v2_codec | json_values, "fill_value": fill_values,
    "order": st.sampled_from(["C", "F"]) | json_values,
    "filters": st.none() | st.lists(v2_codec | json_values, max_size=3) | json_values,
    "dimension_separator": st.sampled_from([".", "/"]) | json_values,
})
v2_group = documents({}, {"zarr_format": st.just(2) | json_values})
names = st.text(min_size=1, max_size=6).filter(lambda n: "/" not in n and not n.startswith("@"))


@st.composite
def nodes(draw: st.DrawFn, path: str) -> Node:
    fmt, kind = draw(st.sampled_from([2, 3])), draw(st.sampled_from(["array", "group"]))
    if fmt == 3:
        documents = {V3_DOCUMENT: draw(v3_array if kind == "array" else v3_group)}
    else:
        documents = {V2_ARRAY if kind == "array" else V2_GROUP: draw(v2_array if kind == "array" else v2_group)}
        if draw(st.booleans()):
            documents[V2_ATTRS] = draw(attributes)
    return Node(path=path, kind=kind, zarr_format=fmt, documents=documents,
                locations={name: Location("x") for name in documents}, implicit=draw(st.booleans()))


@st.composite
def hierarchies(draw: st.DrawFn) -> Hierarchy:
    url = draw(st.sampled_from(["file:///data/store.zarr", "https://example.org/a/b.zarr", "s3://bucket/k.zarr"]))
    root = draw(nodes(""))
    children = [draw(nodes(name)) for name in draw(st.lists(names, max_size=3, unique=True))]
    h = Hierarchy(url=url, zarr_format=root.zarr_format, nodes={n.path: n for n in [root, *children]})
    root.members = [c.path for c in children] + draw(st.lists(names, max_size=1))  # one may be absent
    arrays = [c for c in children if c.kind == "array"]
    if len(arrays) >= 2 and draw(st.booleans()):
        primary, *dependents = arrays
        primary.dependents = [d.path for d in dependents] + ["absent"]
        for d in dependents:
            d.primary = primary.path
    return h


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


@settings(max_examples=200, deadline=None, suppress_health_check=SLOW)
@given(h=hierarchies())
def test_generated_hierarchies_convert_to_pyld_triples(h):
    compare_hierarchy(h, per_node=False)


# --------------------------------------------- (b) generated node objects, every construct
IRIS = [f"file:///s.zarr/{i}" for i in range(6)] + ["https://example.org/a?b#c", "urn:x:y", "s3://b/k", "zarr:Thing"]
DATATYPES = ["xsd:integer", "xsd:boolean", "xsd:decimal", "xsd:double", "xsd:string", "rdf:JSON",
             "http://example.org/dt#x", "dct:x"]
natives = st.one_of(
    texts, st.booleans(), st.integers(-(10**30), 10**30), st.floats(),
    st.sampled_from([-0.0, 0.0, 1e300, 1e21, 1e20, 1.5, 2**64, 10**21, 10**21 - 1, -(10**21), float("inf")]),
)
lexicals = texts | st.sampled_from(["1.5", "NaN", "inf", "-0", " 2 ", "1_000", "1e400", "true", "0x1p3"])
value_objects = st.builds(lambda v, t: {"@value": v} if t is None else {"@value": v, "@type": t},
                          lexicals, st.none() | st.sampled_from(DATATYPES))
scalars = natives | value_objects
values = st.none() | scalars | st.lists(scalars, max_size=2)  # a term without @list: one value or an array


@st.composite
def node_objects(draw: st.DrawFn, iris: Iterator[str], labels: Iterator[str], depth: int = 0,
                 scoped: bool = False) -> dict:
    """A node object: keys of every kind the context has, values of any shape it accepts."""
    out: dict[str, Any] = {}
    literal_terms = ["path", "data_type", "dtype", "order", "dimension_separator", "name", "title", "summary",
                     "institution", "long_name", "standard_name", "units", "keywords", "fill_value", "zarr_format",
                     "implicit", "attributes", "configuration", "short_form", "extra_fields", "zarr:shape",
                     "dct:other", "http://example.org/p", *(["id"] if scoped else [])]
    for term in draw(st.lists(st.sampled_from(literal_terms), max_size=3, unique=True)):
        out[term] = draw(values)
    for term in draw(st.lists(st.sampled_from(["shape", "chunks", "chunk_shape", "dimension_names"]), max_size=2)):
        out[term] = draw(st.none() | st.lists(scalars, max_size=4))
    if draw(st.booleans()):
        out["node_type"] = draw(st.sampled_from(["array", "group", "Dataset", "zarr:Other", "http://example.org/T"]))
    if draw(st.booleans()):
        out["@type"] = draw(st.lists(st.sampled_from(["Dataset", "DependentArray", "Group", "zarr:X"]), max_size=3))
    if depth == 0:
        out["@id"] = next(iris)
        out["member"] = draw(st.lists(st.sampled_from(IRIS), max_size=3))
        if draw(st.booleans()):
            out["zarr:member"] = draw(st.lists(st.sampled_from(IRIS).map(lambda i: {"@id": i}), max_size=2))
        if draw(st.booleans()):
            out["primary_array"] = draw(st.sampled_from(IRIS))
        if draw(st.booleans()):
            out["dependent_arrays"] = {draw(names): next(iris) for _ in range(draw(st.integers(0, 2)))}
    if depth < 2:
        def nested(scope: bool = False) -> st.SearchStrategy:
            return node_objects(iris, labels, depth + 1, scoped or scope)

        for term in draw(st.lists(st.sampled_from(["chunk_grid", "chunk_key_encoding", "compressor"]), max_size=2 - depth)):
            out[term] = draw(nested(term == "compressor") | value_objects)
        for term in draw(st.lists(st.sampled_from(["codecs", "storage_transformers", "filters"]), max_size=2 - depth)):
            items = draw(st.lists(nested(term == "filters") | value_objects, max_size=2))
            for item in items:
                if isinstance(item, dict) and "@value" not in item and draw(st.booleans()):
                    item["@id"] = next(labels)  # a labelled blank node, referenced below
            refs = [{"@id": i["@id"]} for i in items if isinstance(i, dict) and "@id" in i]
            out[term] = items
            if refs:
                out.setdefault("codecs", refs)
    return out


@st.composite
def jsonld_documents(draw: st.DrawFn) -> dict:
    iris = (f"file:///s.zarr/node{i}" for i in itertools.count())
    labels = (f"_:l{i}" for i in itertools.count())
    graph_nodes = [draw(node_objects(iris, labels)) for _ in range(draw(st.integers(1, 3)))]
    if len(graph_nodes) == 1 and draw(st.booleans()):
        return {**graph_nodes[0], "@context": CATALOGUE_CONTEXT_IRI}
    return {"@context": CATALOGUE_CONTEXT_IRI, "@graph": graph_nodes}


@pytest.mark.filterwarnings("ignore::UserWarning")  # rdflib, on ill-typed literals (as pyld writes them)
@settings(max_examples=200, deadline=None, suppress_health_check=SLOW)
@given(doc=jsonld_documents())
def test_generated_node_objects_convert_to_pyld_triples(doc):
    """Native numbers of every kind (-0.0, 1e300, 1e21, NaN, infinities), typed strings
    (xsd:double lexical forms pyld re-reads), lists, nested and labelled nodes, scoped
    terms, index maps, duplicates. pyld may write a repeated value twice (the graph
    holds it once), so only the graphs are compared here."""
    ref = convert.jsonld_triples(copy.deepcopy(doc))
    assert_same_graph(fast_jsonld.document_triples(doc), ref, count=False)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_values_python_calls_equal_stay_apart_in_one_conversion():
    """The literal cache of a conversion is keyed by type and value: True and 1, 1 and 1.0,
    0.0 and -0.0 (which pyld writes as the integer 0 here; as doubles they would differ,
    so the key keeps them apart), two NaNs, "1" and 1 meet in one document and each gets
    pyld's literal."""
    values = [1, True, 1.0, 0.0, -0.0, False, 0, float("nan"), float("nan"), "1", "True", 1e21, 1e21]
    doc = {"@context": CATALOGUE_CONTEXT_IRI, "@graph": [
        {"@id": f"file:///s/a{i}", "fill_value": v, "zarr_format": v, "shape": [v, v]} for i, v in enumerate(values)]}
    ref = convert.jsonld_triples(copy.deepcopy(doc))
    assert_same_graph(fast_jsonld.document_triples(doc), ref, count=False)


# ------------------------------------------------------- (c) refusals go to pyld
def _lone_array(url: str = "file:///data/store.zarr", **meta: Any) -> Hierarchy:
    doc = {"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "int8", **meta}
    node = Node(path="", kind="array", zarr_format=3, documents={V3_DOCUMENT: doc}, locations={V3_DOCUMENT: Location("x")})
    return Hierarchy(url=url, zarr_format=3, nodes={"": node})


def _keyword_like_dependent() -> Hierarchy:
    h = _lone_array()
    h.nodes["@none"] = Node(path="@none", kind="array", zarr_format=3, documents=copy.deepcopy(h.nodes[""].documents),
                            locations={V3_DOCUMENT: Location("x")}, primary="")
    h.nodes[""].dependents = ["@none"]
    return h


@pytest.mark.parametrize("build", [lambda: _lone_array("file:///a b/store.zarr"), _keyword_like_dependent],
                         ids=["iri-with-a-space", "index-key-like-a-keyword"])
def test_refused_hierarchies_go_to_pyld(build):
    """An IRI with a space is not absolute for pyld, which drops its triples; an index key
    ``@none`` is no index for pyld: not ours to guess, pyld's answer is given."""
    h = build()
    docs = [convert._node_document(h, n, n.members, i) for i, n in enumerate(h.nodes.values())]
    with pytest.raises(fast_jsonld.Unsupported):
        fast_jsonld.node_triples(docs)
    with reference_path():
        ref = list(convert.hierarchy_triples(h))
    with mock.patch.object(convert, "jsonld_triples", wraps=convert.jsonld_triples) as pyld:
        got = list(convert.hierarchy_triples(h))
    assert pyld.call_count == 1
    assert_same_graph(got, ref)


def test_unknown_key_and_repeated_node_go_to_pyld():
    node = {"@id": "file:///s/a", "path": "a", "not_a_term": 1}
    with pytest.raises(fast_jsonld.Unsupported, match="unknown key"):
        fast_jsonld.node_triples([node])
    assert_same_graph(convert.nodes_triples([node]), convert.jsonld_triples({"@context": CATALOGUE_CONTEXT_IRI, "@graph": [node]}))
    twice = [{"@id": "file:///s/a", "path": "a"}, {"@id": "file:///s/a", "title": "t"}]
    with pytest.raises(fast_jsonld.Unsupported, match="described twice"):
        fast_jsonld.node_triples(twice)
    assert_same_graph(convert.nodes_triples(twice), convert.jsonld_triples({"@context": CATALOGUE_CONTEXT_IRI, "@graph": twice}))


def test_huge_zarr_format_fails_as_with_pyld():
    """pyld cannot write an integer beyond a double's range (OverflowError): nor does the fallback."""
    h = _lone_array(zarr_format=10**400)
    with pytest.raises(fast_jsonld.Unsupported):
        fast_jsonld.node_triples([convert._node_document(h, h.nodes[""], [])])
    with pytest.raises(OverflowError):
        list(convert.hierarchy_triples(h))


def test_forced_refusal_gives_pyld_answer_per_batch(good_stores, monkeypatch):
    h = load_hierarchy(str(good_stores["zarr_v3_deep"]))
    with reference_path():
        ref = list(convert.hierarchy_triples(h))
    monkeypatch.setattr(convert, "BATCH_NODES", 3)
    monkeypatch.setattr(fast_jsonld, "node_triples", mock.Mock(side_effect=fast_jsonld.Unsupported("forced")))
    with mock.patch.object(convert, "jsonld_triples", wraps=convert.jsonld_triples) as pyld:
        got = list(convert.hierarchy_triples(h))
    assert pyld.call_count == fast_jsonld.node_triples.call_count == -(-len(h.nodes) // 3)
    assert_same_graph(got, ref)


# ------------------------------------------------------- the context: followed or refused
def test_every_term_of_the_bundled_context_is_read():
    ctx = fast_jsonld.catalogue_context()
    assert set(ctx.terms) == {k for k in catalogue_context() if not k.startswith("@")}
    implicit = ctx.terms["implicit"]
    assert (implicit.iri, implicit.type) == ("https://w3id.org/zarr-catalogue/vocab#implicit", fast_jsonld.XSD_BOOLEAN)
    assert ctx.terms["filters"].container == "@list" and ctx.terms["dependent_arrays"].container == "@index"


def test_a_changed_context_is_followed():
    ctx = copy.deepcopy(catalogue_context())
    ctx["path"] = {"@id": "dct:identifier", "@type": "xsd:token"}
    ctx["order"] = "http://example.org/order"
    ctx["shape"] = {"@id": "zarr:extent", "@container": "@list"}
    ctx["new_term"] = {"@id": "zarr:new", "@type": "@id"}
    ctx["ratio"] = {"@id": "zarr:ratio", "@type": "xsd:double"}
    node = {"@id": "file:///s/a", "path": "a/b", "order": "C", "shape": [1, 2.5], "new_term": "urn:x",
            "ratio": [1, 1.5, -0.0, 10**25, True, "2", "x"]}
    doc = {"@context": ctx, **node}
    assert_same_graph(fast_jsonld.document_triples(doc), convert.jsonld_triples(copy.deepcopy(doc)))


@pytest.mark.parametrize("change", [
    {"@vocab": "http://example.org/"}, {"@language": "en"}, {"@base": "http://example.org/"},
    {"path": {"@id": "zarr:path", "@language": "en"}}, {"path": {"@id": "zarr:path", "@type": "@json"}},
    {"shape": {"@id": "zarr:shape", "@container": "@set"}}, {"path": {"@reverse": "zarr:path"}},
    {"path": {"@id": "zarr:path", "@protected": True}}, {"kind": "@type"}, {"zarr:x": "zarr:y"},
    {"compressor": {"@id": "zarr:compressor", "@context": {"id": {"@id": "zarr:name"}}}},
])
def test_a_context_outside_the_subset_is_refused(change):
    ctx = {**copy.deepcopy(catalogue_context()), **change}
    with pytest.raises(fast_jsonld.Unsupported):
        fast_jsonld.document_triples({"@context": ctx, "@id": "file:///s/a", "path": "a"})
