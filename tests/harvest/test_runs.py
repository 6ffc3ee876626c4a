"""Harvest runs: sources files, several sources, failures, provenance, the lock, and being killed."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

import catalogue
from bench.stress import comparable
from catalogue.cli import main
from catalogue.errors import UsageError
from catalogue.graph.lock import HarvestLocked, harvest_lock
from catalogue.harvest.run import source_url
from catalogue.harvest.sources import load_sources
from catalogue.rdf.provenance import HARVESTS_GRAPH
from tests.support import stores
from tests.support.paths import (
    REPO,  # bench/ (not an installed package) is found through pyproject's pythonpath
)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def hierarchy_quads(db: str) -> list[str]:
    from catalogue.rdf.export import quad_line

    with catalogue.open(db) as cat:
        return sorted(quad_line(*q) for q in cat.quads() if q[3] != HARVESTS_GRAPH)


# ------------------------------------------------------------- sources file
def test_sources_file(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text("""
[[source]]
url = "s3://bucket/a.zarr"
name = "A"
storage_options = { endpoint_url = "http://127.0.0.1:9000", anon = true, client_kwargs = { region_name = "eu" } }
include = ["*"]
exclude = ["scratch/*"]
max_depth = 2
nodes = ["/x/", "y"]
concurrency = 8
timeout = 5
retries = 0

[[source]]
url = "examples/cf_sea_surface_v2.zarr"
""")
    a, b = load_sources(path)
    assert a.url == "s3://bucket/a.zarr" and a.label == "A" and a.max_depth == 2 and a.nodes == ("x", "y")
    assert (a.concurrency, a.timeout, a.retries) == (8, 5.0, 0) and b.timeout is None
    assert a.storage_options == {"endpoint_url": "http://127.0.0.1:9000", "anon": True, "client_kwargs": {"region_name": "eu"}}
    assert b.label == b.url and b.include == () and b.storage_options == {}


@pytest.mark.parametrize(("text", "message"), [
    ("", "no [[source]] entries"),
    ("[[source]]\nname = 'x'", "source[1].url: expected a non-empty string"),
    ("[[source]]\nurl = 'a'\n[[source]]\nurl = 'b'\nmax_depth = -1", "source[2].max_depth"),
    ("[[source]]\nurl = 'a'\ninclude = 'x'", "source[1].include: expected a list of strings"),
    ("[[source]]\nurl = 'a'\nstorage_options = 3", "source[1].storage_options: expected a table"),
    ("[[source]]\nurl = 'a'\nurls = 3", "source[1]: unknown key 'urls'"),
    ("[[source]]\nurl = 'a'\nconcurrency = 0", "source[1].concurrency: expected a number >= 1"),
    ("[[source]]\nurl = 'a'\ntimeout = 'x'", "source[1].timeout: expected a number >= 0.1"),
    ("[source]\nurl = 'a'", "must be [[source]] tables"),
    ("[[source]\nurl = 'a'", "not a valid TOML file"),
    ("title = 'x'\n[[source]]\nurl = 'a'", "unknown top-level key 'title'"),
])
def test_sources_file_errors_name_the_entry(tmp_path, text, message):
    path = tmp_path / "sources.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_sources(path)


def test_the_documented_example_config_parses():
    example = REPO / "docs" / "sources.example.toml"
    sources = load_sources(example)
    assert len(sources) >= 3 and {s.url.split(":")[0] for s in sources} >= {"s3", "https"}


# ------------------------------------------------------------ several sources
def test_several_sources_one_failing_the_rest_harvested(tmp_path, db_url, good_stores):
    config = tmp_path / "sources.toml"
    missing = tmp_path / "gone.zarr"
    config.write_text(f'[[source]]\nurl = "{good_stores["zarr_v2_plain"]}"\nname = "plain"\n'
                      f'[[source]]\nurl = "{missing}"\n')
    code, out, err = run("harvest", str(good_stores["zarr_v3_lone_array"]), "--config", str(config), "--db", db_url, "--json")
    result = json.loads(out)
    assert code == 2  # the missing folder is a usage error; the others were harvested
    outcomes = [r["outcome"] for r in result["sources"]]
    assert outcomes == ["succeeded", "succeeded", "failed"] and result["failed_sources"] == 1
    assert str(missing) in err
    with catalogue.open(db_url) as cat:
        assert len(cat.graphs()) == 2
        runs = cat.harvests()
    assert [r["outcome"] for r in runs][:3] == ["failed", "succeeded", "succeeded"]
    assert runs[1]["name"] == "plain"


def test_a_failing_source_leaves_its_graph_untouched_and_is_recorded(tmp_path, db_url, good_stores):
    store = pathlib.Path(shutil.copytree(good_stores["zarr_v3_deep"], tmp_path / "deep.zarr"))
    assert run("harvest", str(store), "--db", db_url)[0] == 0
    before = hierarchy_quads(db_url)
    (store / "zarr.json").unlink()  # the root cannot be read: the whole hierarchy is unusable
    shutil.rmtree(store / "sub", ignore_errors=True)
    for child in store.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
    code, _, err = run("harvest", str(store), "--db", db_url)
    assert code == 1 and "no Zarr metadata found" in err
    assert hierarchy_quads(db_url) == before
    with catalogue.open(db_url) as cat:
        last = cat.harvests(1)[0]
    assert last["outcome"] == "failed" and last["graph"] is None and "no Zarr metadata found" in last["errors"][0]


# ----------------------------------------------------------------- provenance
def test_reharvest_counts_exactly_the_changed_removed_and_added_nodes(tmp_path, db_url, good_stores):
    store = pathlib.Path(shutil.copytree(good_stores["zarr_v2_plain"], tmp_path / "plain.zarr"))
    h = catalogue.harvest.load_hierarchy(str(store))
    arrays = sorted(p for p, n in h.nodes.items() if n.kind == "array")
    total = len(h.nodes)
    with catalogue.open(db_url) as cat:
        first = cat.harvest(str(store)).run
        assert (first.added, first.changed, first.unchanged, first.removed) == (total, 0, 0, 0)
        again = cat.harvest(str(store)).run
        assert (again.added, again.changed, again.unchanged, again.removed) == (0, 0, total, 0)
        changed, removed = arrays[0], arrays[1]
        attrs = store / changed / ".zattrs"
        data = json.loads(attrs.read_text()) if attrs.exists() else {}
        attrs.write_text(json.dumps({**data, "comment": "changed"}))
        shutil.rmtree(store / removed)
        new = store / "added_array"
        shutil.copytree(store / arrays[2], new)
        third = cat.harvest(str(store)).run
        assert (third.added, third.changed, third.removed, third.unchanged) == (1, 1, 1, total - 2)
        base = store.absolute().as_uri()
        iris = {str(r.n) for r in cat.query("SELECT ?n WHERE { ?n zarr:path ?p }")}
        assert f"{base}/added_array" in iris and f"{base}/{removed}" not in iris
        assert cat.metadata(f"{base}/{changed}")[".zattrs"]["comment"] == "changed"
        runs = cat.harvests()
        assert [(r["added"], r["changed"], r["removed"]) for r in runs[:3]] == [(1, 1, 1), (0, 0, 0), (total, 0, 0)]
        generated = list(cat.query(f"SELECT ?run WHERE {{ <{base}> prov:wasGeneratedBy ?run }}"))
        assert [str(g.run) for g in generated] == [str(third.iri)]
    code, out, _ = run("harvests", "--limit", "2", "--db", db_url)
    assert code == 0 and len(out.strip().splitlines()) == 2 and "+1 ~1 =" in out.splitlines()[0]
    code, out, _ = run("harvests", "--json", "--db", db_url)
    assert code == 0 and len(json.loads(out)) == 3


# ---------------------------------------------------------------------- lock
def test_a_second_harvest_of_a_source_waits_or_exits_others_go_on(db_url, good_stores):
    store = str(good_stores["zarr_v3_lone_array"])
    other = str(good_stores["zarr_v2_lone_array"])
    source = source_url(store)
    with catalogue.open(db_url) as holder:
        engine = holder.store.engine
        with harvest_lock(engine, source):
            code, _, err = run("harvest", store, "--db", db_url)
            assert code == 3, err
            assert err.count("\n") == 1 and f"another harvest of {source} is running" in err and "--wait" in err
            with pytest.raises(HarvestLocked), harvest_lock(engine, source):
                pass
            code, _, err = run("harvest", other, "--db", db_url)  # another source is not held up
            assert code == 0, err
        released = threading.Event()

        def hold_then_release() -> None:
            with harvest_lock(engine, source):
                released.wait(5)
                time.sleep(1.0)

        holder_thread = threading.Thread(target=hold_then_release)
        holder_thread.start()
        try:
            time.sleep(0.3)
            released.set()
            started = time.monotonic()
            code, _, err = run("harvest", store, "--db", db_url, "--wait")
            waited = time.monotonic() - started
        finally:
            holder_thread.join()
        assert code == 0, err
        assert waited >= 0.5


# ------------------------------------------------------------------ SIGKILL
@pytest.mark.slow
def test_killing_a_harvest_leaves_the_previous_version_and_the_next_run_completes(tmp_path, db_url):
    store = stores.big_v3_hierarchy(tmp_path, n_arrays=600, n_groups=6)
    catalogue_cli = [str(pathlib.Path(sys.executable).parent / "catalogue")]
    env = {**os.environ, "CATALOGUE_DB": db_url}
    assert subprocess.run([*catalogue_cli, "harvest", str(store)], env=env, capture_output=True).returncode == 0
    before = hierarchy_quads(db_url)
    # the second version differs: every array gets a new attribute
    for doc in store.rglob("var_*/zarr.json"):
        meta = json.loads(doc.read_text())
        meta["attributes"]["version"] = 2
        doc.write_text(json.dumps(meta))
    for delay in (0.5, 1.0, 1.6):
        proc = subprocess.Popen([*catalogue_cli, "harvest", str(store)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        after = hierarchy_quads(db_url)
        with catalogue.open(db_url) as cat:
            versions = {int(r.v) for r in cat.query(
                "SELECT ?v WHERE { ?a a zarr:Array ; zarr:attributes ?j BIND(IF(CONTAINS(STR(?j), '\"version\":2'), 2, 1) AS ?v) }")}
        # all of the old version or all of the new one, never a mixture
        assert after == before or versions == {2}, delay
        if after != before:
            before = after
    done = subprocess.run([*catalogue_cli, "harvest", str(store)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with catalogue.open(db_url) as cat:
        versions = {int(r.v) for r in cat.query(
            "SELECT ?v WHERE { ?a a zarr:Array ; zarr:attributes ?j BIND(IF(CONTAINS(STR(?j), '\"version\":2'), 2, 1) AS ?v) }")}
        assert versions == {2}
        assert cat.harvests(1)[0]["outcome"] == "succeeded"


@pytest.mark.slow
def test_a_killed_harvest_is_listed_as_interrupted_and_does_not_block_the_next(tmp_path, db_url):
    """A run is recorded as started before it reads anything; once its process is gone it
    shows as interrupted (host and pid), its lock is free, and the next run of the source
    records it as interrupted for good."""
    import socket

    store = stores.big_v3_hierarchy(tmp_path, n_arrays=400, n_groups=4)
    catalogue_cli = [str(pathlib.Path(sys.executable).parent / "catalogue")]
    env = {**os.environ, "CATALOGUE_DB": db_url}
    proc = subprocess.Popen([*catalogue_cli, "harvest", str(store)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        running: list[dict] = []
        while not running and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            with catalogue.open(db_url) as cat:
                running = [r for r in cat.harvests() if r["outcome"] == "running"]
        assert running, "the run's start was never recorded"
        assert running[0]["pid"] == proc.pid and running[0]["host"] == socket.gethostname()
        assert running[0]["ended"] is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    code, out, _ = run("harvests", "--db", db_url)
    assert code == 0 and "interrupted" in out and f"pid {proc.pid}" in out, out
    with catalogue.open(db_url) as cat:
        (listed,) = cat.harvests()
        assert (listed["outcome"], listed["pid"]) == ("interrupted", proc.pid)
        assert cat.graphs() == []  # the killed run wrote nothing
    # A killed run is a failure from its start, before any later run records it so: listed
    # with the failing sources, before one failing since later.
    assert run("harvest", str(tmp_path / "gone.zarr"), "--db", db_url)[0] != 0
    with catalogue.open(db_url) as cat:
        failing = cat.harvest_status(failing=True)
        assert [s.outcome for s in failing] == ["interrupted", "failed"], failing
        assert failing[0].failing_since is not None and failing[0].failures == 1
    started = time.monotonic()
    done = subprocess.run([*catalogue_cli, "harvest", str(store)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # no --wait: the dead run's lock is free
    assert time.monotonic() - started < 60
    with catalogue.open(db_url) as cat:
        newest, _gone, killed = cat.harvests()
        assert newest["outcome"] == "succeeded" and killed["outcome"] == "interrupted"
        recorded = {str(r.o) for r in cat.query(
            f"SELECT ?o WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ <{killed['run']}> zarr:outcome ?o }} }}")}
        assert recorded == {"interrupted"}
        assert [(s.outcome, s.failures) for s in cat.harvest_status(failing=True)] == [("failed", 1)]


@pytest.mark.parametrize("name", ["zarr_v2_plain", "dependent_arrays", "zarr_v3_deep"])
def test_incremental_reharvest_gives_the_graph_a_full_harvest_gives(tmp_path, db_url, good_stores, name):
    from rdflib.compare import graph_diff, isomorphic

    store = pathlib.Path(shutil.copytree(good_stores[name], tmp_path / f"{name}.zarr"))
    with catalogue.open(db_url) as cat:
        cat.harvest(str(store))
    h = catalogue.harvest.load_hierarchy(str(store))
    if h.consolidated:
        pytest.skip("consolidated metadata would need rewriting too")
    arrays = sorted(p for p, n in h.nodes.items() if n.kind == "array" and n.primary is None)
    groups = sorted(p for p, n in h.nodes.items() if n.kind == "group")
    # change one array's attributes (for dependent_arrays: a primary, so its dependents change too)
    doc_name = "zarr.json" if (store / arrays[0] / "zarr.json").exists() else ".zattrs"
    target = store / arrays[0] / doc_name
    meta = json.loads(target.read_text()) if target.exists() else {}
    if doc_name == "zarr.json":
        meta["attributes"] = {**meta.get("attributes", {}), "comment": "changed", "grid_mapping": "nowhere"}
    else:
        meta = {**meta, "comment": "changed", "grid_mapping": "nowhere"}  # now invalid: validation changes too
    target.write_text(json.dumps(meta))
    shutil.rmtree(store / arrays[-1])  # remove one
    shutil.copytree(store / arrays[0], store / (groups[0] + "/copied" if groups[0] else "copied"))  # add one
    with catalogue.open(db_url) as cat:
        run_ = cat.harvest(str(store)).run
        assert run_.added >= 1 and run_.removed >= 1 and run_.changed >= 1 and run_.unchanged >= 1
    fresh = str(tmp_path / "fresh.db")
    with catalogue.open(fresh) as cat:
        cat.harvest(str(store))
    graph = store.absolute().as_uri()
    incremental, full = comparable(db_url, graph), comparable(fresh, graph)
    if not isomorphic(incremental, full):
        _, only_incremental, only_full = graph_diff(incremental, full)
        pytest.fail(f"only incremental: {sorted(only_incremental)[:5]}\nonly full: {sorted(only_full)[:5]}")


def test_interrupted_runs_count_as_failures_in_a_row(db_url):
    """Runs whose process died before recording an end (their holder is gone) are
    failures: listed as such at once, and counted so by the source's next run, a failing
    streak keeping the start of its first run (recorded with ``note_interrupted``)."""
    import socket

    from catalogue.rdf.provenance import Run

    dead = f"proc:{socket.gethostname()}:999999999:0"  # no such process on this host
    with catalogue.open(db_url) as cat:
        records = cat._records
        first = Run(source="file:///gone/x.zarr", holder=dead)
        records.start(first)
        (status,) = cat.harvest_status(failing=True)
        assert (status.outcome, status.failures) == ("interrupted", 1)
        first_since = status.failing_since
        assert first_since is not None
        second = Run(source="file:///gone/x.zarr", holder=dead)
        records.start(second)  # records the first as interrupted: a failure in the table
        (status,) = cat.harvest_status(failing=True)
        assert (status.outcome, status.failures, status.failing_since) == ("interrupted", 2, first_since)
        third = Run(source="file:///gone/x.zarr", holder="")
        records.start(third)
        third.outcome, third.errors = "failed", ["no such store"]
        records.record(third)
        (status,) = cat.harvest_status(failing=True)
        assert (status.outcome, status.failures, status.failing_since) == ("failed", 3, first_since)
        fourth = Run(source="file:///gone/x.zarr", holder="")
        records.start(fourth)
        fourth.outcome = "interrupted"  # Ctrl-C: recorded by the run itself, counted once
        records.record(fourth)
        (status,) = cat.harvest_status(failing=True)
        assert (status.outcome, status.failures, status.failing_since) == ("interrupted", 4, first_since)


def test_an_interrupt_after_the_write_keeps_the_run_as_written(db_url, tmp_path, monkeypatch):
    """The run's end commits with the write; a Ctrl-C in what follows (collecting orphaned
    terms, refreshing statistics: an ANALYZE can take seconds) used to record the run a
    second time, as interrupted, over a harvest that had committed."""
    from catalogue.graph.store import SQLStore

    root = stores.big_v3_hierarchy(tmp_path / "s", n_arrays=3, n_groups=1)

    def interrupted(self):
        raise KeyboardInterrupt

    with catalogue.open(db_url) as cat:
        monkeypatch.setattr(SQLStore, "analyze_grown", interrupted)
        with pytest.raises(KeyboardInterrupt):
            cat.harvest(str(root))
        monkeypatch.undo()
        (last,) = cat.harvests(limit=1)
        assert (last["outcome"], last.get("errors") or []) == ("succeeded", [])
        (status,) = cat.harvest_status()
        assert status.outcome == "succeeded" and status.failures == 0
        assert cat.totals().datasets == 1
