"""Extents from CF coordinates: every fixture store (v2 and v3, written by xarray) against
an independent computation (xarray reading the same store, numpy, pyproj, cftime), the
byte budget, and bad coordinates giving findings rather than crashes."""

from __future__ import annotations

import json
import pathlib

import cftime
import numpy as np
import pytest
import xarray as xr
from pyproj import CRS, Transformer

from catalogue.extents import cf
from catalogue.extents.values import DEFAULT_VALUE_BYTES, ValueReader
from catalogue.harvest.reader import read_hierarchy
from catalogue.model.extents import Box
from catalogue.storage.opening import open_store
from tests.support import cf_stores

FORMATS = [2, 3]


def run(path: pathlib.Path, budget: int = DEFAULT_VALUE_BYTES):
    store = open_store(str(path))
    hierarchy = read_hierarchy(store)
    reader = ValueReader(hierarchy, store, budget=budget)
    evidence, findings = cf.evidence(hierarchy, reader)
    return {e.path: e for e in evidence if e.bbox is not None or e.crs is not None}, \
        {e.path: e for e in evidence if e.period is not None}, findings + reader.findings, reader


def raw(path: pathlib.Path) -> xr.Dataset:
    return xr.open_zarr(path, decode_times=False, consolidated=True)


def edges(values: np.ndarray) -> tuple[float, float]:
    """Half a (regular) step beyond the outermost centres."""
    step = abs(float(values[1] - values[0]))
    return float(values.min()) - step / 2, float(values.max()) + step / 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_global_grid_on_0_360_is_the_whole_world_with_edges(tmp_path, fmt):
    path = cf_stores.build_global_grid(tmp_path, fmt)
    ds = raw(path)
    spatial, temporal, findings, _ = run(path)
    south, north = edges(ds.lat.values)
    west, east = edges(ds.lon.values)
    assert (east - west, south, north) == (360.0, -90.0, 90.0)
    tas = spatial["tas"]
    assert tas.bbox == Box(-180.0, south, 180.0, north) and tas.edges
    assert tas.source.kind == "cf:coordinates" and tas.source.detail == "lat, lon"
    first, last = cftime.num2date(ds.time.values[[0, -1]], ds.time.attrs["units"], calendar=ds.time.attrs["calendar"])
    assert (temporal["tas"].period.start, temporal["tas"].period.end) == (
        first.strftime("%Y-%m-%d"), last.strftime("%Y-%m-%d"))
    assert temporal["tas"].temporal_resolution == "P1D"
    # one degree along a meridian, on WGS 84 (smaller than a degree along the equator)
    assert spatial["tas"].spatial_resolution == pytest.approx(110_574.39, abs=0.01)
    assert findings == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_bounds_variables_give_the_cell_edges(tmp_path, fmt):
    path = cf_stores.build_regional_bounds(tmp_path, fmt)
    ds = raw(path)
    spatial, _, findings, _ = run(path)
    expected = Box(float(ds.lon_bnds.min()), float(ds.lat_bnds.min()), float(ds.lon_bnds.max()),
                   float(ds.lat_bnds.max()))
    assert spatial["pr"].bbox == expected == Box(0.0, 40.0, 10.0, 50.0)
    # regular spacing alone would have said 39.875 .. 49.875: the bounds won
    assert spatial["pr"].source.kind == "cf:bounds" and "lat_bnds" in spatial["pr"].source.detail
    assert spatial["pr"].edges and findings == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_polar_stereographic_grid_is_reprojected_with_its_grid_mapping(tmp_path, fmt):
    path = cf_stores.build_polar_stereographic(tmp_path, fmt)
    ds = raw(path)
    spatial, _, findings, _ = run(path)
    crs = CRS.from_cf(dict(ds.crs.attrs))
    x0, x1 = edges(ds.x.values)
    y0, y1 = edges(ds.y.values)
    west, south, east, north = Transformer.from_crs(crs, "OGC:CRS84", always_xy=True).transform_bounds(
        x0, y0, x1, y1, densify_pts=21)
    sic = spatial["sic"]
    assert sic.native_bbox == (x0, y0, x1, y1)
    assert (sic.bbox.west, sic.bbox.east, sic.bbox.north) == (-180.0, 180.0, 90.0)  # holds the pole
    assert sic.bbox.south == pytest.approx(south) and (west, east, north) == (-180.0, 180.0, 90.0)
    assert CRS.from_wkt(sic.crs.wkt2).equals(crs)
    assert sic.source.kind == "cf:grid_mapping" and sic.spatial_resolution == 200_000.0
    assert findings == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_curvilinear_grid_uses_its_2d_auxiliary_coordinates(tmp_path, fmt):
    path = cf_stores.build_curvilinear(tmp_path, fmt)
    ds = raw(path)
    spatial, _, findings, reader = run(path)
    assert spatial["ts"].bbox == Box(float(ds.lon.min()), float(ds.lat.min()), float(ds.lon.max()),
                                     float(ds.lat.max()))
    assert not spatial["ts"].edges  # centres only: no bounds were given
    assert sorted(p for p, _ in reader.reads) == ["lat", "lon"] and findings == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_360_day_calendar_with_a_february_30th(tmp_path, fmt):
    path = cf_stores.build_calendar_360(tmp_path, fmt)
    ds = raw(path)
    _, temporal, findings, _ = run(path)
    first, last = cftime.num2date(ds.time.values[[0, -1]], ds.time.attrs["units"], calendar="360_day")
    assert (first.month, first.day) == (2, 30)
    period = temporal["tos"].period
    assert (period.start, period.end, period.calendar) == ("2000-02-29", last.strftime("%Y-%m-%d"), "360_day")
    assert temporal["tos"].temporal_resolution == "P1M"
    assert [(f.rule, f.path) for f in findings] == [("extent.calendar-date", "time")]
    assert "2000-02-30 (360_day) -> 2000-02-29" in findings[0].message


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_region_across_the_antimeridian_stays_a_region(tmp_path, fmt):
    path = cf_stores.build_antimeridian(tmp_path, fmt)
    ds = raw(path)
    spatial, _, findings, _ = run(path)
    lon = np.mod(ds.lon.values, 360)  # 170.5 .. 189.5, in order
    assert np.all(np.diff(lon) > 0)
    west, east = edges(lon)
    south, north = edges(ds.lat.values)
    box = spatial["sst"].bbox
    assert box == Box(west, south, east - 360, north) == Box(170.0, 10.0, -170.0, 20.0)
    assert box.crosses_antimeridian and findings == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_million_value_axis_is_read_by_its_first_and_last_chunks(tmp_path, fmt):
    path = cf_stores.build_big_axis(tmp_path, fmt)
    ds = raw(path)
    _, temporal, findings, reader = run(path)
    first, last = cftime.num2date(ds.time.values[[0, -1]], ds.time.attrs["units"], calendar="proleptic_gregorian")
    period = temporal["level"].period
    assert (period.start, period.end) == (first.strftime("%Y-%m-%dT%H:%M:%SZ"), last.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert temporal["level"].temporal_resolution == "PT1H"
    assert reader.reads == [("time", 2 * cf_stores.BIG_CHUNK)]  # not the million
    assert reader.spent == 2 * cf_stores.BIG_CHUNK * 8 and findings == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_byte_budget_skips_what_does_not_fit_and_says_so(tmp_path, fmt):
    path = cf_stores.build_big_axis(tmp_path, fmt)
    _, temporal, findings, reader = run(path, budget=100_000)  # under the two chunks' 160,000 bytes
    assert temporal == {} and reader.reads == [] and reader.spent == 0
    assert [(f.rule, f.path) for f in findings] == [("extent.values-budget", "time")]
    assert "160,000 bytes" in findings[0].message and "100,000-byte budget" in findings[0].message


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_non_monotonic_axis_is_a_finding_and_its_full_values_give_centres(tmp_path, fmt):
    path = cf_stores.build_non_monotonic(tmp_path, fmt)
    ds = raw(path)
    spatial, _, findings, _ = run(path)
    assert [(f.rule, f.path) for f in findings] == [("extent.non-monotonic", "lat")]
    box = spatial["z"].bbox
    assert (box.south, box.north) == (float(ds.lat.min()), float(ds.lat.max()))
    assert not spatial["z"].edges


def test_without_a_store_only_the_grid_mapping_is_known(tmp_path):
    path = cf_stores.build_polar_stereographic(tmp_path, 3)
    hierarchy = read_hierarchy(open_store(str(path)))
    evidence, findings = cf.evidence(hierarchy, ValueReader(hierarchy, None))
    assert [(e.path, e.bbox, e.crs is not None) for e in evidence] == [("sic", None, True)] and findings == []


# ---------------------------------------------------------------------- bad coordinates
def edit_attributes(path: pathlib.Path, array: str, **changes) -> None:
    """Change an array's attributes in a v3 store (and its consolidated copy in the root)."""
    for doc_path, pointer in ((path / array / "zarr.json", None), (path / "zarr.json", array)):
        doc = json.loads(doc_path.read_text())
        node = doc["consolidated_metadata"]["metadata"][pointer] if pointer else doc
        node.setdefault("attributes", {}).update(changes)
        doc_path.write_text(json.dumps(doc))


@pytest.mark.parametrize(("array", "changes", "rule"), [
    ("time", {"units": "days since the flood"}, "extent.time-units"),
    ("time", {"calendar": "martian"}, "extent.time-units"),
    ("lat", {"bounds": "no_such_bounds"}, "extent.coordinate-values"),
])
def test_bad_coordinate_attributes_are_findings(tmp_path, array, changes, rule):
    path = cf_stores.build_global_grid(tmp_path, 3)
    edit_attributes(path, array, **changes)
    spatial, temporal, findings, _ = run(path)
    assert [(f.rule, f.path) for f in findings] == [(rule, array)]
    if array == "time":
        assert temporal == {} and spatial["tas"].bbox is not None
    else:  # the coordinate values are used instead
        assert spatial["tas"].bbox.south == -90.0


def test_an_unresolvable_grid_mapping_is_a_finding(tmp_path):
    path = cf_stores.build_polar_stereographic(tmp_path, 3)
    edit_attributes(path, "crs", grid_mapping_name="no_such_projection")
    spatial, _, findings, _ = run(path)
    assert spatial == {} and [(f.rule, f.path) for f in findings] == [("extent.grid-mapping", "crs")]
    assert "no_such_projection" in findings[0].message


def test_latitudes_beyond_the_poles_are_a_finding(tmp_path):
    ds = xr.Dataset({"v": (("lat", "lon"), np.zeros((3, 2)))},
                    coords={"lat": ("lat", [80.0, 95.0, 110.0], cf_stores.LAT),
                            "lon": ("lon", [0.0, 1.0], cf_stores.LON)})
    ds.to_zarr(tmp_path / "poles.zarr", zarr_format=3, consolidated=False)
    spatial, _, findings, _ = run(tmp_path / "poles.zarr")
    assert spatial == {} and [(f.rule, f.path) for f in findings] == [("extent.coordinate-values", "lat")]


def test_a_corrupt_coordinate_chunk_is_a_finding(tmp_path):
    path = cf_stores.build_global_grid(tmp_path, 3)
    for chunk in (path / "lat" / "c").iterdir():
        chunk.write_bytes(b"not a zstd frame")
    spatial, temporal, findings, _ = run(path)
    assert "tas" not in spatial and "tas" in temporal
    assert [(f.rule, f.path) for f in findings] == [("extent.values-unreadable", "lat")]
    assert "cannot be read" in findings[0].message


def test_text_coordinates_are_not_used(tmp_path):
    ds = xr.Dataset({"v": (("lat", "lon"), np.zeros((2, 2)))},
                    coords={"lat": ("lat", np.array(["north", "south"]), cf_stores.LAT),
                            "lon": ("lon", [0.0, 1.0], cf_stores.LON)})
    ds.to_zarr(tmp_path / "text.zarr", zarr_format=2, consolidated=False)
    spatial, _, findings, _ = run(tmp_path / "text.zarr")
    assert spatial == {} and [(f.rule, f.path) for f in findings] == [("extent.values-unreadable", "lat")]


def test_classify_follows_cf_attributes_not_names():
    assert cf.classify({"standard_name": "latitude"}) == "lat"
    assert cf.classify({"units": "degrees_E"}) == "lon"
    assert cf.classify({"units": "hours since 2000-01-01"}) == "time"
    assert cf.classify({"axis": "X"}) == "x"
    assert cf.classify({"long_name": "latitude"}) is None
