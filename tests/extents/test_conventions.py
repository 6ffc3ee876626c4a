"""Extent evidence from proj:/spatial: (extents/conventions.py), on stores zarr-python wrote.

Expected boxes are computed here with a pyproj Transformer on the same numbers, never
with the catalogue's own crs.py.
"""

from __future__ import annotations

import pytest
from pyproj import Geod, Transformer

from catalogue.extents import conventions
from catalogue.harvest import load_hierarchy
from tests.support import convention_stores as cs


def crs84_box(epsg: int, minx: float, miny: float, maxx: float, maxy: float) -> tuple[float, ...]:
    t = Transformer.from_crs(f"EPSG:{epsg}", "OGC:CRS84", always_xy=True)
    return t.transform_bounds(minx, miny, maxx, maxy, densify_pts=50)


def by_kind(found, path):
    return {e.source.kind: e for e in found if e.path == path}


def test_utm_array_inherits_the_groups_crs_and_grid(tmp_path):
    h = load_hierarchy(str(cs.build_utm(tmp_path)))
    found, findings = conventions.evidence(h)
    assert findings == []
    b02 = by_kind(found, "b02")
    assert b02["convention:proj"].crs.epsg == 32633 and b02["convention:proj"].source.path == ""
    spatial = b02["convention:spatial"]
    # 1200 rows x 1000 columns of 10 m from the top-left corner (500000, 5000000); the
    # array is (time, y, x), so the grid's shape comes from its dimension names
    native = (500000.0, 5000000.0 - 1200 * 10, 500000.0 + 1000 * 10, 5000000.0)
    assert spatial.native_bbox == native and spatial.edges
    assert spatial.bbox.as_list() == pytest.approx(crs84_box(32633, *native), abs=1e-9)
    assert spatial.spatial_resolution == 10.0
    assert spatial.source.detail == "spatial:transform"


def test_an_arrays_own_proj_overrides_the_group_and_grandchildren_inherit_nothing(tmp_path):
    h = load_hierarchy(str(cs.build_utm(tmp_path)))
    found, _ = conventions.evidence(h)
    b03 = by_kind(found, "b03")
    assert b03["convention:proj"].crs.epsg == 32632 and b03["convention:proj"].source.path == "b03"
    native = (500000.0, 4988000.0, 510000.0, 5000000.0)
    assert b03["convention:spatial"].bbox.as_list() == pytest.approx(crs84_box(32632, *native), abs=1e-9)
    assert by_kind(found, "time/b04") == {}


def test_the_groups_box_comes_from_its_spatial_bbox(tmp_path):
    h = load_hierarchy(str(cs.build_utm(tmp_path)))
    root = by_kind(conventions.evidence(h)[0], "")
    assert root["convention:spatial"].source.detail == "spatial:bbox"
    assert root["convention:spatial"].bbox.as_list() == pytest.approx(crs84_box(32633, 500000, 4988000, 510000, 5000000), abs=1e-9)


def test_pyramid_levels_take_their_layout_entrys_grid_and_order_from_the_finest(tmp_path):
    h = load_hierarchy(str(cs.build_pyramid(tmp_path)))
    found, findings = conventions.evidence(h)
    assert findings == []
    for level, cell in (("r10m", 10.0), ("r20m", 20.0), ("r40m", 40.0)):
        spatial = by_kind(found, f"{level}/b02")["convention:spatial"]
        assert spatial.spatial_resolution == cell
        assert spatial.native_bbox == (500000.0, 4996000.0, 504000.0, 5000000.0)
    pyramids, problems = conventions.multiscales(h)
    assert problems == []
    levels = pyramids[""].levels
    assert [(lv.index, lv.asset, lv.derived_from) for lv in levels] == [
        (0, "r10m", None), (1, "r20m", "r10m"), (2, "r40m", "r20m")]
    assert [lv.cell_size for lv in levels] == [(10.0, 10.0), (20.0, 20.0), (40.0, 40.0)]
    assert pyramids[""].resampling == "average"


def test_geographic_resolution_is_the_nominal_cell_size_at_the_equator(tmp_path):
    store = tmp_path / "geo.zarr"
    import zarr
    g = zarr.open_group(str(store), mode="w", zarr_format=3, attributes={
        "zarr_conventions": [cs.PROJ_DECL, cs.SPATIAL_DECL], "proj:code": "EPSG:4326"})
    g.create_array("t", shape=(40, 80), chunks=(40, 80), dtype="f4", dimension_names=["lat", "lon"],
                   attributes={"spatial:dimensions": ["lat", "lon"], "spatial:transform": [0.25, 0, 0.0, 0, -0.25, 70.0],
                               "zarr_conventions": [cs.SPATIAL_DECL]})
    spatial = by_kind(conventions.evidence(load_hierarchy(str(store)))[0], "t")["convention:spatial"]
    assert spatial.bbox.as_list() == [0.0, 60.0, 20.0, 70.0] and spatial.native_bbox is None
    # one definition with CF coordinates (crs.resolution_in_metres): the grid's nominal
    # cell, the Y step along a meridian at the equator, wherever the box lies (65° N here)
    along_meridian = Geod(ellps="WGS84").inv(0, 0.0, 0, 0.25)[2]
    assert spatial.spatial_resolution == pytest.approx(along_meridian, rel=1e-9) == pytest.approx(27_643.57, abs=0.01)


def test_node_registration_gives_the_outermost_centres(tmp_path):
    store = tmp_path / "dem.zarr"
    import zarr
    g = zarr.open_group(str(store), mode="w", zarr_format=3, attributes={"proj:code": "EPSG:32633"})
    g.create_array("dem", shape=(11, 21), chunks=(11, 21), dtype="f4", dimension_names=["y", "x"],
                   attributes={"spatial:dimensions": ["y", "x"], "spatial:registration": "node",
                               "spatial:transform": [30.0, 0, 400000.0, 0, -30.0, 5100000.0]})
    spatial = by_kind(conventions.evidence(load_hierarchy(str(store)))[0], "dem")["convention:spatial"]
    assert spatial.native_bbox == (400000.0, 5100000.0 - 10 * 30, 400000.0 + 20 * 30, 5100000.0)
    assert not spatial.edges and "spatial:registration" in spatial.source.detail


def test_no_geography_gives_no_evidence(tmp_path):
    assert conventions.evidence(load_hierarchy(str(cs.build_plain(tmp_path)))) == ([], [])
    assert conventions.multiscales(load_hierarchy(str(cs.build_plain(tmp_path / "again"))))[0] == {}


@pytest.mark.parametrize(("builder", "expected"), [
    (cs.build_absurd_transform, {("", "/attributes/spatial:transform", "determinant 0"),
                                 ("huge", "/attributes/spatial:transform", "far outside the area of use")}),
    (cs.build_bad_crs, {("", "/attributes/proj:code", "EPSG:999999"),
                        ("", "/attributes/spatial:transform", "latitudes outside")}),
    (cs.build_lat95, {("", "/attributes/spatial:bbox", "latitudes outside"),
                      ("t", "/attributes/spatial:transform", "latitudes outside")}),
])
def test_bad_values_are_findings_not_crashes(tmp_path, builder, expected):
    h = load_hierarchy(str(builder(tmp_path)))
    _, findings = conventions.evidence(h)
    assert {f.rule for f in findings} == {"extent.conventions.unusable"}
    got = {(f.file.rsplit(".zarr/", 1)[-1].removesuffix("zarr.json").rstrip("/"), f.pointer) for f in findings}
    assert got == {(path, pointer) for path, pointer, _ in expected}
    for path, pointer, words in expected:
        assert any(words in f.message for f in findings if f.pointer == pointer and f.file.endswith(
            f"{path}/zarr.json" if path else ".zarr/zarr.json")), (path, words)
