"""The GeoZarr conventions' rules (validate/geozarr.py), on stores zarr-python wrote."""

from __future__ import annotations

import json
import subprocess

import pytest
import zarr
from jsonschema import Draft7Validator
from pyproj import CRS
from referencing import Registry

from catalogue.harvest import load_hierarchy
from catalogue.resources import schema_text
from catalogue.validate import validate_hierarchy
from tests.support import convention_stores as cs


def findings(store):
    report = validate_hierarchy(load_hierarchy(str(store)))
    return {(f.path, f.rule, f.pointer) for f in report.findings}


@pytest.mark.parametrize("builder", [cs.build_utm, cs.build_pyramid, cs.build_eopf, cs.build_acdd, cs.build_plain])
def test_good_stores_have_no_findings(tmp_path, builder):
    assert findings(builder(tmp_path)) == set()


def test_bad_crs_unresolvable_and_conflicting(tmp_path):
    assert findings(cs.build_bad_crs(tmp_path)) == {
        ("", "geozarr.proj.crs-unresolvable", "/attributes/proj:code"),
        ("conflict", "geozarr.proj.crs-conflict", "/attributes/proj:code"),
    }


def test_absurd_transform(tmp_path):
    assert findings(cs.build_absurd_transform(tmp_path)) == {
        ("", "geozarr.spatial.transform-degenerate", "/attributes/spatial:transform"),
        ("huge", "geozarr.undeclared", "/attributes/spatial:dimensions"),
        ("huge", "geozarr.spatial.transform-bbox", "/attributes/spatial:transform"),
    }


def test_latitude_95(tmp_path):
    assert findings(cs.build_lat95(tmp_path)) == {
        ("", "geozarr.spatial.latitude", "/attributes/spatial:bbox"),
        ("t", "geozarr.undeclared", "/attributes/spatial:dimensions"),
        ("t", "geozarr.spatial.latitude", "/attributes/spatial:transform"),
    }


def test_schema_shape_dimensions_order_and_assets(tmp_path):
    store = tmp_path / "s.zarr"
    g = zarr.open_group(str(store), mode="w", zarr_format=3, attributes={
        "zarr_conventions": [cs.PROJ_DECL, cs.SPATIAL_DECL, cs.MULTISCALES_DECL],
        "proj:code": "EPSG:32633", "spatial:bbox": [10.0, 5.0, 0.0, 0.0], "spatial:registration": "corner",
        "multiscales": {"layout": [{"asset": "0"}, {"asset": "missing", "derived_from": "0", "transform": {"scale": [2, 2]}}]}})
    g.create_group("0")
    g.create_array("a", shape=(4, 5), chunks=(4, 5), dtype="u1", dimension_names=["y", "x"], attributes={
        "zarr_conventions": [cs.SPATIAL_DECL], "spatial:dimensions": ["lat", "lon"], "spatial:shape": [4, 5]})
    g.create_array("b", shape=(4, 5), chunks=(4, 5), dtype="u1", dimension_names=["y", "x"], attributes={
        "zarr_conventions": [cs.SPATIAL_DECL], "spatial:dimensions": ["y", "x"], "spatial:shape": [5, 4],
        "spatial:transform_type": "rpc"})
    assert findings(store) == {
        ("", "geozarr.spatial.schema", "/attributes/spatial:registration"),
        ("", "geozarr.spatial.malformed", "/attributes/spatial:registration"),
        ("", "geozarr.multiscales.asset", "/attributes/multiscales/layout/1/asset"),
        ("a", "geozarr.spatial.dimensions", "/attributes/spatial:dimensions"),
        ("b", "geozarr.spatial.transform-type", "/attributes/spatial:transform_type"),
    }
    store2 = tmp_path / "t.zarr"
    zarr.open_group(str(store2), mode="w", zarr_format=3, attributes={"spatial:bbox": [10.0, 5.0, 0.0, 0.0]})
    assert findings(store2) == {("", "geozarr.undeclared", "/attributes/spatial:bbox"),
                                ("", "geozarr.spatial.bbox-order", "/attributes/spatial:bbox")}
    store3 = tmp_path / "u.zarr"
    g3 = zarr.open_group(str(store3), mode="w", zarr_format=3, attributes={})
    g3.create_array("c", shape=(4, 5), chunks=(4, 5), dtype="u1", dimension_names=["y", "x"], attributes={
        "zarr_conventions": [cs.SPATIAL_DECL], "spatial:dimensions": ["y", "x"], "spatial:shape": [5, 4]})
    assert findings(store3) == {("c", "geozarr.spatial.shape", "/attributes/spatial:shape")}


def test_code_with_wkt2_passes_the_corrected_schema_and_fails_upstreams_oneof():
    document = {"zarr_format": 3, "node_type": "array", "attributes": {
        "zarr_conventions": [cs.PROJ_DECL], "proj:code": "EPSG:32633", "proj:wkt2": CRS.from_epsg(32633).to_wkt()}}
    corrected = Draft7Validator(json.loads(schema_text("conventions/proj.json")), registry=Registry())
    upstream = Draft7Validator(json.loads(schema_text("conventions/proj.upstream.json")), registry=Registry())
    assert list(corrected.iter_errors(document)) == []
    assert [e.validator for e in upstream.iter_errors(document)] == ["oneOf"]
    # and the spec's own OGC:CRS84 code
    document["attributes"] = {"zarr_conventions": [cs.PROJ_DECL], "proj:code": "OGC:CRS84"}
    assert list(corrected.iter_errors(document)) == []
    assert [e.validator for e in upstream.iter_errors(document)] == ["pattern"]


def test_upstream_files_are_verbatim():
    """The shipped upstream copies are the published bytes (checked against the commit
    recorded in the README where a mirror of the repository is at hand)."""
    readme = schema_text("conventions/README.md")
    for name, commit in (("spatial", "54d81b7ced0376e63ee10f34db31db7d08dcc28d"),
                         ("multiscales", "317be3b24407bc3518fe91b66d0f5dc50f243001")):
        assert commit in readme
        mirror = f"/work/.mirror/zarr-conventions+{name}/repo"
        try:
            published = subprocess.run(["git", f"--git-dir={mirror}", "show", f"{commit}:schema.json"],
                                       capture_output=True, check=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError):
            pytest.skip("no mirror of the zarr-conventions repositories here")
        assert schema_text(f"conventions/{name}.upstream.json") == published
