"""Regression tests of review 16: values that crashed the extraction or gave plausible
extents without a finding, on real stores written by xarray and zarr-python.

Every test calls :func:`extract_extents` itself (not the guard), so a value that still
raises fails here; the guard has its own tests at the end.
"""

from __future__ import annotations

import logging
import pathlib
import warnings
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr
from pyproj import Geod

from catalogue.api import validate_store
from catalogue.extents import cf
from catalogue.extents.crs import longitude_range, resolution_in_metres, to_crs84
from catalogue.extents.extract import extract_extents, guarded_extents, union_periods
from catalogue.harvest import SourceReader
from catalogue.model.extents import Box, Period
from catalogue.validate import validate_hierarchy
from tests.support import cf_stores
from tests.support import convention_stores as cs

LAT, LON = cf_stores.LAT, cf_stores.LON


def extract(path: pathlib.Path) -> Any:
    reader = SourceReader(str(path))
    hierarchy = reader.load()
    return hierarchy, extract_extents(hierarchy, reader.store)


def rules(result: Any) -> list[tuple[str, str, str]]:
    """``(rule, path, pointer inside the node's attributes or "")`` of every finding
    (the pointers of consolidated stores start at the consolidated metadata)."""
    return sorted((f.rule, f.path, _inside(f.pointer)) for f in result.findings)


def _inside(pointer: str) -> str:
    return pointer[pointer.find("/attributes"):] if "/attributes" in pointer else ""


def write(ds: xr.Dataset, path: pathlib.Path) -> pathlib.Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, mode="w-", zarr_format=3, consolidated=True)
    return path


def grid(tmp_path: pathlib.Path, name: str, *, lat: Any = (0.0, 1.0), lon: Any = (0.0, 1.0),
         lat_attrs: dict | None = None, lon_attrs: dict | None = None, extra: dict | None = None,
         attrs: dict | None = None) -> pathlib.Path:
    lat, lon = np.asarray(lat, dtype="float64"), np.asarray(lon, dtype="float64")
    ds = xr.Dataset({"v": (("lat", "lon"), np.zeros((lat.size, lon.size), dtype="float32")), **(extra or {})},
                    coords={"lat": ("lat", lat, lat_attrs if lat_attrs is not None else LAT),
                            "lon": ("lon", lon, lon_attrs if lon_attrs is not None else LON)},
                    attrs=attrs or {})
    return write(ds, tmp_path / f"{name}.zarr")


def time_store(tmp_path: pathlib.Path, name: str, values: list[float], calendar: str = "standard",
               var: str = "v") -> pathlib.Path:
    ds = xr.Dataset({var: (("time",), np.zeros(len(values), dtype="float32"))},
                    coords={"time": ("time", np.asarray(values, dtype="float64"),
                                     {"standard_name": "time", "units": "days since 2000-01-01",
                                      "calendar": calendar})})
    return write(ds, tmp_path / f"{name}.zarr")


# ---------------------------------------------------------------------- item 1: crashes
def test_an_acdd_duration_beyond_year_9999_is_a_finding(tmp_path):
    store = cs.build_acdd(tmp_path, attrs={"time_coverage_start": "2020-01-01", "time_coverage_duration": "P99999Y"})
    _, result = extract(store)
    assert ("extent.acdd.unparseable", "", "/attributes/time_coverage_duration") in rules(result)
    assert [s.path for s in result.root.sources_of("period")] == ["sst"]  # the array's own, not the root's


@pytest.mark.parametrize("values", [[0.0, 1e7], [-1e7, 0.0]], ids=["year-29379", "negative-year"])
def test_cf_times_beyond_years_1_to_9999_are_a_finding_and_no_period(tmp_path, values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cftime warns about negative years
        _, result = extract(time_store(tmp_path, "t", values))
    assert [r for r in rules(result) if r[0] == "extent.period-range"] == [("extent.period-range", "time", "")]
    assert all(extent.period is None for extent in result.nodes.values())


def test_a_standard_name_list_is_a_finding_pointing_at_it(tmp_path):
    store = grid(tmp_path, "names", lon_attrs={"standard_name": ["longitude"], "units": "degrees_east"})
    _, result = extract(store)
    assert ("extent.coordinate-values", "lon", "/attributes/standard_name") in rules(result)
    assert result.nodes["v"].bbox is not None  # still a longitude by its units


def test_catalogue_validate_of_such_stores_reports_instead_of_raising(tmp_path):
    store = grid(tmp_path, "names", lat_attrs={"standard_name": ["latitude"], "units": ["degrees_north"]})
    report = validate_store(str(store))
    assert {("extent.coordinate-values", "lat", "/attributes/standard_name"),
            ("extent.coordinate-values", "lat", "/attributes/units")} <= set(rules(report))


def test_the_guard_turns_an_unexpected_exception_into_one_finding(tmp_path, monkeypatch, caplog):
    store = grid(tmp_path, "fine")
    reader = SourceReader(str(store))
    hierarchy = reader.load()

    def broken(*_args: Any) -> Any:
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setattr(cf, "evidence", broken)
    with caplog.at_level(logging.WARNING, logger="catalogue.extents.extract"):
        result = guarded_extents(hierarchy, reader.store)
    assert result.nodes == {} and [(f.rule, f.path, f.severity.value) for f in result.findings] == [
        ("extent.failed", "", "warning")]
    assert "RuntimeError: a bug nobody foresaw" in result.findings[0].message
    assert "Traceback" in caplog.text or any(r.exc_info for r in caplog.records)
    report = validate_store(str(store))  # catalogue validate <store> goes through the same guard
    assert [f.rule for f in report.findings if f.rule.startswith("extent.")] == ["extent.failed"]


# ---------------------------------------------------------------------- item 3: antimeridian
def test_longitude_range_never_swaps_a_box_across_the_antimeridian():
    assert longitude_range(170, -170) == (170, -170)
    assert longitude_range(350, 10) == (-10, 10)
    assert longitude_range(100, 260) == (100, -100)
    assert longitude_range(0, 360) == (-180, 180)
    assert longitude_range(-170, 170) == (-170, 170)


def test_one_rule_for_geographic_boxes_across_the_antimeridian(tmp_path):
    want = Box(170.0, -10.0, -170.0, 10.0)
    conv = tmp_path / "conv.zarr"
    g = zarr.open_group(str(conv), mode="w", zarr_format=3, attributes={
        "zarr_conventions": [cs.PROJ_DECL, cs.SPATIAL_DECL], "proj:code": "EPSG:4326",
        "spatial:dimensions": ["y", "x"], "spatial:bbox": [170, -10, -170, 10]})
    g.create_array("a", shape=(4, 4), chunks=(4, 4), dtype="uint8", dimension_names=["y", "x"])
    hierarchy, result = extract(conv)
    assert result.root.bbox == want and result.nodes["a"].bbox == want
    assert not [f for f in validate_hierarchy(hierarchy).findings if f.rule == "geozarr.spatial.bbox-order"]
    acdd = cs.build_acdd(tmp_path, attrs={"geospatial_lat_min": -10, "geospatial_lat_max": 10,
                                          "geospatial_lon_min": 170, "geospatial_lon_max": -170})
    assert extract(acdd)[1].root.bbox == want
    stac = cs.build_eopf(tmp_path, item={"type": "Feature", "bbox": [170, -10, -170, 10], "properties": {}})
    assert extract(stac)[1].root.bbox == want
    from pyproj import CRS  # another datum: each side of the antimeridian shifted on its own
    nad83 = to_crs84(CRS.from_epsg(4269), 170, -10, -170, 10)
    assert nad83.crosses_antimeridian and nad83.west == pytest.approx(170, abs=0.01)


def test_cf_antimeridian_and_global_0_360_grids_keep_their_boxes(tmp_path):
    assert extract(cf_stores.build_antimeridian(tmp_path))[1].nodes["sst"].bbox == Box(170.0, 10.0, -170.0, 20.0)
    assert extract(cf_stores.build_global_grid(tmp_path))[1].nodes["tas"].bbox == Box(-180.0, -90.0, 180.0, 90.0)


# ---------------------------------------------------------------------- item 4: garbage coordinates
def test_polar_stereographic_coordinates_of_1e300_metres_give_no_box(tmp_path):
    xy = np.array([-1e300, 1e300])
    ds = xr.Dataset({"v": (("y", "x"), np.zeros((2, 2), dtype="float32"), {"grid_mapping": "crs"}),
                     "crs": ((), 0, cf_stores.POLAR_STEREO)},
                    coords={"y": ("y", xy, {"standard_name": "projection_y_coordinate", "units": "m"}),
                            "x": ("x", xy, {"standard_name": "projection_x_coordinate", "units": "m"})})
    _, result = extract(write(ds, tmp_path / "huge.zarr"))
    assert ("extent.coordinate-values", "y", "") in {(f.rule, f.path, "") for f in result.findings}
    assert result.nodes["v"].bbox is None and result.nodes["v"].spatial_resolution is None
    assert result.nodes["v"].crs is not None  # the CRS is still known


@pytest.mark.parametrize("bounds", [np.array([1.0, 2.0, 3.0]), np.zeros((2, 3, 4))], ids=["(3,)", "(2,3,4)"])
def test_bounds_of_the_wrong_shape_give_no_edges(tmp_path, bounds):
    dims = tuple(f"b{i}" for i in range(bounds.ndim))
    store = grid(tmp_path, "bounds", lat_attrs={**LAT, "bounds": "lat_bnds"}, extra={"lat_bnds": (dims, bounds)})
    _, result = extract(store)
    assert ("extent.coordinate-values", "lat", "/attributes/bounds") in rules(result)
    box = result.nodes["v"].bbox
    assert (box.south, box.north) == (-0.5, 1.5)  # the regular coordinates' edges, not 1..3 or 0..0
    assert "cf:bounds" not in {s.kind for s in result.nodes["v"].sources_of("bbox")}


@pytest.mark.parametrize("value", [5, ["lon_bnds"], "two names"])
def test_a_bounds_attribute_that_is_not_one_name_is_a_finding(tmp_path, value):
    store = grid(tmp_path, "bounds", lon_attrs={**LON, "bounds": value})
    _, result = extract(store)
    assert ("extent.coordinate-values", "lon", "/attributes/bounds") in rules(result)


def test_huge_monotonic_longitudes_are_not_called_non_monotonic_and_give_no_box(tmp_path):
    assert cf._monotonic(np.array([0.0, 1e20, 2e20])) == 1
    assert cf._monotonic(np.array([1e308, -1e308])) == -1
    _, result = extract(grid(tmp_path, "lon", lon=(0.0, 1e20, 2e20)))
    assert "extent.non-monotonic" not in {f.rule for f in result.findings}
    assert ("extent.coordinate-values", "lon", "") in {(f.rule, f.path, "") for f in result.findings}
    assert result.nodes.get("v") is None or result.nodes["v"].bbox is None


# ---------------------------------------------------------------------- item 8: one resolution
def test_conventions_and_cf_give_one_resolution_for_the_same_grid(tmp_path):
    one_degree = Geod(ellps="WGS84").inv(0, 0, 0, 1)[2]  # 110,574 m: the nominal 1° cell
    conv = tmp_path / "conv.zarr"
    g = zarr.open_group(str(conv), mode="w", zarr_format=3, attributes={
        "zarr_conventions": [cs.PROJ_DECL, cs.SPATIAL_DECL], "proj:code": "EPSG:4326"})
    g.create_array("a", shape=(10, 10), chunks=(10, 10), dtype="uint8", dimension_names=["y", "x"],
                   attributes={"spatial:dimensions": ["y", "x"], "spatial:transform": [1, 0, 0, 0, -1, 20]})
    cf_grid = grid(tmp_path, "cf", lat=np.arange(10.5, 20), lon=np.arange(0.5, 10))
    from_conventions = extract(conv)[1].nodes["a"].spatial_resolution
    from_cf = extract(cf_grid)[1].nodes["v"].spatial_resolution
    assert from_conventions == pytest.approx(one_degree, rel=1e-9) and from_cf == pytest.approx(one_degree, rel=1e-9)
    assert resolution_in_metres(None, 1.0, 1.0) == from_cf


# ---------------------------------------------------------------------- item 9: calendars
def test_a_union_across_calendars_is_no_period_and_an_info_finding(tmp_path):
    ds = xr.Dataset(
        {"a": (("t1",), np.zeros(3, dtype="float32")), "b": (("t2",), np.zeros(3, dtype="float32"))},
        coords={"t1": ("t1", np.array([0.0, 1, 2]), {"standard_name": "time", "units": "days since 2000-01-01",
                                                      "calendar": "360_day"}),
                "t2": ("t2", np.array([0.0, 1, 2]), {"standard_name": "time", "units": "days since 2000-01-01",
                                                      "calendar": "standard"})})
    _, result = extract(write(ds, tmp_path / "mixed.zarr"))
    assert result.nodes["a"].period.calendar == "360_day" and result.nodes["b"].period.calendar == "standard"
    assert result.root is None or result.root.period is None
    found = [f for f in result.findings if f.rule == "extent.calendars-differ"]
    assert [(f.path, f.severity.value) for f in found] == [("", "info")]
    assert "360_day" in found[0].message and "standard" in found[0].message


def test_calendars_that_agree_keep_their_union():
    p = Period("2000-01-01", "2000-02-01")
    assert union_periods([Period("2000-01-01", "2000-01-05", "gregorian"), p]).calendar == "standard"
    assert union_periods([Period("2000-01-01", "2000-01-05", "proleptic_gregorian"), p]).calendar == "standard"
    assert union_periods([Period("1500-01-01", "1500-01-05", "proleptic_gregorian"), p]) is None
    assert union_periods([Period("2000-01-01", "2000-01-05", "365_day"), Period("2000-01-01", "2000-01-05", "noleap")])
    assert union_periods([Period("2000-01-01", "2000-01-05", "360_day"), Period("2000-01-01", "2000-01-05", "noleap")]) is None


# ---------------------------------------------------------------------- item 10: groups by preference
def test_a_root_acdd_box_is_kept_over_array_centres_it_outranks(tmp_path):
    irregular = grid(tmp_path, "irregular", lat=(40.0, 41.0, 45.0, 50.0), lon=(0.0, 2.0, 3.0, 10.0),
                     attrs={"geospatial_lat_min": 0.0, "geospatial_lat_max": 10.0,
                            "geospatial_lon_min": 0.0, "geospatial_lon_max": 10.0})
    _, result = extract(irregular)
    assert result.root.bbox == Box(0.0, 0.0, 10.0, 10.0)  # ACDD (4th) above outermost centres (5th)
    assert [s.kind for s in result.root.sources_of("bbox")] == ["acdd"]
    assert [f.rule for f in result.findings] == ["extent.conflict"]


def test_a_stale_root_acdd_box_loses_to_regular_coordinates(tmp_path):
    regular = grid(tmp_path, "regular", lat=np.arange(40.5, 50), lon=np.arange(0.5, 10),
                   attrs={"geospatial_lat_min": 0.0, "geospatial_lat_max": 10.0,
                          "geospatial_lon_min": 0.0, "geospatial_lon_max": 10.0})
    _, result = extract(regular)
    assert result.root.bbox == Box(0.0, 40.0, 10.0, 50.0)
    conflict = [f.message for f in result.findings if f.rule == "extent.conflict"]
    assert len(conflict) == 1 and conflict[0].startswith("bbox [0, 0, 10, 10] from acdd at the root")


# ---------------------------------------------------------------------- item 12: STAC item shapes
@pytest.mark.parametrize(("attrs", "pointer"), [
    ({"stac_discovery": "an item"}, "/attributes/stac_discovery"),
    ({"stac_discovery": []}, "/attributes/stac_discovery"),
    ({"stac:item": 5}, "/attributes/stac:item"),
    ({"stac_discovery": {"type": "Feature", "properties": [1]}}, "/attributes/stac_discovery/properties"),
    ({"stac_discovery": {"type": "Feature", "properties": {"start_datetime": 5, "end_datetime": None}}},
     "/attributes/stac_discovery/properties/start_datetime"),
    ({"stac_discovery": {"type": "Feature", "properties": {"end_datetime": "2020-01-01T00:00:00Z"}}},
     "/attributes/stac_discovery/properties/end_datetime"),
])
def test_malformed_stac_items_are_findings(tmp_path, attrs, pointer):
    store = tmp_path / "stac.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3, attributes=attrs)
    g.create_array("a", shape=(2,), chunks=(2,), dtype="uint8")
    _, result = extract(store)
    assert [(f.rule, f.path, f.pointer) for f in result.findings] == [("extent.stac.unparseable", "", pointer)]
    assert result.root is None or result.root.period is None


# ---------------------------------------------------------------------- item 13: attribution
def test_the_utm_root_names_the_union_and_the_transform(tmp_path):
    _, result = extract(cs.build_utm(tmp_path))
    assert result.root.sources_of("spatial_resolution")[0].detail == "spatial:transform"
    assert result.root.sources_of("bbox")[0].detail == "spatial:bbox"
    [conflict] = [f.message for f in result.findings if f.rule == "extent.conflict"]
    assert conflict.startswith("bbox [9, ") and "from union at the root: the arrays below the root:" in conflict
    assert conflict.endswith("from convention:spatial at the root: spatial:bbox, which is kept")


@pytest.mark.parametrize("key", ["coordinates", "grid_mapping"])
def test_coordinates_and_grid_mapping_of_the_wrong_type_are_findings(tmp_path, key):
    store = grid(tmp_path, f"bad_{key}")
    group = zarr.open_group(store, mode="r+")
    group["v"].attrs[key] = 5
    zarr.consolidate_metadata(store)
    _, result = extract(store)
    assert ("extent.coordinate-values", "v", f"/attributes/{key}") in rules(result)
    assert result.root is not None and result.root.bbox is not None  # the dimension coordinates still place it
