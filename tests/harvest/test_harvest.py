"""Harvesting from the CLI: atomic replacement, failures, bad input, metadata-only reads."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

import catalogue
from catalogue.cli import main
from catalogue.errors import display_location
from tests.support import stores
from tests.support.jsonvalues import assert_json_equal
from tests.support.paths import SEED_EXAMPLES


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def snapshot(db: str) -> list[str]:
    """Every stored quad of the hierarchy graphs as an N-Quads line, sorted: equal snapshots, equal
    catalogues. The provenance graph is left out: every run, failed ones too, adds its record there."""
    from catalogue.rdf.export import quad_line
    from catalogue.rdf.provenance import HARVESTS_GRAPH

    with catalogue.open(db) as cat:
        return sorted(quad_line(*q) for q in cat.quads() if q[3] != HARVESTS_GRAPH)


def iri(path: pathlib.Path, node: str = "") -> str:
    base = path.absolute().as_uri()
    return f"{base}/{node}" if node else base


@pytest.fixture
def v2_store(tmp_path, good_stores) -> pathlib.Path:
    """A private copy of the v2 store that tests may break."""
    return pathlib.Path(shutil.copytree(good_stores["zarr_v2_plain"], tmp_path / "plain.zarr", symlinks=True))


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad_store", sorted(set(stores.BAD_STORES) - set(stores.READABLE_BUT_INVALID)), indirect=True)
def test_bad_input_gives_one_line_error_and_unchanged_catalogue(bad_store, db_url, good_stores, request):
    name = request.node.callspec.params["bad_store"]
    assert run("harvest", str(good_stores["zarr_v3_lone_array"]), "--db", db_url)[0] == 0
    before = snapshot(db_url)
    code, _, err = run("harvest", str(bad_store), "--db", db_url)
    relative, pointer = stores.BAD_EXPECTED[name]
    assert code in (1, 2)
    error_lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert error_lines, err
    first = error_lines[0]
    assert str(bad_store / relative).rstrip("/") in first, first
    if pointer:
        assert f"#{pointer}:" in first, first
    if name == "bad_child":
        # the good array is catalogued, the broken one reported: the catalogue did change, as it should
        with catalogue.open(db_url) as cat:
            assert cat.metadata(iri(bad_store, "good"))[".zarray"]["dtype"] == "<i4"
    else:
        assert snapshot(db_url) == before
        assert len(error_lines) == 1


@pytest.mark.parametrize("bad_store", sorted(stores.READABLE_BUT_INVALID), indirect=True)
def test_invalid_but_readable_input_is_catalogued_and_flagged(bad_store, db_url, request):
    """A document that parses but breaks the rules is catalogued as it is, flagged, and named."""
    name = request.node.callspec.params["bad_store"]
    relative, pointer = stores.BAD_EXPECTED[name]
    code, out, err = run("harvest", str(bad_store), "--db", db_url)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, err
    assert f"{bad_store / relative}#{pointer}: error:" in warnings[0]
    assert f"[{stores.READABLE_BUT_INVALID[name]}]" in warnings[0]
    assert "1 invalid node(s): 1 errors" in out
    with catalogue.open(db_url) as cat:
        rows = list(cat.query("SELECT ?v WHERE { ?n zarr:path '' ; zarr:valid ?v }"))
        assert [r.v.toPython() for r in rows] == [False]
        documents = cat.documents(iri(bad_store))
    on_disk = json.loads((bad_store / relative).read_text())
    assert documents[relative] == on_disk  # catalogued losslessly, invalid as it is
    assert run("harvest", str(bad_store), "--db", db_url, "--strict")[0] == 1


def test_nonexistent_path_is_a_usage_error(tmp_path, db_url):
    code, _, err = run("harvest", str(stores.nonexistent(tmp_path)), "--db", db_url)
    assert code == 2 and err.count("\n") == 1 and "no such file or folder" in err


def test_unsupported_scheme_is_a_usage_error(db_url):
    code, _, err = run("harvest", "ftp://example.org/x.zarr", "--db", db_url)
    assert code == 2 and "not supported" in err


# ---------------------------------------------------- replacement, atomicity
def test_reharvest_replaces_the_graph(v2_store, db_url):
    assert run("harvest", str(v2_store), "--db", db_url)[0] == 0
    attrs = v2_store / "temperature" / ".zattrs"
    doc = json.loads(attrs.read_text())
    doc["units"] = "degC"
    attrs.write_text(json.dumps(doc))
    shutil.rmtree(v2_store / "counts")
    assert run("harvest", str(v2_store), "--db", db_url)[0] == 0
    with catalogue.open(db_url) as cat:
        assert cat.metadata(iri(v2_store, "temperature"))[".zattrs"]["units"] == "degC"
        with pytest.raises(catalogue.api.NodeNotFound):
            cat.metadata(iri(v2_store, "counts"))
        units = {str(r[0]) for r in cat.query("SELECT ?u WHERE { ?a zarr:units ?u }")}
        assert "degC" in units and "K" not in units  # no stale triples left behind
        assert len(cat.graphs()) == 1


def test_failed_node_keeps_its_previous_version(v2_store, db_url):
    assert run("harvest", str(v2_store), "--db", db_url)[0] == 0
    with catalogue.open(db_url) as cat:
        before = cat.documents(iri(v2_store, "temperature"))
    (v2_store / "temperature" / ".zarray").write_text('{"zarr_format": 2, "shape": [')
    (v2_store / "sub" / ".zattrs").write_text('{"title": "changed"}')
    code, _, err = run("harvest", str(v2_store), "--db", db_url)
    assert code == 1
    assert f"{v2_store}/temperature/.zarray: invalid JSON at line 1" in err
    assert "kept their previous version" in err
    with catalogue.open(db_url) as cat:
        assert_json_equal(cat.documents(iri(v2_store, "temperature")), before)
        assert cat.metadata(iri(v2_store, "sub"))[".zattrs"] == {"title": "changed"}
        members = {str(r[0]) for r in cat.query(f"SELECT ?m WHERE {{ <{iri(v2_store)}> zarr:member ?m }}")}
        assert iri(v2_store, "temperature") in members


def test_failed_node_without_previous_version_is_only_reported(v2_store, db_url):
    (v2_store / "temperature" / ".zarray").write_text("[]")
    code, _, err = run("harvest", str(v2_store), "--db", db_url)
    assert code == 1 and "temperature/.zarray#: expected a JSON object, got an array" in err
    with catalogue.open(db_url) as cat:
        assert cat.metadata(iri(v2_store, "counts"))
        with pytest.raises(catalogue.api.NodeNotFound):
            cat.metadata(iri(v2_store, "temperature"))


def test_failure_during_write_leaves_previous_version(v2_store, db_url, monkeypatch):
    assert run("harvest", str(v2_store), "--db", db_url)[0] == 0
    before = snapshot(db_url)
    (v2_store / ".zattrs").write_text('{"title": "new"}')
    from catalogue.graph.store import SQLStore

    original_replace, original_add = SQLStore.replace_graph, SQLStore.addN

    def failing_replace(self, graph_id, triples):
        original_replace(self, graph_id, list(triples)[:5])  # the old graph is deleted, new one half written
        raise OSError("disk full")

    def failing_add(self, quads):
        original_add(self, list(quads)[:5])  # incremental: changed nodes deleted, new triples half written
        raise OSError("disk full")

    monkeypatch.setattr(SQLStore, "replace_graph", failing_replace)
    monkeypatch.setattr(SQLStore, "addN", failing_add)
    with catalogue.open(db_url) as cat, pytest.raises(OSError):
        cat.harvest(str(v2_store))
    monkeypatch.undo()
    assert snapshot(db_url) == before


def test_two_hierarchies_get_two_graphs(db_url, good_stores):
    with catalogue.open(db_url) as cat:
        for name in ("xarray_cf_v2", "xarray_cf_v3"):
            cat.harvest(str(good_stores[name]))
        graphs = dict(cat.graphs())
    assert set(graphs) == {iri(good_stores["xarray_cf_v2"]), iri(good_stores["xarray_cf_v3"])}


# ------------------------------------------------------ what is read, and how
def test_consolidated_metadata_is_used_when_present(tmp_path, good_stores):
    store = pathlib.Path(shutil.copytree(good_stores["xarray_cf_v2"], tmp_path / "c.zarr"))
    for path in store.rglob(".zarray"):
        path.unlink()  # only .zmetadata is left to describe the arrays
    h = catalogue.harvest.load_hierarchy(str(store))
    assert h.consolidated and {"air", "lat", "lon", "time"} <= set(h.nodes)
    assert h.nodes["air"].location.url.endswith("/.zmetadata")
    assert h.nodes["air"].location.pointer == "/metadata/air~1.zarray"


def test_v3_inline_consolidated_metadata_is_used(good_stores):
    h = catalogue.harvest.load_hierarchy(str(good_stores["zarr_v3_consolidated_nested"]))
    assert h.consolidated and "a/b/c" in h.nodes
    assert h.nodes["a/b/c"].location.pointer == "/consolidated_metadata/metadata/a~1b~1c"
    assert "consolidated_metadata" not in h.nodes[""].metadata


def test_chunk_data_is_never_read(tmp_path, good_stores):
    """Run a harvest in a subprocess with an audit hook recording every file it opens: the
    only chunks read are those of coordinate arrays (1-D, or named by another array's
    ``coordinates`` or ``bounds``), which the extents need; never a data variable's."""
    sources = [str(p) for p in good_stores.values()]
    script = f"""
import sys, json
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and isinstance(args[0], str) else None)
import catalogue
with catalogue.open({str(tmp_path / "a.db")!r}) as cat:
    for s in {sources!r}:
        cat.harvest(s)
print(json.dumps(opened))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    opened = json.loads(out.strip().splitlines()[-1])
    inside = [p for p in opened if any(p.startswith(s) for s in sources)]
    metadata = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}
    chunks = [pathlib.Path(p) for p in inside if pathlib.PurePosixPath(p).name not in metadata]
    assert inside, "the audit hook saw no metadata reads at all"
    named = set()  # arrays other arrays name as coordinates or bounds
    for source in sources:
        for doc in [*pathlib.Path(source).rglob("zarr.json"), *pathlib.Path(source).rglob(".zattrs")]:
            meta = json.loads(doc.read_text())
            attrs = meta.get("attributes", meta) if doc.name == "zarr.json" else meta
            for key in ("coordinates", "bounds"):
                if isinstance(attrs.get(key), str):
                    named.update(attrs[key].split())
    for chunk in chunks:
        array = next(parent for parent in chunk.parents
                     if (parent / "zarr.json").exists() or (parent / ".zarray").exists())
        doc = array / "zarr.json" if (array / "zarr.json").exists() else array / ".zarray"
        shape = json.loads(doc.read_text())["shape"]
        assert len(shape) == 1 or array.name in named, f"{chunk} is data, not a coordinate"


def test_symlinked_subgroup_that_is_not_a_loop_is_followed(tmp_path, good_stores, db_url):
    store = pathlib.Path(shutil.copytree(good_stores["zarr_v2_plain"], tmp_path / "s.zarr", symlinks=True))
    elsewhere = pathlib.Path(shutil.copytree(store / "sub", tmp_path / "elsewhere"))
    (store / "linked").symlink_to(elsewhere, target_is_directory=True)
    with catalogue.open(db_url) as cat:
        report = cat.harvest(str(store))
    assert report.ok and report.groups == 3


def test_file_url_sources_and_iris(db_url, good_stores):
    store = good_stores["zarr_v3_lone_array"]
    code, out, _ = run("harvest", store.absolute().as_uri(), "--db", db_url, "--json")
    assert code == 0 and json.loads(out)["sources"][0]["graph"] == iri(store)
    assert not iri(store).endswith("/")


# ------------------------------------------------------------ dependent arrays
def test_dependent_arrays_are_expanded(db_url, good_stores):
    store = good_stores["dependent_arrays"]
    with catalogue.open(db_url) as cat:
        cat.harvest(str(store))
        rows = cat.query("""SELECT ?primary ?dep ?shape WHERE {
            ?primary zarr:dependentArray ?dep . ?dep a zarr:DependentArray ; zarr:primaryArray ?primary ;
            zarr:shape/rdf:first ?shape } ORDER BY ?dep""")
        found = {str(r[1]).rsplit("/", 2)[-2] + "/" + str(r[1]).rsplit("/", 1)[-1] for r in rows}
        assert {"multiscale/s1", "multiscale/s2", "labels/coarse", "labels/alias"} <= found
        s1 = cat.metadata(iri(store, "multiscale/s1"))
        primary = cat.metadata(iri(store, "multiscale"))
    assert s1["chunk_key_encoding"]["name"] in ("prefix", "suffix")
    assert s1["codecs"] == primary["codecs"]  # filled in from the primary
    assert "dependent-arrays" not in (cat_attrs := s1["attributes"]) and cat_attrs != primary["attributes"]


def test_dependent_arrays_attributes_default_to_primary_without_declaration(good_stores):
    h = catalogue.harvest.load_hierarchy(str(good_stores["dependent_arrays"]))
    s2 = h.nodes["multiscale/s2"].metadata
    primary = h.nodes["multiscale"].metadata["attributes"]
    assert s2["attributes"] == {k: v for k, v in primary.items() if k != "dependent-arrays"}


def test_dependent_arrays_both_spellings_of_the_same_name_is_an_error(tmp_path):
    doc = json.loads((SEED_EXAMPLES / "dependent-arrays" / "zarr.json").read_text())
    doc["fill_value"] = 0
    doc["attributes"]["dependent-arrays"] = {"s1": {}}
    store = tmp_path / "dup.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps(doc))
    h = catalogue.harvest.load_hierarchy(str(store))
    assert "" in h.nodes and "s2" in h.nodes and "s1" not in h.nodes
    assert any("declared under both" in str(e) for e in h.errors)


def test_seed_dependent_arrays_example(tmp_path, db_url):
    """The seed example: invalid JSON as printed; lacks fill_value once fixed; harvests once completed."""
    code, _, err = run("harvest", str(SEED_EXAMPLES / "dependent-arrays-verbatim"), "--db", db_url)
    assert code == 1 and "invalid JSON at line 12 column 7" in err
    code, _, err = run("harvest", str(SEED_EXAMPLES / "dependent-arrays"), "--db", db_url)
    assert code == 0 and "zarr.json#/fill_value: error: missing required key [v3.required]" in err
    doc = json.loads((SEED_EXAMPLES / "dependent-arrays" / "zarr.json").read_text())
    doc["fill_value"] = 0
    store = tmp_path / "completed.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps(doc))
    assert run("harvest", str(store), "--db", db_url)[0] == 0
    with catalogue.open(db_url) as cat:
        s1 = cat.metadata(iri(store, "s1"))
    assert s1["shape"] == [64, 64] and s1["codecs"] == ["bytes", "gzip"] and s1["attributes"] == {}


def test_error_locations_are_local_paths():
    assert display_location("file:///a%20b/c") == "/a b/c"


@pytest.mark.parametrize(("name", "expected"), [("zarr_v2_plain", None), ("zarr_v3_deep", None),
                                                 ("xarray_cf_v2", [".zmetadata"]), ("xarray_cf_v3", ["zarr.json"])])
def test_each_document_is_read_once(good_stores, monkeypatch, name, expected):
    """Walks read every metadata document exactly once; consolidated stores read only the root document."""
    from catalogue.storage.access import StoreAccess

    reads: list[str] = []
    original = StoreAccess.read

    def counting(self, key, **kwargs):
        data = original(self, key, **kwargs)
        if data is not None:
            reads.append(key)
        return data

    monkeypatch.setattr(StoreAccess, "read", counting)
    catalogue.harvest.load_hierarchy(str(good_stores[name]))
    assert len(reads) == len(set(reads)), sorted(k for k in reads if reads.count(k) > 1)
    if expected is not None:
        assert reads == expected
    else:
        on_disk = {str(p.relative_to(good_stores[name])) for p in good_stores[name].rglob("*")
                   if p.name in ("zarr.json", ".zarray", ".zgroup", ".zattrs")}
        assert set(reads) == on_disk
