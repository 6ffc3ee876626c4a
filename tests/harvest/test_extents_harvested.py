"""Extents across harvests, processes and bad input, on real stores and both databases.

* Re-harvests: a store whose time axis grows (xarray appends) or whose coordinate's
  metadata changes under an unchanged data array gets its new extent, and the old extent
  triples are gone; an unchanged store keeps its extent.
* Several processes: three ``catalogue harvest`` subprocesses of different fixture stores
  while a real server answers ``/stac/collections`` and ``/datasets?bbox=``; afterwards
  every dataset is found by its box.
* Bad input through the CLI: each bad fixture's findings printed as one line naming file,
  JSON pointer and rule, the exit code as for any other warning, the other stores kept.

Expected figures come from tests/support/real_extents.py (xarray, zarr-python, pyproj,
cftime), never from ``catalogue.extents``.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import time
import warnings

import httpx
import numpy as np
import pandas as pd
import xarray as xr
import zarr
from click.testing import CliRunner

import catalogue
from catalogue.cli import main
from catalogue.rdf.stac import collection_id
from catalogue.web.settings import Settings
from tests.support import cf_stores
from tests.support import convention_stores as cs
from tests.support.real_extents import build_fixtures, expected_extents
from tests.support.webserver import serve

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli_command() -> list[str]:
    """``catalogue`` as a subprocess running this checkout's code (not an installed copy)."""
    return [sys.executable, "-m", "catalogue.cli"]


def cli_env(db: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "CATALOGUE_DB": db, "PYTHONPATH": path}


def iri_of(store: pathlib.Path) -> str:
    return store.absolute().as_uri()


def count(cat: catalogue.Catalogue, sparql: str) -> int:
    return int(next(iter(cat.query(sparql)))[0])


def temporal_triples(cat: catalogue.Catalogue, node: str) -> int:
    return count(cat, f"SELECT (COUNT(?t) AS ?n) WHERE {{ GRAPH ?g {{ <{node}> dct:temporal ?t }} }}")


def end_dates(cat: catalogue.Catalogue) -> set[str]:
    """Every dcat:endDate in the catalogue (one per node with a period)."""
    return {str(row[0]) for row in cat.query("SELECT DISTINCT ?e WHERE { GRAPH ?g { ?t dcat:endDate ?e } }")}


def day_text(ds: xr.Dataset, index: int) -> str:
    """The ``index``-th time of a decoded dataset as a date text."""
    return pd.Timestamp(ds.time.values[index]).strftime("%Y-%m-%d")


# --------------------------------------------------------------------------- 4. re-harvests
def test_appended_time_steps_move_the_period_end_and_replace_the_old_extent(tmp_path, db_url):
    store = cf_stores.build_global_grid(tmp_path, 3)
    root, tas = iri_of(store), iri_of(store) + "/tas"
    with catalogue.open(db_url) as cat:
        assert cat.harvest(str(store)).ok
        before = cat.extent(root)
        with xr.open_zarr(store) as ds:
            first_end = day_text(ds, -1)
        assert before is not None and before.period is not None and before.period.end == first_end

        more = xr.Dataset({"tas": (("time", "lat", "lon"), np.ones((3, 180, 360), dtype="float32"))},
                          coords={"time": pd.date_range("2000-01-05", periods=3, freq="D")})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # consolidated metadata in v3 is not in the spec yet
            more.to_zarr(store, mode="a", append_dim="time", consolidated=True)
        with xr.open_zarr(store) as ds:
            start, end = day_text(ds, 0), day_text(ds, -1)
        assert end != first_end and ds.sizes["time"] == 7

        report = cat.harvest(str(store))
        assert report.ok and not report.unchanged
        after = cat.extent(root)
        assert after is not None and after.period is not None
        assert (after.period.start, after.period.end) == (start, end)
        assert after.bbox == before.bbox and after.temporal_resolution == "P1D"
        assert cat.extent(tas).period == after.period  # type: ignore[union-attr]
        # the old extent triples are gone: exactly one period per node, no old end anywhere
        assert temporal_triples(cat, root) == 1 and temporal_triples(cat, tas) == 1
        assert first_end not in end_dates(cat) and end in end_dates(cat)

        tas_after = cat.extent(tas)
        again = cat.harvest(str(store))
        assert again.unchanged and cat.extent(root) == after and cat.extent(tas) == tas_after
        full = cat.harvest(str(store), full=True)
        assert not full.unchanged and cat.extent(root) == after and cat.extent(tas) == tas_after
        assert temporal_triples(cat, root) == 1 and temporal_triples(cat, tas) == 1


def test_a_changed_coordinate_moves_the_extent_of_an_unchanged_data_array(tmp_path, db_url):
    """``tas``'s own document does not change when its time coordinate's units do; its
    extent must change all the same (extents are per-run triples, not per-node ones)."""
    store = cf_stores.build_global_grid(tmp_path, 3)
    tas = iri_of(store) + "/tas"
    tas_document = (store / "tas" / "zarr.json").read_bytes()
    with catalogue.open(db_url) as cat:
        assert cat.harvest(str(store)).ok
        old = cat.extent(tas)
        group = zarr.open_group(str(store), mode="r+")
        group["time"].attrs["units"] = "days since 2010-06-01"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # consolidated metadata in v3 is not in the spec yet
            zarr.consolidate_metadata(str(store))
        assert (store / "tas" / "zarr.json").read_bytes() == tas_document
        with xr.open_zarr(store) as ds:
            start, end = day_text(ds, 0), day_text(ds, -1)
        assert start == "2010-06-01"

        report = cat.harvest(str(store))
        assert report.ok and report.run is not None
        new = cat.extent(tas)
        assert old is not None and new is not None and new.period is not None
        assert (new.period.start, new.period.end) == (start, end) and new.bbox == old.bbox
        assert temporal_triples(cat, tas) == 1 and temporal_triples(cat, iri_of(store)) == 1
        assert end_dates(cat) == {end}


# --------------------------------------------------------------------------- 5. several processes
def test_three_harvest_processes_while_the_server_answers(tmp_path, db_url):
    fixtures = build_fixtures(tmp_path / "stores")
    expected = expected_extents(fixtures)
    groups = [["global_grid", "regional_bounds", "polar_stereographic"],
              ["curvilinear", "antimeridian", "calendar_360"],
              ["pyramid", "utm", "eopf"]]
    env = cli_env(db_url)
    with catalogue.open(db_url) as cat:  # the server starts over a catalogue that holds one store
        assert cat.harvest(str(fixtures["plain"])).ok
    answered = 0
    with serve(Settings(db=db_url)) as base, httpx.Client(base_url=base, timeout=60) as client:
        procs = [subprocess.Popen([*cli_command(), "harvest", *(str(fixtures[n]) for n in names)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for names in groups]
        try:
            while any(p.poll() is None for p in procs) or answered < 4:
                for path, params in (("/stac/collections", {"limit": 100}),
                                     ("/datasets", {"bbox": "170,10,-170,20", "limit": 100})):
                    answer = client.get(path, params=params)
                    assert answer.status_code == 200, answer.text
                    answered += 1
                time.sleep(0.05)
            outputs = [p.communicate(timeout=120) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        for p, (_out, err) in zip(procs, outputs, strict=True):
            assert p.returncode == 0, err
            assert "Traceback" not in err

        # the server's index catches up within its refresh interval ("within two seconds of
        # a harvest", docs/web.md; a loaded 2-core machine gets some slack)
        every = {collection_id(iri_of(p)) for p in fixtures.values()}
        deadline = time.monotonic() + 10
        while True:
            listed = client.get("/stac/collections", params={"limit": 100}).json()["collections"]
            if {c["id"] for c in listed} == every or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert {c["id"] for c in listed} == every
        for name, path in fixtures.items():
            want = expected[name][""]
            if want is None or want.bbox is None:
                continue
            bbox = ",".join(repr(v) for v in want.bbox)
            hits = client.get("/datasets", params={"bbox": bbox, "limit": 100}).json()["hits"]
            assert iri_of(path) in {h["iri"] for h in hits}, name
            found = client.get("/stac/collections", params={"bbox": bbox, "limit": 100}).json()["collections"]
            assert collection_id(iri_of(path)) in {c["id"] for c in found}, name
    assert answered >= 4


# --------------------------------------------------------------------------- 6. bad input
#: Bad fixture -> the findings its harvest prints: (rule, file below the store, JSON pointer).
BAD = {
    "absurd": {("extent.conventions.unusable", "zarr.json", "/attributes/spatial:transform"),
               ("extent.conventions.unusable", "huge/zarr.json", "/attributes/spatial:transform")},
    "badcrs": {("extent.conventions.unusable", "zarr.json", "/attributes/proj:code"),
               ("extent.conventions.unusable", "zarr.json", "/attributes/spatial:transform")},
    "lat95": {("extent.conventions.unusable", "zarr.json", "/attributes/spatial:bbox"),
              ("extent.conventions.unusable", "t/zarr.json", "/attributes/spatial:transform"),
              ("extent.acdd.unparseable", "zarr.json", "/attributes/geospatial_lat_min")},
    "non_monotonic_v2": {("extent.non-monotonic", ".zmetadata", "/metadata/lat~1.zarray")},
    "big_axis_v3": set(),  # the budget finding is an info: harvests print warnings and errors only
}


def build_bad(root: pathlib.Path) -> dict[str, pathlib.Path]:
    stores = [cs.build_absurd_transform(root), cs.build_bad_crs(root), cs.build_lat95(root),
              cf_stores.build_non_monotonic(root, 2), cf_stores.build_big_axis(root, 3)]
    return {store.name.removesuffix(".zarr"): store for store in stores}


def printed_findings(stderr: str, store: pathlib.Path) -> set[tuple[str, str, str]]:
    """The extent findings printed for ``store``: lines ``warning: FILE#POINTER: severity: message [rule]``."""
    out = set()
    prefix = f"warning: {store}/"
    for line in stderr.splitlines():
        if line.startswith(prefix) and line.rstrip().endswith("]") and "[extent." in line:
            where, _, rest = line[len(prefix):].partition(": ")
            file, _, pointer = where.partition("#")
            out.add((rest.rsplit("[", 1)[1].rstrip("]"), file, pointer))
    return out


def test_bad_fixtures_through_the_cli_are_one_line_findings_and_the_catalogue_keeps_the_others(tmp_path, db_url):
    good = cf_stores.build_antimeridian(tmp_path / "good", 3)
    bad = build_bad(tmp_path / "bad")
    env = cli_env(db_url)
    first = subprocess.run([*cli_command(), "harvest", str(good)], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    with catalogue.open(db_url) as cat:
        good_extent = cat.extent(iri_of(good))
    assert good_extent is not None and good_extent.bbox is not None

    done = subprocess.run([*cli_command(), "harvest", *(str(s) for s in bad.values()), "--coordinate-bytes", "100000"],
                          env=env, capture_output=True, text=True, timeout=300)
    # warnings (and geozarr errors on invalid nodes) do not fail a harvest without --strict
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    for name, store in bad.items():
        assert printed_findings(done.stderr, store) == BAD[name], name
    extent_lines = [line for line in done.stderr.splitlines() if "[extent." in line]
    assert len(extent_lines) == sum(len(v) for v in BAD.values())  # one line per finding, nothing else
    assert all(re.fullmatch(r"warning: /\S+#/\S*: warning: .+ \[extent\.[a-z.-]+\]", line) for line in extent_lines)

    strict = subprocess.run([*cli_command(), "harvest", str(bad["non_monotonic_v2"]), "--strict", "--full"],
                            env=env, capture_output=True, text=True)
    assert strict.returncode == 0, strict.stderr  # extent findings are warnings: nothing is invalid
    assert printed_findings(strict.stderr, bad["non_monotonic_v2"]) == BAD["non_monotonic_v2"]

    with catalogue.open(db_url) as cat:
        graphs = {graph for graph, _ in cat.graphs()}
        assert {iri_of(good), *(iri_of(s) for s in bad.values())} <= graphs
        assert cat.extent(iri_of(good)) == good_extent
        # over the cap, the million-value time axis was not read: no period, an info in the report
        assert cat.extent(iri_of(bad["big_axis_v3"])) is None
        rules = {str(r[0]) for r in cat.query(
            f"SELECT ?rule WHERE {{ GRAPH <{iri_of(bad['big_axis_v3'])}> {{ ?r zarr:rule ?rule }} }}")}
        assert "extent.values-budget" in rules
        # the non-monotonic latitudes give the outermost centres
        with xr.open_zarr(bad["non_monotonic_v2"]) as ds:
            south, north = float(ds.lat.min()), float(ds.lat.max())
        box = cat.extent(iri_of(bad["non_monotonic_v2"]) + "/z").bbox  # type: ignore[union-attr]
        assert (box.south, box.north) == (south, north)

    # without the cap the same store has its period
    again = subprocess.run([*cli_command(), "harvest", str(bad["big_axis_v3"]), "--full"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    with catalogue.open(db_url) as cat:
        period = cat.extent(iri_of(bad["big_axis_v3"])).period  # type: ignore[union-attr]
    with xr.open_zarr(bad["big_axis_v3"]) as ds:
        assert period is not None and period.start == pd.Timestamp(ds.time.values[0]).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert period.end == pd.Timestamp(ds.time.values[-1]).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_validate_of_a_harvested_node_lists_its_extent_findings(tmp_path, sqlite_url):
    store = cs.build_lat95(tmp_path)
    runner = CliRunner()
    harvested = runner.invoke(main, ["harvest", str(store), "--db", sqlite_url], catch_exceptions=False)
    assert "[extent.conventions.unusable]" in harvested.stderr
    shown = runner.invoke(main, ["validate", iri_of(store), "--db", sqlite_url, "--format", "json"],
                          catch_exceptions=False)
    rules = {f["rule"] for f in json.loads(shown.stdout)["findings"]}
    assert {"extent.conventions.unusable", "extent.acdd.unparseable"} <= rules


def test_a_proleptic_gregorian_period_keeps_its_calendar(tmp_path, db_url):
    """Before 1582 ``standard`` and ``proleptic_gregorian`` label the same instant differently."""
    days = np.arange(3.0)
    ds = xr.Dataset({"v": (("time",), np.zeros(3, dtype="float32"))},
                    coords={"time": ("time", days, {"standard_name": "time", "units": "days since 1000-01-01",
                                                    "calendar": "proleptic_gregorian"})})
    store = tmp_path / "medieval.zarr"
    ds.to_zarr(store, zarr_format=2, consolidated=True)
    with catalogue.open(db_url) as cat:
        assert cat.harvest(str(store)).ok
        period = cat.extent(iri_of(store)).period  # type: ignore[union-attr]
    assert period is not None and (period.start, period.end) == ("1000-01-01", "1000-01-03")
    assert period.calendar == "proleptic_gregorian"
