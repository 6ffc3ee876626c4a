"""extract_extents: every node's extent from all sources, the root as the union of its
arrays, the preference between sources, and disagreements as extent.conflict findings."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from catalogue.extents.evidence import Evidence
from catalogue.extents.extract import combine, extract_extents, union_boxes, union_periods
from catalogue.harvest.reader import read_hierarchy
from catalogue.model.extents import Box, NativeCRS, Period, Source
from catalogue.storage.opening import open_store
from tests.support import cf_stores, stores


def harvest(path):
    store = open_store(str(path))
    return read_hierarchy(store), store


@pytest.mark.parametrize("name", sorted(cf_stores.CF_STORES))
def test_every_fixture_has_a_root_extent_holding_its_arrays(tmp_path, name):
    hierarchy, store = harvest(cf_stores.CF_STORES[name](tmp_path, 3))
    result = extract_extents(hierarchy, store)
    root = result.root
    assert root is not None and not root.empty
    arrays = [e for p, e in result.nodes.items() if p]
    assert arrays
    for extent in arrays:
        if extent.bbox is not None:
            assert root.bbox == extent.bbox  # one grid per fixture: the union is that grid
        if extent.period is not None:
            assert root.period == extent.period
    # every kept figure names where it came from, and the sources are the arrays'
    for figure in ("bbox", "period"):
        if getattr(root, figure) is not None:
            assert root.sources_of(figure) and all(s.kind.startswith("cf:") for s in root.sources_of(figure))


def test_a_store_that_says_nothing_has_no_extent(tmp_path):
    hierarchy, store = harvest(stores.build_zarr_v3_deep(tmp_path))
    result = extract_extents(hierarchy, store)
    assert result.nodes == {} and result.root is None and result.multiscales == {}
    assert [f for f in result.findings if f.rule.startswith("extent.")] == []


def test_the_value_budget_reaches_the_reader(tmp_path):
    hierarchy, store = harvest(cf_stores.build_big_axis(tmp_path, 2))
    result = extract_extents(hierarchy, store, value_bytes=1000)
    assert result.root is None
    assert [(f.rule, f.path) for f in result.findings] == [("extent.values-budget", "time")]


def test_groups_and_the_root_are_the_union_of_their_arrays(tmp_path):
    path = tmp_path / "groups.zarr"
    europe = xr.Dataset({"t": (("lat", "lon"), np.zeros((10, 10)))},
                        coords={"lat": ("lat", np.arange(40.5, 50), cf_stores.LAT),
                                "lon": ("lon", np.arange(0.5, 10), cf_stores.LON)})
    pacific = xr.Dataset({"t": (("lat", "lon"), np.zeros((10, 20)))},
                         coords={"lat": ("lat", np.arange(-9.5, 0), cf_stores.LAT),
                                 "lon": ("lon", np.concatenate([np.arange(170.5, 180), np.arange(-179.5, -170)]),
                                         cf_stores.LON)})
    europe.to_zarr(path, group="europe", zarr_format=3, consolidated=False)
    pacific.to_zarr(path, group="pacific", zarr_format=3, consolidated=False, mode="a")
    hierarchy, store = harvest(path)
    result = extract_extents(hierarchy, store)
    assert result.nodes["europe"].bbox == result.nodes["europe/t"].bbox == Box(0.0, 40.0, 10.0, 50.0)
    assert result.nodes["pacific"].bbox == Box(170.0, -10.0, -170.0, 0.0)
    # the smallest box holding both: eastwards from 0° across the antimeridian to 170°W
    # (190° wide), rather than from 170°W eastwards to 10°E (200° wide)
    assert result.root.bbox == Box(0.0, -10.0, -170.0, 50.0)
    assert {s.path for s in result.root.sources_of("bbox")} == {"europe/lat", "pacific/lat"}


# ---------------------------------------------------------------------- combining
@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A real hierarchy for findings to point into."""
    return harvest(cf_stores.build_regional_bounds(tmp_path_factory.mktemp("grid"), 3))[0]


def ev(kind: str, **figures) -> Evidence:
    return Evidence("", Source(kind, "", kind), **figures)


def test_sources_are_preferred_in_the_documented_order(grid):
    box = Box(0.0, 40.0, 10.0, 50.0)
    evidence = [ev("cf:coordinates", bbox=Box(0.125, 40.125, 9.875, 49.875), spatial_resolution=27_643.57),
                ev("acdd", bbox=box), ev("stac", bbox=box), ev("cf:bounds", bbox=box, edges=True),
                ev("convention:proj", crs=NativeCRS(epsg=4326), bbox=box)]
    extent, findings = combine(grid, "", evidence)
    assert extent.sources_of("bbox") == (Source("convention:proj", "", "convention:proj"),)
    assert extent.crs == NativeCRS(epsg=4326)
    assert extent.spatial_resolution == 27_643.57  # the only source that gives one
    assert findings == []  # centres are within half a cell (0.25° along a meridian) of the edges
    without = combine(grid, "", evidence[:4])[0]
    assert without.sources_of("bbox")[0].kind == "cf:bounds"
    assert combine(grid, "", evidence[:3])[0].sources_of("bbox")[0].kind == "stac"
    assert combine(grid, "", evidence[:2])[0].sources_of("bbox")[0].kind == "acdd"


def test_boxes_that_disagree_are_a_conflict_naming_both_sources(grid):
    kept = ev("cf:bounds", bbox=Box(0.0, 40.0, 10.0, 50.0), edges=True)
    stale = ev("acdd", bbox=Box(0.0, 40.0, 12.0, 50.0))
    extent, findings = combine(grid, "", [stale, kept])
    assert extent.bbox == kept.bbox
    assert [(f.rule, f.path, f.severity.value) for f in findings] == [("extent.conflict", "", "warning")]
    assert "acdd" in findings[0].message and "cf:bounds" in findings[0].message and "12" in findings[0].message
    # within 1% of the span: the same box
    assert combine(grid, "", [kept, ev("acdd", bbox=Box(0.05, 40.0, 10.05, 50.0))])[1] == []


def test_boxes_across_the_antimeridian_are_compared_on_the_circle(grid):
    a = ev("cf:bounds", bbox=Box(170.0, 10.0, -170.0, 20.0), edges=True)
    assert combine(grid, "", [a, ev("acdd", bbox=Box(170.1, 10.0, -170.1, 20.0))])[1] == []
    assert len(combine(grid, "", [a, ev("acdd", bbox=Box(-170.0, 10.0, 170.0, 20.0))])[1]) == 1


def test_periods_that_disagree_by_more_than_a_day_or_a_step_are_a_conflict(grid):
    kept = ev("cf:bounds", period=Period("2000-01-01", "2000-12-31"), edges=True)
    assert combine(grid, "", [kept, ev("acdd", period=Period("2000-01-02T00:00:00Z", "2000-12-31T00:00:00Z"))])[1] == []
    assert len(combine(grid, "", [kept, ev("acdd", period=Period("2000-01-05", "2000-12-31"))])[1]) == 1
    monthly = ev("cf:bounds", period=Period("2000-01-01", "2000-12-01"), temporal_resolution="P1M", edges=True)
    assert combine(grid, "", [monthly, ev("acdd", period=Period("2000-01-01", "2000-12-31"))])[1] == []


def test_crss_are_compared_by_pyproj(grid):
    utm = ev("convention:proj", crs=NativeCRS(epsg=32633))
    from pyproj import CRS

    same = ev("cf:grid_mapping", crs=NativeCRS(wkt2=CRS.from_epsg(32633).to_wkt()))
    assert combine(grid, "", [utm, same])[1] == []
    assert len(combine(grid, "", [utm, ev("stac", crs=NativeCRS(epsg=32632))])[1]) == 1


def test_a_native_box_is_kept_only_with_its_crs(grid):
    extent, _ = combine(grid, "", [ev("convention:proj", crs=NativeCRS(epsg=32633)),
                                   ev("cf:grid_mapping", crs=NativeCRS(epsg=32632), native_bbox=(0.0, 0.0, 1.0, 1.0))])
    assert extent.crs == NativeCRS(epsg=32633) and extent.native_bbox is None


@pytest.mark.parametrize(("boxes", "union"), [
    ([Box(0, 0, 10, 10), Box(20, -5, 30, 5)], Box(0, -5, 30, 10)),
    ([Box(170, 0, 180, 10), Box(-180, 0, -170, 10)], Box(170, 0, -170, 10)),
    ([Box(-180, 0, 180, 10), Box(5, -20, 6, 0)], Box(-180, -20, 180, 10)),
    ([Box(-10, 0, 10, 1), Box(100, 0, 120, 1), Box(-130, 0, -110, 1)], Box(-130, 0, 120, 1)),
])
def test_union_of_boxes(boxes, union):
    assert union_boxes(boxes) == union


def test_union_of_periods_keeps_valid_texts():
    assert union_periods([Period("2000-01-01", "2000-02-01"), Period("1999-06-01", "2000-01-15")]) == \
        Period("1999-06-01", "2000-02-01")
    mixed = union_periods([Period("2000-01-01", "2000-02-01"), Period("2000-03-01T06:00:00Z", "2000-03-02T00:00:00Z")])
    assert mixed == Period("2000-01-01", "2000-03-02")


def test_a_root_box_that_disagrees_with_its_arrays_is_a_conflict(tmp_path, grid):
    from catalogue.extents.extract import _group_conflicts
    from catalogue.model.extents import Extent

    arrays = Extent(bbox=Box(0.0, 40.0, 10.0, 50.0), sources=(("bbox", Source("cf:bounds", "lat", "lat, lon")),))
    stale = Extent(bbox=Box(-5.0, 40.0, 10.0, 50.0), sources=(("bbox", Source("acdd", "", "geospatial_lon_min")),))
    for winner, kept in (("below", "the arrays below the root"), ("own", "acdd at the root")):
        findings = _group_conflicts(grid, "", stale, arrays, {"bbox": winner})
        assert [(f.rule, f.path) for f in findings] == [("extent.conflict", "")]
        assert "cf:bounds at /lat" in findings[0].message and "acdd at the root" in findings[0].message
        assert kept in findings[0].message.split(" differs from ")[1]  # the kept side comes second
    assert _group_conflicts(grid, "", arrays, arrays, {"bbox": "own"}) == []


def test_acdd_attributes_on_the_root_that_disagree_with_the_coordinates_end_to_end(tmp_path):
    path = cf_stores.build_regional_bounds(tmp_path, 2)
    ds = xr.open_zarr(path)
    ds.attrs.update(geospatial_lat_min=40.0, geospatial_lat_max=50.0, geospatial_lon_min=-5.0, geospatial_lon_max=10.0)
    ds.to_zarr(tmp_path / "stale.zarr", zarr_format=2, consolidated=True)
    hierarchy, store = harvest(tmp_path / "stale.zarr")
    result = extract_extents(hierarchy, store)
    # ACDD ranks below CF cell edges, on the root as on an array: the arrays' union is kept
    assert result.root.bbox == Box(0.0, 40.0, 10.0, 50.0)
    assert [s.kind for s in result.root.sources_of("bbox")] == ["cf:bounds"]
    assert result.nodes["pr"].bbox == Box(0.0, 40.0, 10.0, 50.0)  # the coordinates' edges
    assert [(f.rule, f.path) for f in result.findings] == [("extent.conflict", "")]
    message = result.findings[0].message  # the stale ACDD box is still said, as the loser
    assert message.startswith("bbox [-5, 40, 10, 50] from acdd at the root") and "the arrays below the root" in message
