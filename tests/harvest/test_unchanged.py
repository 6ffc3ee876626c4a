"""No-change re-harvests: one listing (S3) or one consolidated read (HTTP), nothing written.

Requests are counted at the server (HTTP) or at s3fs's request methods (S3,
spied: the real calls still go to the moto server).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

import catalogue
from catalogue.rdf.provenance import HARVESTS_GRAPH
from tests.support import servers, stores


def graph_quads(cat: catalogue.Catalogue, graph: str) -> set[tuple]:
    return {q[:3] for q in cat.quads(graph)}


def latest_run(cat: catalogue.Catalogue) -> dict:
    return cat.harvests(1)[0]


@pytest.mark.parametrize("name", ["xarray_cf_v2", "xarray_cf_v3"])
def test_http_unchanged_consolidated_source_costs_one_read(name, good_stores, http_store, tmp_path):
    url = f"{http_store.url}/{good_stores[name].name}"
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        first = cat.harvest(url)
        before = graph_quads(cat, first.graph)
        http_store.reset_counts()
        again = cat.harvest(url)
        assert again.unchanged and (again.groups, again.arrays) == (first.groups, first.arrays)
        run = latest_run(cat)
        assert run["outcome"] == "unchanged" and run["unchanged"] == first.groups + first.arrays
        assert run["added"] == run["changed"] == run["removed"] == 0
        assert graph_quads(cat, first.graph) == before
        # the graph's current version is still the one the first run generated
        runs = cat.harvests(2)
        generated = cat.query(f"SELECT ?run WHERE {{ GRAPH <{first.graph}> {{ <{first.graph}> prov:wasGeneratedBy ?run }} }}")
        assert [str(r[0]) for r in generated] == [runs[1]["run"]]
    consolidated = f"{good_stores[name].name}/" + ("zarr.json" if name.endswith("v3") else ".zmetadata")
    hits = Counter({k: v for k, v in http_store.counts.items()})
    if name.endswith("v3"):
        assert hits == Counter({consolidated: 1})  # exactly one request
    else:
        # one round trip: zarr.json (404) and .zmetadata asked for together
        assert hits == Counter({consolidated: 1, f"{good_stores[name].name}/zarr.json": 1})


def test_http_changed_consolidated_source_is_read_once_and_rewritten(good_stores, http_store, tmp_path):
    store = tmp_path / "copy.zarr"
    shutil.copytree(good_stores["xarray_cf_v2"], store)
    with servers.http_server(tmp_path) as server, catalogue.open(str(tmp_path / "c.db")) as cat:
        url = f"{server.url}/copy.zarr"
        cat.harvest(url)
        meta = json.loads((store / ".zmetadata").read_text())
        meta["metadata"]["air/.zattrs"]["long_name"] = "changed"
        (store / ".zmetadata").write_text(json.dumps(meta))
        server.reset_counts()
        report = cat.harvest(url)
        assert not report.unchanged
        assert server.counts["copy.zarr/.zmetadata"] == 1  # the check's read is reused by the reader
        run = latest_run(cat)
        assert (run["outcome"], run["changed"], run["unchanged"]) == ("succeeded", 1, 4)
        assert cat.metadata(f"{url}/air")[".zattrs"]["long_name"] == "changed"


def test_http_source_without_consolidated_metadata_is_always_read(good_stores, http_store, tmp_path):
    url = f"{http_store.url}/{good_stores['zarr_v3_deep'].name}"
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(url, nodes=["group_a", "group_a/nested"])
        http_store.reset_counts()
        report = cat.harvest(url, nodes=["group_a", "group_a/nested"])
        assert not report.unchanged and latest_run(cat)["outcome"] == "succeeded"
        assert latest_run(cat)["changed"] == 0
    assert sum(http_store.counts.values()) > 1


def _spy_s3(monkeypatch) -> Counter:
    import s3fs

    calls: Counter = Counter()
    for method in ("_find", "_ls", "_cat_file", "_info", "_lsdir"):
        original = getattr(s3fs.S3FileSystem, method)

        def spy(self, *args, __original=original, __name=method, **kwargs):
            calls[__name] += 1
            return __original(self, *args, **kwargs)

        monkeypatch.setattr(s3fs.S3FileSystem, method, spy)
    return calls


@pytest.mark.parametrize("name", ["zarr_v3_deep", "zarr_v2_plain"])
def test_s3_unchanged_source_costs_one_listing(name, good_stores, s3, tmp_path, monkeypatch):
    url = s3.upload(good_stores[name], f"s3://{s3.bucket()}/{name}.zarr")
    options = {"storage_options": s3.storage_options}
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        first = cat.harvest(url, **options)
        before = graph_quads(cat, first.graph)
        calls = _spy_s3(monkeypatch)
        again = cat.harvest(url, **options)
        assert again.unchanged, latest_run(cat)
        # one recursive listing (s3fs's _find pages through _lsdir), no document read, no HEAD
        assert dict(calls) == {"_find": 1, "_lsdir": 1}
        assert graph_quads(cat, first.graph) == before
        assert latest_run(cat)["unchanged"] == first.groups + first.arrays


def test_s3_changes_show_in_the_listing(good_stores, s3, tmp_path):
    """Edit one array, delete one, add one: the listing differs, the re-harvest touches exactly those."""
    store = good_stores["zarr_v2_plain"]
    bucket = s3.bucket()
    url = s3.upload(store, f"s3://{bucket}/plain.zarr")
    fs = s3.filesystem()
    arrays = sorted(p.parent.relative_to(store).as_posix() for p in store.rglob(".zarray"))
    edit, drop = arrays[0], arrays[1]
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(url, storage_options=s3.storage_options)
        attrs = {"note": "edited"}
        fs.pipe_file(f"{bucket}/plain.zarr/{edit}/.zattrs", json.dumps(attrs).encode())
        for key in fs.find(f"{bucket}/plain.zarr/{drop}"):
            fs.rm_file(key)
        fs.pipe_file(f"{bucket}/plain.zarr/added/.zarray", (store / edit / ".zarray").read_bytes())
        report = cat.harvest(url, storage_options=s3.storage_options)
        assert not report.unchanged
        run = latest_run(cat)
        assert (run["added"], run["changed"], run["removed"]) == (1, 1, 1), run
        assert cat.metadata(f"{url}/{edit}")  # still catalogued, with the new attributes
        assert "edited" in json.dumps(cat.documents(f"{url}/{edit}"))
        assert not cat.has_node(f"{url}/{drop}") and cat.has_node(f"{url}/added")


def test_unchanged_check_respects_options_failures_and_full(good_stores, tmp_path):
    store = tmp_path / "cf.zarr"
    shutil.copytree(good_stores["xarray_cf_v3"], store)
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(str(store))
        assert cat.harvest(str(store)).unchanged
        # other options choose other nodes: not comparable, so read
        assert not cat.harvest(str(store), exclude=["lat"]).unchanged
        assert latest_run(cat)["removed"] == 1
        assert cat.harvest(str(store), exclude=["lat"]).unchanged
        # --full reads all the same
        assert not cat.harvest(str(store), exclude=["lat"], full=True).unchanged
        assert latest_run(cat)["outcome"] == "succeeded"
        # another validation profile: the findings would differ, so read
        assert not cat.harvest(str(store), exclude=["lat"], profile="upstream").unchanged


def test_a_partial_run_records_no_state(tmp_path):
    """After nodes failed, the next run reads again (they may have recovered)."""
    store = stores.build_bad_child(tmp_path)
    meta_missing = not (store / ".zmetadata").exists() and not (store / "zarr.json").exists()
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(str(store))
        runs = cat.query(f"SELECT ?s WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?r zarr:sourceState ?s }} }}")
        assert meta_missing or not list(runs)
        assert not cat.harvest(str(store)).unchanged


def test_cli_reports_unchanged_and_progress_counts_nodes(good_stores, tmp_path):
    from click.testing import CliRunner

    from catalogue.cli import main

    db = str(tmp_path / "c.db")
    source = str(good_stores["xarray_cf_v2"])
    assert CliRunner().invoke(main, ["harvest", source, "--db", db]).exit_code == 0
    result = CliRunner().invoke(main, ["harvest", source, "--db", db, "--json"])
    assert result.exit_code == 0
    summary = json.loads(result.stdout)["sources"][0]
    assert summary["outcome"] == "unchanged" and summary["unchanged"] == 5
    result = CliRunner().invoke(main, ["harvest", source, "--db", db, "--full"])
    assert result.exit_code == 0 and "unchanged" not in result.stderr

    seen: list[int] = []
    with catalogue.open(str(tmp_path / "p.db")) as cat:
        report = cat.harvest(str(good_stores["zarr_v3_deep"]), progress=seen.append)
        assert sum(seen) == report.groups + report.arrays and len(seen) > 1  # a walk: level by level
        seen.clear()
        report = cat.harvest(str(good_stores["xarray_cf_v2"]), progress=seen.append)
        assert seen == [report.groups + report.arrays]  # consolidated: all at once


def test_s3_fingerprints_do_not_depend_on_the_change_check(good_stores, s3, tmp_path):
    """A --full run (no state check) finds the same fingerprints as a checked one: nothing 'changed'."""
    url = s3.upload(good_stores["zarr_v3_deep"], f"s3://{s3.bucket()}/deep.zarr")
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        first = cat.harvest(url, storage_options=s3.storage_options)
        cat.harvest(url, storage_options=s3.storage_options, full=True)
        run = latest_run(cat)
        assert (run["outcome"], run["changed"], run["unchanged"]) == ("succeeded", 0, first.groups + first.arrays)
