"""The CLI's query, export, metadata and db commands, on a real catalogue file."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from rdflib import Dataset, Graph, URIRef

from catalogue.cli import main

ILIAD = "http://w3id.org/iliad/zarr/"


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def db(tmp_path, good_stores, db_url) -> str:
    for name in ("xarray_cf_v2", "xarray_cf_v3", "zarr_v2_plain", "zarr_v3_deep"):
        assert run("harvest", str(good_stores[name]), "--db", db_url)[0] == 0
    return db_url


ARRAYS = "SELECT ?a ?dt WHERE { ?a a zarr:Array ; zarr:dataType ?dt } ORDER BY ?a"


def test_query_table_is_the_default(db):
    code, out, _ = run("query", ARRAYS, "--db", db)
    assert code == 0 and out.splitlines()[0].split() == ["a", "dt"] and out.rstrip().endswith("rows)")


def test_a_solution_that_binds_nothing_is_a_row(db):
    """OPTIONAL of no match: one solution, ?x unbound (rdflib's iteration would drop it)."""
    code, out, _ = run("query", "SELECT ?x WHERE { OPTIONAL { <urn:nobody> <urn:p> ?x } }", "--db", db)
    assert code == 0 and out.rstrip().endswith("(1 row)"), out
    _, out, _ = run("query", "SELECT ?x WHERE { OPTIONAL { <urn:nobody> <urn:p> ?x } }", "--db", db, "--format", "json")
    assert json.loads(out)["results"]["bindings"] == [{}]


def test_query_formats(db):
    _, out, _ = run("query", ARRAYS, "--db", db, "--format", "json")
    data = json.loads(out)
    n = len(data["results"]["bindings"])
    assert data["head"]["vars"] == ["a", "dt"] and n >= 15
    _, out, _ = run("query", ARRAYS, "--db", db, "--format", "csv")
    assert len(list(csv.reader(io.StringIO(out)))) == n + 1
    code, out, _ = run("query", ARRAYS, "--db", db, "--format", "tsv")
    assert code == 0 and out.splitlines()[1].startswith("<file://") and "\t\"" in out
    assert out.splitlines()[0] == "?a\t?dt" and len(out.splitlines()) == n + 1
    _, out, _ = run("query", ARRAYS, "--db", db, "--format", "xml")
    ns = {"s": "http://www.w3.org/2005/sparql-results#"}
    assert len(ET.fromstring(out).findall(".//s:result", ns)) == n


def test_queries_see_all_graphs_with_prebound_prefixes(db):
    _, out, _ = run("query", "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?d a dcat:Dataset } }", "--db", db, "--format", "json")
    assert json.loads(out)["results"]["bindings"][0]["n"]["value"] == "4"
    q = "SELECT ?d WHERE { ?d a dcat:Dataset ; dct:title ?t . FILTER(CONTAINS(?t, 'air')) }"
    _, out, _ = run("query", q, "--db", db, "--format", "json")
    assert len(json.loads(out)["results"]["bindings"]) >= 1


def test_ordered_lists_are_queryable(db, good_stores):
    air = good_stores["xarray_cf_v3"].absolute().as_uri() + "/air"
    q = f"SELECT ?dim WHERE {{ <{air}> zarr:dimensionNames/rdf:rest*/rdf:first ?dim }}"
    _, out, _ = run("query", q, "--db", db, "--format", "json")
    assert [b["dim"]["value"] for b in json.loads(out)["results"]["bindings"]] == ["time", "lat", "lon"]


def test_construct_describe_and_ask(db):
    q = "CONSTRUCT { ?a zarr:dataType ?dt } WHERE { ?a zarr:dataType ?dt }"
    for fmt, parse_as in (("turtle", "turtle"), ("nt", "nt"), ("json-ld", "json-ld")):
        code, out, _ = run("query", q, "--db", db, "--format", fmt)
        assert code == 0 and len(Graph().parse(data=out, format=parse_as)) >= 15
    assert run("query", "ASK { ?a a zarr:Array }", "--db", db)[1].strip() == "true"
    code, _, err = run("query", q, "--db", db, "--format", "csv")
    assert code == 2 and "CONSTRUCT" in err


def test_query_from_file_and_stdin(db, tmp_path):
    path = tmp_path / "q.rq"
    path.write_text(ARRAYS)
    assert run("query", f"@{path}", "--db", db)[0] == 0
    assert run("query", "-", "--db", db, input=ARRAYS)[0] == 0


def test_bad_query_is_a_one_line_usage_error(db):
    code, _, err = run("query", "SELECT WHERE {", "--db", db)
    assert code == 2 and err.startswith("error: query failed") and err.count("\n") == 1


def test_export_formats_and_file_output(db, tmp_path):
    out_file = tmp_path / "all.trig"
    assert run("export", "--db", db, "--format", "trig", "-o", str(out_file))[0] == 0
    ds = Dataset().parse(out_file, format="trig")
    assert len(list(ds.graphs())) >= 4
    _, out, _ = run("export", "--db", db, "--format", "json-ld")
    doc = json.loads(out)
    assert doc["@context"]["shape"]["@container"] == "@list"


def test_export_iliad_profile(db, good_stores, caplog):
    graph = good_stores["zarr_v2_plain"].absolute().as_uri()
    code, out, _ = run("export", "--db", db, "--profile", "iliad", "--graph", graph, "--format", "nt")
    g = Graph().parse(data=out, format="nt")
    temp = URIRef(graph + "/temperature")
    assert code == 0 and (temp, URIRef(ILIAD + "dtype"), None) in g
    assert len(list(g.objects(temp, URIRef(ILIAD + "shape")))) <= 3  # a set, not a list
    _, out, _ = run("export", "--db", db, "--profile", "iliad-verbatim", "--graph", graph, "--format", "nt")
    assert "<http:/w3id.org/iliad/zarr/dtype>" in out
    code, _, _ = run("export", "--db", db, "--profile", "iliad", "--format", "nt")
    assert code == 0 and "v3 array(s) left out" in caplog.text


def test_metadata_of_unknown_node_is_exit_2(db):
    code, _, err = run("metadata", "file:///nowhere/x", "--db", db)
    assert code == 2 and "no node file:///nowhere/x" in err


def test_export_unknown_graph_is_exit_2(db):
    code, _, err = run("export", "--db", db, "--graph", "file:///nowhere")
    assert code == 2 and "no graph" in err


def test_graphs_and_db_commands(db):
    _, out, _ = run("graphs", "--db", db)
    assert len(out.splitlines()) == 4
    code, out, _ = run("db", "current", "--db", db)
    from catalogue.graph.database import head_revision

    assert code == 0 and out.split()[0] == head_revision()
    assert run("db", "upgrade", "--db", db)[0] == 0


def test_default_database_and_env(tmp_path, good_stores):
    """No --db: ./catalogue.db in the working directory; CATALOGUE_DB overrides it (real console script)."""
    exe = os.path.join(os.path.dirname(sys.executable), "catalogue")
    env = {k: v for k, v in os.environ.items() if k != "CATALOGUE_DB"}
    store = str(good_stores["zarr_v3_lone_array"])
    subprocess.run([exe, "harvest", store], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert (tmp_path / "catalogue.db").is_file()
    env["CATALOGUE_DB"] = str(tmp_path / "other.db")
    subprocess.run([exe, "harvest", store], cwd=tmp_path, env=env, check=True, capture_output=True)
    assert (tmp_path / "other.db").is_file()
    out = subprocess.run([exe, "graphs"], cwd=tmp_path, env=env, check=True, capture_output=True, text=True).stdout
    assert out.startswith(good_stores["zarr_v3_lone_array"].absolute().as_uri())
