"""Extent evidence from a STAC item inside Zarr (extents/stac_item.py)."""

from __future__ import annotations

import copy

import pytest
import shapely
import zarr

from catalogue.extents import stac_item
from catalogue.harvest import load_hierarchy
from tests.support import convention_stores as cs

ITEM = {"type": "Feature", "stac_version": "1.1.0", "id": "x", "bbox": [170.0, -10.0, 0.0, -170.0, 10.0, 100.0],
        "geometry": {"type": "Point", "coordinates": [175.0, 0.0]},
        "properties": {"datetime": "2024-01-01T06:00:00+06:00", "proj:code": "EPSG:32760"}}


def by_detail(found):
    return {e.source.detail: e for e in found}


def test_eopf_stac_discovery(tmp_path):
    found, findings = stac_item.evidence(load_hierarchy(str(cs.build_eopf(tmp_path))))
    assert findings == []
    ev = by_detail(found)
    assert all(e.path == "" and e.source.kind == "stac" for e in found)
    assert ev["stac_discovery: bbox"].bbox.as_list() == [-16.32, 63.88, -14.05, 64.92]
    assert shapely.from_wkt(ev["stac_discovery: geometry"].geometry).equals(shapely.box(-16.32, 63.88, -14.05, 64.92))
    period = ev["stac_discovery: properties.start_datetime, properties.end_datetime"].period
    assert (period.start, period.end) == ("2025-10-06T12:33:09.024000Z", "2025-10-06T12:43:09Z")
    assert ev["stac_discovery: properties.proj:epsg"].crs.epsg == 32628


def test_zarr_conventions_stac_item_3d_bbox_across_the_antimeridian(tmp_path):
    store = tmp_path / "s.zarr"
    zarr.open_group(str(store), mode="w", zarr_format=3, attributes={"stac:encoding": "attribute", "stac:item": ITEM})
    found, findings = stac_item.evidence(load_hierarchy(str(store)))
    assert findings == []
    ev = by_detail(found)
    assert ev["stac:item: bbox"].bbox.as_list() == [170.0, -10.0, -170.0, 10.0]
    assert ev["stac:item: properties.datetime"].period.start == ev["stac:item: properties.datetime"].period.end == "2024-01-01T00:00:00Z"
    assert ev["stac:item: properties.proj:code"].crs.epsg == 32760
    assert ev["stac:item: geometry"].geometry == "POINT (175 0)"


def test_an_item_stored_under_another_encoding_is_not_read(tmp_path):
    store = tmp_path / "k.zarr"
    zarr.open_group(str(store), mode="w", zarr_format=3, attributes={"stac:encoding": "key", "stac:item": {"href": "item.json"}})
    assert stac_item.evidence(load_hierarchy(str(store))) == ([], [])


@pytest.mark.parametrize(("change", "pointer"), [
    (lambda item: item.update(bbox=[0, 95, 1, 96]), "/stac_discovery/bbox"),
    (lambda item: item.update(bbox="everywhere"), "/stac_discovery/bbox"),
    (lambda item: item.update(geometry={"type": "Polygon", "coordinates": "x"}), "/stac_discovery/geometry"),
    (lambda item: item["properties"].update(datetime="null"), "/stac_discovery/properties/datetime"),
    (lambda item: item["properties"].update({"proj:epsg": 999999}), "/stac_discovery/properties/proj:epsg"),
])
def test_bad_values_are_findings_not_crashes(tmp_path, change, pointer):
    item = copy.deepcopy(ITEM)
    change(item)
    item["properties"].pop("proj:code")
    h = load_hierarchy(str(cs.build_eopf(tmp_path, item=item)))
    found, findings = stac_item.evidence(h)
    assert [(f.pointer, f.rule) for f in findings] == [(pointer, "extent.stac.unparseable")]
    # the other figures are still read: bbox, geometry, period, less the broken one
    assert len(found) == (3 if pointer.endswith("proj:epsg") else 2)


def test_no_item_no_evidence(tmp_path):
    assert stac_item.evidence(load_hierarchy(str(cs.build_plain(tmp_path)))) == ([], [])
